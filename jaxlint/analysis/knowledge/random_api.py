"""What jaxlint knows about `jax.random` and the calls around keys, as data.

Which calls make a key, derive one, read one, consume one (as JAX's own checker,
`jax_debug_key_reuse`, counts), run a function again and again, or only look at their
arguments.  Every key analysis asks these tables; none keeps its own.
"""

from __future__ import annotations

import ast

from jaxlint.analysis.knowledge.jax_api import TREE_MAPS  # noqa: F401  (asked here with the other key tables)

# Make a new key; their arguments are not keys (or, for wrap_key_data, raw key data).
KEY_CONSTRUCTORS = frozenset({"jax.random.key", "jax.random.PRNGKey", "jax.random.wrap_key_data"})
# Annotations that declare a PRNG key (a jaxtyping `Key[Array, ""]` too).
KEY_ANNOTATIONS = frozenset({
    "chex.PRNGKey", "jax.random.PRNGKeyArray", "jax.random.KeyArray", "jaxtyping.PRNGKeyArray", "jaxtyping.Key",
})
SPLIT = "jax.random.split"
FOLD_IN = "jax.random.fold_in"
# Derive a new key from a key without consuming it (the checker: `Source`, no `Sink`).
KEY_DERIVATIONS = frozenset({FOLD_IN, "jax.random.clone"})
# Read a key without consuming it.
KEY_READERS = frozenset({"jax.random.key_data", "jax.random.key_impl"})
SAMPLERS = frozenset(
    "jax.random." + name
    for name in (
        "ball bernoulli beta binomial bits categorical cauchy chisquare choice dirichlet "
        "double_sided_maxwell exponential f gamma generalized_normal geometric gumbel laplace "
        "loggamma logistic lognormal maxwell multinomial multivariate_normal normal orthogonal "
        "pareto permutation poisson rademacher randint rayleigh shuffle t triangular "
        "truncated_normal uniform wald weibull_min"
    ).split()
)
# Calls that take a key as their first argument (or `key=`).
KEY_POSITION = SAMPLERS | KEY_DERIVATIONS | KEY_READERS | {SPLIT}
# Calls whose result is a key (or an array of keys).
KEY_MAKERS = KEY_CONSTRUCTORS | KEY_DERIVATIONS | {SPLIT}
RANDOM_API = KEY_POSITION | KEY_CONSTRUCTORS
RANDOM_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in RANDOM_API)

# Calls that look at a key without consuming it: printing, shapes, type checks, host
# transfers, tree bookkeeping.  The checker's `debug_callback`, `random_unwrap`, `eq`/`ne`
# and forwarding primitives.
READING_CALLS = frozenset({
    "builtins.print", "builtins.isinstance", "builtins.len", "builtins.type", "builtins.str",
    "builtins.repr", "builtins.id", "builtins.hash", "builtins.getattr", "builtins.hasattr",
    "builtins.list", "builtins.tuple", "builtins.iter", "builtins.next", "builtins.zip",
    "builtins.enumerate", "builtins.dict", "builtins.sorted", "builtins.reversed",
    "builtins.format", "jax.device_put", "jax.device_get", "jax.eval_shape", "jax.typeof",
    "equinox.filter_eval_shape", "flax.linen.tabulate",  # shapes only: `tabulate` runs in `eval_shape`
    "jax.core.get_aval", "jax.ShapeDtypeStruct", "jax.lax.stop_gradient",
    "jax.block_until_ready", "jax.tree_util.tree_structure", "jax.tree_util.tree_leaves",
    "jax.tree_util.tree_flatten", "jax.tree_util.tree_map", "jax.tree_util.tree_map_with_path",
    # Haiku's state and parameters, looked up by name (`hk.set_state(key, value)`: a name)
    "haiku.get_state", "haiku.set_state", "haiku.get_parameter",
})
READING_PREFIXES = (
    "jax.debug.", "jax.numpy.", "numpy.", "logging.", "absl.logging.", "chex.assert",
    "jax.dtypes.", "pprint.", "warnings.",
)

# Calls that hand back the key they are given, placed or shaped anew: the same key, not a use.
KEY_COPIES = frozenset({
    "jax.device_put", "jax.numpy.asarray", "jax.numpy.array", "jax.numpy.stack", "jax.numpy.reshape",
    "jax.lax.with_sharding_constraint",
})
# Methods of a key array that do the same (`keys.reshape(n, -1)`).
KEY_COPY_METHODS = frozenset({"reshape", "ravel", "flatten", "squeeze"})

