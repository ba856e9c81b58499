"""JAX111: `jnp.nonzero`/`argwhere`/`unique`/one-argument `where` without `size=` in transformed code."""

from __future__ import annotations

import ast

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS, TRACED_VALUE_LIMITS

_SIZED = frozenset({
    "jax.numpy.nonzero", "jax.numpy.argwhere", "jax.numpy.flatnonzero", "jax.numpy.unique",
    "jax.numpy.unique_values", "jax.numpy.unique_counts", "jax.numpy.unique_inverse",
    "jax.numpy.unique_all", "jax.numpy.union1d", "jax.numpy.intersect1d", "jax.numpy.setdiff1d",
    "jax.numpy.setxor1d", "jax.numpy.extract", "jax.numpy.compress",
})


@register
class SizelessNonzero(Rule):
    code = "JAX111"
    name = "sizeless-nonzero"
    summary = "`jnp.nonzero`, `argwhere`, `unique` or one-argument `jnp.where` without `size=` in transformed code"
    what = """
        Checks for functions whose output size depends on the data (`jnp.nonzero`,
        `jnp.argwhere`, `jnp.flatnonzero`, `jnp.unique`, set operations, and `jnp.where(cond)`
        with one argument) called without `size=` inside transformed code. The output length is
        not known while JAX traces the function, so it must be fixed with `size=`.
        """
    why = """
        Their output length depends on the input's values, which are unknown while tracing, so
        JAX raises `ConcretizationTypeError`. Pass `size=` (and `fill_value=`) to fix the output
        length, or use the three-argument `jnp.where(cond, x, y)`. In staged code (`jax.jit`,
        `lax` bodies) this holds for a constant input as well (a NumPy array closed over or
        fixed by `functools.partial`): JAX stages every `jax.numpy` operation there, so the
        input is abstract too, except inside `with jax.ensure_compile_time_eval():`. Under
        `vmap` alone, a constant input stays concrete.
        """
    bad = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def sparse_indices(grad, threshold=1e-3):
            mask = jnp.abs(grad) > threshold
            (idx,) = jnp.nonzero(mask)  # JAX111
            return idx
        """,
        """
        import jax

        @jax.jit
        def positive(x):
            return x.nonzero()  # JAX111
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def sparse_indices(grad, threshold=1e-3):
            mask = jnp.abs(grad) > threshold
            (idx,) = jnp.nonzero(mask, size=4, fill_value=0)
            return idx, jnp.where(mask, grad, 0.0), jnp.unique(idx, size=4, fill_value=-1)
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def sparse_indices(grad):
            (idx,) = jnp.nonzero(jnp.abs(grad) > 0.1)
            return idx

        def demo():
            sparse_indices(jnp.array([0.0, 0.5, 0.0]))
        """,
        "raises:ConcretizationTypeError",
    )

    limitations = TRACED_VALUE_LIMITATIONS
    limits = TRACED_VALUE_LIMITS

    def check(self, module, report):
        compile_time = module.analysis.compile_time_operations
        for fn, ctx in module.traced_functions():
            for node in module.unguarded(fn, ast.Call):
                if _method_nonzero(module, node):
                    report(node, "`.nonzero()` without `size=` has a data-dependent output shape; use "
                                 "`jnp.nonzero(x, size=k, fill_value=...)`")
                    continue
                if not node.args:
                    continue
                name = module.qualname(node.func)
                one_arg_where = name == "jax.numpy.where" and len(node.args) == 1 and not node.keywords
                if name not in _SIZED and not one_arg_where:
                    continue
                if any(k.arg == "size" for k in node.keywords):
                    continue
                # Staged, JAX stages the operation whatever its input: a constant is abstract too.
                if not module.is_abstract(node.args[0]) and not (
                    ctx.staged and id(node) not in compile_time and module.is_constant(node.args[0])
                ):
                    continue
                func = name.rsplit(".", 1)[-1]
                report(
                    node,
                    f"`jnp.{func}` without `size=` has a data-dependent output shape; pass `size=` "
                    "(and `fill_value=`)" + (", or use `jnp.where(cond, x, y)`" if one_arg_where else ""),
                )


def _method_nonzero(module, call: ast.Call) -> bool:
    return (
        isinstance(call.func, ast.Attribute)
        and call.func.attr == "nonzero"
        and module.qualname(call.func) is None
        and not any(k.arg == "size" for k in call.keywords)
        and module.is_abstract(call.func.value)
    )
