"""Imports a package that is not installed."""
import jax

import jaxlint_hostile_not_installed_dependency  # noqa: F401


@jax.jit
def f(x):
    if x > 0:  # expect: JAX101 inconclusive No module named 'jaxlint_hostile_not_installed_dependency'
        return x
    return -x
