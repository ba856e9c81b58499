"""A helper under a decorator that leaves its calls as they were (a runtime type checker such as
`jaxtyping.jaxtyped`, `beartype`, `typeguard.typechecked`; `typing.override`, `typing.final`) is
followed from traced code as if undecorated, and a jit above it reads its signature. Any other decorator may change what a call does:
such a helper is not followed. Each case runs under JAX too."""

from __future__ import annotations

from quiet_and_reported import case_tests

TYPE_CHECKED_HELPER = """
import jax
import jax.numpy as jnp
from jaxtyping import jaxtyped


@jaxtyped(typechecker=None)
def truncate(canvas, done):
    has_stop = jnp.any(canvas > 0, axis=-1)
    return canvas if has_stop else canvas * 0


@jax.jit
def step(canvas, done):
    return truncate(canvas, done)


def demo():
    return step(jnp.ones(3), jnp.zeros(()))
"""

FINAL_HELPER = """
import jax
import jax.numpy as jnp
from typing_extensions import final


@final
def clip(x):
    return x if x.sum() > 0 else -x


@jax.jit
def step(x):
    return clip(x) * 2


def demo():
    return step(jnp.ones(3))
"""

# A decorator that is not known to leave calls alone: here it runs the helper on host values.
OTHER_DECORATOR = """
import functools

import jax
import jax.numpy as jnp
import numpy as np


def on_host(f):
    @functools.wraps(f)
    def wrapper(x):
        return jax.pure_callback(lambda v: np.asarray(f(np.asarray(v))), jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    return wrapper


@on_host
def clip(x):
    return x if x.sum() > 0 else -x


@jax.jit
def step(x):
    return clip(x) * 2


def demo():
    return step(jnp.ones(3))
"""

# The jit's static names are resolved against the signature the type checker keeps.
TYPE_CHECKED_STATIC_ARRAY = """
import functools

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, jaxtyped


class Sampler:
    @functools.partial(jax.jit, static_argnames=("self", "tokens"))
    @jaxtyped(typechecker=None)
    def sample(self, *, tokens: Float[Array, "b n"], steps: int):
        return tokens * steps


def demo():
    return Sampler().sample(tokens=jnp.ones((2, 3)), steps=2)
"""

# A method under `override` is the method: one that only scales the key leaves it unconsumed,
# one that draws from it consumes it.
OVERRIDE_KEEPS_KEY = """
import jax
from typing_extensions import override


class Base:
    def noise(self, key):
        return jax.random.normal(key)


class Child(Base):
    @override
    def noise(self, key):
        return jax.random.key_data(key).sum()

    def run(self, key):
        return self.noise(key) + jax.random.normal(key)


def demo():
    with jax.debug_key_reuse(True):
        return jax.jit(Child().run)(jax.random.key(0))
"""
OVERRIDE_DRAWS = OVERRIDE_KEEPS_KEY.replace("jax.random.key_data(key).sum()", "jax.random.uniform(key)")

# Calling an instance runs its `__call__`, type-checked or not.
TYPE_CHECKED_CALL = """
import jax
import jax.numpy as jnp
from jaxtyping import jaxtyped


class Clip:
    @jaxtyped(typechecker=None)
    def __call__(self, x):
        return x if x.sum() > 0 else -x


CLIP = Clip()


@jax.jit
def step(x):
    return CLIP(x) * 2


def demo():
    return step(jnp.ones(3))
"""

QUIET = {"other-decorator": OTHER_DECORATOR, "override-keeps-key": OVERRIDE_KEEPS_KEY}

REPORTED = {
    "type-checked-helper": (TYPE_CHECKED_HELPER, "JAX101", "TracerBoolConversionError"),
    "final-helper": (FINAL_HELPER, "JAX101", "TracerBoolConversionError"),
    "type-checked-static-array": (TYPE_CHECKED_STATIC_ARRAY, "JAX302", "ValueError"),
    "override-draws": (OVERRIDE_DRAWS, "JAX201", "KeyReuseError"),
    "type-checked-call": (TYPE_CHECKED_CALL, "JAX101", "TracerBoolConversionError"),
}

(
    test_quiet_cases_stay_quiet,
    test_reported_cases_are_reported,
    test_jax_traces_the_quiet_cases,
    test_jax_rejects_the_reported_cases,
) = case_tests(QUIET, REPORTED, needs=("jax", "jaxtyping", "typing_extensions"))
