"""A JAX operation transformed by `jit`/`vmap` (`jax.vmap(jnp.var)`), or with arguments fixed by
`functools.partial`, is still that operation: called in traced code it returns a traced array.
Its shape stays a Python value, and in eager code it computes concrete arrays."""

from __future__ import annotations

from quiet_and_reported import case_tests

# A group norm's per-group variance, clamped with Python's `max` (JAX refuses the truth of a
# comparison with more than one element before it looks for a tracer).
MAPPED_PARTIAL = """
import functools as ft

import jax
import jax.numpy as jnp

@jax.jit
def group_norm(x):
    y = x.reshape(2, -1)
    variance = jax.vmap(ft.partial(jnp.var, keepdims=True))(y)
    variance = max(0.0, variance)
    return (y - y.mean()) / jnp.sqrt(variance + 1e-5)

def demo():
    return group_norm(jnp.arange(6.0))
"""
JITTED_OPERATION = """
import jax
import jax.numpy as jnp

@jax.jit
def clip(g):
    norm = jax.jit(jnp.linalg.norm)(g)
    if norm > 1.0:
        g = g / norm
    return g

def demo():
    return clip(jnp.ones(3))
"""
BOUND_THEN_CALLED = """
import jax
import jax.numpy as jnp

@jax.jit
def pick(a, b):
    finite = jax.vmap(jnp.isfinite)
    return a if finite(a).all() else b

def demo():
    return pick(jnp.ones(3), jnp.zeros(3))
"""

SHAPE_OF_A_MAPPED_OPERATION = MAPPED_PARTIAL.replace(
    "variance = max(0.0, variance)", "variance = variance if variance.shape[0] > 1 else variance * 2"
)
EAGER_MAPPED_OPERATION = """
import functools as ft

import jax
import jax.numpy as jnp

def demo():
    variance = jax.vmap(ft.partial(jnp.var, keepdims=True))(jnp.arange(6.0).reshape(2, 3))
    return max(0.0, float(variance.max()))
"""

QUIET = {
    "shape-of-a-mapped-operation": SHAPE_OF_A_MAPPED_OPERATION,
    "eager-mapped-operation": EAGER_MAPPED_OPERATION,
}
REPORTED = {
    "mapped-partial": (MAPPED_PARTIAL, "JAX113", "ValueError"),
    "jitted-operation": (JITTED_OPERATION, "JAX101", "TracerBoolConversionError"),
    "bound-then-called": (BOUND_THEN_CALLED, "JAX101", "TracerBoolConversionError"),
}

(
    test_look_alikes_stay_quiet,
    test_a_transformed_operation_is_traced,
    test_jax_traces_the_quiet_cases,
    test_jax_rejects_the_reported_cases,
) = case_tests(QUIET, REPORTED)
