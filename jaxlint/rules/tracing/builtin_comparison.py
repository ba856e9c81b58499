"""JAX113: Python's `max`, `min`, `sorted`, `any` or `all` over traced values."""

from __future__ import annotations

import ast

from jaxlint.analysis.values.values import element_of
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS, TRACED_VALUE_LIMITS

# Builtins that compare their operands with `<`/`>` and branch on the result.
_COMPARING = {"builtins.max": "max", "builtins.min": "min", "builtins.sorted": "sorted"}
# Builtins that take the truth value of each element of one iterable.
_TRUTH = {"builtins.any": "any", "builtins.all": "all"}
_JNP = {"max": "jnp.maximum", "min": "jnp.minimum", "sorted": "jnp.sort", "any": "jnp.any", "all": "jnp.all"}


@register
class BuiltinComparisonOnTracer(Rule):
    code = "JAX113"
    name = "builtin-comparison-on-tracer"
    summary = "Python `max`/`min`/`sorted`/`any`/`all` over traced values (use `jnp.maximum`, `jnp.any`, ...)"
    what = """
        Checks for the builtins `max`, `min`, `sorted`, `any` and `all` applied to traced values
        inside a function run under `jax.jit`, `jax.vmap`, `jax.pmap`, `jax.checkpoint` or a
        `lax` control-flow body. They compare or test elements with Python's truth, which a
        traced value does not have. Use `jnp.maximum`, `jnp.any` and the other `jax.numpy`
        twins.
        """
    decisions = """
        - `max` and `min` are reported with a traced value among their arguments (`max(0.0,
          var)`, `min(max(x, lo), hi)`).
        - `max`, `min`, `sorted`, `any` and `all` are reported over one iterable whose elements
          are traced arrays: a traced array, a list of traced arrays, a generator of traced
          comparisons.
        - Static operands are fine and not reported: shapes (`max(x.shape[0], 1)`), lengths
          (`max(len(xs), n)`), arguments in `static_argnames`, closure constants, and any value
          under a plain `jax.grad`, where values are concrete.
        - A `key=` function decides what is compared, and is not followed.
        """
    why = """
        These builtins are Python control flow: `max(a, b)` evaluates `b > a` and picks an
        operand with the truth value of the result, `any(xs)` calls `bool()` on each element. A
        traced value has no truth value while tracing, so JAX raises
        `TracerBoolConversionError`. The `jax.numpy` twins stay traced and work element-wise:
        `jnp.maximum(a, b)`, `jnp.minimum(a, b)`, `jnp.clip(x, lo, hi)`, `jnp.sort(x)`,
        `jnp.any(x)`, `jnp.all(x)`.
        """
    bad = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def normalize(x):
            mean = jnp.mean(x)
            var = jnp.mean(x ** 2) - mean ** 2
            var = max(0.0, var)  # JAX113
            return (x - mean) / jnp.sqrt(var + 1e-5)
        """,
        """
        import jax
        import jax.numpy as jnp

        def clamp(x, lo, hi):
            return min(max(x, lo), hi)  # JAX113

        @jax.vmap
        def step(v):
            return clamp(v * 2.0, -1.0, 1.0)
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def any_negative(xs):
            parts = [jnp.min(xs), jnp.max(xs)]
            return any(p < 0 for p in parts) or all(parts)  # JAX113
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def normalize(x):
            mean = jnp.mean(x)
            var = jnp.maximum(0.0, jnp.mean(x ** 2) - mean ** 2)
            return (x - mean) / jnp.sqrt(var + 1e-5)
        """,
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        LIMITS = (1.0, 2.0)

        @partial(jax.jit, static_argnames=("n",))
        def window(x, n, xs=()):
            width = max(x.shape[0], 1)
            depth = min(len(xs), n)
            top = max(LIMITS)
            order = sorted(x.shape)
            return x[:width] * depth * top * order[0], any(d > 1 for d in x.shape)
        """,
        """
        import jax
        import jax.numpy as jnp

        def hinge(w, x):
            return max(0.0, 1.0 - (x @ w).sum())  # values are concrete under plain grad

        def step(w, x):
            return w - 0.1 * jax.grad(hinge)(w, x)

        def largest(xs):
            return max(xs, key=lambda a: a.shape[0])
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def normalize(x):
            var = jnp.var(x)
            return x / jnp.sqrt(max(0.0, var) + 1e-5)

        def demo():
            normalize(jnp.ones(3))
        """,
        "raises:TracerBoolConversionError",
    )
    references = ("https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError",)

    limitations = TRACED_VALUE_LIMITATIONS
    limits = (
        "Static operands are not reported: shapes, lengths, static arguments, closure constants,"
        " values under a plain `jax.grad`.",
        "A `key=` function decides what is compared, and is not followed.",
    ) + TRACED_VALUE_LIMITS

    def check(self, module, report):
        for fn, _ in module.traced_functions():
            for node in module.unguarded(fn, ast.Call):
                if any(k.arg == "key" for k in node.keywords):
                    continue
                name = module.qualname(node.func)
                func = _COMPARING.get(name) or _TRUTH.get(name)
                if func is None or not node.args or any(isinstance(a, ast.Starred) for a in node.args):
                    continue
                if len(node.args) > 1 and func in ("max", "min"):
                    if not any(module.is_abstract(a) and not _compared_call(module, a) for a in node.args):
                        continue
                    what = "traced operands"
                elif len(node.args) == 1 and _abstract_elements(module, node.args[0]):
                    what = "the elements of a traced iterable"
                else:
                    continue
                action = "compares" if func in ("max", "min", "sorted") else "takes the truth value of"
                report(
                    node,
                    f"Python `{func}()` {action} {what}, which have no truth value while tracing; "
                    f"use `{_JNP[func]}`" + (" (or `jnp.clip`)" if func in ("max", "min") else ""),
                )


def _abstract_elements(module, iterable: ast.expr) -> bool:
    """An abstract value whose elements are traced arrays: iterating it yields tracers."""
    if not module.is_abstract(iterable):
        return False
    value = module.value(iterable)
    element = element_of(value)
    return element.traced and (element.array or element.boolean)


def _compared_call(module, arg: ast.expr) -> bool:
    """`min(max(x, lo), hi)`: the inner call is the one reported; its result adds nothing."""
    return isinstance(arg, ast.Call) and module.qualname(arg.func) in _COMPARING
