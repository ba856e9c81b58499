"""`jax.checkpoint` (`jax.remat`, `nnx.remat`, `nn.remat`) hands the arguments its `static_argnums`
names to the function as the caller's Python values, as `jax.jit` does; `static_argnames` it
accepts but traces all the same. JAX shows both sides."""

from __future__ import annotations

import ast

from jaxlint.analysis.tracing.static_arguments import static_parameters
from quiet_and_reported import case_tests

# The three ways to wrap: a rebinding call inside a jitted function, a decorator, a module-level wrap.
REBOUND_IN_JIT = """
import jax
import jax.numpy as jnp
from jax import lax

@jax.jit
def blockwise_sum(x):
    n_full, block, tail = 2, 3, 2

    def step(start, size, acc):
        chunk = lax.dynamic_slice_in_dim(x, start, size)
        return acc + jnp.sum(chunk)

    step = jax.checkpoint(step, static_argnums=(1,))
    acc = lax.fori_loop(0, n_full, lambda i, a: step(i * block, block, a), 0.0)
    return step(n_full * block, tail, acc)

def demo():
    return blockwise_sum(jnp.arange(8.0))
"""

DECORATED = """
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax

@partial(jax.checkpoint, static_argnums=(1,))
def head(x, size):
    return jnp.sum(lax.dynamic_slice_in_dim(x, 0, size))

@jax.jit
def step(x):
    return head(x, 3)

def demo():
    return step(jnp.arange(8.0))
"""

MODULE_LEVEL_REMAT = """
import jax
import jax.numpy as jnp
from jax import lax

def tail(x, size):
    if size > 4:
        size = 4
    return jnp.sum(lax.dynamic_slice_in_dim(x, 1, size))

tail_remat = jax.remat(tail, static_argnums=-1)

@jax.jit
def step(x):
    return tail_remat(x, 2)

def demo():
    return step(jnp.arange(8.0))
"""

NNX_REMAT = """
from functools import partial

import jax.numpy as jnp
from flax import nnx
from jax import lax

class Scale(nnx.Module):
    def __init__(self):
        self.w = nnx.Param(jnp.ones(()))

@partial(nnx.remat, static_argnums=(2,))
def head(model, x, size):
    return model.w * jnp.sum(lax.dynamic_slice_in_dim(x, 0, size))

@nnx.jit
def step(model, x):
    return head(model, x, 3)

def demo():
    return step(Scale(), jnp.arange(8.0))
"""

# Flax's lifted checkpoint counts the module as argument 0, as the function's signature does.
LINEN_REMAT = """
import flax.linen as nn
import jax
import jax.numpy as jnp
from jax import lax

def dense_head(module, x, size):
    return nn.Dense(1)(lax.dynamic_slice_in_dim(x, 0, size, axis=-1))

class Head(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.remat(dense_head, static_argnums=(2,))(self, x, 3)

def demo():
    x = jnp.ones((1, 8))
    params = Head().init(jax.random.PRNGKey(0), x)
    return jax.jit(Head().apply)(params, x)
"""

QUIET = {
    "rebound-in-jit": REBOUND_IN_JIT,
    "decorated": DECORATED,
    "module-level-remat": MODULE_LEVEL_REMAT,
    "nnx-remat": NNX_REMAT,
    "linen-remat": LINEN_REMAT,
}
REPORTED = {
    # Without `static_argnums` the slice size is a tracer.
    "rebound-without-static-argnums": (
        REBOUND_IN_JIT.replace("step = jax.checkpoint(step, static_argnums=(1,))", "step = jax.checkpoint(step)"),
        "JAX108",
        "TracerIntegerConversionError",
    ),
    "decorated-without-static-argnums": (
        DECORATED.replace("@partial(jax.checkpoint, static_argnums=(1,))", "@jax.checkpoint"),
        "JAX108",
        "TracerIntegerConversionError",
    ),
    # The static argument is the other one.
    "module-level-remat-other-argument": (
        MODULE_LEVEL_REMAT.replace("static_argnums=-1", "static_argnums=0"),
        "JAX101",
        "TracerBoolConversionError",
    ),
    # `jax.checkpoint` takes `static_argnames`, and traces the argument anyway.
    "static-argnames": (
        MODULE_LEVEL_REMAT.replace("jax.remat(tail, static_argnums=-1)", 'jax.checkpoint(tail, static_argnames=("size",))'),
        "JAX101",
        "TracerBoolConversionError",
    ),
}

(
    test_static_argnums_of_a_checkpoint_stay_quiet,
    test_traced_arguments_of_a_checkpoint_are_reported,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED)


def _function(text: str) -> ast.FunctionDef:
    node = ast.parse(text).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def _keywords(text: str) -> dict[str, ast.expr]:
    call = ast.parse(text, mode="eval").body
    assert isinstance(call, ast.Call)
    return {k.arg: k.value for k in call.keywords if k.arg}


def test_a_checkpoint_makes_static_only_what_static_argnums_names():
    fn = _function("def f(x, size, mode): pass")
    keywords = _keywords('t(static_argnums=(1,), static_argnames=("mode",))')
    assert static_parameters(fn, keywords, transform="jax.checkpoint") == {"size"}
    assert static_parameters(fn, keywords, transform="flax.nnx.remat") == {"size"}
    assert static_parameters(fn, keywords, transform="jax.jit") == {"size", "mode"}
