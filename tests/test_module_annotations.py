"""What a Module `__call__` parameter's annotation says: a literal or tuple type (inline or an
alias the module binds) holds Python values, a type of another package that names no array is
not taken for an array, and an array type, a union with one, or no annotation stays traced.
JAX shows both sides."""

from __future__ import annotations

import ast
import textwrap

from jaxlint.analysis.module import ModuleFacts
from jaxlint.source import Source
from quiet_and_reported import case_tests

# The caller passes `x.shape` and a string: Python values, whatever the framework traces.
CALLER = """

class AddPos(nn.Module):
    @nn.compact
    def __call__(self, x):
        return x + LearnedPos()(x.shape, "train")

def demo():
    x = jnp.ones((2, 4, 8))
    params = AddPos().init(jax.random.PRNGKey(0), x)
    return jax.jit(AddPos().apply)(params, x)
"""

INLINE = """
from typing import Literal

import flax.linen as nn
import jax
import jax.numpy as jnp

class LearnedPos(nn.Module):
    @nn.compact
    def __call__(self, shape: tuple[int, ...], mode: Literal["train", "decode"]):
        pe = self.param("pe", nn.initializers.zeros, shape[-2:])
        if mode != "decode":
            pe = pe * 2
        return jnp.broadcast_to(pe, shape)
""" + CALLER

ALIASES = """
from typing import Literal, Tuple

import flax.linen as nn
import jax
import jax.numpy as jnp
from typing_extensions import TypeAlias

Shape = Tuple[int, ...]
Mode: TypeAlias = Literal["train", "decode"]

class LearnedPos(nn.Module):
    @nn.compact
    def __call__(self, shape: Shape, mode: Mode):
        pe = self.param("pe", nn.initializers.zeros, shape[-2:])
        if mode != "decode":
            pe = pe * 2
        return jnp.broadcast_to(pe, shape)
""" + CALLER

# Types of a package the analysis does not see, which name no array type.
OTHER_PACKAGE = """
from __future__ import annotations

from typing import TYPE_CHECKING

import flax.linen as nn
import jax
import jax.numpy as jnp

if TYPE_CHECKING:
    from mylib.types import Mode, Shape

class LearnedPos(nn.Module):
    @nn.compact
    def __call__(self, shape: Shape, mode: Mode):
        pe = self.param("pe", nn.initializers.zeros, shape[-2:])
        if mode != "decode":
            pe = pe * 2
        return jnp.broadcast_to(pe, shape)
""" + CALLER

NNX_LITERAL = """
from typing import Literal

import jax.numpy as jnp
from flax import nnx

class Head(nnx.Module):
    def __init__(self, rngs):
        self.dense = nnx.Linear(4, 4, rngs=rngs)

    def __call__(self, x: jnp.ndarray, mode: Literal["train", "decode"]):
        if mode == "decode":
            return self.dense(x[:, -1:])
        return self.dense(x)

@nnx.jit(static_argnames="mode")
def step(model, x, mode):
    return model(x, mode)

def demo():
    return step(Head(nnx.Rngs(0)), jnp.ones((2, 3, 4)), "decode")
"""

# An array argument: the module receives the caller's tracer.
ARRAY_PARAMETER = """
from __future__ import annotations

from typing import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

Tokens = Float[Array, "b n"]

class Gate(nn.Module):
    @nn.compact
    def __call__(self, x: ANNOTATION):
        if x.sum() > 0:
            return x
        return -x

def demo():
    x = jnp.ones((2, 3))
    return jax.jit(Gate().apply)({}, x)
"""

UNDER_JIT = """
from typing import Literal

import jax
import jax.numpy as jnp

@jax.jit
def step(x, mode: ANNOTATION):
    if mode == 1:
        return x * 2
    return x

def demo():
    return step(jnp.ones(3), 1)
"""

QUIET = {
    "literal-and-tuple-inline": INLINE,
    "aliases-in-the-module": ALIASES,
    "types-of-another-package": OTHER_PACKAGE,
    "nnx-literal": NNX_LITERAL,
}
REPORTED = {
    "array-annotation": (ARRAY_PARAMETER.replace("ANNOTATION", "jax.Array"), "JAX101", "TracerBoolConversionError"),
    "array-alias": (ARRAY_PARAMETER.replace("ANNOTATION", "Tokens"), "JAX101", "TracerBoolConversionError"),
    "jaxtyping-scalar": (
        ARRAY_PARAMETER.replace("from jaxtyping import Array, Float", "from jaxtyping import Array, Float, Scalar")
        .replace("ANNOTATION", "Scalar").replace("x = jnp.ones((2, 3))", "x = jnp.float32(1.0)"),
        "JAX101",
        "TracerBoolConversionError",
    ),
    "union-with-an-array": (
        ARRAY_PARAMETER.replace("ANNOTATION", "jax.Array | Sequence[float]"), "JAX101", "TracerBoolConversionError"
    ),
    "string-annotation-of-an-array": (
        ARRAY_PARAMETER.replace("ANNOTATION", '"Float[Array, \'b n\']"'), "JAX101", "TracerBoolConversionError"
    ),
    "unannotated": (ARRAY_PARAMETER.replace("x: ANNOTATION", "x"), "JAX101", "TracerBoolConversionError"),
    # Under `jax.jit` an annotation makes nothing static: a literal int is traced.
    "literal-under-jit": (UNDER_JIT.replace("ANNOTATION", "Literal[0, 1]"), "JAX101", "TracerBoolConversionError"),
    "int-under-jit": (UNDER_JIT.replace("ANNOTATION", "int"), "JAX101", "TracerBoolConversionError"),
}

(
    test_python_typed_module_parameters_stay_quiet,
    test_array_typed_and_jitted_parameters_are_reported,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED)


def _parameter_values(text: str) -> dict[str, str]:
    """What the analysis makes of each parameter of the module's `__call__`, read where it is used."""
    module = ModuleFacts(Source.parse(textwrap.dedent(text)))
    call = next(n for n in ast.walk(module.tree) if isinstance(n, ast.FunctionDef) and n.name == "__call__")
    params = {p.arg for p in call.args.args[1:]}
    out = {}
    for node in ast.walk(call):
        if isinstance(node, ast.Name) and node.id in params and node.id not in out:
            value = module.value(node)
            out[node.id] = value.trace.name if value is not None else None
    return out


def test_a_literal_or_a_tuple_alias_is_a_python_value_and_a_foreign_type_is_unknown():
    # Without the module's call in view only the annotation speaks (what callers pass is
    # evidence too: tests/test_module_callers.py).
    assert _parameter_values(ALIASES.replace(CALLER, "")) == {"shape": "STATIC", "mode": "STATIC"}
    assert _parameter_values(OTHER_PACKAGE.replace(CALLER, "")) == {"shape": "UNKNOWN", "mode": "UNKNOWN"}
    assert _parameter_values(ARRAY_PARAMETER.replace("ANNOTATION", "Tokens")) == {"x": "TRACED"}
