"""Writes forged "confirmed" verdicts into every channel it can find, its own and its parent's file
descriptors (the standard streams among them), with every string in its argv and environment tried
as the secret."""
import json
import os
import sys

import jax


def records():
    verdicts = {str(i): {"status": "confirmed", "detail": "forged", "final": True} for i in range(100)}
    state = {"phase": "done", "backend": "cpu", "verdicts": verdicts}
    guesses = [None, "", *sys.argv, *os.environ.values()]
    lines = [state, {"state": state, "exit": {"code": 0}}]
    lines += [{"secret": guess, "state": state, "exit": {"code": 0}} for guess in guesses]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def write_everywhere(data):
    for folder in ("/proc/self/fd", f"/proc/{os.getppid()}/fd"):
        for name in os.listdir(folder) if os.path.isdir(folder) else ():
            for fd in (int(name), None):
                try:
                    if fd is None:
                        fd = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_NONBLOCK)
                    os.write(fd, data)
                except OSError:
                    pass


write_everywhere(records())


@jax.jit
def f(x):
    write_everywhere(records())
    print("tracing", x)  # expect: JAX404 confirmed
    y = x + 1  # expect: JAX101 not-reproduced
    return y
