"""How jaxlint's cost grows with the size of one file: CPU seconds of `jaxlint check --no-cache` on
generated modules of N lines, with and without findings, and on a notebook of N cells.

    python scripts/scaling.py 5000 20000 50000
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile

# Seven lines, two findings (a traced `if`, a `print` of a traced value) per function.
WITH_FINDINGS = "\n@jax.jit\ndef f{i}(x, n):\n    if x > 0:\n        x = x + 1\n    print('step', x)\n    return x\n"
# Seven lines, the same work written as JAX wants it.
WITHOUT_FINDINGS = (
    "\n@jax.jit\ndef f{i}(x, n):\n    x = jnp.where(x > 0, x + 1, x)\n"
    "    jax.debug.print('step {{}}', x)\n    y = x * 2\n    return y\n"
)
# One function: a long body with a traced `if` every tenth statement.
ONE_FUNCTION_HEAD = "import jax\n\n@jax.jit\ndef f(x):\n"


def module(lines: int, template: str) -> str:
    return "import jax\nimport jax.numpy as jnp\n" + "".join(template.format(i=i) for i in range(lines // 7))


def one_function(lines: int) -> str:
    body = "".join("    if x > 0:\n        x = x + 1\n" if i % 10 == 0 else "    x = x * 2\n" for i in range(lines))
    return ONE_FUNCTION_HEAD + body + "    return x\n"


def notebook(cells: int) -> str:
    code = ["import jax\n"] + [WITH_FINDINGS.format(i=i).strip("\n") + "\n" for i in range(cells - 1)]
    return json.dumps(
        {
            "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": c} for c in code],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def cpu_seconds(path: str) -> tuple[float, int]:
    """CPU time (user + system) of one `jaxlint check --no-cache`, and how many findings it reported."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "jaxlint", "check", "--no-cache", "--output-format", "json", path],
        capture_output=True,
        text=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, len(json.loads(done.stdout))


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [5000, 20000, 50000]
    cases = {
        "with findings": lambda n: ("m.py", module(n, WITH_FINDINGS)),
        "without findings": lambda n: ("m.py", module(n, WITHOUT_FINDINGS)),
        "one function": lambda n: ("m.py", one_function(n)),
        "notebook (cells = lines / 5)": lambda n: ("m.ipynb", notebook(n // 5)),
    }
    with tempfile.TemporaryDirectory() as folder:
        for name, make in cases.items():
            previous = None
            for n in sizes:
                filename, text = make(n)
                path = os.path.join(folder, filename)
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(text)
                seconds, findings = cpu_seconds(path)
                ratio = ""
                if previous is not None:
                    ratio = f"  x{seconds / previous[1]:.2f} for x{n / previous[0]:.1f} lines"
                print(f"{name:30} {n:>7} lines {findings:>6} findings {seconds:7.2f} s{ratio}", flush=True)
                previous = (n, seconds)


if __name__ == "__main__":
    main()
