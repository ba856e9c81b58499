"""Under `with jax.disable_jit():`, eager code's `jax.jit(f)(x)` calls `f` on `x`, and `lax` loops
and branches call their bodies in Python on concrete values: nothing there is traced. A body
traced anywhere else, or a transformation that still traces (`vmap`), is. JAX shows both sides."""

from __future__ import annotations

import pytest

from quiet_and_reported import case_tests, codes, run_under_jax

SCAN_PRINT = """
import jax
import jax.numpy as jnp

def cumsum(carry, x):
    carry = carry + x
    print(carry)
    return carry, carry

def demo():
    with jax.disable_jit():
        final, _ = jax.lax.scan(cumsum, 0, jnp.array([1, 2, 3]))
    assert int(final) == 6
"""

FORI_BRANCH = """
import jax
from jax import lax

def body(i, total):
    if i % 2:
        return total + int(total) + i
    return total + i

def demo():
    with jax.disable_jit():
        return lax.fori_loop(0, 4, body, 0)
"""

WHILE_AND_SWITCH = """
import jax
import jax.numpy as jnp
from jax import lax

def small(x):
    return bool(x < 5)

def grow(x):
    return x * 2 if x > 0 else x + 1

def demo():
    with jax.disable_jit():
        n = lax.while_loop(small, grow, jnp.asarray(1))
        return lax.switch(1, [lambda v: v, lambda v: v + 1 if v > 0 else v], n)
"""

# Only the branch taken runs: its print shows the number, the other one never prints.
COND_BRANCH_TAKEN = """
import jax
from jax import lax

def positive(x):
    print("positive", x)
    return x

def negative(x):
    print("negative", x)
    return -x

def demo():
    with jax.disable_jit():
        return lax.cond(True, positive, negative, 3.0)
"""

JIT_CALLED_IN_BLOCK = """
import jax
import jax.numpy as jnp

def step(x):
    if x.sum() > 0:
        return x - 1
    return x

def demo():
    with jax.disable_jit():
        return jax.jit(step)(jnp.ones(3))
"""

# Inside a jitted function, a fori_loop with Python bounds under `disable_jit` is a Python
# loop: its index is a Python int (its carry is the traced value it was given).
FORI_INDEX_INSIDE_JIT = """
import jax
import jax.numpy as jnp
from jax import lax

@jax.jit
def smooth(c):
    def body(j, c):
        return c.at[0].add(jnp.sum(c[j : j + 2]))

    with jax.disable_jit():
        return lax.fori_loop(0, 3, body, c)

def demo():
    return smooth(jnp.arange(5.0))
"""

QUIET = {
    "fori-index-inside-jit": FORI_INDEX_INSIDE_JIT,
    "scan-print": SCAN_PRINT,
    "fori-branch": FORI_BRANCH,
    "while-and-switch": WHILE_AND_SWITCH,
    "cond-branch-taken": COND_BRANCH_TAKEN,
    "jit-called-in-block": JIT_CALLED_IN_BLOCK,
}

REPORTED = {
    # The same body is scanned again outside the block: traced there.
    "body-also-scanned-outside": (
        FORI_BRANCH + """
def demo():
    with jax.disable_jit():
        lax.fori_loop(0, 4, body, 0)
    return lax.fori_loop(0, 4, body, 0)
""",
        "JAX101",
        "TracerBoolConversionError",
    ),
    "disable-jit-false": (
        FORI_BRANCH.replace("jax.disable_jit()", "jax.disable_jit(False)"),
        "JAX101",
        "TracerBoolConversionError",
    ),
    # `vmap` batches with tracers under `disable_jit` too.
    "vmap-in-block": (
        JIT_CALLED_IN_BLOCK.replace("jax.jit(step)(jnp.ones(3))", "jax.vmap(step)(jnp.ones((2, 3)))"),
        "JAX101",
        "TracerBoolConversionError",
    ),
    "jit-of-vmap-in-block": (
        JIT_CALLED_IN_BLOCK.replace("jax.jit(step)(jnp.ones(3))", "jax.jit(jax.vmap(step))(jnp.ones((2, 3)))"),
        "JAX101",
        "TracerBoolConversionError",
    ),
    # The block is inside a jitted function: the loop runs in Python, on its tracers.
    "block-inside-jit": (
        """
import jax
import jax.numpy as jnp

def clipped_cumsum(carry, x):
    if carry > 4:
        return carry, carry
    return carry + x, carry

@jax.jit
def run(start, xs):
    with jax.disable_jit():
        return jax.lax.scan(clipped_cumsum, start, xs)

def demo():
    return run(0.0, jnp.arange(4.0))
""",
        "JAX101",
        "TracerBoolConversionError",
    ),
    # Traced bounds: JAX stages the loop, and its index is a tracer.
    "fori-traced-bounds-inside-jit": (
        FORI_INDEX_INSIDE_JIT.replace("def smooth(c):", "def smooth(c, n):")
        .replace("lax.fori_loop(0, 3, body, c)", "lax.fori_loop(0, n, body, c)")
        .replace("smooth(jnp.arange(5.0))", "smooth(jnp.arange(5.0), 3)"),
        "JAX112",
        "IndexError",
    ),
    "fori-carry-branch-inside-jit": (
        FORI_INDEX_INSIDE_JIT.replace(
            "        return c.at[0].add(jnp.sum(c[j : j + 2]))",
            "        if c[0] > 0:\n            return c\n        return c + j",
        ),
        "JAX101",
        "TracerBoolConversionError",
    ),
    # A function defined in the block runs where it is called: after the block.
    "defined-in-block-called-after": (
        FORI_BRANCH.replace(
            "    with jax.disable_jit():\n        return lax.fori_loop(0, 4, body, 0)",
            "    with jax.disable_jit():\n        run = lambda: lax.fori_loop(0, 4, body, 0)\n    return run()",
        ),
        "JAX101",
        "TracerBoolConversionError",
    ),
}

(
    test_bodies_run_under_disable_jit_stay_quiet,
    test_bodies_traced_elsewhere_are_reported,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED)


def test_print_in_a_scan_body_is_reported_only_where_it_is_traced(cli, make_files):
    outside = SCAN_PRINT.replace("    with jax.disable_jit():\n        final", "    if True:\n        final")
    assert codes(cli, make_files, SCAN_PRINT) == []
    assert codes(cli, make_files, outside) == ["JAX404"]


def test_print_in_an_untaken_cond_branch_is_reported_only_where_both_are_traced(cli, make_files):
    outside = COND_BRANCH_TAKEN.replace("    with jax.disable_jit():\n        return", "    if True:\n        return")
    assert codes(cli, make_files, COND_BRANCH_TAKEN) == []
    assert codes(cli, make_files, outside) == ["JAX404", "JAX404"]


def test_jax_prints_numbers_under_disable_jit_and_a_tracer_without(capsys):
    pytest.importorskip("jax")
    run_under_jax(SCAN_PRINT)
    assert capsys.readouterr().out.split() == ["1", "3", "6"]
    run_under_jax(SCAN_PRINT.replace("    with jax.disable_jit():\n        final", "    if True:\n        final"))
    assert "Tracer" in capsys.readouterr().out


def test_jax_runs_only_the_branch_taken_under_disable_jit(capsys):
    pytest.importorskip("jax")
    run_under_jax(COND_BRANCH_TAKEN)
    assert capsys.readouterr().out.split() == ["positive", "3.0"]
    run_under_jax(COND_BRANCH_TAKEN.replace("    with jax.disable_jit():\n        return", "    if True:\n        return"))
    printed = capsys.readouterr().out
    assert "positive" in printed and "negative" in printed
