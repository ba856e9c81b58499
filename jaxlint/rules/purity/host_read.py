"""JAX409: reading the clock or a file inside jit-compiled code."""

from __future__ import annotations

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.purity import PURITY_LIMITATIONS, PURITY_LIMITS


@register
class HostRead(Rule):
    code = "JAX409"
    name = "host-read-in-traced-code"
    summary = "Reading the clock or a file inside staged code happens once, at trace time"
    what = """
        Checks for calls that read the host's clock (`time.time()`, `time.perf_counter()`,
        `datetime.now()`) or files (`open`, `np.load`, `json.load`, `pickle.load`), and
        `input()`, inside code staged by `jax.jit`, `jax.pmap` or a `lax` control-flow
        primitive. The read happens once, while JAX traces the function, and its value is baked
        into the compiled program.
        """
    why = """
        The Python body of a staged function runs while JAX traces it. The clock or the file
        is read once, at the first call, and its value is baked into the compiled program as a
        constant: every later call sees the same timestamp or the same file contents. Read
        them outside and pass the result in as an argument.
        """
    bad = (
        """
        import time

        import jax
        import jax.numpy as jnp

        @jax.jit
        def decay(lr, start):
            elapsed = time.time() - start  # JAX409
            return lr * jnp.exp(-elapsed)
        """,
        """
        import json

        import jax

        @jax.jit
        def scaled(x):
            with open("scale.json") as f:  # JAX409
                scale = json.load(f)["scale"]  # JAX409
            return x * scale
        """,
    )
    good = (
        """
        import time

        import jax
        import jax.numpy as jnp

        @jax.jit
        def decay(lr, elapsed):
            return lr * jnp.exp(-elapsed)

        def step(lr, start):
            return decay(lr, time.time() - start)
        """,
    )
    demo = JaxDemo(
        """
        import os
        import tempfile

        import jax
        import jax.numpy as jnp

        PATH = os.path.join(tempfile.mkdtemp(), "scale.txt")

        @jax.jit
        def scaled(x):
            with open(PATH) as f:
                scale = float(f.read())
            return x * scale

        def demo():
            with open(PATH, "w") as f:
                f.write("1")
            first = float(scaled(jnp.ones(())))
            with open(PATH, "w") as f:
                f.write("2")
            return first, float(scaled(jnp.ones(())))  # still 1: the file was read once
        """,
        "trace-time-only",
    )

    limitations = PURITY_LIMITATIONS
    limits = PURITY_LIMITS

    def check(self, module, report):
        effects = module.effects
        for node in effects.staged_calls():
            read = effects.host_read(node)
            if read is not None:
                short = read.replace("builtins.", "")
                report(
                    node,
                    f"`{short}` inside staged code runs once, while tracing: its result is frozen into "
                    "the compiled function; read it outside and pass it in as an argument",
                )
