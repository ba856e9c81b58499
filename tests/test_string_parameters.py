"""A parameter annotated as a string holds a Python value, whatever the analysis makes of the
caller's argument: JAX never traces a string. A number or array annotation says nothing of the
kind, and the string parameter's neighbours stay what they are. JAX shows both sides."""

from __future__ import annotations

import ast
import textwrap

from jaxlint.analysis.module import ModuleFacts
from jaxlint.source import Source
from quiet_and_reported import case_tests

# A mode handed on through a module's `__call__` that declares no type for it, to methods that
# declare it a string (as the attention layers of large model code bases do).
THROUGH_CALL = """
import flax.linen as nn
import jax
import jax.numpy as jnp

MODE_DECODE = "decode"
MODE_TRAIN = "train"

class AttentionOp(nn.Module):
    def mask(self, q, model_mode: ANNOTATION):
        if model_mode == MODE_DECODE:
            return jnp.ones(q.shape[:1], bool)
        return jnp.tril(jnp.ones((q.shape[0], q.shape[0]), bool))

    def __call__(self, q, model_mode):
        return jnp.where(self.mask(q, model_mode), q.sum(), 0.0)

class Attention(nn.Module):
    @nn.compact
    def __call__(self, q, model_mode: str = MODE_TRAIN):
        op = AttentionOp()
        return op(q, model_mode)

def demo():
    q = jnp.ones((4, 2))
    params = Attention().init(jax.random.PRNGKey(0), q)
    return jax.jit(Attention().apply, static_argnums=2)(params, q, MODE_DECODE)
"""

# The neighbour of a string parameter, and numbers, stay traced.
NEIGHBOUR = """
import jax
import jax.numpy as jnp

def pool(x, how: str):
    if x.sum() > 0:
        return x.max()
    return x.mean()

@jax.jit
def step(x):
    return pool(x, "max")

def demo():
    return step(jnp.ones(3))
"""

NUMBER = """
from typing import Literal

import jax
import jax.numpy as jnp

def scale(x, n: ANNOTATION):
    if n > 0:
        return x * n
    return x

@jax.jit
def step(x, n):
    return scale(x, n)

def demo():
    return step(jnp.ones(3), 1)
"""

QUIET = {
    "str-through-a-module-call": THROUGH_CALL.replace("ANNOTATION", "str"),
    "string-annotation": THROUGH_CALL.replace("ANNOTATION", '"str"'),
    "literal-of-strings": THROUGH_CALL.replace("ANNOTATION", 'Literal["train", "decode"]').replace(
        "import flax.linen as nn", "from typing import Literal\n\nimport flax.linen as nn"
    ),
    "optional-str": THROUGH_CALL.replace("ANNOTATION", "Optional[str]").replace(
        "import flax.linen as nn", "from typing import Optional\n\nimport flax.linen as nn"
    ),
    "str-or-none": THROUGH_CALL.replace("ANNOTATION", "str | None"),
}
REPORTED = {
    "neighbour-of-a-string": (NEIGHBOUR, "JAX101", "TracerBoolConversionError"),
    "int-helper": (NUMBER.replace("ANNOTATION", "int"), "JAX101", "TracerBoolConversionError"),
    "literal-of-numbers": (NUMBER.replace("ANNOTATION", "Literal[0, 1]"), "JAX101", "TracerBoolConversionError"),
    "str-or-int-helper": (NUMBER.replace("ANNOTATION", "str | int"), "JAX101", "TracerBoolConversionError"),
}

(
    test_string_typed_parameters_stay_quiet,
    test_numbers_and_neighbours_are_reported,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED, needs=("jax", "flax"))


def _reads(text: str, function: str, name: str) -> set[str]:
    """What the analysis makes of each read of `name` in `function`."""
    module = ModuleFacts(Source.parse(textwrap.dedent(text)))
    fn = next(n for n in ast.walk(module.tree) if isinstance(n, ast.FunctionDef) and n.name == function)
    found = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            value = module.value(node)
            found.add(value.trace.name if value is not None else None)
    return found


def test_the_annotation_decides_where_the_caller_looks_traced():
    # The module's own `__call__` parameter, unannotated, is traced for lack of evidence; the
    # method it hands the value to declares a string.
    text = THROUGH_CALL.replace("ANNOTATION", "str").replace("model_mode: str = MODE_TRAIN", "model_mode")
    assert _reads(text, "mask", "model_mode") == {"STATIC"}
    assert _reads(NUMBER.replace("ANNOTATION", "int"), "scale", "n") == {"TRACED"}
