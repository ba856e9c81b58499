"""Signals its parent, and its parent's process group, with every signal that ends a process by default."""
import os
import signal

import jax

for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGALRM"):
    os.kill(os.getppid(), getattr(signal, name))
    os.killpg(os.getpgid(os.getppid()), getattr(signal, name))


@jax.jit
def f(x):
    if x.sum() > 0:  # expect: JAX101 confirmed TracerBoolConversionError
        return x
    return -x
