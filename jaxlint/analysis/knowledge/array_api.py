"""What jaxlint knows about JAX arrays and the code around them, as data: which calls return
one array, functional updates (`.at[...]`), pytree classes, what writes or reads the host,
which NumPy calls work in place.

Every name is fully qualified (see `knowledge.spellings`). Tables, not code, so that adding an
API is a one-line change.
"""

from __future__ import annotations

import ast

from jaxlint.analysis.knowledge.jax_api import STATIC_QUERIES

# Namespaces whose functions return one JAX array (minus NOT_ONE_ARRAY); sub-namespaces
# (`jax.nn.initializers.`) are not included unless listed.
ARRAY_NAMESPACES = (
    "jax.numpy.",
    "jax.numpy.fft.",
    "jax.numpy.linalg.",
    "jax.lax.linalg.",
    "jax.random.",
    "jax.nn.",
)
# `jax.lax` operations that return one array, whatever they are given (Python scalars and NumPy
# arrays become JAX arrays). Left out: those that return a tuple or a pytree (`sort`, `top_k`,
# `split`, `reduce`, `scan`, `cond`, `stop_gradient`, `optimization_barrier`, the collectives).
LAX_ONE_ARRAY = frozenset("jax.lax." + name for name in (
    # element-wise
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "ceil", "cos", "cosh", "exp",
    "exp2", "expm1", "floor", "imag", "real", "conj", "is_finite", "log", "log1p", "logistic", "neg",
    "reciprocal", "round", "rsqrt", "sign", "sin", "sinh", "sqrt", "square", "tan", "tanh",
    "bessel_i0e", "bessel_i1e", "digamma", "erf", "erf_inv", "erfc", "lgamma", "add", "sub", "mul",
    "div", "rem", "pow", "integer_pow", "max", "min", "atan2", "nextafter", "complex", "igamma",
    "igammac", "igamma_grad_a", "polygamma", "zeta", "betainc", "clamp", "bitwise_not", "clz",
    "population_count", "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "mulhi", "convert_element_type",
    "bitcast_convert_type", "reduce_precision",
    # comparisons and selections
    "eq", "ne", "lt", "le", "gt", "ge", "select", "select_n",
    # contractions and convolutions
    "dot", "dot_general", "batch_matmul", "conv", "conv_general_dilated", "conv_with_general_padding",
    "conv_transpose", "conv_general_dilated_local", "conv_general_dilated_patches",
    # shapes, slices, gathers and scatters, constructors
    "reshape", "transpose", "squeeze", "expand_dims", "collapse", "rev", "pad", "tile", "slice",
    "slice_in_dim", "index_in_dim", "dynamic_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim",
    "dynamic_update_slice", "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "gather",
    "index_take", "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max",
    "broadcast", "broadcast_in_dim", "broadcast_to_rank", "broadcasted_iota", "iota", "full",
    "full_like", "concatenate", "stack",
    # reductions and cumulative operations over axes
    "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or", "reduce_xor",
    "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp",
))
# Functions outside those namespaces that return one JAX array.
ARRAY_CREATING_FUNCTIONS = LAX_ONE_ARRAY | frozenset(
    # the activations Flax re-exports from `jax.nn` and `jax.numpy`
    f"flax.{api}.{name}"
    for api in ("linen", "nnx")
    for name in (
        "relu", "relu6", "gelu", "sigmoid", "tanh", "softmax", "log_softmax", "silu", "swish", "elu",
        "celu", "selu", "leaky_relu", "softplus", "soft_sign", "hard_tanh", "hard_sigmoid",
        "log_sigmoid", "glu", "one_hot", "standardize", "logsumexp",
    )
)
# Flax layers whose application (`nn.Dense(4)(x)`) returns one array.
ARRAY_LAYERS = frozenset(
    f"flax.linen.{name}"
    for name in (
        "Dense", "DenseGeneral", "Conv", "ConvTranspose", "ConvLocal", "Embed", "LayerNorm",
        "BatchNorm", "GroupNorm", "RMSNorm", "InstanceNorm", "Dropout",
    )
)
# Fields that frameworks' state classes declare as JAX arrays (`q: jax.Array`): in a parameter
# annotated with the class, the field holds one. Brax's pipeline state (and the states of its
# pipelines, subclasses of it) and its environment state.
_BRAX_PIPELINE_STATE = frozenset({"q", "qd"})
DECLARED_ARRAY_FIELDS: dict[str, frozenset[str]] = {
    **{
        f"brax.{pipeline}base.State": _BRAX_PIPELINE_STATE
        for pipeline in ("", "generalized.", "positional.", "spring.", "mjx.")
    },
    "brax.envs.base.State": frozenset({"reward", "done"}),
    "brax.envs.State": frozenset({"reward", "done"}),
}
# Decompositions of `jax.lax.linalg` that return a tuple (or list) of arrays; the rest of it
# (`cholesky`, `triangular_solve`, `tridiagonal_solve`, ...) returns one.
_LAX_LINALG_TUPLES = ("eig", "eigh", "hessenberg", "lu", "qdwh", "qr", "schur", "svd", "tridiagonal")
# Functions of those namespaces that return something other than one array (a tuple, a
# list, a callable, metadata).
NOT_ONE_ARRAY = frozenset({
    "jax.numpy." + name for name in (
        "split", "array_split", "hsplit", "vsplit", "dsplit", "meshgrid", "broadcast_arrays",
        "unstack", "nonzero", "where", "unravel_index", "indices", "histogram", "histogram2d",
        "histogramdd", "unique", "unique_all", "unique_counts", "unique_inverse", "divmod",
        "frexp", "modf", "tril_indices", "triu_indices", "diag_indices", "mask_indices",
        "tril_indices_from", "triu_indices_from", "diag_indices_from", "ix_", "polyfit",
        "vectorize", "frompyfunc", "einsum_path", "broadcast_shapes", "printoptions",
        "get_printoptions", "set_printoptions", "ndarray", "dtype", "load", "save",
    )
} | {
    "jax.numpy.linalg." + name for name in ("eig", "eigh", "svd", "qr", "slogdet", "lstsq")
} | {
    "jax.lax.linalg." + name for name in _LAX_LINALG_TUPLES
} | {
    "jax.random." + name for name in ("key_impl", "default_prng_impl")
} | STATIC_QUERIES)

