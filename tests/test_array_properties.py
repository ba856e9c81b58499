"""A property that computes a JAX array (`return jnp.array(self.length - self.t - 1, int)`) gives,
read from a traced instance, a traced array: JAX stages every operation while it traces. So
`range(state.remaining)` cannot be unrolled. A property that returns a shape, a static field or a
Python number says nothing. Each framework's pytree class, its use in the same module and in
another one, the bug and its clean twin; JAX agrees on each."""

from __future__ import annotations

from module_matrix import Program, Twins, matrix_tests
from quiet_and_reported import case_tests

IMPORTS = "import jax\nimport jax.numpy as jnp\n"

# A traced instance of each framework's pytree class, with a property computing an array and
# one computing a Python int from the shape.
CLASSES = {
    "jax": (
        """
        from typing import NamedTuple

        class State(NamedTuple):
            log: jax.Array
            t: jax.Array
        """,
        "State(jnp.zeros((2, 5)), jnp.array(1))",
        "jax",
    ),
    "flax": (
        """
        from flax import struct

        @struct.dataclass
        class State:
            log: jax.Array
            t: jax.Array
        """,
        "State(log=jnp.zeros((2, 5)), t=jnp.array(1))",
        "flax",
    ),
    "equinox": (
        """
        import equinox as eqx

        class State(eqx.Module):
            log: jax.Array
            t: jax.Array
        """,
        "State(jnp.zeros((2, 5)), jnp.array(1))",
        "equinox",
    ),
}
PROPERTIES = """
    @property
    def remaining(self):
        return jnp.array(self.log.shape[-1] - self.t - 1, int)

    @property
    def length(self):
        return self.log.shape[-1]
"""
USE = """
@jax.jit
def advance(state: State, x):
    for _ in range(state.{attr}):  {mark}
        x = x + 1
    return x

def demo():
    return advance({make}, jnp.zeros(()))
"""


def _twins() -> dict[str, Twins]:
    twins = {}
    for framework, (definition, make, needs) in CLASSES.items():
        definitions = definition.rstrip() + "\n" + PROPERTIES.replace("\n", "\n        ") + "\n"
        bug = USE.format(attr="remaining", mark="# JAX109", make=make)
        clean = USE.format(attr="length", mark="", make=make)
        twins[framework] = Twins(
            Program(IMPORTS, definitions, bug, ("State",)),
            Program(IMPORTS, definitions, clean, ("State",)),
            "TracerIntegerConversionError",
            needs,
        )
    return twins


(test_array_properties_across_frameworks_and_modules, test_jax_agrees_on_array_properties) = matrix_tests(_twins())


# Where nothing says the class (an unannotated parameter), the property is known by its name:
# the module's classes declare it only as a property computing an array.
BY_NAME = """
import jax
import jax.numpy as jnp
from flax import struct


@struct.dataclass
class State:
    log: jax.Array
    t: jax.Array

    @property
    def remaining(self) -> int:
        return jnp.array(self.log.shape[-2] - self.t - 1, int)


@jax.jit
def advance(state):
    for _ in range(state.remaining):
        state = state.replace(t=state.t + 1)
    return state


def demo():
    return advance(State(jnp.zeros((2, 5, 2)), jnp.array(1)))
"""

# Another class of the module holds a static field of that name: the name says nothing, and a
# jitted function given that class's instance reads a Python int.
OTHER_KIND_ELSEWHERE = BY_NAME.replace(
    "\n\n@jax.jit",
    """

@struct.dataclass
class Plan:
    log: jax.Array
    remaining: int = struct.field(pytree_node=False, default=3)


@jax.jit""",
).replace("advance(State(jnp.zeros((2, 5, 2)), jnp.array(1)))", "advance(Plan(jnp.zeros(2)))").replace(
    "state = state.replace(t=state.t + 1)", "state = state.replace(log=state.log + 1)"
)

# A property returning a field or a Python number is no array computed in the trace.
PROPERTY_OF_A_SHAPE = """
import jax
import jax.numpy as jnp
from flax import struct


@struct.dataclass
class State:
    log: jax.Array
    t: jax.Array

    @property
    def steps(self):
        if self.log.ndim > 2:
            return self.log.shape[-2]
        return self.log.shape[-1]


@jax.jit
def advance(state):
    for _ in range(state.steps):
        state = state.replace(t=state.t + 1)
    return state


def demo():
    return advance(State(jnp.zeros((2, 5, 2)), jnp.array(1)))
"""

(
    test_quiet_cases_stay_quiet,
    test_reported_cases_are_reported,
    test_jax_traces_the_quiet_cases,
    test_jax_rejects_the_reported_cases,
) = case_tests(
    {"other-kind-elsewhere": OTHER_KIND_ELSEWHERE, "property-of-a-shape": PROPERTY_OF_A_SHAPE},
    {"known-by-its-name": (BY_NAME, "JAX109", "TracerIntegerConversionError")},
    needs=("jax", "flax"),
)
