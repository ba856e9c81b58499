"""Ends the process with os._exit(1) from main(), after a finding the probe already decided."""
import os

import jax
import jax.numpy as jnp


@jax.jit
def bad(x):
    if x.sum() > 0:  # expect: JAX101 confirmed TracerBoolConversionError
        return x
    return -x


@jax.jit
def good(x):
    return x * 2


def main():
    for n in range(2, 6):
        good(jnp.ones(n))  # expect: JAX501 inconclusive exited with status 1 while running the
    os._exit(1)


if __name__ == "__main__":
    main()
