"""What jaxlint knows about the JAX API, as data: transformations, control-flow primitives, static queries.

Every name is fully qualified (see `names.canonical`).  Tables, not code, so that
adding an API is a one-line change.
"""

from __future__ import annotations

from dataclasses import dataclass

# Transformations that make a function's arguments abstract tracers and stage the body
# once per compilation (side effects run at trace time only).
STAGING_TRANSFORMS = frozenset({
    "jax.jit",
    "jax.pmap",
    "jax.shard_map",
    "jax.xla_computation",
    "equinox.filter_jit",
    "equinox.filter_pmap",
    "flax.nnx.jit",
    "flax.nnx.pmap",
    "flax.nnx.shard_map",
    "flax.linen.jit",
})

# Transformations whose arguments are abstract tracers, but which do not cache a trace.
ABSTRACT_TRANSFORMS = frozenset({
    "jax.vmap",
    "jax.checkpoint",
    "jax.custom_jvp",
    "jax.custom_vjp",
    "jax.named_call",
    "equinox.filter_vmap",
    "equinox.filter_checkpoint",
    "flax.nnx.vmap",
    "flax.nnx.remat",
    "flax.linen.vmap",
    "flax.linen.checkpoint",
})

# Differentiation: the values stay concrete (a Python `if` works) unless a staging
# transformation is around them.
CONCRETE_TRANSFORMS = frozenset({
    "jax.grad",
    "jax.value_and_grad",
    "jax.jacfwd",
    "jax.jacrev",
    "jax.jacobian",
    "jax.hessian",
    "equinox.filter_grad",
    "equinox.filter_value_and_grad",
    "flax.nnx.grad",
    "flax.nnx.value_and_grad",
})

TRANSFORMS = STAGING_TRANSFORMS | ABSTRACT_TRANSFORMS | CONCRETE_TRANSFORMS

# Transformations that take static arguments (`static_argnums`/`static_argnames`; for custom
# derivatives, `nondiff_argnums`).
STATIC_ARG_TRANSFORMS = frozenset({"jax.jit", "jax.pmap", "flax.nnx.jit", "jax.custom_jvp", "jax.custom_vjp"})

# Equinox treats every non-array argument as static.
FILTERING_TRANSFORMS = frozenset({"equinox.filter_jit", "equinox.filter_pmap", "equinox.filter_vmap"})


@dataclass(frozen=True)
class BodySpec:
    """Where a control-flow primitive takes its traced callables, and what it passes them.

    `callables`: positional indices (or keyword names) of the function arguments;
    a "*" suffix on an index means a sequence of callables (`lax.switch`).
    `operands`: for each callable, how many traced positional arguments it receives.
    """

    callables: tuple[tuple[int, str], ...]
    arity: int


# Control-flow primitives: their bodies are staged (abstract, traced once), and their
# arguments are traced values.
CONTROL_FLOW = {
    "jax.lax.scan": BodySpec(((0, "f"),), 2),
    "jax.lax.fori_loop": BodySpec(((2, "body_fun"),), 2),
    "jax.lax.while_loop": BodySpec(((0, "cond_fun"), (1, "body_fun")), 1),
    "jax.lax.cond": BodySpec(((1, "true_fun"), (2, "false_fun")), -1),
    "jax.lax.switch": BodySpec(((1, "branches"),), -1),
    "jax.lax.map": BodySpec(((0, "f"),), 1),
    "jax.lax.associative_scan": BodySpec(((0, "fn"),), 2),
    "jax.lax.reduce": BodySpec(((2, "computation"),), 2),
    "jax.lax.custom_root": BodySpec(((0, "f"),), 1),
    "equinox.internal.while_loop": BodySpec(((0, "cond_fun"), (1, "body_fun")), 1),
}

# Host callbacks: the function runs on the host with concrete values; never traced.
HOST_CALLBACKS = frozenset({
    "jax.debug.callback",
    "jax.pure_callback",
    "jax.experimental.io_callback",
    "jax.experimental.host_callback.call",
    "jax.experimental.host_callback.id_tap",
})

