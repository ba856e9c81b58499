"""Module-level side effects: a thread that never ends, a hanging atexit hook, a changed directory."""
import atexit
import os
import threading
import time

import jax

threading.Thread(target=time.sleep, args=(3600,)).start()
atexit.register(time.sleep, 3600)
os.chdir("/")


@jax.jit
def f(x):
    if x.sum() > 0:  # expect: JAX101 confirmed TracerBoolConversionError
        return x
    return -x
