"""Every autofix of the purity rules, run under JAX: the fixed code runs and gives the result the
original code meant, and a second run finds nothing left to fix."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from jaxlint.fixes import apply_fixes, parses
from jaxlint.linter import lint_source

pytest.importorskip("jax")
np = pytest.importorskip("numpy")

FIXABLE = {"JAX401", "JAX402", "JAX403", "JAX404"}


def fixed(source: str, unsafe: bool = True) -> str:
    """Apply fixes pass after pass, as `jaxlint check --fix` does."""
    text = textwrap.dedent(source)
    for _ in range(10):
        findings = lint_source(text, "case.py", FIXABLE)
        new, count = apply_fixes(text, findings, unsafe)
        if not count:
            break
        assert parses(new), new
        text = new
    return text


_RUNNER = """
import contextlib, io, json, sys
import jax
import numpy as np

def leaves(value):
    flat, tree = jax.tree_util.tree_flatten(value)
    return [str(tree), [np.asarray(x).tolist() for x in flat]]

def run(source, mode):
    namespace = {"__name__": "jaxlint_autofix_case"}
    exec(compile(source, "<case>", "exec"), namespace)
    if mode == "main":
        return leaves(namespace["main"]())
    out = io.StringIO()
    eager = mode == "print-eager"
    with contextlib.redirect_stdout(out), (jax.disable_jit() if eager else contextlib.nullcontext()):
        for _ in range(2):
            namespace["step"](jax.numpy.arange(1.0, 4.0))
        jax.effects_barrier()
    return out.getvalue()

jobs = json.load(sys.stdin)
print(json.dumps({key: run(source, mode) for key, (source, mode) in jobs.items()}))
"""


def run_under_jax(jobs: dict[str, tuple[str, str]]) -> dict:
    """Run programs under JAX in a fresh interpreter (JAX's threads stay out of the test process)."""
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER], input=json.dumps(jobs), capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def assert_same(a, b) -> None:
    assert a[0] == b[0]
    for x, y in zip(a[1], b[1]):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6)


def nothing_left(text: str) -> None:
    assert [f for f in lint_source(text, "case.py", FIXABLE) if f.fix is not None] == []


# (original with the bug, what it meant written by hand, codes that must have been fixed)
CASES = {
    "histogram_add": (
        """
        import jax.numpy as jnp

        def main():
            counts = jnp.zeros(4)
            for v in [0, 2, 2, 3]:
                counts[v] += 1
            return counts
        """,
        """
        import jax.numpy as jnp

        def main():
            counts = jnp.zeros(4)
            for v in [0, 2, 2, 3]:
                counts = counts.at[v].add(1)
            return counts
        """,
    ),
    "tuple_bound_and_helper_result": (
        """
        import jax.numpy as jnp

        def init_state(n):
            return jnp.ones(n)

        def main():
            mean, var = jnp.zeros(3), jnp.ones(3)
            var[0] = 2.0
            state = init_state(3)
            state[1] += 4.0
            return mean, var, state
        """,
        """
        import jax.numpy as jnp

        def init_state(n):
            return jnp.ones(n)

        def main():
            mean, var = jnp.zeros(3), jnp.ones(3)
            var = var.at[0].set(2.0)
            state = init_state(3)
            state = state.at[1].add(4.0)
            return mean, var, state
        """,
    ),
    "every_operator": (
        """
        import jax.numpy as jnp

        def main():
            x = jnp.arange(6.0).reshape(2, 3)
            x[0, 1:3] *= 2
            x[1] -= 5
            x[:, -1] /= 2
            x[0, 0] **= 2
            x[1, 0] = (
                x[0, 0] + 1
            )
            x[0] = 7.0, 8.0, 9.0
            return x
        """,
        """
        import jax.numpy as jnp

        def main():
            x = jnp.arange(6.0).reshape(2, 3)
            x = x.at[0, 1:3].multiply(2)
            x = x.at[1].subtract(5)
            x = x.at[:, -1].divide(2)
            x = x.at[0, 0].power(2)
            x = x.at[1, 0].set(x[0, 0] + 1)
            x = x.at[0].set((7.0, 8.0, 9.0))
            return x
        """,
    ),
    "inside_jit": (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def zero_first_column(m):
            out = m * 1.0
            out[..., 0] = 0.0
            return out

        def main():
            return zero_first_column(jnp.ones((3, 3)))
        """,
        """
        import jax
        import jax.numpy as jnp

        def main():
            return jnp.ones((3, 3)).at[..., 0].set(0.0)
        """,
    ),
    "annotated_parameter": (
        """
        import jax
        import jax.numpy as jnp

        def reset(x: jax.Array, i: int):
            x[i] = 0.0
            return x

        def main():
            return reset(jnp.ones(3), 1)
        """,
        """
        import jax.numpy as jnp

        def main():
            return jnp.array([1.0, 0.0, 1.0])
        """,
    ),
    "at_typo": (
        """
        import jax.numpy as jnp

        def main():
            table = jnp.zeros(4)
            for s, r in zip([0, 2, 2, 3], [1.0, 0.5, 0.5, -1.0]):
                table.at[s] = table[s] + r
            return table
        """,
        """
        import jax.numpy as jnp

        def main():
            table = jnp.zeros(4)
            for s, r in zip([0, 2, 2, 3], [1.0, 0.5, 0.5, -1.0]):
                table = table.at[s].set(table[s] + r)
            return table
        """,
    ),
    "at_augmented_in_jit": (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def bump(x, i):
            x.at[i] += 1.0
            return x

        def main():
            return bump(jnp.zeros(3), 2)
        """,
        """
        import jax.numpy as jnp

        def main():
            return jnp.zeros(3).at[2].add(1.0)
        """,
    ),
    "discarded_updates": (
        """
        import jax.numpy as jnp

        def main():
            x = jnp.array([3.0, -1.0, 0.5, 2.0])
            jnp.clip(x, 0.0, 1.0)
            x.at[0].set(0.25)
            s = jnp.asarray([3, 1, 2])
            s.sort()
            return x, s
        """,
        """
        import jax.numpy as jnp

        def main():
            x = jnp.array([3.0, -1.0, 0.5, 2.0])
            x = jnp.clip(x, 0.0, 1.0)
            x = x.at[0].set(0.25)
            s = jnp.asarray([3, 1, 2])
            s = s.sort()
            return x, s
        """,
    ),
}


