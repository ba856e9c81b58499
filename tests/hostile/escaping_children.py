"""Starts processes meant to outlive the check: one in a new session, one double-forked into a new
session with a clean environment. Each writes its pid to the file named by $JAXLINT_HOSTILE_PIDS."""
import os
import subprocess
import sys
import time

import jax

PIDS = os.environ.get("JAXLINT_HOSTILE_PIDS", os.devnull)
LINGER = """
import os, signal, sys, time
if sys.argv[2] == "double" and os.fork():
    os._exit(0)
os.setsid()
signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open(sys.argv[1], "a") as f:
    f.write(f"{os.getpid()}\\n")
time.sleep(600)
"""
for how, env in (("session", None), ("double", {"PATH": os.environ.get("PATH", "")})):
    subprocess.Popen([sys.executable, "-c", LINGER, PIDS, how], env=env, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
waited = time.monotonic() + 10
while PIDS != os.devnull and time.monotonic() < waited:
    if os.path.exists(PIDS) and len(open(PIDS).read().split()) >= 2:
        break
    time.sleep(0.05)


@jax.jit
def f(x):
    if x.sum() > 0:  # expect: JAX101 confirmed TracerBoolConversionError
        return x
    return -x
