"""A Pallas kernel given values of the trace around it: `pallas_call(partial(kernel, scale=s))`
inside transformed code fixes a tracer, and the kernel's Python branch on it fails; fixed in eager
code, the value is a Python one. Each framework's traced code building the kernel call, the
kernel in the same module or another one; JAX agrees on each (Pallas interpreted on the CPU).
JAX refuses such a kernel whatever it does with the value (it may capture no value of the trace
around it); the branch is what jaxlint reports."""

from __future__ import annotations

from module_matrix import helper_matrix, matrix_tests
from quiet_and_reported import case_tests

BRANCHING = """
import functools

from jax.experimental import pallas as pl


def kernel(x_ref, o_ref, *, scale):
    if scale > 1.0:  # JAX101
        o_ref[...] = x_ref[...] * scale
    else:
        o_ref[...] = x_ref[...]


def scaled(x):
    call = pl.pallas_call(
        functools.partial(kernel, scale=jnp.max(x) + 1.0),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        interpret=True,
    )
    return call(x)
"""
# The fix JAX asks for: the value is an input of the kernel (a kernel may not capture values of
# the trace around it at all, `ValueError: ... captures constants`), read from its reference.
AS_INPUT = """
from jax.experimental import pallas as pl


def kernel(x_ref, scale_ref, o_ref):
    scale = scale_ref[0]
    o_ref[...] = jnp.where(scale > 1.0, x_ref[...] * scale, x_ref[...])


def scaled(x):
    call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=True)
    return call(x, jnp.reshape(jnp.max(x) + 1.0, (1,)))
"""

(test_kernel_partials_across_frameworks_and_modules, test_jax_traces_kernel_partials) = matrix_tests(
    helper_matrix("scaled", BRANCHING, AS_INPUT, "TracerBoolConversionError")
)

# Fixed in eager code, from a Python number: the kernel branches on a Python value.
EAGER_PARTIAL = """
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, o_ref, *, scale):
    if scale > 1.0:
        o_ref[...] = x_ref[...] * scale
    else:
        o_ref[...] = x_ref[...]


def build(scale):
    return pl.pallas_call(
        functools.partial(kernel, scale=scale), out_shape=jax.ShapeDtypeStruct((4,), jnp.float32), interpret=True
    )


double = jax.jit(build(2.0))


def demo():
    return double(jnp.ones(4))
"""

(test_an_eager_partial_stays_quiet, _, test_jax_runs_the_eager_partial, _) = case_tests({"eager-partial": EAGER_PARTIAL}, {})
