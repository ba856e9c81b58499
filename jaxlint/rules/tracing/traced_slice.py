"""JAX112: slicing with traced bounds (`x[i:i + k]`)."""

from __future__ import annotations

import ast

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS, TRACED_VALUE_LIMITS


@register
class TracedSlice(Rule):
    code = "JAX112"
    name = "traced-slice"
    summary = "Slice with traced start/stop (`x[i:i + k]`) inside transformed code"
    what = """
        Checks for slices `x[a:b]` whose bounds are traced values inside transformed code. A
        slice's bounds fix the result's shape, so they must be static.
        """
    why = """
        A slice's bounds fix the result's shape, so they must be static; with a traced `i`, JAX
        raises `IndexError` ("Slice entries must be static integers"). When the length is fixed
        and only the start moves, use `jax.lax.dynamic_slice(x, (i,), (k,))` (or
        `jax.lax.dynamic_slice_in_dim`), and `jax.lax.dynamic_update_slice` to write.
        """
    bad = (
        """
        import jax

        @jax.jit
        def window(x, i):
            return x[i:i + 2]  # JAX112
        """,
    )
    good = (
        """
        import jax

        @jax.jit
        def window(x, i):
            head = x[: x.shape[0] // 2]
            return jax.lax.dynamic_slice(x, (i,), (2,)), head
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def window(x, i):
            return x[i:i + 2]

        def demo():
            window(jnp.arange(5.0), 1)
        """,
        "raises:IndexError",
    )

    limitations = TRACED_VALUE_LIMITATIONS
    limits = TRACED_VALUE_LIMITS

    def check(self, module, report):
        for fn, _ in module.traced_functions():
            for node in module.unguarded(fn, ast.Subscript):
                parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                for part in parts:
                    if isinstance(part, ast.Slice) and any(
                        bound is not None and module.is_abstract(bound)
                        for bound in (part.lower, part.upper, part.step)
                    ):
                        report(
                            node,
                            "slice with traced bounds has a data-dependent shape; use "
                            "`jax.lax.dynamic_slice(x, (start,), (size,))`",
                        )
                        break
