"""Writes text that is not JSON to its parent's standard output and error, through /proc."""
import os

import jax

for fd in (1, 2):
    try:
        with open(f"/proc/{os.getppid()}/fd/{fd}", "w") as stream:
            stream.write("]] this is not JSON [[\n")
    except OSError:
        pass


@jax.jit
def f(x):
    if x.sum() > 0:  # expect: JAX101 confirmed TracerBoolConversionError
        return x
    return -x
