"""JAX108 on the arguments JAX needs concrete: calls JAX traces stay quiet (sizes from `x.shape`
or static arguments, traced starts and traced arrays where JAX takes them), and the same calls
with a traced size, count, offset or axis are reported and rejected by JAX."""

from __future__ import annotations

import pytest

from quiet_and_reported import case_tests, codes, run_under_jax

HEAD = """
from functools import partial
import jax
import jax.numpy as jnp
from jax import lax
"""

PAD_FROM_THE_SHAPE = HEAD + """
@jax.jit
def pad_to_four(x, y):
    return jnp.pad(x, (0, 4 - x.shape[0])), jnp.pad(y, (0, len(x) - jnp.shape(y)[0]))

def demo():
    return pad_to_four(jnp.ones(3), jnp.ones(2))
"""

PAD_FROM_PADTYPE = HEAD + """
@jax.jit
def same_pad(x):
    pads = lax.padtype_to_pads(x.shape[1:], (3,), (1,), "SAME")
    return jnp.pad(x, [(0, 0)] + pads)

def demo():
    return same_pad(jnp.ones((2, 5)))
"""

KERNEL_FROM_CONV_PERMUTATIONS = HEAD + """
@jax.jit
def patches(x, window=(1, 2, 2, 1)):
    lhs_perm = lax.conv_general_permutations(("NHWC", "HWIO", "NHWC"))[0]
    kernel_shape = [window[i] for i in lhs_perm[2:]]
    size = kernel_shape[0] * kernel_shape[1]
    eye = lax.eq(lax.broadcasted_iota(jnp.int32, (size, size), 0), lax.broadcasted_iota(jnp.int32, (size, size), 1))
    return x.sum() * eye

def demo():
    return patches(jnp.ones((1, 4, 4, 1)))
"""

PAD_FROM_A_TRACED_LENGTH = HEAD + """
@jax.jit
def pad_to(x, length):
    return jnp.pad(x, (0, length - x.shape[0]))

def demo():
    return pad_to(jnp.ones(3), 4)
"""

WINDOW_AT_A_TRACED_START = HEAD + """
@jax.jit
def window(x, i):
    return lax.dynamic_slice(x, (i,), (4,)), lax.dynamic_slice_in_dim(x, i, 2)

def demo():
    return window(jnp.arange(8.0), 2)
"""

WINDOW_OF_A_TRACED_SIZE = HEAD + """
@jax.jit
def window(x, i, n):
    return lax.dynamic_slice(x, (i,), (n,))

def demo():
    return window(jnp.arange(8.0), 2, 3)
"""

STATIC_SLICE_OF_A_TRACED_START = HEAD + """
@jax.jit
def tail(x, i):
    return lax.slice(x, (i,), (8,))

def demo():
    return tail(jnp.arange(8.0), 2)
"""

SPLIT_INTO_A_STATIC_COUNT = HEAD + """
@partial(jax.jit, static_argnames="n")
def noise(key, x, n):
    keys = jax.random.split(key, n)
    return x + jax.random.gamma(keys[0], x, (n,) + x.shape)

def demo():
    return noise(jax.random.key(0), jnp.ones(3), 2)
"""

SPLIT_INTO_A_TRACED_COUNT = HEAD + """
@jax.jit
def keys(key, n):
    return jax.random.split(key, n)

def demo():
    return keys(jax.random.key(0), 2)
"""

SHAPE_BESIDE_KEYWORD_SPLAT = HEAD + """
@jax.jit
def buffer(x, n):
    options = {"dtype": x.dtype}
    return jnp.zeros((n,), **options)

def demo():
    return buffer(jnp.ones(3), 2)
"""

SAMPLE_OF_A_TRACED_SHAPE = HEAD + """
@jax.jit
def draw(key, lo, n):
    return jax.random.truncated_normal(key, lo, 1.0, (n,))

def demo():
    return draw(jax.random.key(0), -1.0, 3)
"""

PERMUTATION_OF_AN_ARRAY = HEAD + """
@jax.jit
def shuffle(key, x):
    return jax.random.permutation(key, x)

def demo():
    return shuffle(jax.random.key(0), jnp.arange(5))
"""

ARRAYS_WHERE_JAX_TAKES_A_COUNT_OR_AN_ARRAY = HEAD + """
@jax.jit
def summarize(key, x, edges):
    counts, _ = jnp.histogram(x, bins=edges)
    choose, shuffle = jax.random.split(key)
    return counts, jax.random.choice(choose, x, (2,)), jax.random.permutation(shuffle, edges)

def demo():
    return summarize(jax.random.key(0), jnp.arange(6.0), jnp.array([0.0, 2.0, 6.0]))
"""

SECTIONS_FROM_A_TRACED_COUNT = HEAD + """
@jax.jit
def halves(x, n):
    return jnp.split(x, n)

def demo():
    return halves(jnp.arange(6.0), 2)
"""

OFFSET_FROM_THE_SHAPE = HEAD + """
@jax.jit
def band(m):
    return jnp.tril(m, m.shape[0] - 2), jnp.diag(m[0], k=1)

def demo():
    return band(jnp.ones((3, 3)))
"""