# Functions returning one array whose first argument may be a Python sequence of arrays or
# scalars (`jnp.stack(xs)`, `jnp.float32(values)`): passing a value to one does not show it to be
# an array.
SEQUENCE_FIRST_ARGUMENT = frozenset({
    "jax.numpy." + name for name in (
        "array", "asarray", "stack", "concatenate", "concat", "vstack", "hstack", "dstack", "column_stack",
        "block", "select", "lexsort", "ravel_multi_index", "bool_", "float16", "float32", "float64",
        "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "complex64",
        "complex128",
    )
} | {"jax.numpy.linalg.multi_dot", "jax.lax.concatenate", "jax.lax.stack"})

# JAX's own helpers that turn each value given to them into a JAX array (NumPy arrays and
# Python scalars included): its `jax.numpy` implementation calls them on its arguments.
# `ensure_arraylike(name, x)` returns one array, and a tuple of them for several values; the
# others always return a tuple or list of arrays.
_JAX_NUMPY_UTIL = "jax._src.numpy.util."
ENSURE_ARRAY = _JAX_NUMPY_UTIL + "ensure_arraylike"
CONVERSIONS_TO_ARRAYS = frozenset(_JAX_NUMPY_UTIL + name for name in (
    "ensure_arraylike", "ensure_arraylike_tuple", "promote_dtypes", "promote_dtypes_inexact",
    "promote_dtypes_numeric", "promote_dtypes_complex", "promote_shapes", "promote_args",
    "promote_args_inexact", "promote_args_numeric",
))

# Functions returning a tuple or list of JAX arrays: unpacking one gives arrays (as does
# unpacking, or iterating, one JAX array).
SEQUENCE_OF_ARRAYS = CONVERSIONS_TO_ARRAYS | frozenset({
    "jax.numpy." + name for name in (
        "split", "array_split", "hsplit", "vsplit", "dsplit", "meshgrid", "broadcast_arrays",
        "unstack", "nonzero", "unravel_index", "divmod", "frexp", "modf", "tril_indices",
        "triu_indices", "diag_indices",
    )
} | {"jax.numpy.linalg." + name for name in ("eig", "eigh", "svd", "qr", "slogdet")} | {
    "jax.lax.linalg." + name for name in _LAX_LINALG_TUPLES
})

