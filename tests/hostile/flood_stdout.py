"""Writes 10 MB through print and 10 MB straight to file descriptor 1 while being imported."""
import os

import jax

for _ in range(10 * 1024):
    print("x" * 1023)
os.write(1, b"y" * (10 * 1024 * 1024))


@jax.jit
def f(x):
    print("tracing", x)  # expect: JAX404 confirmed jit tracer
    return x + 1