TRACED_OFFSET = HEAD + """
@jax.jit
def band(m, k):
    return jnp.triu(m, k)

def demo():
    return band(jnp.ones((3, 3)), 1)
"""

STATIC_AXIS = HEAD + """
@partial(jax.jit, static_argnames="axis")
def normalize(x, axis):
    return x / jnp.sum(x, axis=axis, keepdims=True), jnp.concatenate([x, x], x.ndim - 1)

def demo():
    return normalize(jnp.ones((2, 3)), 1)
"""

TRACED_AXIS = HEAD + """
@jax.jit
def last(x, axis):
    return jnp.moveaxis(x, axis, -1)

def demo():
    return last(jnp.ones((2, 3)), 0)
"""

METHODS_WITH_STATIC_ARGUMENTS = HEAD + """
@partial(jax.jit, static_argnames="axis")
def spread(x, counts, axis):
    low = x.at[0].min(counts[0])
    return x.sum(axis).repeat(counts, total_repeat_length=8), low.swapaxes(axis, 0)

def demo():
    return spread(jnp.ones((2, 3)), jnp.array([1, 2, 3]), 0)
"""

METHOD_WITH_A_TRACED_AXIS = HEAD + """
@jax.jit
def totals(x, axis):
    return x.cumsum(axis=axis)

def demo():
    return totals(jnp.ones((2, 3)), 1)
"""

METHOD_WITH_TRACED_COUNTS = HEAD + """
@jax.jit
def spread(x, counts):
    return x.repeat(counts)

def demo():
    return spread(jnp.ones(3), jnp.array([1, 2, 3]))
"""

QUIET = {
    "pad-from-the-shape": PAD_FROM_THE_SHAPE,
    "pad-from-padtype-to-pads": PAD_FROM_PADTYPE,
    "kernel-from-conv-permutations": KERNEL_FROM_CONV_PERMUTATIONS,
    "window-at-a-traced-start": WINDOW_AT_A_TRACED_START,
    "split-into-a-static-count": SPLIT_INTO_A_STATIC_COUNT,
    "permutation-of-an-array": PERMUTATION_OF_AN_ARRAY,
    "arrays-where-jax-takes-a-count-or-an-array": ARRAYS_WHERE_JAX_TAKES_A_COUNT_OR_AN_ARRAY,
    "offset-from-the-shape": OFFSET_FROM_THE_SHAPE,
    "static-axis": STATIC_AXIS,
    "methods-with-static-arguments": METHODS_WITH_STATIC_ARGUMENTS,
}
REPORTED = {
    "pad-from-a-traced-length": (PAD_FROM_A_TRACED_LENGTH, "JAX108", "ConcretizationTypeError"),
    "window-of-a-traced-size": (WINDOW_OF_A_TRACED_SIZE, "JAX108", "TypeError"),
    "static-slice-of-a-traced-start": (STATIC_SLICE_OF_A_TRACED_START, "JAX108", "TypeError"),
    "split-into-a-traced-count": (SPLIT_INTO_A_TRACED_COUNT, "JAX108", "TypeError"),
    "sample-of-a-traced-shape": (SAMPLE_OF_A_TRACED_SHAPE, "JAX108", "TypeError"),
    "shape-beside-a-keyword-splat": (SHAPE_BESIDE_KEYWORD_SPLAT, "JAX108", "TypeError"),
    "sections-from-a-traced-count": (SECTIONS_FROM_A_TRACED_COUNT, "JAX108", "ConcretizationTypeError"),
    "traced-offset": (TRACED_OFFSET, "JAX108", "ValueError"),
    "traced-axis": (TRACED_AXIS, "JAX108", "ConcretizationTypeError"),
    "method-with-a-traced-axis": (METHOD_WITH_A_TRACED_AXIS, "JAX108", "ValueError"),
    "method-with-traced-counts": (METHOD_WITH_TRACED_COUNTS, "JAX108", "ConcretizationTypeError"),
}

(
    test_sizes_jax_accepts_stay_quiet,
    test_traced_sizes_are_reported,
    test_jax_traces_the_quiet_cases,
    test_jax_rejects_the_reported_cases,
) = case_tests(QUIET, REPORTED)


# `eqx.filter_vmap` maps arrays only: a Python count passes through it as it is.
COUNT_THROUGH_FILTER_VMAP = HEAD + """
import equinox as eqx

def draws(key, size, n):
    @eqx.filter_vmap
    def one(key, row, size, n):
        return jax.random.choice(key, jnp.arange(size) + row, (n,), replace=False)

    return one(jax.random.split(key, size), jnp.arange(size), size, n)

@jax.jit
def sample(key, x):
    return draws(key, x.shape[0], 2)

def demo():
    return sample(jax.random.key(0), jnp.ones(4))
"""


def test_a_python_count_through_filter_vmap_stays_quiet(cli, make_files):
    assert codes(cli, make_files, COUNT_THROUGH_FILTER_VMAP) == []


def test_equinox_passes_a_python_count_through_filter_vmap():
    pytest.importorskip("jax")
    pytest.importorskip("equinox")
    run_under_jax(COUNT_THROUGH_FILTER_VMAP)