@pytest.fixture(scope="module")
def results():
    """Every case's original (fixed), intended and print programs, run under JAX at once."""
    jobs = {}
    for name, (original, intended) in CASES.items():
        jobs[f"{name}:fixed"] = (fixed(original), "main")
        jobs[f"{name}:intended"] = (textwrap.dedent(intended), "main")
    jobs["histogram_add:safe"] = (fixed(CASES["histogram_add"][0], unsafe=False), "main")
    for name, source in PRINTS.items():
        jobs[f"{name}:print-fixed"] = (fixed(source), "print")
        jobs[f"{name}:print-eager"] = (textwrap.dedent(source), "print-eager")
    return run_under_jax(jobs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fix_gives_the_intended_result(name, results):
    original, _ = CASES[name]
    text = fixed(original)
    assert text != textwrap.dedent(original)
    assert_same(results[f"{name}:fixed"], results[f"{name}:intended"])
    nothing_left(text)


def test_safe_fixes_alone_fix_local_in_place_updates(results):
    text = fixed(CASES["histogram_add"][0], unsafe=False)
    assert "counts = counts.at[v].add(1)" in text
    assert_same(results["histogram_add:safe"], results["histogram_add:intended"])


def test_parameter_fix_is_unsafe():
    original = CASES["annotated_parameter"][0]
    assert fixed(original, unsafe=False) == textwrap.dedent(original)


# ---- print -> jax.debug.print ------------------------------------------------------------------
PRINTS = {
    "plain": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def step(x):
            loss = jnp.sum(x ** 2)
            print("loss", loss)
            return x - 0.1 * loss
        """,
    "fstring_spec_and_static": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def step(x):
            print(f"norm {jnp.linalg.norm(x):.3f} of", x.shape, "items", sep=" | ")
            print("first", x[0], "last", x[-1])
            return x * 2
        """,
    "scan_body_and_missing_import": """
        import jax.numpy as jnp
        from jax import lax

        def cumulative(xs):
            def body(carry, x):
                carry = carry + x
                print("carry", carry)
                return carry, carry
            return lax.scan(body, 0.0, xs)[0]

        step = cumulative
        """,
    "aliased_import": """
        import jax as jx
        import jax.numpy as jnp

        @jx.jit
        def step(x):
            print("x:", x, "first:", x[0])
            return x + 1
        """,
}


@pytest.mark.parametrize("name", sorted(PRINTS))
def test_debug_print_fix_prints_on_every_call_what_print_meant(name, results):
    original = textwrap.dedent(PRINTS[name])
    text = fixed(original)
    assert "jax.debug.print" in text or "jx.debug.print" in text
    assert lint_source(text, "case.py", {"JAX404"}) == []
    # what `print` meant: the value on every call, as running without jit shows
    assert results[f"{name}:print-fixed"] == results[f"{name}:print-eager"]
    assert results[f"{name}:print-fixed"].count("\n") >= 2
    nothing_left(text)


def test_no_fix_for_literal_braces():
    source = textwrap.dedent(
        """
        import jax

        @jax.jit
        def f(x):
            print("{x}", x)
            return x
        """
    )
    (finding,) = lint_source(source, "a.py", {"JAX404"})
    assert finding.fix is None


def test_import_is_added_once():
    source = textwrap.dedent(
        """
        \"\"\"A module.\"\"\"
        from __future__ import annotations

        import jax.numpy as jnp
        from jax import jit

        @jit
        def f(x):
            print("a", x)
            print("b", x)
            return x
        """
    )
    text = fixed(source)
    assert text.count("import jax\n") == 1
    assert text.index("import jax\n") > text.index("from __future__")
    assert text.count("jax.debug.print") == 2


def test_cli_fix_end_to_end(cli, make_files, tmp_path):
    make_files({"a.py": CASES["at_typo"][0], "b.py": PRINTS["plain"]})
    out = cli("check", "--fix", "--select", "JAX4")
    assert "table = table.at[s].set(table[s] + r)" in (tmp_path / "a.py").read_text()
    assert "print(" in (tmp_path / "b.py").read_text()  # unsafe: left for --unsafe-fixes
    assert out.code == 1
    out = cli("check", "--fix", "--unsafe-fixes", "--select", "JAX4")
    assert out.code == 0
    assert 'jax.debug.print("loss {}", loss)' in (tmp_path / "b.py").read_text()