# The methods that build a module's parameters from a key and example inputs: Flax linen's
# `Module.init` / `init_with_output`, Haiku's `Transformed.init`.
MODULE_INITS = frozenset({"init", "init_with_output"})
# The methods that run a Flax Linen module: its own, and the `apply_fn` a `TrainState` holds.
MODULE_RUNS = MODULE_INITS | {"apply", "apply_fn"}
# Flax Linen layers whose `init` draws parameters from the `params` stream (normalisations start
# at ones and zeros; `Dropout` draws only from its own stream, when applied).
FLAX_DRAWING_LAYERS = frozenset({
    "Dense", "DenseGeneral", "Conv", "ConvTranspose", "ConvLocal", "Embed", "Einsum",
    "MultiHeadDotProductAttention", "MultiHeadAttention", "SelfAttention",
    "LSTMCell", "OptimizedLSTMCell", "GRUCell", "SimpleCell", "MGUCell",
})
# Keywords that pass a key, not an example input.
KEY_KEYWORDS = frozenset({"key", "rng", "rngs", "seed", "rng_key", "prng_key"})

# Code outside `jax.random` that draws from a key it is given: Equinox's layers and functions
# (`key=`), Flax NNX's `Rngs`, distributions (`sample(seed=key)`), initialisers called with
# `(key, shape)`, a module's `init` with `(key, inputs)`.
KEY_TAKING_PACKAGES = ("equinox.", "flax.nnx.", "distrax.", "numpyro.", "tensorflow_probability.")
KEY_HOLDERS = frozenset({"flax.nnx.Rngs"})
INITIALIZER_PACKAGES = ("jax.nn.initializers.", "flax.linen.initializers.", "flax.nnx.initializers.")
SAMPLE_METHODS = frozenset({"sample", "sample_and_log_prob"})

# Methods that build a record anew with some fields changed (`flax.struct`, chex and
# `dataclasses` dataclasses, `NamedTuple`), and the function that does it: the record holds the
# keys it is given, it does not draw from them.
RECORD_METHODS = frozenset({"replace", "_replace"})
RECORD_BUILDERS = frozenset({"dataclasses.replace"})

# Haiku's and Flax NNX's versions of lax's loops, which take lax's arguments: their bodies close
# over and carry keys as those of the lax loop each stands for do.
LIFTED_LOOPS = {
    "haiku.scan": "jax.lax.scan", "haiku.fori_loop": "jax.lax.fori_loop", "haiku.while_loop": "jax.lax.while_loop",
    "haiku.map": "jax.lax.map", "flax.nnx.fori_loop": "jax.lax.fori_loop", "flax.nnx.while_loop": "jax.lax.while_loop",
}
# Control-flow primitives that run their body again and again with the same closure.
LOOP_PRIMITIVES = frozenset({
    "jax.lax.scan", "jax.lax.fori_loop", "jax.lax.while_loop", "jax.lax.map",
    "equinox.internal.while_loop", *LIFTED_LOOPS,
})
# Primitives whose body returns the loop state that the next iteration receives: for `scan`
# the first element of the returned pair, for the others the whole value.
_CARRYING_LAX = ("jax.lax.scan", "jax.lax.fori_loop", "jax.lax.while_loop")
CARRYING_PRIMITIVES = frozenset({*_CARRYING_LAX, *(name for name, lax in LIFTED_LOOPS.items() if lax in _CARRYING_LAX)})
# Transformations that run the function they are given once per element of a batch: a key it
# closes over, or is given with `in_axes=None`, is the same key in every element.
BATCHING = frozenset({"jax.vmap", "equinox.filter_vmap", "flax.nnx.vmap"})
# Draws that reorder or subsample: one key for every leaf keeps a batch's rows aligned.
REORDERING = frozenset({"jax.random.permutation", "jax.random.shuffle", "jax.random.choice"})
# Draws that reorder a whole array: one key for two arrays gives both one order. (A `choice`
# is a sample: two of different arrays with one key are two correlated samples.)
PERMUTING = frozenset({"jax.random.permutation", "jax.random.shuffle"})
# Draws of positions in an array: an order, or an offset to crop at.
POSITION_DRAWS = REORDERING | {"jax.random.randint"}

