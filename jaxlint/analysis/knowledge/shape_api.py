"""What jaxlint knows about array shapes and compilation caches, as data (the JAX5xx and
recompilation rules): which calls make, join or keep a shape, where a constructor takes its
sizes, and which transformations cache what they compile.

Every name is fully qualified (see `names.canonical`), as in `jax_api.py`.
"""

from __future__ import annotations

_NUMPY_LIKE = ("jax.numpy", "numpy")

# Arrays made from a Python sequence: their shape follows the sequence's length.
ARRAY_FROM_SEQUENCE = frozenset(
    f"{m}.{f}" for m in _NUMPY_LIKE for f in ("array", "asarray", "stack", "vstack", "hstack", "column_stack")
) | {"jax.device_put"}
# Calls that join arrays: the result grows with every part.
SHAPE_JOINING = frozenset(
    f"{m}.{f}" for m in _NUMPY_LIKE
    for f in ("concatenate", "concat", "append", "vstack", "hstack", "stack", "column_stack", "row_stack", "dstack")
) | {"jax.lax.concatenate"}
# Calls whose result has the shape of their first argument (or a shape derived from it).
SHAPE_PRESERVING_FUNCTIONS = frozenset(
    f"{m}.{f}" for m in _NUMPY_LIKE
    for f in ("asarray", "array", "float32", "float64", "int32", "exp", "log", "tanh", "abs", "sqrt", "square",
              "transpose", "squeeze", "expand_dims", "atleast_1d", "atleast_2d", "ascontiguousarray", "copy")
) | {"jax.device_put", "builtins.list", "builtins.tuple"}
# Calls that make a new array whose shape is given by sizes: where the sizes sit.
# (qualified name) -> positional indices and keyword names of the size arguments.
SIZED_CONSTRUCTORS = {
    **{f"{m}.{f}": ((0,), ("shape",)) for m in _NUMPY_LIKE for f in ("zeros", "ones", "empty", "full")},
    **{f"{m}.arange": ((0, 1), ("start", "stop")) for m in _NUMPY_LIKE},
    **{f"{m}.{f}": ((0, 1), ("N", "M")) for m in _NUMPY_LIKE for f in ("eye",)},
    **{f"{m}.identity": ((0,), ("n",)) for m in _NUMPY_LIKE},
    **{f"{m}.linspace": ((2,), ("num",)) for m in _NUMPY_LIKE},
}
SHAPE_PRESERVING_METHODS = frozenset({
    "astype", "copy", "transpose", "squeeze", "block_until_ready", "clip", "round", "cumsum",
    "__array__", "ravel", "flatten",
})
# Reductions: with an axis they keep the other (possibly varying) dimensions; without, a scalar.
REDUCING_METHODS = frozenset({"sum", "mean", "max", "min", "prod", "std", "var", "any", "all", "argmax", "argmin"})
# Constructors whose first positional argument is the shape (`zeros(n)`, `rng.random(n)`), and
# samplers whose second is (`jax.random.normal(key, shape)`).
SHAPE_FIRST_CONSTRUCTORS = frozenset({
    "zeros", "ones", "empty", "full", "arange", "eye", "identity", "rand", "randn", "random",
    "standard_normal", "random_sample",
})
SHAPE_SECOND_SAMPLERS = frozenset({"normal", "uniform", "bernoulli", "randint", "categorical",
                                   "permutation", "truncated_normal", "gumbel", "exponential"})

# Transformations that keep a compilation cache on the object they return: building a new
# one for a new function object starts with an empty cache.
CACHING_TRANSFORMS = frozenset({"jax.jit", "jax.pmap", "equinox.filter_jit", "equinox.filter_pmap", "flax.nnx.jit"})
# Of those, the ones whose every application starts a new cache, even for the same function
# (`nnx.jit(f)` wraps `f` in a new object that `jax.jit` then sees for the first time).
NEW_CACHE_PER_APPLICATION = frozenset({"flax.nnx.jit"})
# `lax` loops compile what they are given when they run outside a trace, and cache it per
# function object as a jit does: a body made anew each time compiles the loop again each time.
# (qualified name) -> the positional indices and keyword names of its function arguments.
EAGER_COMPILED_LOOPS = {
    "jax.lax.scan": ((0,), ("f",)),
    "jax.lax.fori_loop": ((2,), ("body_fun",)),
    "jax.lax.while_loop": ((0, 1), ("cond_fun", "body_fun")),
    "jax.lax.map": ((0,), ("f",)),
}
# Decorators that memoise a function's result (a factory of jitted functions called once per key).
MEMOIZING_DECORATORS = frozenset({"functools.lru_cache", "functools.cache", "functools.cached_property"})

