"""Kills its parent with SIGKILL, the one signal a process cannot ignore, while being imported."""
import os
import signal
import time

import jax

os.kill(os.getppid(), signal.SIGKILL)
time.sleep(30)


@jax.jit
def f(x):
    if x > 0:  # expect: JAX101 inconclusive its supervisor process was killed with signal SIGKILL while importing
        return x
    return -x
