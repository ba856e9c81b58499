"""JAX105: `bool()`, `int()`, `float()`, `complex()` of a traced value, and a traced index into a Python list."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.python_sequences import python_sequence
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS, TRACED_VALUE_LIMITS

# float() and complex() of a differentiated value raise even under a plain jax.grad;
# bool() and int() only under abstract tracing.
_ALWAYS = {"builtins.float": "float", "builtins.complex": "complex"}
_ABSTRACT = {"builtins.bool": "bool", "builtins.int": "int", "operator.index": "operator.index"}


@register
class TracedConversion(Rule):
    code = "JAX105"
    name = "traced-conversion"
    summary = "`bool()`, `int()`, `float()` or `complex()` of a traced value, or a traced index into a Python list"
    what = """
        Checks for Python scalar conversions (`bool`, `int`, `float`, `complex`,
        `operator.index`) of traced values inside transformed code, and for a Python list or
        tuple indexed by a traced value, which converts the index to a Python int. A traced
        value has no concrete value to convert while JAX traces the function.
        """
    decisions = """
        - A Python list or tuple is a literal, or a name every assignment of which in its scope
          is one (`TABLE = [1.0, 2.0]`). Indexing it converts the index with `__index__`.
        """
    why = """
        A Python scalar must be known when the line runs. Inside `jit` the value is an abstract
        tracer, so JAX raises `ConcretizationTypeError` (`TracerBoolConversionError` for `bool`).
        `float()` and `complex()` of a differentiated value also raise under a plain `jax.grad`.
        Keep the value an array (`x.astype(jnp.float32)`), return it and convert outside the
        transformed function, or make the argument static. A list or tuple needs a Python int
        as its index and raises `TracerIntegerConversionError`; make the table an array
        (`jnp.asarray(TABLE)[i]`), which JAX indexes on the device, or use `lax.switch` to pick
        among functions.
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
        """
        import jax

        RATES = [0.1, 0.01, 0.001]

        @jax.jit
        def schedule(step, stage):
            return RATES[stage] * step  # JAX105
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
    limits = (
        "A Python list or tuple is known only as a literal, or a name every assignment of which is one.",
    ) + TRACED_VALUE_LIMITS

    def check(self, module, report):
        for fn, _ in module.traced_functions():
            for node in module.unguarded(fn, ast.Subscript):
                index = node.slice
                if (
                    isinstance(node.ctx, ast.Load) and not isinstance(index, (ast.Slice, ast.Tuple))
                    and module.is_abstract(index) and python_sequence(node.value, module.names)
                ):
                    table = module.source.snippet(node.value)
                    report(
                        node,
                        f"`{table}` is a Python list or tuple indexed by a traced value: it needs a Python int "
                        f"(`__index__`), which a tracer refuses; use `jnp.asarray({table})[...]` or `lax.switch`",
                    )
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
