"""An Equinox module's field declared with a class of the module (`pos: Positional`, filled by the
constructor) holds an instance of it: `self.pos(n)` is a call of that class's `__call__` in view,
and what it passes decides the parameter as any other call does. A parameter that a method of a
framework module declares a Python type (`def filters(self, length: int)`) is a Python value when
passed on. A call with a traced value, or a declared field with no call in view, leaves the
parameter traced. JAX shows both sides."""

from __future__ import annotations

from quiet_and_reported import case_tests

HEADER = """
import equinox as eqx
import jax
import jax.numpy as jnp


class Positional(eqx.Module):
    table: jax.Array
    limit: int

    def __call__(self, length):
        if length > self.limit:
            raise ValueError("longer than the table")
        return self.table[:length]
"""

DIRECT = HEADER + """
class Filter(eqx.Module):
    pos: Positional

    def __call__(self, u):
        return self.pos(u.shape[0]) * u


def demo():
    f = Filter(Positional(jnp.ones(8), 8))
    return eqx.filter_jit(f)(jnp.ones(4))
"""

# The length passes through a helper method that declares it an `int`.
THROUGH_A_METHOD = HEADER + """
class Filter(eqx.Module):
    pos: Positional

    def filters(self, length: int):
        return self.pos(length)

    def __call__(self, u):
        n = min(u.shape[0], self.pos.limit)
        return self.filters(n) * u[:n]


def demo():
    f = Filter(Positional(jnp.ones(8), 8))
    return eqx.filter_jit(f)(jnp.ones(4))
"""

QUIET = {"declared-field-given-a-shape": DIRECT, "through-a-method-declaring-int": THROUGH_A_METHOD}

REPORTED = {
    # The field's call passes a value computed from the array's values.
    "declared-field-given-a-traced-length": (
        DIRECT.replace("self.pos(u.shape[0])", "self.pos(jnp.sum(u > 0))"),
        "JAX101",
        "TracerBoolConversionError",
    ),
    # The helper declares no type, and its caller passes a traced length.
    "method-given-a-traced-length": (
        THROUGH_A_METHOD.replace("length: int", "length").replace(
            "n = min(u.shape[0], self.pos.limit)", "n = jnp.sum(u > 0)"
        ).replace("u[:n]", "u"),
        "JAX101",
        "TracerBoolConversionError",
    ),
    # No call in view: the module is called by code the analysis does not see.
    "declared-field-not-called": (
        HEADER + """
def demo():
    p = Positional(jnp.ones(8), 8)
    return eqx.filter_jit(lambda p, n: p(n))(p, jnp.asarray(3))
""",
        "JAX101",
        "TracerBoolConversionError",
    ),
}

(
    test_parameters_every_caller_gives_a_python_value_stay_quiet,
    test_parameters_given_a_traced_value_or_out_of_view_are_reported,
    test_jax_runs_the_quiet_cases,
    test_jax_rejects_the_reported_variants,
) = case_tests(QUIET, REPORTED, needs=("jax", "equinox"))
