"""A loop body's carry has the structure the body returns (JAX requires it): an item the body
returns as a JAX array is an array on entry, even where the initial value's syntax does not
show it (a name, a parameter). An initial value bound once to a name, or a tuple repeated, is
read through. A carried tuple stays a tuple, whose truth is its length."""

from __future__ import annotations

import textwrap

import pytest
from marks import family_marks

from jaxlint.linter import lint_source

marked = family_marks(r"JAX101")

# Eager code hands the loop a carry built from parameters: only the body's return shows that
# `enabled` is an array.
WHILE_FROM_EAGER = """
import jax.numpy as jnp
from jax import lax

def refine(x, enabled):
    def cond(vals):
        enabled, _, i = vals
        return jnp.logical_and(jnp.any(enabled), i < 10)

    def body(vals):
        enabled, x, i = vals
        x = x * 0.5 if enabled else x  # JAX101
        going = jnp.logical_and(enabled, x > 1e-3)
        return going, x, i + 1

    init = (enabled, x, 0)
    return lax.while_loop(cond, body, init)
"""

FORI_IN_JIT = """
import jax
import jax.numpy as jnp
from jax import lax

@jax.jit
def count(x, flags):
    def body(i, carry):
        done, total = carry
        total = total if done else total + x[i]  # JAX101
        return jnp.greater(total, 10.0), total
    return lax.fori_loop(0, 4, body, flags)
"""

SCAN_CARRY = """
import jax.numpy as jnp
from jax import lax

def run(xs, state):
    def step(carry, x):
        seen, acc = carry
        acc = acc if seen else acc + x  # JAX101
        now_seen = jnp.logical_or(seen, x > 0)
        return (now_seen, acc), acc
    return lax.scan(step, state, xs)
"""

# The carry's second item is a pair the body hands back as it is: a Python tuple of tracers.
CARRIED_PAIR = """
import jax.numpy as jnp
from jax import lax

def refine(x, bounds):
    def cond(vals):
        going, _, _ = vals
        return going

    def body(vals):
        going, x, pair = vals
        x = x * 0.5 if pair else x
        return jnp.greater(x, 1.0), x, pair

    return lax.while_loop(cond, body, (x > 1.0, x, bounds))
"""

# The returned item is bound to an array on one path and to the carried value on another.
MIXED_BINDING = """
import jax.numpy as jnp
from jax import lax

def refine(x, flag, opts):
    def body(vals):
        flag, x = vals
        if opts.strict:
            flag = jnp.any(x > 0)
        else:
            flag = vals[0]
        x = x + 1 if flag else x
        return flag, x

    return lax.while_loop(lambda v: v[1].sum() < 10, body, (flag, x))
"""


# The initial value, through a name bound once: a tuple of Python ints repeated per grid axis,
# each a traced scalar in the body.
REPEATED_INDICES = """
from jax import lax

def walk(n, grid):
    start = (0,) * len(grid)
    def body(step, indices):
        first = indices[0]
        return tuple(i + 1 if first > 0 else i for i in indices)  # JAX101
    return lax.fori_loop(0, n, body, start)
"""

# Each item is a pair: a Python tuple of tracers, whose truth is its length.
REPEATED_PAIRS = """
from jax import lax

def walk(n, grid):
    start = ((0, 1),) * len(grid)
    def body(step, pairs):
        first = pairs[0]
        return tuple((lo + 1, hi) if first else (lo, hi) for lo, hi in pairs)
    return lax.fori_loop(0, n, body, start)
"""


def _found(source: str) -> set[tuple[int, str]]:
    return {(f.start.row, f.code) for f in lint_source(textwrap.dedent(source), "case.py", {"JAX101"})}


@pytest.mark.parametrize(
    "source", [WHILE_FROM_EAGER, FORI_IN_JIT, SCAN_CARRY, REPEATED_INDICES], ids=["while", "fori", "scan", "repeated"]
)
def test_an_item_the_body_returns_as_an_array_is_one_on_entry(source):
    source = textwrap.dedent(source)
    assert _found(source) == marked(source) != set()


@pytest.mark.parametrize(
    "source", [CARRIED_PAIR, MIXED_BINDING, REPEATED_PAIRS], ids=["carried-pair", "mixed-binding", "repeated-pairs"]
)
def test_an_item_not_shown_to_be_an_array_stays_quiet(source):
    assert _found(source) == set()


def _run(source: str, name: str, *args):
    namespace: dict = {}
    exec(textwrap.dedent(source), namespace)
    return namespace[name](*args)


def test_jax_rejects_the_branch_on_a_carried_array():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    with pytest.raises(jax.errors.TracerBoolConversionError):
        _run(WHILE_FROM_EAGER, "refine", jnp.float32(4.0), jnp.bool_(True))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        _run(FORI_IN_JIT, "count", jnp.ones(4), (jnp.bool_(False), jnp.float32(0.0)))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        _run(SCAN_CARRY, "run", jnp.ones(3), (jnp.bool_(False), jnp.float32(0.0)))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        _run(REPEATED_INDICES, "walk", 2, (4, 4))


def test_jax_takes_the_truth_of_a_carried_tuple():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    going, x, _ = _run(CARRIED_PAIR, "refine", jnp.float32(4.0), (jnp.float32(0.0), jnp.float32(1.0)))
    assert float(x) == 1.0 and not bool(going)
    assert [(int(lo), int(hi)) for lo, hi in _run(REPEATED_PAIRS, "walk", 2, (4, 4))] == [(2, 1), (2, 1)]