# Methods that look at their arguments without running them: lowering and tracing a jitted
# function, a Flax module's `tabulate` (shapes only), container bookkeeping.
NON_CONSUMING_METHODS = frozenset({
    "lower", "trace", "eval_shape", "tabulate", "astype", "tobytes", "tolist", "item", "block_until_ready",
    "copy", "format", "append", "extend", "insert", "add", "setdefault", "get", "index", "count",
})
# Calls that only trace the function they are given, to read shapes or the program: it draws
# no numbers, so a key it reuses makes no two draws alike (`jax.eval_shape(lambda k: init(k), key)`).
SHAPE_ONLY = frozenset({"jax.eval_shape", "equinox.filter_eval_shape", "jax.make_jaxpr"})
# Transformations that only trace: `jax.make_jaxpr(f)(key)` consumes nothing.
TRACING_ONLY = frozenset({"jax.make_jaxpr", "jax.eval_shape", "jax.xla_computation", "jax.linearize"})
# Transformations whose result runs the function as written (its key flow is the function's).
PRESERVING_TRANSFORMS = frozenset({
    "jax.jit", "jax.pmap", "jax.checkpoint", "jax.named_call", "flax.nnx.jit", "equinox.filter_jit",
})

# JAX's own modules import the implementation module (`from jax._src import random`).
_INTERNAL = (("jax._src.random.", "jax.random."),)


def public(qualname: str | None) -> str | None:
    """The public spelling of a `jax.random` name reached through JAX's internal modules."""
    if qualname is None:
        return None
    for prefix, replacement in _INTERNAL:
        if qualname.startswith(prefix):
            return replacement + qualname[len(prefix):]
    return qualname


def key_argument(call: ast.Call) -> ast.AST | None:
    """The key a `jax.random` call takes: its first argument, or `key=`."""
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    for keyword in call.keywords:
        if keyword.arg == "key":
            return keyword.value
    return None


def constant_seed(call: ast.Call) -> bool:
    """`jax.random.key(0)`, `PRNGKey(-1)`: a literal integer seed."""
    if not call.args:
        return False
    seed = call.args[0]
    if isinstance(seed, ast.UnaryOp) and isinstance(seed.op, ast.USub):
        seed = seed.operand
    return isinstance(seed, ast.Constant) and isinstance(seed.value, int) and not isinstance(seed.value, bool)


def may_collide(fold_in: ast.AST, split: ast.AST) -> bool:
    """Whether `fold_in(key, d)` can be one of `split(key, n)`'s children (it is child `d` when `d < n`).

    Unknown data or counts can; literal ones decide, and so does data written as the very count
    (`fold_in(key, n)` after `split(key, n)` is child `n`, one past the last).
    """
    data_node = fold_in.args[1] if isinstance(fold_in, ast.Call) and len(fold_in.args) > 1 else None
    data = _literal_int(data_node)
    count = 2
    if isinstance(split, ast.Call):
        given = split.args[1] if len(split.args) > 1 else next((k.value for k in split.keywords if k.arg == "num"), None)
        if given is not None:
            if data_node is not None and ast.dump(data_node) == ast.dump(given):
                return False
            count = _literal_int(given)
    return data is None or count is None or 0 <= data < count


def _literal_int(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def short(qualname: str) -> str:
    """`lax.scan` for `jax.lax.scan` (`hk.scan`, `nnx.fori_loop`), as users write it."""
    for prefix, written in (("jax.lax.", "lax."), ("haiku.", "hk."), ("flax.nnx.", "nnx.")):
        if qualname.startswith(prefix):
            return written + qualname[len(prefix):]
    if qualname == "jax.tree_util.tree_map":
        return "jax.tree.map"
    return qualname


# The names that say a value is a PRNG key (`key`, `rng`, `dropout_rng`): the one naming
# convention the analyses honour.
_KEY_NAMES = frozenset({"key", "rng", "subkey", "prng", "prng_key", "rng_key"})


def key_named(name: str) -> bool:
    """Whether a name says it is a PRNG key (`key`, `rng`, `dropout_rng`). Asked of every name a
    module hands on, so a set and a suffix rather than a pattern."""
    return name in _KEY_NAMES or len(name) > 4 and name.endswith("_rng")
