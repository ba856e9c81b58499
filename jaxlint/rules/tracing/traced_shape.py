"""JAX108: an array shape or size computed from a traced value."""

from __future__ import annotations

import ast

from jaxlint.analysis.arrays.arrays import is_at_index
from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.tracing import TRACED_VALUE_LIMITATIONS

# What JAX needs concrete in an argument, and what to write instead (the message of each kind).
SHAPE, START, OFFSET, AXIS = "shape", "start", "offset", "axis"
_MESSAGES = {
    SHAPE: "array shape from traced value `{}`: shapes must be static while tracing; make it a static "
    "argument (`static_argnames`), use `x.shape`, or pad to a fixed size and mask",
    START: "slice start from traced value `{}`: a static slice needs static bounds while tracing; use "
    "`lax.dynamic_slice` (or `lax.dynamic_index_in_dim`), whose start may be traced, with a static size",
    OFFSET: "diagonal offset from traced value `{}`: it must be a Python int while tracing; make it a "
    "static argument (`static_argnames`), or mask with `jnp.where` on index arrays",
    AXIS: "axis from traced value `{}`: axes must be Python ints while tracing; make it a static "
    "argument (`static_argnames`)",
}

# Function -> (positional index or None for keyword-only, keyword, kind) of each argument JAX
# needs concrete; a method of `jax.Array` counts `self` as its first parameter. An argument that
# may be either a count or an array of values (`jax.random.permutation(key, x)`,
# `jnp.histogram(x, bins)`, `jax.random.choice(key, a)`) is left out: a traced array there is
# fine, and the analysis does not know a traced value's rank.
_REDUCTION = ((1, "axis", AXIS),)
_SHAPE_ARGS = {
    # ---- constructors -------------------------------------------------------------------------
    "jax.numpy.zeros": ((0, "shape", SHAPE),),
    "jax.numpy.ones": ((0, "shape", SHAPE),),
    "jax.numpy.empty": ((0, "shape", SHAPE),),
    "jax.numpy.full": ((0, "shape", SHAPE),),
    "jax.numpy.zeros_like": ((2, "shape", SHAPE),),
    "jax.numpy.ones_like": ((2, "shape", SHAPE),),
    "jax.numpy.empty_like": ((2, "shape", SHAPE),),
    "jax.numpy.full_like": ((3, "shape", SHAPE),),
    "jax.numpy.eye": ((0, "N", SHAPE), (1, "M", SHAPE)),
    "jax.numpy.identity": ((0, "n", SHAPE),),
    "jax.numpy.tri": ((0, "N", SHAPE), (1, "M", SHAPE)),
    "jax.numpy.arange": ((0, "start", SHAPE), (1, "stop", SHAPE), (2, "step", SHAPE)),
    "jax.numpy.linspace": ((2, "num", SHAPE), (6, "axis", AXIS)),
    "jax.numpy.logspace": ((2, "num", SHAPE), (6, "axis", AXIS)),
    "jax.numpy.geomspace": ((2, "num", SHAPE), (5, "axis", AXIS)),
    "jax.numpy.indices": ((0, "dimensions", SHAPE),),
    "jax.numpy.triu_indices": ((0, "n", SHAPE), (1, "k", OFFSET), (2, "m", SHAPE)),
    "jax.numpy.tril_indices": ((0, "n", SHAPE), (1, "k", OFFSET), (2, "m", SHAPE)),
    "jax.numpy.triu_indices_from": ((1, "k", OFFSET),),
    "jax.numpy.tril_indices_from": ((1, "k", OFFSET),),
    "jax.numpy.diag_indices": ((0, "n", SHAPE), (1, "ndim", SHAPE)),
    "jax.numpy.vander": ((1, "N", SHAPE),),
    "jax.nn.one_hot": ((1, "num_classes", SHAPE), (None, "axis", AXIS)),
    "jax.lax.full": ((0, "shape", SHAPE),),
    "jax.lax.full_like": ((3, "shape", SHAPE),),
    "jax.lax.iota": ((1, "size", SHAPE),),
    # The number of steps, and so the leading dimension of the stacked outputs.
    "jax.lax.scan": ((3, "length", SHAPE),),
    "jax.lax.broadcasted_iota": ((1, "shape", SHAPE), (2, "dimension", AXIS)),
    # ---- reshaping, padding, slicing ------------------------------------------------------------
    "jax.numpy.reshape": ((1, "shape", SHAPE),),
    "jax.numpy.broadcast_to": ((1, "shape", SHAPE),),
    "jax.numpy.resize": ((1, "new_shape", SHAPE),),
    "jax.numpy.tile": ((1, "reps", SHAPE),),
    "jax.numpy.repeat": ((1, "repeats", SHAPE), (2, "axis", AXIS)),
    "jax.numpy.pad": ((1, "pad_width", SHAPE),),
    "jax.numpy.split": ((1, "indices_or_sections", SHAPE), (2, "axis", AXIS)),
    "jax.numpy.array_split": ((1, "indices_or_sections", SHAPE), (2, "axis", AXIS)),
    "jax.numpy.hsplit": ((1, "indices_or_sections", SHAPE),),
    "jax.numpy.vsplit": ((1, "indices_or_sections", SHAPE),),
    "jax.numpy.diff": ((1, "n", SHAPE), (2, "axis", AXIS)),
    "jax.image.resize": ((1, "shape", SHAPE),),
    "jax.lax.reshape": ((1, "new_sizes", SHAPE), (2, "dimensions", AXIS)),
    "jax.lax.broadcast": ((1, "sizes", SHAPE),),
    "jax.lax.broadcast_in_dim": ((1, "shape", SHAPE), (2, "broadcast_dimensions", AXIS)),
    "jax.lax.pad": ((2, "padding_config", SHAPE),),
    "jax.lax.dynamic_slice": ((2, "slice_sizes", SHAPE),),
    "jax.lax.dynamic_slice_in_dim": ((2, "slice_size", SHAPE), (3, "axis", AXIS)),
    "jax.lax.dynamic_index_in_dim": ((2, "axis", AXIS),),
    "jax.lax.slice": ((1, "start_indices", START), (2, "limit_indices", SHAPE), (3, "strides", SHAPE)),
    "jax.lax.slice_in_dim": (
        (1, "start_index", START), (2, "limit_index", SHAPE), (3, "stride", SHAPE), (4, "axis", AXIS)
    ),
    "jax.lax.index_in_dim": ((1, "index", START), (2, "axis", AXIS)),
    # ---- sizes of results -----------------------------------------------------------------------
    "jax.numpy.nonzero": ((None, "size", SHAPE),),
    "jax.numpy.argwhere": ((None, "size", SHAPE),),
    "jax.numpy.flatnonzero": ((None, "size", SHAPE),),
    "jax.numpy.where": ((None, "size", SHAPE),),
    "jax.numpy.unique": ((4, "axis", AXIS), (None, "size", SHAPE)),
    "jax.numpy.bincount": ((2, "minlength", SHAPE), (None, "length", SHAPE)),
    "jax.numpy.fft.fft": ((1, "n", SHAPE), (2, "axis", AXIS)),
    "jax.numpy.fft.ifft": ((1, "n", SHAPE), (2, "axis", AXIS)),
    "jax.numpy.fft.rfft": ((1, "n", SHAPE), (2, "axis", AXIS)),
    "jax.numpy.fft.irfft": ((1, "n", SHAPE), (2, "axis", AXIS)),
    "jax.lax.top_k": ((1, "k", SHAPE), (None, "axis", AXIS)),
    "jax.numpy.partition": ((1, "kth", SHAPE), (2, "axis", AXIS)),
    "jax.numpy.argpartition": ((1, "kth", SHAPE), (2, "axis", AXIS)),
    # ---- diagonals ------------------------------------------------------------------------------
    "jax.numpy.tril": ((1, "k", OFFSET),),
    "jax.numpy.triu": ((1, "k", OFFSET),),
    "jax.numpy.diag": ((1, "k", OFFSET),),
    "jax.numpy.diagflat": ((1, "k", OFFSET),),
    "jax.numpy.diagonal": ((1, "offset", OFFSET), (2, "axis1", AXIS), (3, "axis2", AXIS)),
    # ---- jax.random: the sample's shape, wherever the distribution puts it ------------------------
    "jax.random.split": ((1, "num", SHAPE),),
    "jax.random.normal": ((1, "shape", SHAPE),),
    "jax.random.uniform": ((1, "shape", SHAPE),),
    "jax.random.bits": ((1, "shape", SHAPE),),
    "jax.random.exponential": ((1, "shape", SHAPE),),
    "jax.random.laplace": ((1, "shape", SHAPE),),
    "jax.random.gumbel": ((1, "shape", SHAPE),),
    "jax.random.cauchy": ((1, "shape", SHAPE),),
    "jax.random.logistic": ((1, "shape", SHAPE),),
    "jax.random.rademacher": ((1, "shape", SHAPE),),
    "jax.random.maxwell": ((1, "shape", SHAPE),),
    "jax.random.randint": ((1, "shape", SHAPE),),
    "jax.random.bernoulli": ((2, "shape", SHAPE),),
    "jax.random.gamma": ((2, "shape", SHAPE),),
    "jax.random.loggamma": ((2, "shape", SHAPE),),
    "jax.random.poisson": ((2, "shape", SHAPE),),
    "jax.random.dirichlet": ((2, "shape", SHAPE),),
    "jax.random.chisquare": ((2, "shape", SHAPE),),
    "jax.random.t": ((2, "shape", SHAPE),),
    "jax.random.pareto": ((2, "shape", SHAPE),),
    "jax.random.geometric": ((2, "shape", SHAPE),),
    "jax.random.rayleigh": ((2, "shape", SHAPE),),
    "jax.random.wald": ((2, "shape", SHAPE),),
    "jax.random.lognormal": ((2, "shape", SHAPE),),
    "jax.random.generalized_normal": ((2, "shape", SHAPE),),
    "jax.random.choice": ((2, "shape", SHAPE), (5, "axis", AXIS)),
    "jax.random.beta": ((3, "shape", SHAPE),),
    "jax.random.binomial": ((3, "shape", SHAPE),),
    "jax.random.f": ((3, "shape", SHAPE),),
    "jax.random.truncated_normal": ((3, "shape", SHAPE),),
    "jax.random.multivariate_normal": ((3, "shape", SHAPE),),
    "jax.random.double_sided_maxwell": ((3, "shape", SHAPE),),
    "jax.random.weibull_min": ((3, "shape", SHAPE),),
    "jax.random.triangular": ((4, "shape", SHAPE),),
    "jax.random.multinomial": ((None, "shape", SHAPE),),
    "jax.random.ball": ((1, "d", SHAPE), (3, "shape", SHAPE)),
    "jax.random.orthogonal": ((1, "n", SHAPE), (2, "shape", SHAPE), (4, "m", SHAPE)),
    "jax.random.categorical": ((2, "axis", AXIS), (3, "shape", SHAPE)),
    "jax.random.permutation": ((2, "axis", AXIS),),
    # ---- axes -----------------------------------------------------------------------------------
    "jax.numpy.sum": _REDUCTION,
    "jax.numpy.mean": _REDUCTION,
    "jax.numpy.max": _REDUCTION,
    "jax.numpy.min": _REDUCTION,
    "jax.numpy.amax": _REDUCTION,
    "jax.numpy.amin": _REDUCTION,
    "jax.numpy.prod": _REDUCTION,
    "jax.numpy.std": _REDUCTION,
    "jax.numpy.var": _REDUCTION,
    "jax.numpy.median": _REDUCTION,
    "jax.numpy.average": _REDUCTION,
    "jax.numpy.nansum": _REDUCTION,
    "jax.numpy.nanmean": _REDUCTION,
    "jax.numpy.count_nonzero": _REDUCTION,
    "jax.numpy.argmax": _REDUCTION,
    "jax.numpy.argmin": _REDUCTION,
    "jax.numpy.any": _REDUCTION,
    "jax.numpy.all": _REDUCTION,
    "jax.numpy.cumsum": _REDUCTION,
    "jax.numpy.cumprod": _REDUCTION,
    "jax.numpy.sort": _REDUCTION,
    "jax.numpy.argsort": _REDUCTION,
    "jax.numpy.flip": _REDUCTION,
    "jax.numpy.squeeze": _REDUCTION,
    "jax.numpy.expand_dims": _REDUCTION,
    "jax.numpy.concatenate": _REDUCTION,
    "jax.numpy.stack": _REDUCTION,
    "jax.numpy.transpose": ((1, "axes", AXIS),),
    "jax.numpy.moveaxis": ((1, "source", AXIS), (2, "destination", AXIS)),
    "jax.numpy.swapaxes": ((1, "axis1", AXIS), (2, "axis2", AXIS)),
    "jax.numpy.roll": ((2, "axis", AXIS),),
    "jax.numpy.take": ((2, "axis", AXIS),),
    "jax.numpy.take_along_axis": ((2, "axis", AXIS),),
    "jax.numpy.linalg.norm": ((2, "axis", AXIS),),
    "jax.nn.softmax": _REDUCTION,
    "jax.nn.log_softmax": _REDUCTION,
    "jax.nn.logsumexp": _REDUCTION,
    "jax.scipy.special.logsumexp": _REDUCTION,
    "jax.lax.expand_dims": ((1, "dimensions", AXIS),),
    "jax.lax.squeeze": ((1, "dimensions", AXIS),),
    "jax.lax.rev": ((1, "dimensions", AXIS),),
    "jax.lax.transpose": ((1, "permutation", AXIS),),
    # ---- methods of arrays ----------------------------------------------------------------------
    "jax.Array.sum": _REDUCTION,
    "jax.Array.mean": _REDUCTION,
    "jax.Array.max": _REDUCTION,
    "jax.Array.min": _REDUCTION,
    "jax.Array.prod": _REDUCTION,
    "jax.Array.std": _REDUCTION,
    "jax.Array.var": _REDUCTION,
    "jax.Array.argmax": _REDUCTION,
    "jax.Array.argmin": _REDUCTION,
    "jax.Array.any": _REDUCTION,
    "jax.Array.all": _REDUCTION,
    "jax.Array.cumsum": _REDUCTION,
    "jax.Array.cumprod": _REDUCTION,
    "jax.Array.sort": _REDUCTION,
    "jax.Array.argsort": _REDUCTION,
    "jax.Array.squeeze": _REDUCTION,
    "jax.Array.swapaxes": ((1, "axis1", AXIS), (2, "axis2", AXIS)),
    "jax.Array.take": ((2, "axis", AXIS),),
    "jax.Array.diagonal": ((1, "offset", OFFSET), (2, "axis1", AXIS), (3, "axis2", AXIS)),
    "jax.Array.repeat": ((1, "repeats", SHAPE), (2, "axis", AXIS)),
}
# Traced repeat counts are fine once the output length is given.
_SIZED_BY = {"jax.numpy.repeat": "total_repeat_length", "jax.Array.repeat": "total_repeat_length"}
# Array methods whose positional arguments are all dimensions.
_SHAPE_METHODS = frozenset({"reshape", "broadcast_to"})


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
        - the number of steps of a scan: `lax.scan(f, init, xs, length=n)`;
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

    def check(self, module, report):
        for fn, _ in module.traced_functions():
            for node in module.unguarded(fn, ast.Call):
                for arg, kind in _static_arguments(module, node):
                    if module.is_abstract(arg):
                        report(arg, _MESSAGES[kind].format(module.source.snippet(arg)))
                        break


