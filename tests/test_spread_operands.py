"""Operands of `lax.cond` and `lax.switch` spread from a tuple (`*(x, state)`, `*operands`): each
branch receives the tuple's items, one per parameter, as if they were passed one by one, so a
NamedTuple among them keeps its fields (traced leaves) and a dataclass its static fields.
A `*` argument whose length is not known says nothing of which parameter gets what."""

from __future__ import annotations

from quiet_and_reported import case_tests

# A NamedTuple operand spread from a tuple literal: its fields are traced in the branch.
SPREAD_NAMED_TUPLE = """
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

class State(NamedTuple):
    count: jax.Array
    total: jax.Array

@jax.jit
def step(x, state: State):
    def grow(x, state):
        done = state.count == 3
        return x + 1.0 if done else x

    def keep(x, state):
        return x

    return lax.cond(x.sum() > 0, grow, keep, *(x, state))

def demo():
    return step(jnp.ones(2), State(jnp.int32(0), jnp.float32(0.0)))
"""

# The same through a name bound to the tuple, and through `lax.switch`.
SPREAD_NAME = SPREAD_NAMED_TUPLE.replace(
    "return lax.cond(x.sum() > 0, grow, keep, *(x, state))",
    "operands = (x, state)\n    return lax.cond(x.sum() > 0, grow, keep, *operands)",
)
SPREAD_INTO_SWITCH = SPREAD_NAMED_TUPLE.replace(
    "return lax.cond(x.sum() > 0, grow, keep, *(x, state))",
    "return lax.switch(jnp.int32(1), [keep, grow], *(x, state))",
)

# Tricky look-alikes JAX accepts: a dataclass operand's static field, a shape, and a `*args`
# whose length the analysis does not know (which parameter gets the NamedTuple is unknown).
STATIC_FIELD_SPREAD = """
import dataclasses

import jax
import jax.numpy as jnp
from jax import lax

@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Config:
    value: jax.Array
    scale: float = dataclasses.field(default=1.0, metadata=dict(static=True))

@jax.jit
def step(x, config: Config):
    def scaled(x, config):
        if config.scale > 1.0:
            return x * config.scale
        return x

    return lax.cond(x.sum() > 0, scaled, lambda x, config: x, *(x, config))

def demo():
    return step(jnp.ones(2), Config(jnp.ones(2), 2.0))
"""
SHAPE_OF_A_SPREAD_OPERAND = SPREAD_NAMED_TUPLE.replace(
    "done = state.count == 3\n        return x + 1.0 if done else x",
    "return x + 1.0 if x.shape[0] > 1 else x",
)
SPREAD_OF_UNKNOWN_LENGTH = """
import jax
import jax.numpy as jnp
from jax import lax

def apply(pred, *operands):
    def first(x, scale=None):
        return x if scale is None else x * scale

    return lax.cond(pred, first, first, *operands)

@jax.jit
def step(x):
    return apply(x.sum() > 0, x)

def demo():
    return step(jnp.ones(2))
"""

QUIET = {
    "static-field-spread": STATIC_FIELD_SPREAD,
    "shape-of-a-spread-operand": SHAPE_OF_A_SPREAD_OPERAND,
    "spread-of-unknown-length": SPREAD_OF_UNKNOWN_LENGTH,
}
REPORTED = {
    "spread-named-tuple": (SPREAD_NAMED_TUPLE, "JAX101", "TracerBoolConversionError"),
    "spread-name": (SPREAD_NAME, "JAX101", "TracerBoolConversionError"),
    "spread-into-switch": (SPREAD_INTO_SWITCH, "JAX101", "TracerBoolConversionError"),
}

(
    test_look_alikes_stay_quiet,
    test_spread_fields_are_reported,
    test_jax_traces_the_quiet_cases,
    test_jax_rejects_the_reported_cases,
) = case_tests(QUIET, REPORTED)
