"""Closes every file descriptor above the standard streams while being imported, as daemons do."""
import os

import jax

os.closerange(3, 1 << 16)


@jax.jit
def f(x):
    if x > 0:  # expect: JAX101 inconclusive lost its result channel while importing the module
        return x
    return -x
