"""The dynamic check of the upgrade findings (JAX6xx): does the removed or deprecated name they
report still resolve in the installed JAX?

Each name is looked up in a fresh interpreter that imports nothing but JAX (so no module the
user's code imported first hides a deprecation warning JAX gives once, on import): the attribute
path from `jax`, importing submodules where an attribute is missing. The name is `confirmed` when
it does not resolve (AttributeError, or ImportError for the module it names) or resolving it warns
of its deprecation (a DeprecationWarning or FutureWarning that names it); `not-reproduced` when it
resolves without a warning; `inconclusive` when the lookup failed for another reason (a missing
dependency, an error inside JAX) or did not finish.

usage (from the linter): python -m jaxlint.dynamic.names < names.json
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from jaxlint.dynamic.claims import api_named

CONFIRMED, NOT_REPRODUCED, INCONCLUSIVE = "confirmed", "not-reproduced", "inconclusive"
DEPRECATIONS = (DeprecationWarning, FutureWarning)


def confirm_names(findings: dict, timeout: float, env: dict[str, str]) -> dict[int, dict]:
    """Verdicts of upgrade findings (by index), from the names their messages report."""
    wanted = {i: api_named(f.message) for i, f in findings.items()}
    if not wanted:
        return {}
    names = sorted({n for n in wanted.values() if n})
    resolved, failure = _run(names, timeout, env) if names else ({}, None)
    verdicts = {}
    for i, name in wanted.items():
        if name is None:
            verdict = {"status": INCONCLUSIVE, "detail": "the finding names no JAX API to look up"}
        else:
            verdict = resolved.get(name) or {"status": INCONCLUSIVE,
                                             "detail": f"`{name}` could not be looked up: {failure}"}
        verdicts[i] = {**verdict, "backend": None}
    return verdicts


def _run(names: list[str], timeout: float, env: dict[str, str]) -> tuple[dict, str | None]:
    """Look the names up in a fresh interpreter: (verdicts by name, why there are none)."""
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**env, "PYTHONPATH": os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)}
    try:
        done = subprocess.run([sys.executable, "-m", "jaxlint.dynamic.names"], input=json.dumps(names),
                              capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=package_parent, check=False)
    except subprocess.TimeoutExpired:
        return {}, f"the lookup did not finish within {timeout:g}s"
    except OSError as exc:
        return {}, f"the lookup could not start: {exc}"
    try:
        return json.loads(done.stdout.strip().splitlines()[-1]), None
    except (ValueError, IndexError):
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {}, f"the lookup stopped with status {done.returncode} ({last[:200]})"


def resolve(name: str) -> dict:
    """The verdict of one dotted name, looked up in this interpreter's JAX."""
    import importlib
    import types
    import warnings

    import jax

    installed = f"the installed JAX {jax.__version__}"
    parts = name.split(".")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = importlib.import_module(parts[0])
            for n, part in enumerate(parts[1:], start=2):
                try:
                    value = getattr(value, part)
                except AttributeError:  # a submodule not imported yet, else JAX's own message
                    if not (isinstance(value, types.ModuleType) and _module_exists(".".join(parts[:n]))):
                        raise
                    value = importlib.import_module(".".join(parts[:n]))
        except ModuleNotFoundError as exc:
            if exc.name and not (name + ".").startswith(exc.name + "."):  # a module JAX itself needs
                return {"status": INCONCLUSIVE, "detail": f"looking up `{name}` in {installed} needed a module "
                                                          f"that is not installed: {exc}"}
            return {"status": CONFIRMED, "detail": f"`{name}` does not resolve in {installed}: "
                                                   f"ModuleNotFoundError: {exc}"}
        except (AttributeError, ImportError) as exc:
            return {"status": CONFIRMED, "detail": f"`{name}` does not resolve in {installed}: "
                                                   f"{type(exc).__name__}: {_first_line(exc)}"}
        except Exception as exc:  # noqa: BLE001 - an error inside JAX is no answer either way
            return {"status": INCONCLUSIVE, "detail": f"looking up `{name}` in {installed} raised "
                                                      f"{type(exc).__name__}: {_first_line(exc)}"}
    for w in caught:
        if issubclass(w.category, DEPRECATIONS) and parts[-1] in str(w.message):
            return {"status": CONFIRMED, "detail": f"{installed} warns when `{name}` is used: "
                                                   f"{w.category.__name__}: {_first_line(w.message)}"}
    return {"status": NOT_REPRODUCED, "detail": f"`{name}` resolves in {installed} without a warning"}


def _module_exists(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # its parent is no package
        return False


def _first_line(value) -> str:
    return (str(value).strip().splitlines() or [""])[0][:200]


def main() -> None:
    names = json.loads(sys.stdin.read())
    print(json.dumps({name: resolve(name) for name in names}))


if __name__ == "__main__":
    main()
