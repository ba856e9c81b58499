"""Calls sys.exit(3) while being imported."""
import sys

import jax

sys.exit(3)


@jax.jit
def f(x):
    if x > 0:  # expect: JAX101 inconclusive sys.exit(3)
        return x
    return -x
