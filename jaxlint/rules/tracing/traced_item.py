"""JAX106: `.item()` / `.tolist()` on a traced value."""

from __future__ import annotations

import ast

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS, TRACED_VALUE_LIMITS

_METHODS = ("item", "tolist")


@register
class TracedItem(Rule):
    code = "JAX106"
    name = "traced-item"
    summary = "`.item()` or `.tolist()` on a traced value"
    what = """
        Checks for `.item()` and `.tolist()` called on traced arrays inside transformed code.
        Both copy the array's value to the host, and a traced array has no value yet.
        """
    why = """
        Both copy the array's value to the host as Python objects. Under `jit` (and `vmap`) there
        is no value yet, only an abstract tracer, so JAX raises `ConcretizationTypeError`. Return
        the array from the transformed function and call `.item()` on the result.
        """
    bad = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def train_step(w, x, y):
            loss, g = jax.value_and_grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
            history_value = loss.item()  # JAX106
            return w - 0.05 * g, history_value
        """,
    )
    good = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def train_step(w, x, y):
            loss, g = jax.value_and_grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
            return w - 0.05 * g, loss

        def fit(w, x, y):
            w, loss = train_step(w, x, y)
            return w, loss.item()
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def total(x):
            return x.sum().item()

        def demo():
            total(jnp.ones(3))
        """,
        "raises:ConcretizationTypeError",
    )

    limitations = TRACED_VALUE_LIMITATIONS
    limits = TRACED_VALUE_LIMITS

    def check(self, module, report):
        for fn, _ in module.traced_functions():
            for node in module.unguarded(fn, ast.Call):
                if (
                    isinstance(node.func, ast.Attribute)
                    and node.func.attr in _METHODS
                    and not node.args
                    and module.is_abstract(node.func.value)
                ):
                    report(
                        node,
                        f"`.{node.func.attr}()` on a traced value needs its concrete value while tracing; "
                        "return the array and call it outside the transformed function",
                    )
