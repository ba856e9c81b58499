"""Calls of callables that a library made from code jaxlint cannot follow (`jax.grad(loss_fn)(p)`,
`nn.Dense(4)(x)`): what they return inside traced code.

Each quiet program runs under JAX (when installed) without error; each reported one is what
jaxlint reports and JAX rejects.
"""

from __future__ import annotations

import pytest

from quiet_and_reported import case_tests

# The loss function is a parameter of the factory: the analysis cannot follow it.
GRADIENT_OF_AN_UNKNOWN_FUNCTION = """
import jax
import jax.numpy as jnp

def make_step(loss_fn):
    @jax.jit
    def step(params, x):
        loss, grads = jax.value_and_grad(loss_fn)(params, x)
        scale = 2.0 if loss.shape == () else 1.0
        return params - 0.1 * scale * grads, loss
    return step

def demo():
    return make_step(lambda p, x: jnp.sum((p * x) ** 2))(jnp.ones(3), jnp.ones(3))
"""

REPORTED_GRADIENT = GRADIENT_OF_AN_UNKNOWN_FUNCTION.replace(
    "scale = 2.0 if loss.shape == () else 1.0", "scale = 2.0 if loss > 1.0 else 1.0"
)

GRADIENT_ONLY = """
import jax
import jax.numpy as jnp

def make_step(loss_fn):
    @jax.jit
    def step(params, x):
        grads = jax.grad(loss_fn)(params, x)
        return params - 0.1 * grads
    return step

def demo():
    return make_step(lambda p, x: jnp.sum((p * x) ** 2))(jnp.ones(3), jnp.ones(3))
"""

REPORTED_GRADIENT_ONLY = GRADIENT_ONLY.replace(
    "return params - 0.1 * grads", "return params - 0.1 * float(grads.sum()) * grads"
)

# With `has_aux=True` the auxiliary output is the function's own: here a Python string.
AUXILIARY_OUTPUT = """
import jax
import jax.numpy as jnp

def make_step(loss_fn):
    @jax.jit
    def step(params, x):
        (loss, note), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, x)
        if note:
            grads = grads * 2
        return params - 0.1 * grads
    return step

def demo():
    return make_step(lambda p, x: (jnp.sum((p * x) ** 2), "mse"))(jnp.ones(3), jnp.ones(3))
"""

REPORTED_AUXILIARY = AUXILIARY_OUTPUT.replace("if note:", "if loss > 1.0:")

# `jax.vmap(f)(x)` returns what `f` returns, every leaf a batched array: a tuple stays a tuple
# (its truth is its length), a comparison a traced boolean array.
VMAPPED_TUPLE = """
import jax
import jax.numpy as jnp

@jax.jit
def resample(x):
    pair = jax.vmap(lambda a: (a, a > 0))(x)
    return x.sum() if pair else x.mean()

def demo():
    return resample(jnp.ones(1))
"""
REPORTED_VMAPPED_PREDICATE = VMAPPED_TUPLE.replace(
    "pair = jax.vmap(lambda a: (a, a > 0))(x)", "pair = jax.vmap(lambda a: a > 0)(x)"
)

QUIET = {
    "vmapped_tuple": VMAPPED_TUPLE,
    "value_and_grad_of_an_unknown_function": GRADIENT_OF_AN_UNKNOWN_FUNCTION,
    "grad_of_an_unknown_function": GRADIENT_ONLY,
    "auxiliary_output_of_an_unknown_function": AUXILIARY_OUTPUT,
}
REPORTED = {
    "vmapped_predicate": (REPORTED_VMAPPED_PREDICATE, "JAX101", "TracerBoolConversionError"),
    "value_and_grad_of_an_unknown_function": (REPORTED_GRADIENT, "JAX101", "TracerBoolConversionError"),
    "grad_of_an_unknown_function": (REPORTED_GRADIENT_ONLY, "JAX105", "ConcretizationTypeError"),
    "auxiliary_output_of_an_unknown_function": (REPORTED_AUXILIARY, "JAX101", "TracerBoolConversionError"),
}

(
    test_quiet_programs_stay_quiet,
    test_reported_programs_are_reported,
    test_jax_traces_the_quiet_programs,
    test_jax_rejects_the_reported_programs,
) = case_tests(QUIET, REPORTED)


LAYER_APPLIED = """
import jax
import jax.numpy as jnp
import flax.linen as nn

class Head(nn.Module):
    @nn.compact
    def __call__(self, x):
        h = nn.Dense(4)(x)
        if h.mean() > 0:  # JAX101
            h = -h
        if h.shape[-1] > 2:
            h = h * 2
        return h
"""


def test_a_layer_applied_to_a_traced_input_is_a_traced_array(cli, make_files):
    make_files({"m.py": LAYER_APPLIED})
    found = cli("check", "--no-cache", "--output-format", "json", "m.py").json
    assert [(f["code"], f["location"]["row"]) for f in found] == [("JAX101", 10)]


def test_branching_on_a_layer_output_fails_under_jit():
    jax = pytest.importorskip("jax")
    pytest.importorskip("flax")
    namespace: dict = {}
    exec(LAYER_APPLIED, namespace)
    head = namespace["Head"]()
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(lambda x: head.init_with_output(jax.random.key(0), x))(jax.numpy.ones((1, 3)))
