"""Never finishes importing, and swallows the exception that ends the run's time limit."""
import time

import jax

while True:
    try:
        time.sleep(60)
    except BaseException:
        pass


@jax.jit
def f(x):
    if x > 0:  # expect: JAX101 inconclusive timed out after while importing the module
        return x
    return -x
