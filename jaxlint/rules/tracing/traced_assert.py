"""JAX104: `assert` on a traced value."""

from __future__ import annotations

import ast

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS, TRACED_VALUE_LIMITS


@register
class TracedAssert(Rule):
    code = "JAX104"
    name = "traced-assert"
    summary = "`assert` on a traced value inside transformed code"
    what = """
        Checks for `assert` statements whose condition is a traced value inside transformed
        code, or has one among the operands of `and`/`or`/`not` Python takes the truth of. The
        assertion needs a concrete Python bool, which a traced value does not have while JAX
        traces the function.
        """
    why = """
        `assert cond` needs a concrete Python bool. Under `jit` the condition is an abstract tracer
        and JAX raises `TracerBoolConversionError` when tracing. Runtime checks on values belong in
        `jax.experimental.checkify` (`checkify.check(cond, msg)`) or `equinox.error_if`; assertions
        on shapes and dtypes are static and fine.
        """
    bad = (
        """
        import jax

        @jax.jit
        def normalise(p):
            assert p.sum() > 0, "empty distribution"  # JAX104
            return p / p.sum()
        """,
    )
    good = (
        """
        import jax
        from jax.experimental import checkify

        @jax.jit
        def normalise(p):
            assert p.ndim == 1, "expected a vector"
            checkify.check(p.sum() > 0, "empty distribution")
            return p / p.sum()
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def normalise(p):
            assert p.sum() > 0
            return p / p.sum()

        def demo():
            normalise(jnp.ones(3))
        """,
        "raises:TracerBoolConversionError",
    )
    references = ("https://docs.jax.dev/en/latest/debugging/checkify_guide.html",)

    limitations = TRACED_VALUE_LIMITATIONS
    limits = TRACED_VALUE_LIMITS

    def check(self, module, report):
        for fn, _ in module.traced_functions():
            for node in module.unguarded(fn, ast.Assert):
                traced = module.traced_truth(node.test)
                if traced is not None:
                    report(
                        node.test,
                        f"`assert` on traced value `{module.source.snippet(traced)}` cannot be checked "
                        "while tracing; "
                        "use `checkify.check(cond, msg)` (jax.experimental.checkify) or assert on shapes only",
                    )
