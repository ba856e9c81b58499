"""JAX109: `range()` over a traced bound."""

from __future__ import annotations

import ast

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS, TRACED_VALUE_LIMITS


@register
class TracedRange(Rule):
    code = "JAX109"
    name = "traced-range"
    summary = "`range()` with a traced bound inside transformed code"
    what = """
        Checks for `range(n)` where `n` (or any bound) is a traced value inside transformed
        code. `range` needs Python integers, and a Python loop's trip count must be known while
        JAX traces the function.
        """
    why = """
        `range` needs Python integers; a tracer cannot be converted, and JAX raises
        `TracerIntegerConversionError`. A Python loop is unrolled at trace time, so its trip count
        must be static: make the bound a static argument, or stage the loop with
        `jax.lax.fori_loop(0, n, body, init)`, which accepts a traced bound.
        """
    bad = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def smooth(signal, num_passes):
            kernel = jnp.array([0.25, 0.5, 0.25])
            for _ in range(num_passes):  # JAX109
                signal = jnp.convolve(signal, kernel, mode="same")
            return signal
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def smooth(signal, num_passes):
            kernel = jnp.array([0.25, 0.5, 0.25])
            return jax.lax.fori_loop(
                0, num_passes, lambda _, s: jnp.convolve(s, kernel, mode="same"), signal
            )
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def apply_layers(weights, x):
            for i in range(weights.shape[0]):
                x = jnp.tanh(x @ weights[i])
            return x
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def repeat(x, n):
            for _ in range(n):
                x = x * 2
            return x

        def demo():
            repeat(jnp.ones(2), 3)
        """,
        "raises:TracerIntegerConversionError",
    )

    limitations = TRACED_VALUE_LIMITATIONS
    limits = TRACED_VALUE_LIMITS

    def check(self, module, report):
        for fn, _ in module.traced_functions():
            for node in module.unguarded(fn, ast.Call):
                if (
                    module.qualname(node.func) == "builtins.range"
                    and any(module.is_abstract(a) for a in node.args)
                ):
                    report(
                        node,
                        "`range()` over a traced bound cannot be unrolled while tracing; "
                        "make the bound static or use `jax.lax.fori_loop(lower, upper, body, init)`",
                    )
