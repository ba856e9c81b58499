"""A field known by its name: where no annotation says a traced pytree's class (the carry of a
`lax.while_loop` that eager code builds, an unannotated parameter of a jitted function), an
attribute the module's classes declare only as an array field of a pytree class is a traced
array. A name some class declares otherwise (static, a sequence, a method, an instance
attribute) stays unknown. Each case runs under JAX too."""

from __future__ import annotations

from quiet_and_reported import case_tests

# A flax.struct dataclass carried by a while_loop that eager code starts.
CARRY_FROM_EAGER_CODE = """
import flax
import jax
import jax.numpy as jnp


@flax.struct.dataclass
class Beams:
    index: jax.Array
    finished: jax.Array


def init(n):
    return Beams(index=jnp.array(0), finished=jnp.array(False))


def search(n):
    def cond(state):
        score = jnp.min(state.index)
        score = score if state.finished else -1
        return score < n

    def body(state):
        return state.replace(index=state.index + 1)

    return jax.lax.while_loop(cond, body, init(n))


def demo():
    return search(3)
"""

# A NamedTuple field read from an unannotated parameter of a jitted function.
UNANNOTATED_PARAMETER = """
from typing import NamedTuple

import jax
import jax.numpy as jnp


class Transition(NamedTuple):
    reward: jnp.ndarray
    done: jnp.ndarray


@jax.jit
def clip(t):
    if t.done:
        return t.reward * 0
    return t.reward


def demo():
    return clip(Transition(jnp.ones(()), jnp.array(False)))
"""

# Another class declares the name a static field: the name says nothing.
DECLARED_STATIC_ELSEWHERE = """
import flax
import jax
import jax.numpy as jnp


@flax.struct.dataclass
class Beams:
    index: jax.Array
    finished: jax.Array


@flax.struct.dataclass
class Config:
    finished: bool = flax.struct.field(pytree_node=False, default=False)
    index: jax.Array = 0


def search(n):
    def cond(config):
        return jnp.min(config.index) < n if not config.finished else False

    def body(config):
        return config.replace(index=config.index + 1)

    return jax.lax.while_loop(cond, body, Config(index=jnp.array(0)))


def demo():
    return search(3)
"""

# A sequence of arrays: its truth is its length, a Python bool.
SEQUENCE_FIELD = """
from typing import NamedTuple, Sequence

import jax
import jax.numpy as jnp


class Batch(NamedTuple):
    parts: Sequence[jax.Array]


@jax.jit
def total(batch):
    if not batch.parts:
        return jnp.zeros(())
    return sum(p.sum() for p in batch.parts)


def demo():
    return total(Batch([jnp.ones(2), jnp.ones(3)]))
"""

# A class of the module keeps an attribute of that name on its instances (here a pytree that
# holds it as static data): not only an array field.
INSTANCE_ATTRIBUTE_ELSEWHERE = """
from typing import NamedTuple

import jax
import jax.numpy as jnp


class Step(NamedTuple):
    x: jax.Array
    done: jax.Array


@jax.tree_util.register_pytree_node_class
class Runner:
    def __init__(self, x, done):
        self.x = x
        self.done = done

    def tree_flatten(self):
        return (self.x,), self.done

    @classmethod
    def tree_unflatten(cls, done, children):
        return cls(children[0], done)


@jax.jit
def advance(runner):
    return runner.x if not runner.done else runner.x * 0


def demo():
    return advance(Runner(jnp.ones(2), False))
"""

QUIET = {
    "declared-static-elsewhere": DECLARED_STATIC_ELSEWHERE,
    "sequence-field": SEQUENCE_FIELD,
    "instance-attribute-elsewhere": INSTANCE_ATTRIBUTE_ELSEWHERE,
}

REPORTED = {
    "carry-from-eager-code": (CARRY_FROM_EAGER_CODE, "JAX101", "TracerBoolConversionError"),
    "unannotated-parameter": (UNANNOTATED_PARAMETER, "JAX101", "TracerBoolConversionError"),
}

(
    test_quiet_cases_stay_quiet,
    test_reported_cases_are_reported,
    test_jax_traces_the_quiet_cases,
    test_jax_rejects_the_reported_cases,
) = case_tests(QUIET, REPORTED, needs=("jax", "flax"))
