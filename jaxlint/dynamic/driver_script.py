"""Runs one configured driver command (`scripts/train.py --steps 3`, or `-m package.module ARGS`) as
`__main__` under the driven-run instrumentation, then writes the verdicts.

usage (from the linter): python -m jaxlint.dynamic.driver_script COMMAND...
"""

from __future__ import annotations

import os
import runpy
import sys

from jaxlint.dynamic.driver_session import Session, load_request


def main(argv: list[str]) -> None:
    request = load_request()
    if request is None or not argv:
        sys.exit("usage: python -m jaxlint.dynamic.driver_script COMMAND... (started by `jaxlint check`)")
    session = Session(request, "command")
    module = argv[1] if argv[0] == "-m" and len(argv) > 1 else None
    sys.argv = argv[1:] if module else list(argv)
    if not module:
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))  # as `python script.py` does
    session.begin("`" + " ".join(argv) + "`")
    try:
        if module:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(argv[0], run_name="__main__")
        import jax

        jax.effects_barrier()
    except SystemExit as exc:
        if exc.code not in (None, 0):
            session.note_failure(exc)
    except BaseException as exc:  # noqa: BLE001 - the command's failure is evidence, not an error here
        session.note_failure(exc)
    finally:
        session.end()
    os._exit(0)  # skip the command's atexit handlers and non-daemon threads


if __name__ == "__main__":
    main(sys.argv[1:])
