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
