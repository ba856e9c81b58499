"""JAX103: `and` / `or` / `not` applied to a traced value."""

from __future__ import annotations

import ast

from jaxlint.analysis.values.comparisons import elementwise
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS, TRACED_VALUE_LIMITS

_TESTS = (ast.If, ast.While, ast.IfExp, ast.Assert)


@register
class TracedBoolOperator(Rule):
    code = "JAX103"
    name = "traced-bool-operator"
    summary = "`and`, `or`, `not` or a chained comparison on a traced value (use `&`, `|`, `~` or `jnp.logical_*`)"
    what = """
        Checks for Python's `and`, `or` and `not`, and for chained comparisons (`0 < x < 1`),
        applied to traced values inside transformed code. Each of them takes the truth of a
        traced array, which has none while JAX traces the function. Use the element-wise
        operators `&`, `|`, `~` or `jnp.logical_*`.
        """
    decisions = """
        - A chained comparison is an `and`: `0 < x < 1` is `(0 < x) and (x < 1)`.
        - Inside the condition of an `if`, `while` or `assert`, each operand Python takes the
          truth of is reported as JAX101, JAX102 or JAX104 instead (`if err < 1 and err > 0:`),
          not as this rule.
        """
    why = """
        `a and b` calls `bool(a)`, `not a` calls `bool(a)`, and `a < b < c` calls `bool(a < b)`.
        A traced array has no truth value
        while JAX traces the function, so JAX raises `TracerBoolConversionError`. The element-wise
        operators `&`, `|`, `~` (or `jnp.logical_and`, `jnp.logical_or`, `jnp.logical_not`) stay
        traced.
        """
    bad = (
        """
        import jax

        @jax.jit
        def valid(x, y):
            ok = (x > 0) and (y > 0)  # JAX103
            return ok
        """,
        """
        import jax

        @jax.jit
        def invert(mask):
            return not mask.any()  # JAX103
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def valid(x, y):
            return (x > 0) & (y > 0)
        """,
        """
        import jax

        @jax.jit
        def f(x, scale=None):
            use = scale is not None and x.ndim > 1
            return x * 2 if use else x
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def valid(x, y):
            return (x > 0) and (y > 0)

        def demo():
            valid(jnp.float32(1), jnp.float32(2))
        """,
        "raises:TracerBoolConversionError",
    )

    limitations = TRACED_VALUE_LIMITATIONS
    limits = (
        "In the condition of an `if`, `while` or `assert`, the operands are reported as JAX101,"
        " JAX102 or JAX104 instead.",
    ) + TRACED_VALUE_LIMITS

    def check(self, module, report):
        for fn, _ in module.traced_functions():
            tests = {id(n.test) for kind in _TESTS for n in module.unguarded(fn, kind)}
            scope = module.names.scope_of(fn)
            nodes = [*module.unguarded(fn, ast.BoolOp), *module.unguarded(fn, ast.UnaryOp), *module.unguarded(fn, ast.Compare)]
            for node in nodes:
                if id(node) in tests:
                    continue
                if isinstance(node, ast.Compare):
                    # `a < b < c` is `(a < b) and (b < c)`: every pair but the last is converted.
                    operands = [node.left, *node.comparators]
                    converted = [
                        i for i in range(len(operands) - 2)
                        if elementwise(
                            node.ops[i], operands[i], operands[i + 1], module.names, scope, module.analysis.records.class_of
                        ) and (
                            module.is_abstract_array(operands[i]) or module.is_abstract_array(operands[i + 1])
                        )
                    ]
                    if converted:
                        i = converted[0]
                        pair = ast.unparse(ast.Compare(operands[i], [node.ops[i]], [operands[i + 1]]))
                        report(
                            node,
                            f"Chained comparison on a traced value converts `{pair}` to a Python bool; "
                            "compare each pair and combine them with `&` (`(a < b) & (b < c)`)",
                        )
                    continue
                if isinstance(node, ast.BoolOp):
                    # Python converts every operand but the last to bool.
                    if any(module.is_abstract_array(v) for v in node.values[:-1]):
                        op = "and" if isinstance(node.op, ast.And) else "or"
                        alt = "&` or `jnp.logical_and" if op == "and" else "|` or `jnp.logical_or"
                        report(node, f"`{op}` on a traced value converts it to a Python bool; use `{alt}`")
                elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                    if module.is_abstract_array(node.operand):
                        report(node, "`not` on a traced value converts it to a Python bool; use `~x` or `jnp.logical_not(x)`")