# Calls whose result is static metadata even when their argument is traced.
STATIC_QUERIES = frozenset({
    "builtins.len",
    "builtins.isinstance",
    "builtins.issubclass",
    "builtins.type",
    "builtins.callable",
    "builtins.hasattr",
    "builtins.id",
    "builtins.repr",
    "builtins.str",
    "builtins.print",
    "builtins.dir",
    "jax.numpy.shape",
    "jax.numpy.ndim",
    "jax.numpy.size",
    "jax.numpy.dtype",
    "jax.numpy.result_type",
    "jax.numpy.issubdtype",
    "jax.numpy.iinfo",
    "jax.numpy.finfo",
    "jax.numpy.promote_types",
    "jax.numpy.can_cast",
    "jax.numpy.iscomplexobj",
    "jax.numpy.isrealobj",
    "jax.numpy.isscalar",
    "numpy.shape",
    "numpy.ndim",
    "numpy.size",
    "numpy.dtype",
    "numpy.result_type",
    "numpy.issubdtype",
    "numpy.iinfo",
    "numpy.finfo",
    "numpy.isscalar",
    "jax.dtypes.result_type",
    "jax.dtypes.issubdtype",
    "jax.dtypes.canonicalize_dtype",
    "jax.tree_util.tree_structure",
    "jax.eval_shape",
    "jax.devices",
    "jax.local_devices",
    "jax.device_count",
    "jax.local_device_count",
    "jax.process_index",
    "jax.process_count",
    "jax.default_backend",
    "jax.ShapeDtypeStruct",
    "jax.core.get_aval",
    "jax.typeof",
    "jax.debug.print",
    "jax.debug.callback",
    "jax.debug.breakpoint",
    "jax.lax.axis_size",
})

# Calls that return the pytree (or leaves) of their first argument unchanged in kind.
TREE_PASSTHROUGH = frozenset({
    "jax.tree_util.tree_leaves",
    "jax.tree_util.tree_flatten",
    "builtins.list",
    "builtins.tuple",
    "builtins.sorted",
    "builtins.reversed",
    "builtins.iter",
    "builtins.next",
    "builtins.dict",
    "builtins.set",
    "builtins.frozenset",
})

# Calls that run a function over the leaves of their tree arguments, in the caller's context.
TREE_MAPS = frozenset({"jax.tree_util.tree_map", "jax.tree_util.tree_map_with_path"})

# Attributes of an array that are static metadata.
STATIC_ATTRIBUTES = frozenset({
    "shape",
    "ndim",
    "dtype",
    "size",
    "itemsize",
    "nbytes",
    "sharding",
    "weak_type",
    "aval",
    "named_shape",
    "devices",
    "device",
    "__class__",
    "__name__",
})

# Methods of a traced container whose result is static (`params.keys()`).
STATIC_METHODS = frozenset({"keys", "__len__", "get_shape", "__class__"})

# Array-returning namespaces: inside traced code, any call into these is staged, so its
# result is traced.
STAGED_NAMESPACES = (
    "jax.numpy.",
    "jax.lax.",
    "jax.nn.",
    "jax.random.",
    "jax.scipy.",
    "jax.image.",
    "jax.ops.",
    "jax.experimental.",
)

STAGED_FUNCTIONS = frozenset({
    "jax.device_put",
    "jax.block_until_ready",
    "jax.stop_gradient",
})

# Annotations that say "this parameter is an array".
ARRAY_ANNOTATIONS = frozenset({
    "jax.Array",
    "jax.numpy.ndarray",
    "jax.numpy.DeviceArray",
    "jax.typing.ArrayLike",
    "chex.Array",
    "chex.ArrayDevice",
    "jaxtyping.Array",
})
JAXTYPING_DTYPES = frozenset({
    "Float", "Int", "Bool", "Num", "Shaped", "Real", "Inexact", "Integer", "UInt",
    "Complex", "Float32", "Float64", "Int32", "Int64", "Key", "PRNGKeyArray",
})

# Annotations that say "this parameter is a Python value", static under filtering jits.
PYTHON_ANNOTATIONS = frozenset({
    "builtins.int", "builtins.float", "builtins.bool", "builtins.str", "builtins.bytes",
    "builtins.tuple", "builtins.list", "builtins.dict", "builtins.type",
    "typing.Callable", "collections.abc.Callable", "typing.Sequence", "typing.Tuple",
})

# Framework base classes whose `__call__` (and compact methods) run under a transformation
# in practice; their attributes are static configuration.
MODULE_BASES = frozenset({
    "flax.linen.Module",
    "flax.nnx.Module",
    "equinox.Module",
    "haiku.Module",
})
MODULE_METHOD_DECORATORS = frozenset({"flax.linen.compact", "flax.linen.nowrap"})