# Methods of `x.at[i]` that return the updated array.
AT_UPDATE_METHODS = frozenset({
    "set", "add", "subtract", "multiply", "mul", "divide", "power", "min", "max", "apply",
})
# In-place operators and the `.at[...]` method that does the same functionally.
AT_METHOD_OF_OPERATOR = {
    "Add": "add",
    "Sub": "subtract",
    "Mult": "multiply",
    "Div": "divide",
    "Pow": "power",
}
# Methods of a JAX array that return a JAX array.
ARRAY_RETURNING_METHODS = frozenset({
    "reshape", "astype", "copy", "ravel", "flatten", "transpose", "squeeze", "clip", "sum",
    "mean", "max", "min", "prod", "cumsum", "cumprod", "round", "conj", "swapaxes", "take",
    "dot", "std", "var", "sort", "argsort", "repeat", "block_until_ready",
})
ARRAY_VIEW_ATTRIBUTES = frozenset({"T", "mT", "real", "imag"})
# Functions of array-agnostic libraries that return an array of the kind their first argument is
# (einops runs the operations of the first tensor's own library): a JAX array for a JAX array.
KIND_KEEPING_FUNCTIONS = frozenset({"einops.rearrange", "einops.repeat", "einops.reduce", "einops.einsum"})

# Class decorators and registration calls that make a class a pytree: instances are
# flattened by transformations, so `self` inside its traced methods is not the caller's object.
PYTREE_CLASS_DECORATORS = frozenset({
    "jax.tree_util.register_pytree_node_class",
    "jax.tree_util.register_pytree_with_keys_class",
    "jax.tree_util.register_dataclass",
    "flax.struct.dataclass",
    "chex.dataclass",
    "dataclasses.dataclass",
})
# Dataclass pytrees: every field is a child (a leaf or a subtree) unless declared static (as a
# bare decorator, `register_dataclass` reads which from the fields' metadata).
DATACLASS_PYTREE_DECORATORS = frozenset({"flax.struct.dataclass", "chex.dataclass", "jax.tree_util.register_dataclass"})
DATACLASS_PYTREE_BASES = frozenset({"flax.struct.PyTreeNode"})
# Those that make a class's instances pytrees whose fields (or the parts it flattens) are children.
PYTREE_NODE_REGISTRATIONS = frozenset({
    "jax.tree_util.register_pytree_node",
    "jax.tree_util.register_pytree_with_keys",
    "jax.tree_util.register_dataclass",
})
PYTREE_REGISTRATIONS = frozenset({
    "jax.tree_util.register_pytree_node",
    "jax.tree_util.register_pytree_with_keys",
    "jax.tree_util.register_dataclass",
    "jax.tree_util.register_static",
})

# Logging: module-level functions, logger factories and logger methods.
LOGGING_FUNCTIONS = frozenset({
    f"{module}.{level}"
    for module in ("logging", "absl.logging")
    for level in ("debug", "info", "warning", "warn", "error", "critical", "exception", "log", "fatal")
} | {
    # experiment trackers: a metric logged from traced code is logged once, as a tracer
    "wandb.log", "mlflow.log_metric", "mlflow.log_metrics", "tensorflow.summary.scalar",
    "tensorflow.summary.histogram",
})
LOGGER_FACTORIES = frozenset({
    "logging.getLogger", "absl.logging.get_absl_logger", "logging.Logger",
    "tensorboardX.SummaryWriter", "torch.utils.tensorboard.SummaryWriter",
    "flax.metrics.tensorboard.SummaryWriter", "clu.metric_writers.create_default_writer",
})
LOGGER_METHODS = frozenset({
    "debug", "info", "warning", "warn", "error", "critical", "exception", "log", "fatal",
    "add_scalar", "add_scalars", "add_histogram", "scalar", "histogram", "write_scalars",
})

# Reads of the host's clock or files: inside staged code they happen once, at trace time.
HOST_READS = frozenset({
    "time.time",
    "time.time_ns",
    "time.perf_counter",
    "time.perf_counter_ns",
    "time.monotonic",
    "time.monotonic_ns",
    "time.process_time",
    "datetime.datetime.now",
    "datetime.datetime.utcnow",
    "datetime.datetime.today",
    "datetime.date.today",
    "builtins.open",
    "builtins.input",
    "numpy.load",
    "numpy.loadtxt",
    "numpy.genfromtxt",
    "numpy.fromfile",
    "pickle.load",
    "json.load",
})

