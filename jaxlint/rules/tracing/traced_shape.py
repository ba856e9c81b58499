"""JAX108: an array shape or size computed from a traced value."""

from __future__ import annotations

import ast

from jaxlint.analysis.knowledge.shape_api import AXIS, OFFSET, SHAPE, START, STEPS
from jaxlint.analysis.shapes.concrete_arguments import concrete_arguments
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS, TRACED_VALUE_LIMITS

# What JAX needs concrete in an argument, and what to write instead (the message of each kind).
_MESSAGES = {
    SHAPE: "array shape from traced value `{}`: shapes must be static while tracing; make it a static "
    "argument (`static_argnames`), use `x.shape`, or pad to a fixed size and mask",
    START: "slice start from traced value `{}`: a static slice needs static bounds while tracing; use "
    "`lax.dynamic_slice` (or `lax.dynamic_index_in_dim`), whose start may be traced, with a static size",
    OFFSET: "diagonal offset from traced value `{}`: it must be a Python int while tracing; make it a "
    "static argument (`static_argnames`), or mask with `jnp.where` on index arrays",
    AXIS: "axis from traced value `{}`: axes must be Python ints while tracing; make it a static "
    "argument (`static_argnames`)",
    STEPS: "number of steps from traced value `{}`: a loop's length (or its most steps) sizes the program "
    "and must be a Python int while tracing; make it a static argument (`static_argnames`) or a constant",
}


@register
class TracedShape(Rule):
    code = "JAX108"
    name = "traced-shape"
    summary = "Array shape or size computed from a traced value"
    what = """
        Checks for calls whose shape, size, width, count, diagonal offset or axis argument is a
        traced value inside transformed code, where JAX needs a Python int: array constructors,
        reshapes, padding, slicing, the sample shapes of `jax.random`, result sizes, the length
        of a scan and axes. XLA compiles for fixed shapes, so such a call fails while JAX traces
        it. The message names the kind of argument and what to write instead.
        """
    decisions = """
        The arguments it checks:

        - array constructors and reshapes: `jnp.zeros(n)`, `jnp.arange(n)`, `jnp.linspace(a, b,
          n)`, `x.reshape(n, -1)`, `jnp.repeat(x, n)` without `total_repeat_length`;
        - padding and slicing: `jnp.pad(x, (0, n))`, `lax.dynamic_slice(x, starts, (n,))`,
          `lax.slice`, `jnp.split(x, n)`;
        - the sample shape of every `jax.random` distribution (`normal(key, (n,))`, `gamma(key,
          a, (n,))`, `truncated_normal(key, lo, hi, (n,))`), and `jax.random.split(key, n)`;
        - result sizes: `jnp.nonzero(x, size=n)`, `lax.top_k(x, k)`;
        - the number of steps of a loop: `lax.scan(f, init, xs, length=n)`, and the most steps of
          Equinox's `equinox.internal.while_loop(..., max_steps=n)` and of Diffrax's
          `diffeqsolve(..., max_steps=n)`, which size the checkpoints and saved steps;
        - diagonal offsets: `jnp.tril(m, k)`;
        - axes: `jnp.sum(x, axis=a)`, `x.cumsum(a)`, `jnp.concatenate(xs, a)`, `jnp.moveaxis(x,
          a, b)`.
        """
    why = """
        XLA compiles for fixed shapes: every shape must be a concrete Python integer when the
        function is traced, and so must an axis or a diagonal offset, which decide the shape of
        the program. A traced size raises `TypeError` ("Shapes must be 1D sequences of concrete
        values of integer type") or `ConcretizationTypeError` (`jnp.arange`, `jnp.pad`, an
        axis). Pass the size as a static argument (`static_argnames`), derive it from another
        array's `.shape`, or allocate a fixed maximum size and mask the unused part. Only the
        size must be static: a traced start of `lax.dynamic_slice` is fine, and so is a traced
        array given where JAX also takes one (`jax.random.permutation(key, x)`).
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
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def pad_to(tokens, length):
            return jnp.pad(tokens, (0, length - tokens.shape[0]))  # JAX108

        @jax.jit
        def window(x, start, size):
            return jax.lax.dynamic_slice(x, (start,), (size,))  # JAX108
        """,
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def normalize(x, axis):
            return x / jnp.sum(x, axis=axis, keepdims=True)  # JAX108
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
        """
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnames=("length", "size"))
        def pad_and_window(tokens, start, length, size):
            padded = jnp.pad(tokens, (0, length - tokens.shape[0]))
            return jax.lax.dynamic_slice(padded, (start,), (size,))

        @partial(jax.jit, static_argnames="axis")
        def normalize(x, axis):
            return x / jnp.sum(x, axis=axis, keepdims=True)
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

    limitations = (
        """
    An argument JAX takes either as a count or as an array of values
    (`jax.random.permutation(key, x)`, `jax.random.choice(key, a)`, `jnp.histogram(x, bins)`) is
    not checked: a traced array there is fine, and the analysis does not know whether a traced
    value is a scalar. An array method (`x.sum(axis=a)`, `x.repeat(n)`) is checked when the
    analysis knows its receiver is a traced array.
    """
        + TRACED_VALUE_LIMITATIONS
    )
    limits = (
        "An argument JAX takes as a count or as an array of values (`jax.random.choice(key, a)`,"
        " `jnp.histogram(x, bins)`) is not checked.",
        "An array method (`x.sum(axis=a)`) is checked only where its receiver is known to be a"
        " traced array.",
    ) + TRACED_VALUE_LIMITS

    def check(self, module, report):
        for fn, _ in module.traced_functions():
            for node in module.unguarded(fn, ast.Call):
                for arg, kind, _ in concrete_arguments(module, node):
                    if kind in _MESSAGES and module.is_abstract(arg):
                        report(arg, _MESSAGES[kind].format(module.source.snippet(arg)))
                        break
