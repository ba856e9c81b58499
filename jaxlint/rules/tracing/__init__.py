"""JAX1xx: Python control flow and concretization on traced values."""

from __future__ import annotations

# The value analysis' policy for code it cannot see, stated on every page of the family.
TRACED_VALUE_LIMITATIONS = """
    A value is reported only when the analysis knows it is traced. Calls into code it cannot
    see (other packages, callables chosen at run time, decorated or type-dispatching helpers)
    return an unknown value, and an unknown value is never reported: a tracer that passes
    through such a call is missed. Functions of the same module, and of the project's own
    modules when called with a traced argument, are followed in their calling context.
    Attributes of traced pytrees are traced only where the structure is known (the carry of
    a `lax` loop built from its initial value); elsewhere they are unknown. Flax, Equinox and
    Haiku module methods count as traced where the framework traces them (`__call__`,
    `@nn.compact`, transformed functions); a method called from user code jaxlint cannot see
    is analysed only with what its own body shows.
    """