# Methods that mutate a Python container in place (a bare `outer.append(x)` statement).
MUTATING_METHODS = frozenset({
    "append", "extend", "insert", "update", "setdefault", "add", "appendleft", "extendleft",
    "put", "put_nowait",
})

# NumPy functions and methods that users expect to work in place (NumPy's `a.sort()`,
# `np.clip(a, lo, hi, out=a)`): their JAX versions return a new array.
IN_PLACE_IN_NUMPY_FUNCTIONS = frozenset({
    "clip", "sort", "round", "around", "nan_to_num", "fill_diagonal", "put", "place", "copyto",
    "negative", "abs", "absolute", "sqrt", "exp", "log", "maximum", "minimum", "add", "subtract",
    "multiply", "divide", "reshape", "squeeze", "transpose", "flip", "roll",
})
IN_PLACE_IN_NUMPY_METHODS = frozenset({"sort", "clip", "round", "fill", "resize", "astype", "reshape"})

# Constructors of mutable Python containers.
PYTHON_CONTAINERS = frozenset({
    "builtins.list", "builtins.dict", "builtins.set", "builtins.bytearray",
    "collections.deque", "collections.defaultdict", "collections.OrderedDict", "collections.Counter",
})

# NumPy conversions that return a view of a JAX array's buffer (read-only), not a copy.
NUMPY_VIEWS = frozenset({"numpy.asarray", "numpy.asanyarray"})
# NumPy functions that return a new host array (`table = np.array([...])`).
NUMPY_ARRAY_CONSTRUCTORS = frozenset("numpy." + name for name in (
    "array", "asarray", "arange", "zeros", "ones", "full", "empty", "linspace", "logspace", "eye",
    "identity", "stack", "concatenate", "vstack", "hstack", "zeros_like", "ones_like", "full_like",
    "load", "loadtxt", "genfromtxt", "fromfunction", "tril_indices", "triu_indices",
))

# Attributes only an array has (a list or dict of arrays has none of them).
ARRAY_ONLY_ATTRIBUTES = frozenset({
    "shape", "ndim", "dtype", "at", "T", "mT", "reshape", "astype", "sum", "mean", "ravel",
    "flatten", "transpose", "squeeze", "block_until_ready", "real", "imag", "conj", "dot",
})


def one_array_call(name: str | None, call: ast.Call) -> bool:
    """Whether this call of the qualified name returns one JAX array: an array function, or a
    call whose arguments make it return one (three-argument `jnp.where(c, x, y)` selects into
    one array; `ensure_arraylike(name, x)` converts one value)."""
    if array_function(name):
        return True
    given = len(call.args) + len(call.keywords)
    if name == "jax.numpy.where":
        return given == 3
    return name == ENSURE_ARRAY and given == 2 and not any(isinstance(arg, ast.Starred) for arg in call.args)


_BOOLEAN_DTYPES = frozenset({"builtins.bool", "jax.numpy.bool_", "jax.numpy.bool", "numpy.bool_", "numpy.bool"})
# Where an array maker takes its `dtype` positionally (`jnp.zeros(n, bool)`).
_DTYPE_POSITIONS = {
    **{f"jax.numpy.{name}": 1 for name in ("zeros", "ones", "empty", "array", "asarray", "zeros_like", "ones_like", "empty_like")},
    "jax.numpy.full": 2, "jax.numpy.full_like": 2,
}


def asks_boolean(call: ast.Call, callee: str, qualname) -> bool:
    """Whether a JAX call asks for a boolean array (`jnp.zeros(n, dtype=jnp.bool_)`, `jnp.ones(n,
    bool)`); `qualname` names what an expression stands for."""
    dtype = next((k.value for k in call.keywords if k.arg == "dtype"), None)
    position = _DTYPE_POSITIONS.get(callee)
    if dtype is None and position is not None and position < len(call.args):
        if any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
            return False
        dtype = call.args[position]
    if dtype is None:
        return False
    if isinstance(dtype, ast.Constant):
        return dtype.value == "bool"
    return qualname(dtype) in _BOOLEAN_DTYPES


def array_function(name: str | None) -> bool:
    """Whether a call to this qualified name returns one JAX array."""
    if not name:
        return False
    if name in ARRAY_CREATING_FUNCTIONS:
        return True
    if name in NOT_ONE_ARRAY:
        return False
    for prefix in ARRAY_NAMESPACES:
        if name.startswith(prefix) and "." not in name[len(prefix):]:
            return True
    return False
