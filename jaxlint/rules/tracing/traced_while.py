"""JAX102: Python `while` loop on a traced condition."""

from __future__ import annotations

import ast

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS, TRACED_VALUE_LIMITS


@register
class TracedWhile(Rule):
    code = "JAX102"
    name = "traced-while"
    summary = "Python `while` loop whose condition is a traced value"
    what = """
        Checks for `while` loops whose condition depends on a traced value inside transformed
        code: the condition itself, or an operand of `and`/`or`/`not` in it (`while err > tol
        and i < n:`). Python re-evaluates the condition as a `bool` on every iteration, and a
        traced value has no truth value while JAX traces the function.
        """
    why = """
        A Python `while` re-evaluates its condition as a Python `bool` on each iteration. A traced
        condition has no value while JAX traces the function, so JAX raises
        `TracerBoolConversionError`. A loop whose trip count depends on data must be staged with
        `jax.lax.while_loop`.
        """
    bad = (
        """
        from jax import jit
        import jax.numpy as jnp

        @jit
        def newton_sqrt(a, tol=1e-6):
            x = a / 2.0
            delta = jnp.inf
            while jnp.max(jnp.abs(delta)) > tol:  # JAX102
                new_x = 0.5 * (x + a / x)
                delta = new_x - x
                x = new_x
            return x
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp
        from jax import lax

        @jax.jit
        def newton_sqrt(a, tol=1e-6):
            def cond(state):
                x, delta = state
                return jnp.max(jnp.abs(delta)) > tol

            def body(state):
                x, _ = state
                new_x = 0.5 * (x + a / x)
                return new_x, new_x - x

            x, _ = lax.while_loop(cond, body, (a / 2.0, jnp.full_like(a, jnp.inf)))
            return x
        """,
        """
        import jax

        @jax.jit
        def halve_until_small(x):
            n = x.shape[0]
            while n > 1:
                x = x[: n // 2] + x[n // 2 : 2 * (n // 2)]
                n = x.shape[0]
            return x
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def halve(x):
            while x.sum() > 1.0:
                x = x / 2
            return x

        def demo():
            halve(jnp.ones(4))
        """,
        "raises:TracerBoolConversionError",
    )
    references = ("https://docs.jax.dev/en/latest/_autosummary/jax.lax.while_loop.html",)

    limitations = TRACED_VALUE_LIMITATIONS
    limits = TRACED_VALUE_LIMITS

    def check(self, module, report):
        for fn, _ in module.traced_functions():
            for node in module.unguarded(fn, ast.While):
                traced = module.traced_truth(node.test)
                if traced is not None:
                    report(
                        node.test,
                        f"Python `while` on traced condition `{module.source.snippet(traced)}`: "
                        "the loop cannot be traced; "
                        "use `jax.lax.while_loop(cond_fun, body_fun, init)`",
                    )
