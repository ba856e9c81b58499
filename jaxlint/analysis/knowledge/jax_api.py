"""What jaxlint knows about the JAX API, as data: transformations, control-flow primitives, static queries.

Every name is fully qualified (see `names.canonical`).  Tables, not code, so that
adding an API is a one-line change.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Iterator

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
    "equinox.filter_vmap",
    "equinox.filter_checkpoint",
    "flax.nnx.vmap",
    "flax.nnx.remat",
    "flax.linen.vmap",
    "flax.linen.checkpoint",
})

# Transformations whose result, called, returns what the function returns, every leaf an array
# (traced under an outer trace): `jax.vmap(lambda a: a > 0)(x)` is a boolean array. (A
# differentiation returns the structure of the argument instead.)
OUTPUT_PRESERVING_TRANSFORMS = frozenset({
    "jax.jit",
    "jax.pmap",
    "jax.shard_map",
    "jax.vmap",
    "jax.checkpoint",
    "flax.nnx.jit",
    "flax.nnx.pmap",
    "flax.nnx.shard_map",
    "flax.nnx.vmap",
    "flax.nnx.remat",
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

# Differentiations that call the function at once, on the primals they are given
# (`jax.jvp(f, primals, tangents)`, `jax.vjp(f, *primals)`, `jax.linearize(f, *primals)`): the
# function runs as under `jax.grad`, its arguments tracers with concrete values. They return
# results, not a function, so they are no `TRANSFORMS`.
CALLING_DIFFERENTIATIONS = frozenset({"jax.jvp", "jax.vjp", "jax.linearize"})

# Wrappers that trace nothing themselves: the function (and, for custom derivatives, the rules
# it registers) runs on whatever its caller passes, concrete values when called eagerly or under
# a differentiation, tracers when called from traced code.
CUSTOM_DERIVATIVES = frozenset({"jax.custom_jvp", "jax.custom_vjp"})
# Wrappers that run the function on the caller's values: `named_call` passes them unchanged,
# under a name in profiles; `jnp.vectorize` as arrays, mapped with `vmap` over any batch
# dimensions. Neither makes tracers of concrete values called eagerly with the core shape, and
# a tracer the caller passes reaches the function as one.
IDENTITY_TRANSFORMS = frozenset({"jax.named_call", "jax.numpy.vectorize"})
PASS_THROUGH_TRANSFORMS = CUSTOM_DERIVATIVES | IDENTITY_TRANSFORMS

TRANSFORMS = STAGING_TRANSFORMS | ABSTRACT_TRANSFORMS | CONCRETE_TRANSFORMS | PASS_THROUGH_TRANSFORMS

# Rematerialisation: `static_argnums` (and `static_argnames` for `jax.checkpoint`) name
# arguments passed as the caller's Python values, as for `jax.jit`; nothing is compiled or cached.
CHECKPOINTS = frozenset({"jax.checkpoint", "flax.linen.checkpoint", "flax.nnx.remat"})
# Transformations that take static arguments (`static_argnums`/`static_argnames`; for custom
# derivatives, `nondiff_argnums`).
STATIC_ARG_TRANSFORMS = CHECKPOINTS | {"jax.jit", "jax.pmap", "flax.nnx.jit", "jax.custom_jvp", "jax.custom_vjp"}

# Calls that make Flax NNX variables hijax, references whose updates inside `jax.jit` reach the
# caller: `nnx.var_defaults(hijax=True)` and the flag `flax_hijax_variable` set through flax's config.
HIJAX_DEFAULTS = frozenset({"flax.nnx.var_defaults", "flax.nnx.variablelib.var_defaults"})
FLAX_CONFIG_UPDATES = frozenset({"flax.config.update", "flax.configurations.config.update"})
HIJAX_SWITCHES = HIJAX_DEFAULTS | FLAX_CONFIG_UPDATES

# Equinox treats every non-array argument as static.
FILTERING_TRANSFORMS = frozenset({"equinox.filter_jit", "equinox.filter_pmap", "equinox.filter_vmap"})


@dataclass(frozen=True)
class BodySpec:
    """Where a control-flow primitive takes its traced callables, and what it passes them.

    `callables`: positional indices (or keyword names) of the function arguments;
    a "*" suffix on an index means a sequence of callables (`lax.switch`).
    `arity`: how many traced positional arguments it receives (OPERANDS: the call's operands
    after the callables; EVERY_PARAMETER: as many as the callable takes, each a traced array).
    `given_function`: keyword names of the callables called with a function first, before
    their traced arguments (`solve(f, y)` of `lax.custom_root`): that parameter is a Python
    callable, not a tracer.
    """

    callables: tuple[tuple[int, str], ...]
    arity: int
    given_function: frozenset[str] = frozenset()


OPERANDS = -1
EVERY_PARAMETER = -2


# Control-flow primitives: their bodies are staged (abstract, traced once), and their
# arguments are traced values.
CONTROL_FLOW = {
    "jax.lax.scan": BodySpec(((0, "f"),), 2),
    "jax.lax.fori_loop": BodySpec(((2, "body_fun"),), 2),
    "jax.lax.while_loop": BodySpec(((0, "cond_fun"), (1, "body_fun")), 1),
    "jax.lax.cond": BodySpec(((1, "true_fun"), (2, "false_fun")), OPERANDS),
    "jax.lax.switch": BodySpec(((1, "branches"),), OPERANDS),
    "jax.lax.map": BodySpec(((0, "f"),), 1),
    "jax.lax.associative_scan": BodySpec(((0, "fn"),), 2),
    "jax.lax.reduce": BodySpec(((2, "computation"),), 2),
    # The solvers receive the function they solve for (or its linearisation), then a traced
    # right-hand side: `solve(f, initial_guess)`, `tangent_solve(g, y)`, `solve(matvec, b)`.
    "jax.lax.custom_root": BodySpec(
        ((0, "f"), (2, "solve"), (3, "tangent_solve")), 1, frozenset({"solve", "tangent_solve"})
    ),
    "jax.lax.custom_linear_solve": BodySpec(
        ((0, "matvec"), (2, "solve"), (3, "transpose_solve")), 1, frozenset({"solve", "transpose_solve"})
    ),
    "equinox.internal.while_loop": BodySpec(((0, "cond_fun"), (1, "body_fun")), 1),
    # A Pallas block's index map is traced with the grid indices (int32 scalars), then the
    # scalar-prefetch references, whose loads are traced too.
    "jax.experimental.pallas.BlockSpec": BodySpec(((1, "index_map"),), EVERY_PARAMETER),
}

def passed_callables(
    call: ast.Call, callee: str, items: Callable[[ast.Name], "list[ast.expr] | None"] | None = None
) -> Iterator[tuple[str, ast.expr]]:
    """The callables a control-flow call passes where its `BodySpec` takes them, by position or
    keyword, the items of a written sequence (`lax.switch(i, [f, g], x)`) one by one: (the
    parameter's keyword, the expression). `items` reads a name as the sequence it is bound to
    (`Names.sequence_items`), where the caller knows the scope."""
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    for index, keyword in CONTROL_FLOW[callee].callables:
        arg = call.args[index] if index < len(call.args) else keywords.get(keyword)
        if arg is None:
            continue
        written = arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else None
        if written is None and items is not None and isinstance(arg, ast.Name):
            written = items(arg)
        for candidate in written if written is not None else [arg]:
            yield keyword, candidate


# Primitives that take branches: JAX traces every branch, whichever one runs, handing each the
# operands that start at this position.
BRANCH_OPERANDS = {"jax.lax.cond": 3, "jax.lax.switch": 2}
BRANCHING = frozenset(BRANCH_OPERANDS)

# Under `with jax.disable_jit():` these call their functions in Python on the values they are
# given: a jit calls the function, `lax.scan` and the loops iterate in Python, `lax.cond` and
# `lax.switch` call the branch taken. (`vmap`, `pmap` and `checkpoint` still trace.)
EAGER_WITHOUT_JIT = frozenset({
    "jax.jit", "equinox.filter_jit", "flax.nnx.jit",
    "jax.lax.scan", "jax.lax.fori_loop", "jax.lax.while_loop", "jax.lax.cond", "jax.lax.switch",
    "jax.lax.map", "jax.lax.associative_scan",
})

# Host callbacks: the function runs on the host with concrete values; never traced.
HOST_CALLBACKS = frozenset({
    "jax.debug.callback",
    "jax.pure_callback",
    "jax.experimental.io_callback",
    "jax.experimental.host_callback.call",
    "jax.experimental.host_callback.id_tap",
})

# The libraries these tables describe. Their names are answered by the tables alone, never by
# reading their source, even when the linted project is one of them; a module that names none
# of them has nothing to lint.
MODELLED_PACKAGES = ("jax", "flax", "equinox", "haiku", "optax", "chex")

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
    # Shape arithmetic runs on Python tuples, whatever shapes it is given.
    "jax.lax.broadcast_shapes",
    "jax.lax.padtype_to_pads",
    "jax.lax.conv_dimension_numbers",
    "jax.lax.conv_general_permutations",
    "jax.lax.conv_general_shape_tuple",
    "jax.lax.conv_shape_tuple",
    "jax.lax.conv_transpose_shape_tuple",
    "jax.lax.reduce_window_shape_tuple",
    "jax.numpy.broadcast_shapes",
    "numpy.broadcast_shapes",
    # Dtype queries: NumPy's read the array's `dtype` attribute, which a tracer has.
    "jax.lax.dtype",
    "numpy.iscomplexobj",
    "numpy.isrealobj",
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

# Calls that run the function they are given on each leaf of their tree arguments, there and
# then, in the caller's context: JAX's, and dm-tree's `map_structure` (which Acme and other
# Haiku code use for the same thing).
TREE_MAPS = frozenset({
    "jax.tree_util.tree_map", "jax.tree_util.tree_map_with_path", "tree.map_structure", "tree.map_structure_with_path",
})

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
STATIC_METHODS = frozenset({"keys", "__len__", "get_shape", "ndim", "__class__"})
# The public methods of a JAX array (`jax.Array`): a value that is sent any other method is
# some other object, whatever the analysis assumed.
ARRAY_METHODS = frozenset({
    "addressable_data", "all", "any", "argmax", "argmin", "argpartition", "argsort", "astype",
    "block_until_ready", "byteswap", "choose", "clip", "compress", "conj", "conjugate", "copy",
    "copy_to_host_async", "cumprod", "cumsum", "delete", "devices", "diagonal", "dot", "flatten",
    "is_deleted", "item", "max", "mean", "min", "nonzero", "prod", "ptp", "ravel", "repeat",
    "reshape", "round", "searchsorted", "sort", "squeeze", "std", "sum", "swapaxes", "take",
    "to_device", "tobytes", "tolist", "trace", "transpose", "var", "view",
})

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

# Integer arithmetic helpers inside those namespaces: plain Python on Python integers (a
# block size, a grid extent), staged only when an argument is traced.
INTEGER_HELPERS = frozenset({
    "jax.experimental.pallas.cdiv",
    "jax.experimental.pallas.align_to",
    "jax.experimental.pallas.next_power_of_2",
    "jax.experimental.pallas.strides_from_shape",
})

# A transformed Haiku function's parameters and state, read inside it: arrays the framework
# passes in, traced wherever the function's array arguments are.
FRAMEWORK_ARRAYS = frozenset({"haiku.get_parameter", "haiku.get_state"})

# Pallas calls that build Python objects, not arrays: block and grid specifications, memory
# spaces, slices, copy descriptors and semaphores, kernels and the functions that run them.
_PALLAS_OBJECTS = {
    "jax.experimental.pallas": (
        "ANY", "BlockDim", "BlockSpec", "Blocked", "BoundedSlice", "Buffered", "CompilerParams",
        "CostEstimate", "Element", "GridSpec", "MemoryRef", "MemorySpace", "Slice", "Squeezed", "ds",
        "dslice", "kernel", "loop", "when", "with_scoped", "pallas_call",
        "core_map", "semaphore_signal", "semaphore_wait", "debug_print", "empty_ref_like",
    ),
    "jax.experimental.pallas.tpu": (
        "async_copy", "async_remote_copy", "make_async_copy", "make_async_remote_copy",
        "get_barrier_semaphore", "sync_copy", "store", "dma_semaphore", "VMEM", "SMEM", "HBM", "CMEM",
        "VMEM_SHARED", "SemaphoreType", "PrefetchScalarGridSpec", "CompilerParams", "emit_pipeline",
        "emit_pipeline_with_allocations", "BufferedRef", "core_barrier", "run_on_first_core",
        "with_memory_space_constraint", "create_tensorcore_mesh",
    ),
    "jax.experimental.pallas.mosaic_gpu": (
        "SMEM", "GMEM", "Barrier", "ClusterBarrier", "ACC", "kernel", "emit_pipeline",
        "copy_gmem_to_smem", "copy_smem_to_gmem", "barrier_wait", "barrier_arrive", "commit_smem",
        "wait_smem_to_gmem", "TilingTransform", "SwizzleTransform", "transpose_ref", "CompilerParams",
    ),
}
PALLAS_OBJECTS = frozenset(f"{namespace}.{name}" for namespace, names in _PALLAS_OBJECTS.items() for name in names)

STAGED_FUNCTIONS = frozenset({
    "jax.device_put",
    "jax.block_until_ready",
    "jax.stop_gradient",
    # The modelled libraries' functions that compute one array with JAX operations.
    "equinox.internal.unvmap_any",
    "equinox.internal.unvmap_all",
    "equinox.internal.unvmap_max",
    "optax.global_norm",
    "optax.safe_norm",
    "optax.safe_int32_increment",
    "optax.safe_increment",
})

# The class of every tracer: code that tests a value against it expects one.
TRACER_TYPES = frozenset({"jax.core.Tracer"})

# The modelled libraries' functions that return a pytree shaped like their first argument, each
# leaf computed from it with JAX operations: given a traced array, they return a traced array.
STRUCTURE_PRESERVING_FUNCTIONS = frozenset({
    f"optax.projections.projection_{name}" for name in (
        "box", "halfspace", "hypercube", "hyperplane", "l1_ball", "l1_sphere", "l2_ball", "l2_sphere",
        "linf_ball", "non_negative", "simplex", "vector",
    )
})

# A model's `apply`: it runs the model on the arguments, so in traced code, given traced
# variables or inputs, its outputs are traced (with `mutable=`, a pair: outputs, updated state).
MODULE_APPLIES = frozenset({"flax.linen.Module.apply", "flax.linen.module.Module.apply"})

# Annotations that say "this parameter is an array".
ARRAY_ANNOTATIONS = frozenset({
    "jax.Array",
    "jax._src.typing.Array",  # how JAX's own modules name `jax.Array` and `ArrayLike`
    "jax._src.typing.ArrayLike",
    "jax.numpy.ndarray",
    "jax.numpy.DeviceArray",
    "jax.typing.ArrayLike",
    "chex.Array",
    "chex.ArrayDevice",
    "jaxtyping.Array",
    "jaxtyping.Scalar",  # `Shaped[Array, ""]`: a 0-d JAX array
    "jaxtyping.PRNGKeyArray",
})

# Of those, the ones that admit Python scalars and NumPy arrays too: not known JAX arrays.
ARRAY_LIKE_ANNOTATIONS = frozenset({"jax.typing.ArrayLike", "jax._src.typing.ArrayLike"})
# And the ones every value of which is a JAX array (`chex.Array` admits NumPy arrays too).
JAX_ARRAY_ANNOTATIONS = ARRAY_ANNOTATIONS - ARRAY_LIKE_ANNOTATIONS - {"chex.Array"}
JAXTYPING_DTYPES = frozenset({
    "Float", "Int", "Bool", "Num", "Shaped", "Real", "Inexact", "Integer", "UInt",
    "Complex", "Float32", "Float64", "Int32", "Int64", "Key", "PRNGKeyArray",
})

# kauldron's array types, written with a shape string alone (`Float["*b n d"]`, `Int[""]`):
# each admits only arrays (JAX or NumPy; the `X...` ones TensorFlow and torch tensors too) of a
# dtype. Its `Scalar...` types admit Python numbers, and are not among them.
_KAULDRON_DTYPES = (
    "Array", "Num", "Bool", "Int", "IntOrBool", "Integer", "SInt", "UInt", "Float", "BFloat16", "Complex",
    *(f"{kind}{bits}" for kind in ("Int", "UInt") for bits in (8, 16, 32, 64)),
    "Float16", "Float32", "Float64", "Complex64", "Complex128",
)
KAULDRON_ARRAY_TYPES = frozenset(
    f"kauldron.{module}.{prefix}{dtype}"
    for module in ("typing", "ktyping") for prefix in ("", "X") for dtype in _KAULDRON_DTYPES
)
KAULDRON_BOOLEANS = frozenset({"kauldron.typing.Bool", "kauldron.ktyping.Bool"})

# Annotations that say "this parameter is a Python value", static under filtering jits.
# Sequence types: under a transformation such an argument stays a Python sequence (of tracers),
# whose truth is its length.
SEQUENCE_ANNOTATIONS = frozenset({
    "builtins.tuple", "builtins.list", "typing.Sequence", "typing.Tuple", "typing.List",
    "collections.abc.Sequence",
})
PYTHON_ANNOTATIONS = frozenset({
    "builtins.int", "builtins.float", "builtins.bool", "builtins.str", "builtins.bytes",
    "builtins.tuple", "builtins.list", "builtins.dict", "builtins.type",
    "typing.Callable", "collections.abc.Callable", "typing.Sequence", "typing.Tuple",
    "typing.Literal", "typing_extensions.Literal",  # literals are Python constants
})

# Framework base classes whose `__call__` (and compact methods) run under a transformation
# in practice; their attributes are static configuration.  Each by its public name and by
# the public module that defines it (`from flax.linen.module import Module`).
MODULE_BASES = frozenset({
    "flax.linen.Module",
    "flax.linen.module.Module",
    "flax.nnx.Module",
    "flax.nnx.module.Module",
    "equinox.Module",
    "haiku.Module",
})
MODULE_METHOD_DECORATORS = frozenset({
    "flax.linen.compact", "flax.linen.nowrap", "flax.linen.module.compact", "flax.linen.module.nowrap",
})