# Draws of NumPy's random functions and `Generator` methods, whose `size=` keyword is the
# shape of what they return (`rng.normal(size=n)`, `np.random.uniform(size=(n, 2))`).
NUMPY_DRAWS = frozenset({
    "normal", "uniform", "integers", "random", "choice", "standard_normal", "binomial", "poisson",
    "exponential", "beta", "gamma", "laplace", "logistic", "lognormal", "multinomial", "permutation",
    "randint", "rand", "randn", "standard_t", "chisquare", "dirichlet", "geometric", "multivariate_normal",
})
SIZE_KEYWORD = ((), ("size",))

# Methods that draw random integers (`rng.integers(5, 50, size=8)`): a source of distinct sizes.
RANDOM_INTEGERS = frozenset({"integers", "randint", "random_integers", "poisson", "binomial", "geometric"})


# Arguments JAX needs concrete while tracing, by kind.
SHAPE, START, OFFSET, AXIS, STEPS = "shape", "start", "offset", "axis", "steps"
# A Python value that decides the program (a flag, a filter): JAX hashes it as a primitive's
# parameter, or the library tests it in Python.
PYTHON = "python"
# Function -> (positional index or None for keyword-only, keyword, kind) of each argument JAX
# needs concrete; a method of `jax.Array` counts `self` as its first parameter. An argument that
# may be either a count or an array of values (`jax.random.permutation(key, x)`,
# `jnp.histogram(x, bins)`, `jax.random.choice(key, a)`) is left out: a traced array there is
# fine, and the analysis does not know a traced value's rank.
_REDUCTION = ((1, "axis", AXIS),)
CONCRETE_ARGUMENTS = {
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
    "jax.lax.scan": ((3, "length", STEPS), (4, "reverse", PYTHON), (5, "unroll", PYTHON)),
    "jax.lax.fori_loop": ((None, "unroll", PYTHON),),
    "jax.lax.cumsum": ((1, "axis", AXIS), (2, "reverse", PYTHON)),
    "jax.lax.cumprod": ((1, "axis", AXIS), (2, "reverse", PYTHON)),
    "jax.lax.cummax": ((1, "axis", AXIS), (2, "reverse", PYTHON)),
    "jax.lax.cummin": ((1, "axis", AXIS), (2, "reverse", PYTHON)),
    "jax.numpy.round": ((1, "decimals", PYTHON),),
    # Equinox's filter specs: a pytree of Python bools and callables, tested in Python.
    "equinox.partition": ((1, "filter_spec", PYTHON),),
    "equinox.filter": ((1, "filter_spec", PYTHON),),
    # The most steps a loop may take, which sizes its checkpoints and saved outputs.
    "equinox.internal.while_loop": ((None, "max_steps", STEPS),),
    "diffrax.diffeqsolve": ((None, "max_steps", STEPS),),
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
    "jax.numpy.sum": (*_REDUCTION, (4, "keepdims", PYTHON)),
    "jax.numpy.mean": (*_REDUCTION, (4, "keepdims", PYTHON)),
    "jax.numpy.max": (*_REDUCTION, (3, "keepdims", PYTHON)),
    "jax.numpy.min": (*_REDUCTION, (3, "keepdims", PYTHON)),
    "jax.numpy.amax": _REDUCTION,
    "jax.numpy.amin": _REDUCTION,
    "jax.numpy.prod": (*_REDUCTION, (4, "keepdims", PYTHON)),
    "jax.numpy.std": (*_REDUCTION, (5, "keepdims", PYTHON)),
    "jax.numpy.var": (*_REDUCTION, (5, "keepdims", PYTHON)),
    "jax.numpy.median": _REDUCTION,
    "jax.numpy.average": _REDUCTION,
    "jax.numpy.nansum": _REDUCTION,
    "jax.numpy.nanmean": _REDUCTION,
    "jax.numpy.count_nonzero": _REDUCTION,
    "jax.numpy.argmax": _REDUCTION,
    "jax.numpy.argmin": _REDUCTION,
    "jax.numpy.any": (*_REDUCTION, (3, "keepdims", PYTHON)),
    "jax.numpy.all": (*_REDUCTION, (3, "keepdims", PYTHON)),
    "jax.numpy.cumsum": _REDUCTION,
    "jax.numpy.cumprod": _REDUCTION,
    "jax.numpy.sort": (*_REDUCTION, (None, "descending", PYTHON)),
    "jax.numpy.argsort": (*_REDUCTION, (None, "descending", PYTHON)),
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
    "jax.numpy.linalg.norm": ((2, "axis", AXIS), (3, "keepdims", PYTHON)),
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
SIZED_BY = {"jax.numpy.repeat": "total_repeat_length", "jax.Array.repeat": "total_repeat_length"}
# Array methods whose positional arguments are all dimensions.
SHAPE_METHODS = frozenset({"reshape", "broadcast_to"})
