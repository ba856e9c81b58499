"""JAX105: `bool()`, `int()`, `float()`, `complex()` of a traced value."""

from __future__ import annotations

import ast

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS

# float() and complex() of a differentiated value raise even under a plain jax.grad;
# bool() and int() only under abstract tracing.
_ALWAYS = {"builtins.float": "float", "builtins.complex": "complex"}
_ABSTRACT = {"builtins.bool": "bool", "builtins.int": "int", "operator.index": "operator.index"}


@register
class TracedConversion(Rule):
    code = "JAX105"
    name = "traced-conversion"
    summary = "`bool()`, `int()`, `float()` or `complex()` of a traced value"
    what = """
        Checks for Python scalar conversions (`bool`, `int`, `float`, `complex`, `operator.index`)
        applied to traced values inside transformed code.
        """
    why = """
        A Python scalar must be known when the line runs. Inside `jit` the value is an abstract
        tracer, so JAX raises `ConcretizationTypeError` (`TracerBoolConversionError` for `bool`).
        `float()` and `complex()` of a differentiated value also raise under a plain `jax.grad`.
        Keep the value an array (`x.astype(jnp.float32)`), return it and convert outside the
        transformed function, or make the argument static.
        """
    bad = (
        """
        import jax
        import jax.numpy as jnp
        from jax import lax

        def top_eigenvalue(mat):
            def body(i, state):
                v, history = state
                v = mat @ v
                rayleigh = float(v @ mat @ v)  # JAX105
                return v, history.at[i].set(rayleigh)
            return lax.fori_loop(0, 5, body, (jnp.ones(2), jnp.zeros(5)))
        """,
        """
        import jax

        @jax.jit
        def pick(x, i):
            return x[int(i)]  # JAX105
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def f(x):
            n = int(x.shape[0])
            return x.astype(jnp.float32) / float(n)
        """,
        """
        import jax

        def loss(w):
            return (w ** 2).sum()

        def report(w):
            return float(jax.jit(loss)(w))
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def pick(x, i):
            return x[int(i)]

        def demo():
            pick(jnp.ones(3), 1)
        """,
        "raises:ConcretizationTypeError",
    )

    limitations = TRACED_VALUE_LIMITATIONS

    def check(self, module, report):
        for fn, _ in module.traced_functions():
            for node in module.unguarded(fn, ast.Call):
                if len(node.args) != 1:
                    continue
                name = module.qualname(node.func)
                arg = node.args[0]
                if name in _ALWAYS and module.is_traced(arg):
                    func = _ALWAYS[name]
                elif name in _ABSTRACT and module.is_abstract(arg):
                    func = _ABSTRACT[name]
                else:
                    continue
                report(
                    node,
                    f"`{func}()` of a traced value needs a concrete value while tracing; keep it an array "
                    f"(`x.astype(...)`), convert outside the transformed function, or make it static",
                )
