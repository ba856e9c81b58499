"""JAX310: a traced value where JAX or a library needs a Python value (a filter spec, a flag)."""

from __future__ import annotations

import ast

from jaxlint.analysis.knowledge.shape_api import PYTHON
from jaxlint.analysis.shapes.concrete_arguments import concrete_arguments
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS, TRACED_VALUE_LIMITS


@register
class TracedPythonValue(Rule):
    code = "JAX310"
    name = "traced-python-value"
    summary = "A traced value where JAX or a library needs a Python value (a filter spec, `keepdims`, `reverse`)"
    what = """
        Checks for a traced value given, in transformed code, to an argument that decides what
        program JAX builds and so must be a Python value while it traces: an Equinox filter
        spec (`eqx.partition(params, filter_spec=mask)`, `eqx.filter`), `keepdims` of the
        reductions, `descending` of `jnp.sort`/`argsort`, `reverse` and `unroll` of `lax.scan`,
        `unroll` of `lax.fori_loop`, `reverse` of `lax.cumsum` and its kin, `decimals` of
        `jnp.round`. The usual way there is a jitted function's argument left traced: a mask
        of Python bools or a flag passed as an ordinary argument becomes a traced array. The
        message says so when the value is a parameter of the jitted function itself.
        """
    decisions = """
        The value must be known to be traced where it is given (a parameter of a jitted
        function not named static, a value computed from one, what a transformation hands a
        helper); a value the analysis does not know is not reported. Shapes, sizes and axes are
        JAX108's.
        """
    why = """
        JAX turns every argument of a jitted function that is not static into an abstract
        array, leaf by leaf: a tuple of Python bools becomes a tuple of traced boolean arrays.
        Equinox tests each leaf of a filter spec in Python and raises `ValueError`
        (`filter_spec leaf values cannot be traced arrays`); JAX keeps `keepdims`, `reverse`
        or `unroll` as parameters of the primitive it stages, which must be hashable Python
        values (`ValueError: Non-hashable static arguments are not supported`, or a tracer
        conversion error). Name the argument in `static_argnames` (a tuple of bools is
        hashable), or pass the value as a constant rather than an argument.
        """
    bad = (
        """
        import jax
        import equinox as eqx

        @jax.jit
        def trainable(params, mask):
            return eqx.partition(params, filter_spec=mask)[0]  # JAX310
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def pool(x, keep):
            return jnp.mean(x, axis=-1, keepdims=keep)  # JAX310
        """,
    )
    good = (
        """
        from functools import partial

        import jax
        import jax.numpy as jnp
        import equinox as eqx

        @partial(jax.jit, static_argnames=("mask", "keep"))
        def trainable(params, mask, keep):
            kept = eqx.partition(params, filter_spec=mask)[0]
            return jax.tree.map(lambda p: jnp.mean(p, keepdims=keep), kept)

        @eqx.filter_jit
        def arrays_only(model):
            return eqx.filter(model, eqx.is_array)
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp
        import equinox as eqx

        @jax.jit
        def trainable(params, mask):
            return eqx.partition(params, filter_spec=mask)[0]

        def demo():
            trainable((jnp.ones(2), jnp.ones(3)), (True, False))
        """,
        "raises:ValueError",
    )
    references = (
        "https://docs.kidger.site/equinox/api/manipulation/#equinox.partition",
        "https://docs.jax.dev/en/latest/_autosummary/jax.jit.html",
    )
    limitations = TRACED_VALUE_LIMITATIONS
    limits = (
        "Shapes, sizes and axes are JAX108's, not this rule's.",
    ) + TRACED_VALUE_LIMITS

    def check(self, module, report):
        for fn, _ in module.traced_functions():
            for node in module.unguarded(fn, ast.Call):
                for arg, kind, keyword in concrete_arguments(module, node):
                    if kind == PYTHON and module.is_abstract(arg):
                        report(arg, _message(module, node, arg, keyword))


def _message(module, call: ast.Call, arg: ast.expr, keyword: str) -> str:
    callee = f"`{ast.unparse(call.func)}`'s `{keyword}`"
    jitted = _jitted_parameter(module, arg)
    if jitted is not None:
        return (
            f"`{arg.id}` is an argument of the jitted `{jitted}` that is not static, so JAX traces it, but "
            f"{callee} must be a Python value while tracing: name it in `static_argnames`"
        )
    return (
        f"{callee} is given a traced value (`{module.source.snippet(arg)}`) but must be a Python value "
        "while tracing: compute it from static values, or make the argument it comes from static"
    )


def _jitted_parameter(module, arg: ast.expr) -> str | None:
    """The name of the jitted function `arg` is a parameter of, when it is one."""
    if not isinstance(arg, ast.Name):
        return None
    scope = module.names.read_scope.get(id(arg))
    owner = module.names.lookup(arg.id, scope) if scope is not None else None
    if owner is None or owner.kind != "function" or arg.id not in owner.params or arg.id in owner.assigned:
        return None
    for root in module.traced_roots:
        if root.node is owner.node and root.jit is not None:
            return getattr(owner.node, "name", "lambda")
    return None