def _static_arguments(module, call: ast.Call):
    """The arguments of a call that JAX needs concrete, each with its kind."""
    name = module.qualname(call.func)
    args = call.args
    if name is None and isinstance(call.func, ast.Attribute) and not is_at_index(call.func.value):
        # (`x.at[i].min(v)` is an update taking values, not a method of the array.)
        receiver = module.value(call.func.value)
        if call.func.attr in _SHAPE_METHODS and receiver is not None and receiver.traced:
            # `x.reshape(n, -1)`: every positional argument is a dimension.
            for arg in args:
                yield arg, SHAPE
            return
        if receiver is not None and receiver.traced and receiver.array:
            name, args = "jax.Array." + call.func.attr, [call.func.value, *args]
    if name not in _SHAPE_ARGS:
        return
    keywords = {k.arg: k.value for k in call.keywords}
    if name in _SIZED_BY and _SIZED_BY[name] in keywords:
        return
    # Past a `*args`, positions are unknown.
    starred = [i for i, arg in enumerate(args) if isinstance(arg, ast.Starred)]
    known = args[: starred[0]] if starred else args
    for index, keyword, kind in _SHAPE_ARGS[name]:
        if index is not None and index < len(known):
            yield known[index], kind
        elif keyword in keywords:
            yield keywords[keyword], kind

