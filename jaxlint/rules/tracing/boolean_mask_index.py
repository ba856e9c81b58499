"""JAX110: indexing an array with a traced boolean mask."""

from __future__ import annotations

import ast

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS, TRACED_VALUE_LIMITS


@register
class BooleanMaskIndex(Rule):
    code = "JAX110"
    name = "boolean-mask-index"
    summary = "Indexing with a traced boolean mask (`x[x > 0]`) inside transformed code"
    what = """
        Checks for `x[mask]` (and `x.at[mask]`) where `mask` is a traced boolean array inside
        transformed code. The result's shape would depend on how many entries of the mask are
        true, which is not known while JAX traces the function. A mask is known to be boolean
        where it is computed (a comparison, `jnp.logical_and`, `x.astype(bool)`) or declared so:
        a parameter annotated `Bool[Array, "n"]` (jaxtyping) of a jitted function or of a
        framework's traced method.
        """
    why = """
        The result of boolean-mask indexing has as many elements as the mask has `True`
        entries, which is not known until the values are: its shape depends on data. JAX raises
        `NonConcreteBooleanIndexError`. Keep the shape fixed: `jnp.where(mask, x, 0)` with a
        masked reduction (`jnp.sum(jnp.where(mask, x, 0)) / mask.sum()`), or
        `jnp.nonzero(mask, size=k, fill_value=...)` for a bounded number of indices.
        """
    bad = (
        """
        import jax

        @jax.jit
        def active_mean(activations):
            active = activations[activations > 0]  # JAX110
            return active.mean()
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def active_mean(activations):
            mask = activations > 0
            return jnp.sum(jnp.where(mask, activations, 0.0)) / jnp.maximum(mask.sum(), 1)

        def eager(preds, labels):
            return preds[labels > 0]
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def active_mean(activations):
            return activations[activations > 0].mean()

        def demo():
            active_mean(jnp.array([1.0, -1.0, 2.0]))
        """,
        "raises:NonConcreteBooleanIndexError",
    )

    limitations = TRACED_VALUE_LIMITATIONS
    limits = (
        "A mask is known to be boolean only where it is computed so (a comparison, `astype(bool)`)"
        " or annotated `Bool[Array, ...]`.",
    ) + TRACED_VALUE_LIMITS

    def check(self, module, report):
        for fn, _ in module.traced_functions():
            for node in module.unguarded(fn, ast.Subscript):
                if not isinstance(node.ctx, ast.Load):
                    continue
                index = node.slice
                parts = index.elts if isinstance(index, ast.Tuple) else [index]
                for part in parts:
                    value = module.value(part)
                    if value is not None and value.boolean and module.is_abstract(part):
                        report(
                            node,
                            "boolean-mask indexing has a data-dependent shape; use "
                            "`jnp.where(mask, x, fill)` or `jnp.nonzero(mask, size=k)`",
                        )
                        break
