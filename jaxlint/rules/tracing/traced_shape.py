"""JAX108: an array shape or size computed from a traced value."""

from __future__ import annotations

import ast

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS

# Function -> (positional index, keyword) of its shape/size argument(s).
_SHAPE_ARGS = {
    "jax.numpy.zeros": ((0, "shape"),),
    "jax.numpy.ones": ((0, "shape"),),
    "jax.numpy.empty": ((0, "shape"),),
    "jax.numpy.full": ((0, "shape"),),
    "jax.numpy.eye": ((0, "N"), (1, "M")),
    "jax.numpy.identity": ((0, "n"),),
    "jax.numpy.tri": ((0, "N"), (1, "M")),
    "jax.numpy.arange": ((0, "start"), (1, "stop"), (2, "step")),
    "jax.numpy.linspace": ((2, "num"),),
    "jax.numpy.logspace": ((2, "num"),),
    "jax.numpy.reshape": ((1, "shape"), (1, "newshape")),
    "jax.numpy.broadcast_to": ((1, "shape"),),
    "jax.numpy.tile": ((1, "reps"),),
    "jax.numpy.zeros_like": ((None, "shape"),),
    "jax.numpy.ones_like": ((None, "shape"),),
    "jax.numpy.full_like": ((None, "shape"),),
    "jax.nn.one_hot": ((1, "num_classes"),),
    "jax.random.normal": ((1, "shape"),),
    "jax.random.uniform": ((1, "shape"),),
    "jax.random.bernoulli": ((2, "shape"),),
    "jax.random.randint": ((1, "shape"),),
    "jax.random.categorical": ((None, "shape"),),
}
# `x.reshape(n, -1)` and friends: every positional argument is a dimension.
_SHAPE_METHODS = frozenset({"reshape", "broadcast_to"})


@register
class TracedShape(Rule):
    code = "JAX108"
    name = "traced-shape"
    summary = "Array shape or size computed from a traced value"
    what = """
        Checks for array constructors and reshapes (`jnp.zeros(n)`, `jnp.arange(n)`,
        `jnp.linspace(a, b, n)`, `x.reshape(n, -1)`, `jax.random.normal(key, (n,))`,
        `jax.nn.one_hot(x, n)`, `jnp.repeat(x, n)` without `total_repeat_length`, …) whose
        shape or size argument is a traced value.
        """
    why = """
        XLA compiles for fixed shapes: every shape must be a concrete Python integer when the
        function is traced. A traced size raises `TypeError` ("Shapes must be 1D sequences of
        concrete values of integer type") or `ConcretizationTypeError` (`jnp.arange`). Pass the
        size as a static argument (`static_argnames`), derive it from another array's
        `.shape`, or allocate a fixed maximum size and mask the unused part.
        """
    bad = (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def gather_valid(values, valid):
            n_valid = valid.sum()
            return jnp.zeros(n_valid)  # JAX108
        """,
        """
        import jax
        import jax.numpy as jnp

        def positions(seq_len, dim):
            return jnp.arange(seq_len)[:, None] * jnp.arange(0, dim, 2)  # JAX108

        encode = jax.jit(positions, static_argnums=(1,))
        """,
    )
    good = (
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=(1,))
        def pad_to_length(tokens, max_len):
            buf = jnp.zeros(max_len, dtype=tokens.dtype)
            n = min(tokens.shape[0], max_len)
            return buf.at[:n].set(tokens[:n]), jnp.arange(max_len) < n
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def flatten(images):
            return images.reshape(images.shape[0], -1), jnp.zeros(images.shape[1:])
        """,
    )
    demo = JaxDemo(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def gather_valid(valid):
            return jnp.zeros(valid.sum())

        def demo():
            gather_valid(jnp.array([1, 0, 1]))
        """,
        "raises:TypeError",
    )

    limitations = TRACED_VALUE_LIMITATIONS

    def check(self, module, report):
        for fn, _ in module.traced_functions():
            for node in module.unguarded(fn, ast.Call):
                for arg in _shape_arguments(module, node):
                    if module.is_abstract(arg):
                        report(
                            arg,
                            f"array shape from traced value `{module.source.snippet(arg)}`: shapes must be "
                            "static while tracing; "
                            "make it a static argument (`static_argnames`), use `x.shape`, or pad to a "
                            "fixed size and mask",
                        )
                        break


def _shape_arguments(module, call: ast.Call):
    name = module.qualname(call.func)
    if name == "jax.numpy.repeat" and not any(k.arg == "total_repeat_length" for k in call.keywords):
        # Traced repeat counts are fine once the output length is given.
        if len(call.args) > 1:
            yield call.args[1]
    elif name in _SHAPE_ARGS:
        keywords = {k.arg: k.value for k in call.keywords}
        for index, keyword in _SHAPE_ARGS[name]:
            if index is not None and index < len(call.args):
                yield call.args[index]
            elif keyword in keywords:
                yield keywords[keyword]
    elif (
        name is None
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in _SHAPE_METHODS
        and module.is_traced(call.func.value)
    ):
        yield from call.args
