"""JAX APIs that were removed or deprecated: when, and what to write instead.

Every row carries its evidence (`source`): the CHANGELOG.md entry and the release heading it sits
under, or, where the changelog is silent or wrong, JAX's source: the release tag (or, for a
release whose tag JAX's repository lacks, the wheel on PyPI) that first warns, first lacks the
name, or first has the replacement. A version is the first
release that deprecated or removed the name; `removed` None means the name still works in the
newest JAX this table knows (`NEWEST_KNOWN`, 0.12.1) and only warns. Internal modules (`jax.core`,
`jax.interpreters`) are listed name by name, for the names application code uses.

A replacement is *exact* when writing it instead changes nothing the program does; it is
offered as a fix only for a target JAX that has it (`Replacement.since`). `safe` False marks a
replacement that differs in a corner (an `isinstance` test, a missing member): its fix is
unsafe. `how` says, in words, what to write where no name does it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from jaxlint.jax_versions import Version, show

# The newest JAX release whose deprecations and removals this table records.
NEWEST_KNOWN: Version = (0, 12, 1)

@dataclass(frozen=True)
class Replacement:
    """A name that does exactly what the removed one did, from JAX `since` on (`source` says so).
    A Python constant (`None`) stands for itself."""

    name: str
    since: Version
    source: str


@dataclass(frozen=True)
class RemovedApi:
    name: str  # the dotted public name as written (`jax.tree_map`); a module covers its members
    deprecated: Optional[Version]
    removed: Optional[Version]
    source: str  # the evidence for both versions
    replacements: Tuple[Replacement, ...] = ()  # exact ones, preferred first
    how: str = ""  # what to do instead, when no name alone does it ("use `x.at[idx].set(y)`")
    call: str = ""  # how a call is rewritten: "at.set" (x.at[i].set(v)), "keyword:independent=True"
    keywords_only: bool = False  # the replacement takes the same call only when every argument but the first is a keyword
    module: bool = False  # a module: importing it fails, and so does every name under it
    safe: bool = True  # False: the replacement differs in a corner (an isinstance test, a missing member)

    def replacement(self, target: Version) -> Optional[Replacement]:
        """The preferred exact replacement the target JAX has, if any."""
        return next((r for r in self.replacements if r.since <= target), None)


_EVER = (0, 1, 0)  # present in every JAX release this table concerns

# ---- replacements, each with where it first appears -------------------------------------------
_TREE = (0, 4, 25)
_IN_TREE = "CHANGELOG jax 0.4.25: added the jax.tree module"
_IN_TREE_UTIL = "in jax.tree_util in every release"
_ARRAY = (0, 4, 1)
_IS_ARRAY = "CHANGELOG jax 0.4.1: jax.Array, the one array type, is on by default"
_SHARDING = (0, 4, 1)
_IN_SHARDING = "jax/sharding.py at jax-v0.4.1 (the release after the yanked 0.4.0) exports Mesh and PartitionSpec"


def _tree(name: str) -> Tuple[Replacement, ...]:
    return (
        Replacement(f"jax.tree.{name}", _TREE, _IN_TREE),
        Replacement(f"jax.tree_util.tree_{name}", _EVER, _IN_TREE_UTIL),
    )


def _always(name: str) -> Tuple[Replacement, ...]:
    return (Replacement(name, _EVER, "in every release"),)


def _array(safe_note: str) -> Tuple[Replacement, ...]:
    return (Replacement("jax.Array", _ARRAY, _IS_ARRAY + "; " + safe_note),)


def _extend_core(name: str, since: Version = (0, 4, 27)) -> Tuple[Replacement, ...]:
    return (Replacement(f"jax.extend.core.{name}", since, f"jax/extend/core/__init__.py at jax-v{show(since)}"),)


_TOP_LEVEL_TREE = tuple(
    # CHANGELOG jax 0.3.15: "jax.tree_flatten is deprecated in favor of jax.tree_util.tree_flatten" (and
    # leaves, structure, transpose, unflatten); JAX 0.6.0: "Several previously-deprecated APIs have been
    # removed ... From jax: jax.treedef_is_leaf, jax.tree_flatten, jax.tree_map, ...".
    RemovedApi(
        f"jax.tree_{name}", (0, 3, 15), (0, 6, 0), "CHANGELOG jax 0.3.15 (deprecated), JAX 0.6.0 (removed)", _tree(name),
    )
    for name in ("flatten", "leaves", "structure", "transpose", "unflatten")
)

_CORE_MOVED = tuple(
    # jax/core.py at jax-v0.4.38 warns "jax.core.Jaxpr is deprecated. Use jax.extend.core.Jaxpr";
    # CHANGELOG JAX 0.6.0 removes Jaxpr, JaxprEqn, Literal, Primitive and Var from jax.core.
    RemovedApi(
        f"jax.core.{name}", (0, 4, 38), (0, 6, 0),
        "jax/core.py at jax-v0.4.38 (deprecated), CHANGELOG JAX 0.6.0 (removed)", _extend_core(name),
    )
    for name in ("Jaxpr", "JaxprEqn", "Literal", "Primitive", "Var")
)

_JAX_0_11_CORE = "jax/core.py at jax-v0.11.0: 'jax.core.{} was deprecated in JAX v0.10.0 and removed in JAX v0.11.0'"

_CORE_REMOVED_0_11 = (
    # jax/core.py at jax-v0.10.0 warns for each ("Use jax.extend.core.<name>"); CHANGELOG JAX 0.11.0 lists them
    # among "previously-deprecated APIs from jax.core" that "have been removed".
    *(
        RemovedApi(f"jax.core.{name}", (0, 10, 0), (0, 11, 0), _JAX_0_11_CORE.format(name), _extend_core(name, (0, 10, 0)))
        for name in (
            "DebugInfo", "DropVar", "Effect", "Effects", "check_jaxpr", "concrete_or_error", "find_top_trace", "gensym",
            "get_opaque_trace_state", "jaxprs_in_params", "new_jaxpr_eqn", "no_effects", "primal_dtype_to_tangent_dtype",
            "valid_jaxtype", "nonempty_axis_env_DO_NOT_USE", "unsafe_am_i_under_a_jit_DO_NOT_USE",
            "unsafe_am_i_under_a_vmap_DO_NOT_USE", "unsafe_get_axis_names_DO_NOT_USE",
        )
    ),
    *(
        RemovedApi(
            f"jax.core.{name}", (0, 10, 0), (0, 11, 0), _JAX_0_11_CORE.format(name) + f" ('Use jax.errors.{name}')",
            (Replacement(f"jax.errors.{name}", (0, 10, 1), "jax/errors.py at jax-v0.10.1, the same class"),),
        )
        for name in ("InconclusiveDimensionOperation", "JaxprTypeError")
    ),
    RemovedApi(
        "jax.core.abstract_token", (0, 10, 0), (0, 11, 0),
        _JAX_0_11_CORE.format("abstract_token") + " ('Use jax.ffi.abstract_token, available in JAX v0.11.0')",
        (Replacement("jax.ffi.abstract_token", (0, 11, 0), "jax/ffi.py at jax-v0.11.0"),),
    ),
    *(
        RemovedApi(f"jax.core.{name}", (0, 10, 0), (0, 11, 0), _JAX_0_11_CORE.format(name), how=how)
        for name, how in (
            (
                "is_concrete",
                "test `not isinstance(x, jax.core.Tracer)` (`is_concrete` was True also for a tracer whose value is known)",
            ),
            ("is_constant_dim", "test whether `operator.index(d)` succeeds, as it did (a symbolic dimension raises TypeError)"),
            ("is_constant_shape", "test whether `operator.index(d)` succeeds for every `d` in the shape, as it did"),
            ("trace_ctx", "drop it: it is internal to JAX, with no public counterpart"),
        )
    ),
)

REMOVED_APIS: Tuple[RemovedApi, ...] = (
    # ---- pytrees ---------------------------------------------------------------------------------
    *_TOP_LEVEL_TREE,
    RemovedApi(
        "jax.tree_map", (0, 4, 26), (0, 6, 0),
        "CHANGELOG jax 0.4.26: jax.tree_map is deprecated; use jax.tree.map, or jax.tree_util.tree_map for older "
        "JAX; JAX 0.6.0: removed",
        _tree("map"),
    ),
    RemovedApi(
        "jax.treedef_is_leaf", (0, 3, 15), (0, 6, 0), "CHANGELOG jax 0.3.15 (deprecated), JAX 0.6.0 (removed)",
        _always("jax.tree_util.treedef_is_leaf"),
    ),
    RemovedApi(
        "jax.tree_util.tree_multimap", (0, 3, 5), (0, 3, 16),
        "CHANGELOG jax 0.3.5 (deprecated), jax 0.3.16 (removed: jax.tree_util.tree_map is a direct replacement)",
        _tree("map"),
    ),
    RemovedApi(
        "jax.tree_multimap", (0, 3, 5), (0, 3, 16),
        "CHANGELOG jax 0.3.5 (tree_multimap deprecated); jax/__init__.py re-exports it from jax-v0.1.67 through "
        "jax-v0.3.15, and no longer at jax-v0.3.16",
        _tree("map"),
    ),
    # ---- jax.ops -------------------------------------------------------------------------------
    # CHANGELOG jax 0.2.22: "jax.ops.index_update, jax.ops.index_add etc. are deprecated", use x.at[idx].set(y);
    # jax 0.3.2: "which were deprecated in 0.2.22, have been removed".
    RemovedApi(
        "jax.ops.index_update", (0, 2, 22), (0, 3, 2), "CHANGELOG jax 0.2.22 (deprecated), jax 0.3.2 (removed)",
        how="use `x.at[idx].set(y)`", call="at.set",
    ),
    RemovedApi(
        "jax.ops.index_add", (0, 2, 22), (0, 3, 2), "CHANGELOG jax 0.2.22 (deprecated), jax 0.3.2 (removed)",
        how="use `x.at[idx].add(y)`", call="at.add",
    ),
    RemovedApi(
        "jax.ops.index", (0, 2, 22), (0, 3, 2), "CHANGELOG jax 0.2.22, jax 0.3.2 (the index helper of index_update)",
        how="write the index itself inside `x.at[...]`",
    ),
    # ---- jax.numpy ------------------------------------------------------------------------------
    # CHANGELOG jax 0.4.12: jnp.product/cumproduct/sometrue/alltrue deprecated (following NumPy 1.25);
    # jax 0.4.16: "removed after a three-month deprecation period".
    RemovedApi(
        "jax.numpy.product", (0, 4, 12), (0, 4, 16), "CHANGELOG jax 0.4.12 (deprecated), jax 0.4.16 (removed)",
        _always("jax.numpy.prod"),
    ),
    RemovedApi(
        "jax.numpy.cumproduct", (0, 4, 12), (0, 4, 16), "CHANGELOG jax 0.4.12 (deprecated), jax 0.4.16 (removed)",
        _always("jax.numpy.cumprod"),
    ),
    RemovedApi(
        "jax.numpy.sometrue", (0, 4, 12), (0, 4, 16), "CHANGELOG jax 0.4.12 (deprecated), jax 0.4.16 (removed)",
        _always("jax.numpy.any"),
    ),
    RemovedApi(
        "jax.numpy.alltrue", (0, 4, 12), (0, 4, 16), "CHANGELOG jax 0.4.12 (deprecated), jax 0.4.16 (removed)",
        _always("jax.numpy.all"),
    ),
    # CHANGELOG jax 0.4.16: row_stack, in1d, trapz, NINF, NZERO, PZERO, issubsctype deprecated; jax 0.4.24:
    # removed ("from jax.numpy: NINF, NZERO, PZERO, row_stack, issubsctype, trapz, and in1d").
    RemovedApi(
        "jax.numpy.row_stack", (0, 4, 16), (0, 4, 24), "CHANGELOG jax 0.4.16 (deprecated), jax 0.4.24 (removed)",
        _always("jax.numpy.vstack"),
    ),
    RemovedApi(
        "jax.numpy.trapz", (0, 4, 16), (0, 4, 24), "CHANGELOG jax 0.4.16 (deprecated), jax 0.4.24 (removed)",
        (
            Replacement("jax.numpy.trapezoid", (0, 4, 26), "CHANGELOG jax 0.4.26: added jax.numpy.trapezoid"),
            Replacement("jax.scipy.integrate.trapezoid", (0, 4, 16), "CHANGELOG jax 0.4.16: added it"),
        ),
    ),
    RemovedApi(
        "jax.numpy.in1d", (0, 4, 16), (0, 4, 24), "CHANGELOG jax 0.4.16 (deprecated), jax 0.4.24 (removed)",
        how="use `jnp.isin(jnp.ravel(x), test)` (`isin` keeps the shape of `x`; `in1d` flattened it)",
    ),
    RemovedApi(
        "jax.numpy.issubsctype", (0, 4, 16), (0, 4, 24), "CHANGELOG jax 0.4.16 (deprecated), jax 0.4.24 (removed)",
        how="use `jnp.issubdtype(x.dtype, t)`",
    ),
    *(
        RemovedApi(
            f"jax.numpy.{name}", (0, 4, 16), (0, 4, 24), "CHANGELOG jax 0.4.16 (deprecated), jax 0.4.24 (removed)",
            how=f"use `{value}`",
        )
        for name, value in (("NINF", "-jnp.inf"), ("NZERO", "-0.0"), ("PZERO", "0.0"))
    ),
    RemovedApi(
        "jax.numpy.round_", (0, 4, 32), (0, 4, 38), "CHANGELOG jax 0.4.32 (deprecated), jax 0.4.38 (removed)",
        _always("jax.numpy.round"),
    ),
    RemovedApi(
        "jax.numpy.msort", (0, 4, 1), (0, 4, 9), "CHANGELOG jax 0.4.1 (deprecated), jax 0.4.9 (removed)",
        how="use `jnp.sort(x, axis=0)`",
    ),
    # ---- array types --------------------------------------------------------------------------
    # CHANGELOG jax 0.4.7: "The type jax.numpy.DeviceArray is deprecated. Use jax.Array instead, for which it
    # is an alias"; jax 0.4.14: removed.
    RemovedApi(
        "jax.numpy.DeviceArray", (0, 4, 7), (0, 4, 14), "CHANGELOG jax 0.4.7 (deprecated), jax 0.4.14 (removed)",
        (Replacement("jax.Array", (0, 4, 7), "jax/numpy/__init__.py at jax-v0.4.7 binds DeviceArray to jax.Array"),),
    ),
    # jax/interpreters/xla.py at jax-v0.4.4 warns "jax.interpreters.xla.DeviceArray is deprecated. Use
    # jax.Array instead"; there it is jaxlib's DeviceArrayBase, another class. CHANGELOG jax 0.4.11: removed.
    RemovedApi(
        "jax.interpreters.xla.DeviceArray", (0, 4, 4), (0, 4, 11),
        "jax/interpreters/xla.py at jax-v0.4.4 (deprecated), CHANGELOG jax 0.4.11 (removed)",
        _array("another class than xla.DeviceArray: an isinstance test answers otherwise"), safe=False,
    ),
    RemovedApi(
        "jax.interpreters.pxla.ShardedDeviceArray", (0, 4, 7), (0, 4, 14),
        "CHANGELOG jax 0.4.7 (deprecated), jax 0.4.14 (removed)",
        _array("another class than ShardedDeviceArray: an isinstance test answers otherwise"), safe=False,
    ),
    # CHANGELOG jax 0.4.16: "jax.random.PRNGKeyArray and jax.random.KeyArray are deprecated. Use jax.Array for
    # type annotations"; jax 0.4.24: removed.
    *(
        RemovedApi(
            f"jax.random.{name}", (0, 4, 16), (0, 4, 24), "CHANGELOG jax 0.4.16 (deprecated), jax 0.4.24 (removed)",
            _array("for annotations; an isinstance test answers otherwise"), safe=False,
        )
        for name in ("KeyArray", "PRNGKeyArray")
    ),
    # ---- jax.random ----------------------------------------------------------------------------
    RemovedApi(
        "jax.random.shuffle", (0, 1, 66), (0, 4, 31),
        "jax/random.py at jax-v0.1.66 warns that shuffle is deprecated; CHANGELOG jax 0.4.31: removed, "
        "use jax.random.permutation with independent=True (the same shuffle, key for key)",
        (
            Replacement(
                "jax.random.permutation", (0, 2, 26),
                "jax/_src/random.py at jax-v0.2.26: permutation takes `independent` (the CHANGELOG lists it "
                "under jax 0.2.25, whose tag lacks it)",
            ),
        ),
        call="keyword:independent=True",
    ),
    RemovedApi(
        "jax.random.threefry_2x32", (0, 4, 20), (0, 4, 24),
        "jax/random.py at jax-v0.4.20: 'jax.random.threefry_2x32 is deprecated. Use "
        "jax.extend.random.threefry_2x32'; CHANGELOG jax 0.4.24: removed",
        (Replacement("jax.extend.random.threefry_2x32", (0, 4, 16), "jax/extend/random.py at jax-v0.4.16"),),
    ),
    # ---- example libraries ----------------------------------------------------------------------
    # CHANGELOG jax 0.2.25: moved to jax.example_libraries; jax 0.3.16: "Removed jax.experimental.stax; it has
    # long been a deprecated alias of jax.example_libraries.stax" (and optimizers).
    *(
        RemovedApi(
            f"jax.experimental.{name}", (0, 2, 25), (0, 3, 16), "CHANGELOG jax 0.2.25 (moved), jax 0.3.16 (removed)",
            (Replacement(f"jax.example_libraries.{name}", (0, 2, 25), "CHANGELOG jax 0.2.25: moved there"),),
            module=True,
        )
        for name in ("stax", "optimizers")
    ),
    # ---- sharding -------------------------------------------------------------------------------
    # CHANGELOG jax 0.4.1: "jax.experimental.maps.Mesh and jax.experimental.PartitionSpec are deprecated";
    # jax 0.4.4: the pjit and pxla spellings deprecated; jax 0.4.11: all removed.
    RemovedApi(
        "jax.experimental.maps.Mesh", (0, 4, 1), (0, 4, 11), "CHANGELOG jax 0.4.1 (deprecated), jax 0.4.11 (removed)",
        (Replacement("jax.sharding.Mesh", _SHARDING, _IN_SHARDING),),
    ),
    RemovedApi(
        "jax.experimental.PartitionSpec", (0, 4, 1), (0, 4, 11),
        "CHANGELOG jax 0.4.1 (deprecated), jax 0.4.11 (removed)",
        (Replacement("jax.sharding.PartitionSpec", _SHARDING, _IN_SHARDING),),
    ),
    *(
        RemovedApi(
            f"{where}.{name}", (0, 4, 4), (0, 4, 11), "CHANGELOG jax 0.4.4 (deprecated), jax 0.4.11 (removed)",
            (replacement,),
        )
        for where, name, replacement in (
            ("jax.experimental.pjit", "PartitionSpec", Replacement("jax.sharding.PartitionSpec", _SHARDING, _IN_SHARDING)),
            ("jax.interpreters.pxla", "PartitionSpec", Replacement("jax.sharding.PartitionSpec", _SHARDING, _IN_SHARDING)),
            ("jax.interpreters.pxla", "Mesh", Replacement("jax.sharding.Mesh", _SHARDING, _IN_SHARDING)),
            (
                "jax.experimental.pjit", "NamedSharding",
                Replacement("jax.sharding.NamedSharding", (0, 3, 24), "jax/sharding.py at jax-v0.3.24"),
            ),
        )
    ),
    # CHANGELOG jax 0.4.16: "jax.experimental.pjit.with_sharding_constraint is deprecated. Use
    # jax.lax.with_sharding_constraint"; jax/experimental/pjit.py at jax-v0.4.24 no longer has it.
    RemovedApi(
        "jax.experimental.pjit.with_sharding_constraint", (0, 4, 16), (0, 4, 24),
        "CHANGELOG jax 0.4.16 (deprecated); jax/experimental/pjit.py at jax-v0.4.24 lacks it (removed)",
        (
            Replacement(
                "jax.lax.with_sharding_constraint", (0, 4, 1),
                "CHANGELOG jax 0.4.1: its new public endpoint; jax/lax/__init__.py at jax-v0.4.1 imports the same function",
            ),
        ),
    ),
    RemovedApi(
        "jax.sharding.PositionalSharding", (0, 6, 0), (0, 7, 0),
        "jax/sharding.py at jax-v0.7.0: 'jax.sharding.PositionalSharding was deprecated in JAX v0.6.0 and removed "
        "in JAX v0.7.0'",
        how="use `jax.sharding.NamedSharding` over a `jax.sharding.Mesh`",
    ),
    RemovedApi(
        "jax.sharding.PmapSharding", (0, 8, 1), (0, 10, 0),
        "CHANGELOG JAX 0.8.1 (deprecated, use jax.NamedSharding), JAX 0.10.0 (removed with the C++ pmap)",
        how="use `jax.NamedSharding`",
    ),
    RemovedApi(
        "jax.experimental.shard_alike", None, (0, 11, 2),
        "jax/experimental/shard_alike.py is in the jax 0.11.1 wheel and not in the jax 0.11.2 wheel (removed; the "
        "CHANGELOG is silent)",
        how="give both arrays one explicit sharding with `jax.lax.with_sharding_constraint`", module=True,
    ),
    # CHANGELOG jax 0.4.26: jax.experimental.maps and xmap deprecated; jax 0.4.31: "xmap has been deleted"
    # (jax/experimental/maps.py is gone from jax-v0.4.31).
    RemovedApi(
        "jax.experimental.maps", (0, 4, 26), (0, 4, 31), "CHANGELOG jax 0.4.26 (deprecated), jax 0.4.31 (removed)",
        how="use `jax.sharding` for meshes, `jax.shard_map` for `xmap`", module=True,
    ),
    RemovedApi(
        "jax.experimental.maps.xmap", (0, 4, 26), (0, 4, 31), "CHANGELOG jax 0.4.26 (deprecated), jax 0.4.31 (removed)",
        how="use `jax.shard_map`, or `jax.vmap` with `spmd_axis_name`",
    ),
    RemovedApi(
        "jax.device_put_replicated", (0, 8, 1), (0, 10, 0), "CHANGELOG JAX 0.8.1 (deprecated), JAX 0.10.0 (removed)",
        how="use `jax.device_put` with a sharding",
    ),
    RemovedApi(
        "jax.device_put_sharded", (0, 8, 1), (0, 10, 0), "CHANGELOG JAX 0.8.1 (deprecated), JAX 0.10.0 (removed)",
        how="use `jax.device_put` with a sharding",
    ),
    # CHANGELOG JAX 0.8.0: "jax.experimental.pjit.pjit is deprecated; going forward use jax.jit" (still there).
    RemovedApi(
        "jax.experimental.pjit.pjit", (0, 8, 0), None, "CHANGELOG JAX 0.8.0 (deprecated)",
        (Replacement("jax.jit", (0, 8, 0), "CHANGELOG JAX 0.8.0: use jax.jit"),), keywords_only=True,
    ),
    # CHANGELOG JAX 0.8.0: "jax.experimental.shard_map.shard_map is deprecated; going forward use jax.shard_map".
    RemovedApi(
        "jax.experimental.shard_map.shard_map", (0, 8, 0), None, "CHANGELOG JAX 0.8.0 (deprecated)",
        how="use `jax.shard_map` (`check_rep` is now `check_vma`; arguments after the function are keywords)",
    ),
    *(
        RemovedApi(
            f"jax.interpreters.pxla.{name}", (0, 8, 2), None,
            f"CHANGELOG JAX 0.8.2: all symbols in jax.interpreters.pxla are deprecated; jax/interpreters/pxla.py at "
            f"jax-v0.8.2 warns for {name}",
            how=how,
        )
        for name, how in (
            ("thread_resources", "use `jax.sharding.get_abstract_mesh()` under `with jax.set_mesh(mesh):`"),
            ("global_avals_to_results_handler", "drop it: it is internal to JAX, with no public counterpart"),
        )
    ),
    # ---- callbacks and lowering -----------------------------------------------------------------
    # CHANGELOG jax 0.4.26: host_callback deprecated; jax 0.4.35: "Now we removed it" (its functions raise
    # NotImplementedError); JAX 0.8.0: the module is removed.
    RemovedApi(
        "jax.experimental.host_callback", (0, 4, 26), (0, 4, 35),
        "CHANGELOG jax 0.4.26 (deprecated), jax 0.4.35 (removed), JAX 0.8.0 (module removed)",
        how="use `jax.debug.callback`, `jax.pure_callback` or `jax.experimental.io_callback`", module=True,
    ),
    RemovedApi(
        "jax.experimental.host_callback.id_tap", (0, 4, 26), (0, 4, 35),
        "CHANGELOG jax 0.4.26 (deprecated), jax 0.4.35 (removed)",
        how="use `jax.debug.callback(fn, x)` (it returns None, where `id_tap` returned `x`)",
    ),
    RemovedApi(
        "jax.experimental.host_callback.id_print", (0, 4, 26), (0, 4, 35),
        "CHANGELOG jax 0.4.26 (deprecated), jax 0.4.35 (removed)",
        how="use `jax.debug.print`",
    ),
    RemovedApi(
        "jax.experimental.host_callback.call", (0, 4, 26), (0, 4, 35),
        "CHANGELOG jax 0.4.26 (deprecated), jax 0.4.35 (removed)",
        how="use `jax.pure_callback(fn, result_shape, x)`, or `jax.experimental.io_callback` for side effects",
    ),
    RemovedApi(
        "jax.xla_computation", (0, 4, 30), (0, 4, 34), "CHANGELOG jax 0.4.30 (deprecated), jax 0.4.34 (deleted)",
        how="use `jax.jit(fn).lower(*args).compiler_ir('hlo')`",
    ),
    RemovedApi(
        "jax.lax.tie_in", (0, 4, 24), (0, 4, 29),
        "CHANGELOG jax 0.4.24 (deprecated: a no-op since JAX v0.2.0), jax 0.4.29 (removed)",
        how="write its second argument: `tie_in(x, y)` has returned `y` since JAX 0.2.0",
    ),
    *(
        RemovedApi(
            f"jax.lax.{name}", (0, 12, 0), None,
            f"jax/lax/__init__.py in the jax 0.12.0 wheel: 'jax.lax.{name} is deprecated.' (deprecated)",
            how="stop using it: JAX names no replacement",
        )
        for name in ("psend", "precv")
    ),
    RemovedApi(
        "jax.custom_transforms", (0, 1, 63), (0, 2, 12),
        "CHANGELOG jax 0.1.63 (deprecated: use jax.custom_jvp and jax.custom_vjp); jax/api.py lacks it from "
        "jax-v0.2.12 (removed)",
        how="use `jax.custom_jvp` or `jax.custom_vjp`",
    ),
    RemovedApi(
        "jax.defvjp_all", (0, 1, 63), (0, 2, 12),
        "CHANGELOG jax 0.1.63 (custom_transforms deprecated); jax/api.py at jax-v0.2.11 documents 'This API is "
        "deprecated', and lacks it from jax-v0.2.12 (removed)",
        how="use `jax.custom_vjp` and its `defvjp`",
    ),
    # ---- configuration and backends -------------------------------------------------------------
    RemovedApi(
        "jax.config.config", (0, 4, 25), (0, 4, 29),
        "CHANGELOG jax 0.4.25: the jax.config.config object and importing the jax.config submodule are deprecated; "
        "jax 0.4.29: 'The deprecated jax.config submodule has been removed'",
        (
            Replacement(
                "jax.config", _EVER,
                "jax/__init__.py binds jax.config to the same config object in every release (jax-v0.1.60: "
                "`from .config import config`)",
            ),
        ),
    ),
    RemovedApi(
        "jax.config.FLAGS", None, (0, 4, 20),
        "jax/_src/config.py gives the config object FLAGS from jax-v0.2.13 through jax-v0.4.19, not at jax-v0.4.20",
        how="use `jax.config.update(name, value)`",
    ),
    RemovedApi(
        "jax.experimental.enable_x64", (0, 8, 0), (0, 9, 0),
        "CHANGELOG JAX 0.8.0 (deprecated in favor of jax.enable_x64); jax/experimental/__init__.py at jax-v0.9.0: "
        "'jax.experimental.enable_x64 was removed in JAX v0.9.0'",
        (Replacement("jax.enable_x64", (0, 8, 0), "CHANGELOG JAX 0.8.0: the new context manager jax.enable_x64"),),
    ),
    RemovedApi(
        "jax.clear_backends", (0, 4, 26), (0, 4, 36), "CHANGELOG jax 0.4.26 (deprecated), jax 0.4.36 (removed)",
        (
            Replacement(
                "jax.extend.backend.clear_backends", (0, 4, 26),
                "CHANGELOG jax 0.4.26: use jax.extend.backend.clear_backends for the same behaviour",
            ),
        ),
    ),
    # CHANGELOG jax 0.4.32: the jax.lib.xla_bridge functions deprecated; JAX 0.8.0: "The deprecated functions in
    # jax.dlpack, jax.errors, jax.lib.xla_bridge, jax.lib.xla_client, and jax.lib.xla_extension were removed";
    # the modules, left empty, are gone from jax-v0.9.0.
    RemovedApi(
        "jax.lib.xla_bridge", (0, 4, 32), (0, 8, 0),
        "CHANGELOG jax 0.4.32 (its functions deprecated), JAX 0.8.0 (removed); jax/lib/xla_bridge.py gone at jax-v0.9.0",
        how="use `jax.default_backend()`, `jax.devices()` or `jax.extend.backend.get_backend()`", module=True,
    ),
    RemovedApi(
        "jax.lib.xla_bridge.get_backend", (0, 4, 32), (0, 8, 0),
        "CHANGELOG jax 0.4.32 (deprecated: use jax.extend.backend.get_backend), JAX 0.8.0 (removed)",
        (
            Replacement(
                "jax.extend.backend.get_backend", (0, 4, 32),
                "jax/extend/backend.py at jax-v0.4.32 exports the same function",
            ),
        ),
    ),
    RemovedApi(
        "jax.lib.xla_bridge.default_backend", (0, 4, 32), (0, 4, 38),
        "CHANGELOG jax 0.4.32 (deprecated: use jax.default_backend), jax 0.4.38 (removed)",
        (Replacement("jax.default_backend", (0, 2, 10), "jax/__init__.py at jax-v0.2.10 exports the same function"),),
    ),
    *(
        RemovedApi(
            f"jax.lib.{name}", (0, 6, 0), (0, 8, 0),
            f"CHANGELOG JAX 0.6.0 ({deprecated}), JAX 0.8.0 (the deprecated functions removed); jax/lib/{name}.py gone "
            f"at jax-v0.9.0",
            how=how, module=True,
        )
        for name, deprecated, how in (
            ("xla_client", "most of its exports deprecated", "use `jax.devices()`, `jax.Device` and `jax.extend.backend`"),
            (
                "xla_extension", "all its APIs deprecated",
                "use `jax.errors.JaxRuntimeError` for `XlaRuntimeError`, `jax.distributed` for the distributed runtime",
            ),
        )
    ),
    RemovedApi(
        "jax.cloud_tpu_init", (0, 8, 1), (0, 11, 0),
        "jax/cloud_tpu_init.py at jax-v0.8.1: 'jax.cloud_tpu_init was deprecated in JAX v0.8.1'; CHANGELOG JAX 0.11.0: "
        "'The deprecated module jax.cloud_tpu_init was removed. This did nothing'",
        how="delete the import and the call: JAX initializes Cloud TPUs itself", module=True,
    ),
    RemovedApi(
        "jax.tools.colab_tpu", None, (0, 9, 2),
        "jax/tools/colab_tpu.py is gone at jax-v0.9.2 (commit 67da5f940e); its one function raises from jax-v0.4.26",
        how="delete the import and the `setup_tpu()` call: only the old Colab TPU driver needed them", module=True,
    ),
    RemovedApi(
        "jax.tools.colab_tpu.setup_tpu", None, (0, 4, 26),
        "jax/tools/colab_tpu.py at jax-v0.4.26: setup_tpu() raises RuntimeError ('should no longer be used')",
        how="delete the call: only the old Colab TPU driver needed it",
    ),
    # ---- internal modules, name by name ---------------------------------------------------------
    RemovedApi(
        "jax.linear_util", (0, 4, 16), (0, 4, 24), "CHANGELOG jax 0.4.16 (deprecated), jax 0.4.24 (removed)",
        (Replacement("jax.extend.linear_util", (0, 4, 16), "CHANGELOG jax 0.4.16: use jax.extend.linear_util instead"),),
        module=True, safe=False,
    ),
    RemovedApi(
        "jax.abstract_arrays", (0, 4, 12), (0, 4, 17), "CHANGELOG jax 0.4.12 (deprecated), jax 0.4.17 (removed)",
        how="use `jax.core.ShapedArray`", module=True,
    ),
    # CHANGELOG JAX 0.6.0: "The following internal APIs in jax.util are deprecated: ... cache, safe_map,
    # safe_zip ..."; jax/util.py at jax-v0.7.0 finalizes them ("deprecated in JAX v0.6.0 and removed in JAX
    # v0.7.0"); JAX 0.8.0: "The jax.util ... modules have been removed".
    RemovedApi(
        "jax.util", (0, 6, 0), (0, 8, 0),
        "CHANGELOG JAX 0.6.0 (its APIs deprecated), JAX 0.8.0 ('The jax.util ... modules have been removed')",
        how="use the standard library (`functools`, `zip(..., strict=True)`)", module=True,
    ),
    *(
        RemovedApi(
            f"jax.util.{name}", (0, 6, 0), (0, 7, 0),
            f"CHANGELOG JAX 0.6.0 (deprecated); jax/util.py at jax-v0.7.0: '{name} was deprecated in JAX v0.6.0 and "
            f"removed in JAX v0.7.0'",
            how=how,
        )
        for name, how in (
            ("cache", "use `functools.lru_cache`"),
            ("safe_map", "use `list(map(f, *xs))` after checking that the lengths match"),
            ("safe_zip", "use `list(zip(*xs, strict=True))`"),
        )
    ),
    *_CORE_MOVED,
    *_CORE_REMOVED_0_11,
    RemovedApi(
        "jax.core.ConcretizationTypeError", (0, 4, 38), (0, 7, 0),
        "jax/core.py at jax-v0.4.38 (deprecated: use jax.errors.ConcretizationTypeError), CHANGELOG JAX 0.7.0 (removed)",
        (Replacement("jax.errors.ConcretizationTypeError", (0, 2, 10), "jax/errors.py at jax-v0.2.10, the same class"),),
    ),
    RemovedApi(
        "jax.core.lattice_join", (0, 4, 38), (0, 6, 0),
        "jax/core.py at jax-v0.4.38 ('deprecated. It is a no-op as of JAX v0.4.36'), CHANGELOG JAX 0.6.0 (removed)",
        how="write its first argument: `lattice_join(x, y)` has returned `x` since JAX 0.4.36",
    ),
    RemovedApi(
        "jax.core.get_aval", (0, 8, 2), (0, 10, 0),
        "jax/core.py at jax-v0.10.0: 'jax.core.get_aval was deprecated in JAX v0.8.2 and removed in JAX v0.10.0; use "
        "jax.typeof instead'",
        how="use `jax.typeof` (from JAX 0.5.3)",
    ),
    RemovedApi(
        "jax.core.DShapedArray", None, (0, 8, 2),
        "jax/core.py exports DShapedArray through jax-v0.8.1 and not at jax-v0.8.2 (removed)",
        how="drop it: JAX no longer has dynamic shapes",
    ),
    RemovedApi(
        "jax.interpreters.batching.not_mapped", None, (0, 10, 2),
        "jax-v0.10.2, commit 66e0fd37f8: 'Delete not_mapped and replace it with None'",
        (
            Replacement(
                "None", _EVER,
                "jax/_src/interpreters/batching.py binds `not_mapped = None` in every release through jax-v0.10.1",
            ),
        ),
    ),
    RemovedApi(
        "jax.interpreters.batching.is_vmappable", (0, 7, 1), (0, 9, 0),
        "CHANGELOG JAX 0.7.1 (internal APIs of jax.interpreters.batching deprecated); jax/interpreters/batching.py "
        "at jax-v0.9.0 finalizes it",
        how="drop it: it is internal to JAX, with no public counterpart",
    ),
    RemovedApi(
        "jax.interpreters.ad.zeros_like_p", (0, 7, 1), (0, 9, 0),
        "jax/interpreters/ad.py at jax-v0.9.0: 'jax.interpreters.ad.zeros_like_p was removed in JAX v0.9.0' "
        "(deprecated in JAX v0.7.1)",
        how="drop it: JAX has not used it since 0.4.24",
    ),
    RemovedApi(
        "jax.interpreters.ad.reducing_transposes", (0, 9, 0), (0, 10, 0),
        "jax/interpreters/ad.py at jax-v0.10.0: 'deprecated in v0.9.0 and removed in v0.10.0'",
        how="drop it: JAX has not used it since 0.4.38",
    ),
    RemovedApi(
        "jax.scipy.special.lpmn_values", (0, 5, 0), None, "CHANGELOG jax 0.5.0 (deprecated, no replacement planned)",
        how="write it without JAX: no replacement is planned",
    ),
    *(
        RemovedApi(
            f"jax.experimental.pallas.tpu.{old}", (0, 6, 2), (0, 7, 2),
            f"jax/experimental/pallas/tpu.py at jax-v0.6.2 ('{old} is deprecated, use {new} instead') and without it "
            f"at jax-v0.7.2",
            (
                Replacement(
                    f"jax.experimental.pallas.tpu.{new}", (0, 6, 2),
                    f"jax/experimental/pallas/tpu.py at jax-v0.6.2, of which {old} is an alias",
                ),
            ),
        )
        for old, new in (("TPUCompilerParams", "CompilerParams"), ("TPUMemorySpace", "MemorySpace"))
    ),
    # jax/experimental/pallas/tpu.py at jax-v0.10.0: "pltpu.semaphore_read is deprecated, use pl.semaphore_read
    # instead" (and the others); at jax-v0.11.0: "was deprecated in JAX v0.10.0, and removed in JAX v0.11.0".
    *(
        RemovedApi(
            f"jax.experimental.pallas.tpu.{name}", (0, 10, 0), (0, 11, 0),
            f"jax/experimental/pallas/tpu.py at jax-v0.11.0: 'pltpu.{name} was deprecated in JAX v0.10.0, and removed in "
            f"JAX v0.11.0. Use pl.{name} instead.'",
            (
                Replacement(
                    f"jax.experimental.pallas.{name}", (0, 6, 0),
                    f"jax/experimental/pallas/__init__.py at jax-v0.6.0, the object pltpu.{name} was",
                ),
            ),
        )
        for name in ("semaphore", "semaphore_read", "semaphore_signal", "semaphore_wait")
    ),
    RemovedApi(
        "jax.experimental.pallas.tpu.DeviceIdType", (0, 10, 0), (0, 11, 0),
        "jax/experimental/pallas/tpu.py at jax-v0.11.0: 'pltpu.DeviceIdType was deprecated in JAX v0.10.0, and removed "
        "in JAX v0.11.0. Use pl.DeviceIdType instead.'",
        how="use `jax.experimental.pallas.DeviceIdType`, itself deprecated from JAX 0.12.0",
    ),
    RemovedApi(
        "jax.experimental.pallas.DeviceIdType", (0, 12, 0), None,
        "jax/experimental/pallas/__init__.py in the jax 0.12.0 wheel: 'jax.experimental.pallas.DeviceIdType is "
        "deprecated and will be removed along with the device_id_type= parameter in semaphore and DMA operations'",
        how="stop using it: JAX is removing it with the `device_id_type=` argument of semaphore and DMA operations",
    ),
    # The messages name v0.10.0 and v0.11.0 as the deprecation; the jax-v0.10.2 tag is the first to warn.
    RemovedApi(
        "jax.experimental.pallas.tpu.HOST", (0, 10, 2), (0, 11, 2),
        "jax/experimental/pallas/tpu.py at jax-v0.10.2: 'pltpu.HOST is deprecated, use pl.HOST instead'; the jax "
        "0.11.2 wheel has no value for it ('removed in JAX v0.12.0', it says)",
        (Replacement("jax.experimental.pallas.HOST", (0, 7, 0), "jax/experimental/pallas/__init__.py at jax-v0.7.0"),),
    ),
    RemovedApi(
        "jax.experimental.pallas.dot", (0, 10, 2), (0, 11, 2),
        "jax/experimental/pallas/__init__.py at jax-v0.10.2: 'jax.experimental.pallas.dot was moved to "
        "jax.experimental.pallas.triton'; the jax 0.11.2 wheel has no value for it ('removed in JAX v0.12.0', it says)",
        how="use `jax.numpy.dot`, `jax.numpy.einsum` or the `@` operator",
    ),
    RemovedApi(
        "jax.experimental.pallas.debug_checks_enabled", (0, 10, 2), (0, 11, 2),
        "jax/experimental/pallas/__init__.py at jax-v0.10.2: 'debug_checks_enabled is deprecated, use "
        "pl.enable_debug_checks.value instead'; the jax 0.11.2 wheel has no value for it",
        how="read `jax.experimental.pallas.enable_debug_checks.value`",
    ),
    RemovedApi(
        "jax.experimental.pallas.tpu.create_tensorcore_mesh", (0, 11, 0), (0, 12, 1),
        "jax/experimental/pallas/tpu.py at jax-v0.11.0: 'pltpu.create_tensorcore_mesh is deprecated, use "
        "pltpu.TensorCoreMesh instead'; in the jax 0.12.1 wheel its entry holds no function (AttributeError)",
        how="use `jax.experimental.pallas.tpu.TensorCoreMesh(axis_name=..., num_cores=...)` (from JAX 0.11.0)",
    ),
    RemovedApi(
        "jax.scipy.special.bessel_jn", (0, 12, 1), None,
        "jax/scipy/special.py in the jax 0.12.1 wheel: 'jax.scipy.special.bessel_jn is deprecated; use "
        "jax.scipy.special.jn instead, and note that unlike bessel_jn(), jn() returns results for a single n.'",
        how="use `jax.scipy.special.jn(n, z)` once per order `n` (it returns one order, not all up to `n`)",
    ),
    RemovedApi(
        "jax.sharding.SingleDeviceSharding", (0, 12, 1), None,
        "jax/sharding.py in the jax 0.12.1 wheel: 'jax.sharding.SingleDeviceSharding is deprecated; use "
        "jax.sharding.make_single_device_sharding or jax.sharding.is_single_device_sharding instead.'",
        how="build one with `jax.sharding.make_single_device_sharding(device)` and test for one with "
        "`jax.sharding.is_single_device_sharding(s)` (from JAX 0.12.1)",
    ),
    RemovedApi(
        "jax.experimental.pallas.core_map", (0, 11, 1), None,
        "jax/experimental/pallas/__init__.py in the jax 0.11.1 wheel: 'jax.experimental.pallas.core_map is "
        "deprecated, use jax.experimental.pallas.kernel instead'",
        how="use `jax.experimental.pallas.kernel` (it takes other arguments)",
    ),
    RemovedApi(
        "jax.experimental.pallas.reciprocal", (0, 11, 2), None,
        "jax/experimental/pallas/__init__.py in the jax 0.11.2 wheel: 'jax.experimental.pallas.reciprocal was moved to "
        "jax.experimental.pallas.tpu'",
        (
            Replacement(
                "jax.experimental.pallas.tpu.reciprocal", (0, 11, 0),
                "jax/experimental/pallas/tpu.py at jax-v0.11.0 exports the same function",
            ),
        ),
    ),
    RemovedApi(
        "jax.experimental.pallas.tpu.BufferedRefBase", (0, 12, 0), None,
        "jax/experimental/pallas/tpu.py in the jax 0.12.0 wheel: 'pltpu.BufferedRefBase is deprecated. It is internal "
        "to the pipeline implementation'",
        how="drop it: it is internal to the pipeline implementation",
    ),
)

_BY_NAME = {api.name: api for api in REMOVED_APIS}
_MODULES = tuple(api for api in REMOVED_APIS if api.module)
# The leading names every entry starts with: a module that imports none of them is skipped at once.
ROOTS = frozenset(api.name.split(".", 1)[0] for api in REMOVED_APIS)
# Python constants a replacement may be: written as they are, through no import.
CONSTANTS = frozenset({"None", "True", "False"})
# The modules `import jax` makes reachable as attributes in every release from 0.4.1 on, where
# they exist at all (jax/__init__.py: `from jax import numpy as numpy`, and lax, random, scipy,
# sharding, tree_util, errors; `from jax import tree as tree` from jax-v0.4.25; jax/scipy/__init__.py
# loads its submodules on first use). A name another module holds is reached only through an
# import of that module (`jax.extend.backend`, `jax.example_libraries.optimizers`).
LOADED_WITH_JAX = frozenset({
    "jax", "jax.numpy", "jax.lax", "jax.random", "jax.scipy", "jax.scipy.integrate", "jax.scipy.special",
    "jax.sharding", "jax.tree_util", "jax.tree", "jax.errors",
})


def lookup(name: str) -> Optional[Tuple[RemovedApi, str]]:
    """The entry that `name` is or lies under (a member of a removed module), with what follows it."""
    api = _BY_NAME.get(name)
    if api is not None:
        return api, ""
    for api in _MODULES:
        if name.startswith(api.name + "."):
            return api, name[len(api.name):]
    return None
