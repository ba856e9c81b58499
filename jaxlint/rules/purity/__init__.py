"""JAX4xx: purity — in-place updates of immutable arrays, discarded updates, side effects in traced code."""

from __future__ import annotations

# The array and effect facts' policy for code they cannot see, stated on every page of the family.
PURITY_LIMITATIONS = """
    An object is known to be a JAX array, or to live outside the traced function, only through
    what the code shows: results of `jax.numpy`/`lax` calls and `.at[...]` updates, parameters
    annotated as arrays or used as arrays, module globals and variables of enclosing
    functions, `self` of a jitted method. An object returned by code jaxlint cannot see (other
    packages, callables chosen at run time) is unknown, and updates to an unknown object are
    not reported. Helpers of the same module, and of the project's own modules when called
    with a traced argument, are followed in their calling context. What eager code runs under
    `with jax.disable_jit():` (`jax.jit(f)(x)`, the bodies of `lax` loops and of the branch a
    `lax.cond` takes) runs in Python on concrete values, so its side effects happen on every
    call and are not reported, unless the same function is traced elsewhere.
    """

# The same policy as one-line principles, for every page of the family.
PURITY_LIMITS = (
    "An object is a JAX array, or lives outside the traced function, only where the code shows it:"
    " JAX calls, `.at[...]` updates, annotations, uses.",
    "An object that code it cannot see returns (other packages, callables chosen at run time) is"
    " unknown, and nothing done to it is reported.",
    "Helpers are followed in their calling context: those of the module, and the project's when called"
    " with a traced argument.",
    "Code run under `with jax.disable_jit():` runs on concrete values on every call: its side effects"
    " are not reported.",
)
