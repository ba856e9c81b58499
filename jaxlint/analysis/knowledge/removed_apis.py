"""JAX APIs that were removed or deprecated: when, and what to write instead.

Every row is read off JAX's CHANGELOG.md (the release heading it sits under is in `source`)
or, where the changelog is silent, off JAX's git history (the release tag that first lacks
the file). A version is the first release that deprecated or removed the name; `removed`
None means the name still works in the newest JAX and only warns.

A replacement is *exact* when writing it instead changes nothing the program does; it is
offered as a fix only for a target JAX that has it (`Replacement.since`). `how` says, in
words, what to write where no name does it (a call to restructure, an argument to add).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from jaxlint.jax_versions import Version

@dataclass(frozen=True)
class Replacement:
    """A public name that does exactly what the removed one did, from JAX `since` on."""

    name: str
    since: Version


@dataclass(frozen=True)
class RemovedApi:
    name: str  # the dotted public name as written (`jax.tree_map`); a module covers its members
    deprecated: Optional[Version]
    removed: Optional[Version]
    source: str  # where the versions come from
    replacements: Tuple[Replacement, ...] = ()  # exact ones, preferred first
    how: str = ""  # what to write instead, when no name alone does it
    call: str = ""  # how a call is rewritten: "at.set" (x.at[i].set(v)), "keyword:independent=True"
    keywords_only: bool = False  # the replacement takes the same call only when every argument but the first is a keyword
    module: bool = False  # a module: importing it fails, and so does every name under it
    safe: bool = True  # False: the replacement differs in a corner (an isinstance test, a missing member)

    def replacement(self, target: Version) -> Optional[Replacement]:
        """The preferred exact replacement the target JAX has, if any."""
        return next((r for r in self.replacements if r.since <= target), None)


def _r(name: str, since: Version) -> Replacement:
    return Replacement(name, since)


_EVER = (0, 1, 0)  # present in every JAX release this table concerns
_TREE = (0, 4, 25)  # "Added jax.tree module" (CHANGELOG, jax 0.4.25)

_TOP_LEVEL_TREE = (
    # CHANGELOG jax 0.3.15: "jax.tree_flatten is deprecated in favor of jax.tree_util.tree_flatten" (and
    # leaves, structure, transpose, unflatten, treedef_is_leaf); jax 0.6.0: "Several previously-deprecated
    # APIs have been removed ... From jax: jax.treedef_is_leaf, jax.tree_flatten, jax.tree_map, ...".
    RemovedApi(
        f"jax.tree_{name}", (0, 3, 15), (0, 6, 0), "CHANGELOG jax 0.3.15 (deprecated), JAX 0.6.0 (removed)",
        (_r(f"jax.tree.{name}", _TREE), _r(f"jax.tree_util.tree_{name}", _EVER)),
    )
    for name in ("flatten", "leaves", "structure", "transpose", "unflatten")
)

REMOVED_APIS: Tuple[RemovedApi, ...] = (
    *_TOP_LEVEL_TREE,
    RemovedApi(
        "jax.tree_map", (0, 4, 26), (0, 6, 0),
        "CHANGELOG jax 0.4.26: jax.tree_map is deprecated; use jax.tree.map, or jax.tree_util.tree_map for older "
        "JAX; JAX 0.6.0: removed",
        (_r("jax.tree.map", _TREE), _r("jax.tree_util.tree_map", _EVER)),
    ),
    RemovedApi(
        "jax.treedef_is_leaf", (0, 3, 15), (0, 6, 0), "CHANGELOG jax 0.3.15 (deprecated), JAX 0.6.0 (removed)",
        (_r("jax.tree_util.treedef_is_leaf", _EVER),),
    ),
    # CHANGELOG jax 0.3.5: tree_multimap is deprecated, use tree_map; jax 0.3.16: "has been removed ... a direct
    # replacement". The top-level alias went with it (jax/__init__.py at jax-v0.3.15 still imports it).
    RemovedApi(
        "jax.tree_util.tree_multimap", (0, 3, 5), (0, 3, 16), "CHANGELOG jax 0.3.5 (deprecated), jax 0.3.16 (removed)",
        (_r("jax.tree.map", _TREE), _r("jax.tree_util.tree_map", _EVER)),
    ),
    RemovedApi(
        "jax.tree_multimap", (0, 3, 5), (0, 3, 16),
        "jax/__init__.py re-exports the deprecated jax.tree_util.tree_multimap from jax-v0.3.5 to jax-v0.3.15; "
        "CHANGELOG jax 0.3.16 (removed)",
        (_r("jax.tree.map", _TREE), _r("jax.tree_util.tree_map", _EVER)),
    ),
    # CHANGELOG jax 0.2.22: jax.ops.index_update, index_add ... deprecated, use x.at[idx].set(y);
    # jax 0.3.2: "which were deprecated in 0.2.22, have been removed".
    RemovedApi(
        "jax.ops.index_update", (0, 2, 22), (0, 3, 2), "CHANGELOG jax 0.2.22 (deprecated), jax 0.3.2 (removed)",
        how="`x.at[idx].set(y)`", call="at.set",
    ),
    RemovedApi(
        "jax.ops.index_add", (0, 2, 22), (0, 3, 2), "CHANGELOG jax 0.2.22 (deprecated), jax 0.3.2 (removed)",
        how="`x.at[idx].add(y)`", call="at.add",
    ),
    RemovedApi(
        "jax.ops.index", (0, 2, 22), (0, 3, 2), "CHANGELOG jax 0.2.22, jax 0.3.2 (the index helper of index_update)",
        how="the index itself, inside `x.at[...]`",
    ),
    # CHANGELOG jax 0.4.12: jnp.product/cumproduct/sometrue/alltrue deprecated (following NumPy 1.25);
    # jax 0.4.16: "removed after a three-month deprecation period".
    RemovedApi(
        "jax.numpy.product", (0, 4, 12), (0, 4, 16), "CHANGELOG jax 0.4.12 (deprecated), jax 0.4.16 (removed)",
        (_r("jax.numpy.prod", _EVER),),
    ),
    RemovedApi(
        "jax.numpy.cumproduct", (0, 4, 12), (0, 4, 16), "CHANGELOG jax 0.4.12 (deprecated), jax 0.4.16 (removed)",
        (_r("jax.numpy.cumprod", _EVER),),
    ),
    RemovedApi(
        "jax.numpy.sometrue", (0, 4, 12), (0, 4, 16), "CHANGELOG jax 0.4.12 (deprecated), jax 0.4.16 (removed)",
        (_r("jax.numpy.any", _EVER),),
    ),
    RemovedApi(
        "jax.numpy.alltrue", (0, 4, 12), (0, 4, 16), "CHANGELOG jax 0.4.12 (deprecated), jax 0.4.16 (removed)",
        (_r("jax.numpy.all", _EVER),),
    ),
    # CHANGELOG jax 0.4.16: row_stack, in1d, trapz, NINF, issubsctype deprecated; jax 0.4.24: removed
    # ("from jax.numpy: NINF, NZERO, PZERO, row_stack, issubsctype, trapz, and in1d").
    RemovedApi(
        "jax.numpy.row_stack", (0, 4, 16), (0, 4, 24), "CHANGELOG jax 0.4.16 (deprecated), jax 0.4.24 (removed)",
        (_r("jax.numpy.vstack", _EVER),),
    ),
    RemovedApi(
        "jax.numpy.trapz", (0, 4, 16), (0, 4, 24), "CHANGELOG jax 0.4.16 (deprecated), jax 0.4.24 (removed); "
        "jax 0.4.26: added jax.numpy.trapezoid",
        (_r("jax.numpy.trapezoid", (0, 4, 26)),), how="`jax.scipy.integrate.trapezoid`",
    ),
    RemovedApi(
        "jax.numpy.in1d", (0, 4, 16), (0, 4, 24), "CHANGELOG jax 0.4.16 (deprecated), jax 0.4.24 (removed)",
        how="`jnp.isin(jnp.ravel(x), test)` (`isin` keeps the shape of `x`; `in1d` flattened it)",
    ),
    RemovedApi(
        "jax.numpy.issubsctype", (0, 4, 16), (0, 4, 24), "CHANGELOG jax 0.4.16 (deprecated), jax 0.4.24 (removed)",
        how="`jnp.issubdtype(x.dtype, t)`",
    ),
    *(
        RemovedApi(
            f"jax.numpy.{name}", (0, 4, 16), (0, 4, 24), "CHANGELOG jax 0.4.16 (NINF deprecated), jax 0.4.24 (removed)",
            how=f"`{value}`",
        )
        for name, value in (("NINF", "-jnp.inf"), ("NZERO", "-0.0"), ("PZERO", "0.0"))
    ),
    RemovedApi(
        "jax.numpy.round_", (0, 4, 32), (0, 4, 38), "CHANGELOG jax 0.4.32 (deprecated), jax 0.4.38 (removed)",
        (_r("jax.numpy.round", _EVER),),
    ),
    RemovedApi(
        "jax.numpy.msort", (0, 4, 1), (0, 4, 9), "CHANGELOG jax 0.4.1 (deprecated), jax 0.4.9 (removed)",
        how="`jnp.sort(x, axis=0)`",
    ),
    # CHANGELOG jax 0.4.7: "The type jax.numpy.DeviceArray is deprecated. Use jax.Array instead, for which it
    # is an alias"; jax 0.4.14: removed.
    RemovedApi(
        "jax.numpy.DeviceArray", (0, 4, 7), (0, 4, 14), "CHANGELOG jax 0.4.7 (deprecated, an alias of jax.Array), "
        "jax 0.4.14 (removed)",
        (_r("jax.Array", (0, 4, 7)),),
    ),
    RemovedApi(
        "jax.interpreters.xla.DeviceArray", None, (0, 4, 11), "CHANGELOG jax 0.4.11: removed after a 3 month "
        "deprecation period, use jax.Array",
        (_r("jax.Array", (0, 4, 7)),),
    ),
    RemovedApi(
        "jax.interpreters.pxla.ShardedDeviceArray", (0, 4, 7), (0, 4, 14), "CHANGELOG jax 0.4.7 (deprecated), "
        "jax 0.4.14 (removed)",
        (_r("jax.Array", (0, 4, 7)),), safe=False,
    ),
    # CHANGELOG jax 0.4.16: "jax.random.PRNGKeyArray and jax.random.KeyArray are deprecated. Use jax.Array for
    # type annotations"; jax 0.4.24: removed.
    *(
        RemovedApi(
            f"jax.random.{name}", (0, 4, 16), (0, 4, 24), "CHANGELOG jax 0.4.16 (deprecated), jax 0.4.24 (removed)",
            (_r("jax.Array", (0, 4, 16)),), safe=False,
        )
        for name in ("KeyArray", "PRNGKeyArray")
    ),
    # Deprecated by commit d8d71407dc (first in jax-v0.1.66); CHANGELOG jax 0.4.31: "removed; instead use
    # jax.random.permutation with independent=True" (the same shuffle, key for key).
    RemovedApi(
        "jax.random.shuffle", (0, 1, 66), (0, 4, 31), "commit d8d71407dc (jax 0.1.66, deprecated); CHANGELOG "
        "jax 0.4.31 (removed); jax 0.2.25: permutation gained `independent`",
        (_r("jax.random.permutation", (0, 2, 25)),), call="keyword:independent=True",
    ),
    # CHANGELOG jax 0.2.25: moved to jax.example_libraries; jax 0.3.16: "Removed jax.experimental.stax; it has
    # long been a deprecated alias of jax.example_libraries.stax" (and optimizers).
    *(
        RemovedApi(
            f"jax.experimental.{name}", (0, 2, 25), (0, 3, 16), "CHANGELOG jax 0.2.25 (moved), jax 0.3.16 (removed)",
            (_r(f"jax.example_libraries.{name}", (0, 2, 25)),), module=True,
        )
        for name in ("stax", "optimizers")
    ),
    # CHANGELOG jax 0.4.4: deprecated, use jax.sharding.*; jax 0.4.11: removed.
    RemovedApi(
        "jax.experimental.maps.Mesh", (0, 4, 4), (0, 4, 11), "CHANGELOG jax 0.4.4 (deprecated), jax 0.4.11 (removed)",
        (_r("jax.sharding.Mesh", (0, 4, 4)),),
    ),
    RemovedApi(
        "jax.experimental.pjit.PartitionSpec", (0, 4, 4), (0, 4, 11),
        "CHANGELOG jax 0.4.4 (deprecated), jax 0.4.11 (removed)",
        (_r("jax.sharding.PartitionSpec", (0, 4, 4)),),
    ),
    RemovedApi(
        "jax.experimental.pjit.NamedSharding", (0, 4, 4), (0, 4, 11),
        "CHANGELOG jax 0.4.4 (deprecated), jax 0.4.11 (removed)",
        (_r("jax.sharding.NamedSharding", (0, 4, 4)),),
    ),
    RemovedApi(
        "jax.experimental.PartitionSpec", None, (0, 4, 11), "CHANGELOG jax 0.4.11 (removed after a 3 month "
        "deprecation period)",
        (_r("jax.sharding.PartitionSpec", (0, 4, 4)),),
    ),
    # CHANGELOG jax 0.4.26: jax.experimental.maps and xmap deprecated; jax 0.4.31: "xmap has been deleted"
    # (jax/experimental/maps.py is gone from jax-v0.4.31).
    RemovedApi(
        "jax.experimental.maps", (0, 4, 26), (0, 4, 31), "CHANGELOG jax 0.4.26 (deprecated), jax 0.4.31 (removed)",
        how="`jax.sharding` for meshes, `shard_map` for `xmap`", module=True,
    ),
    RemovedApi(
        "jax.experimental.maps.xmap", (0, 4, 26), (0, 4, 31), "CHANGELOG jax 0.4.26 (deprecated), jax 0.4.31 (removed)",
        how="`jax.shard_map`, or `jax.vmap` with `spmd_axis_name`",
    ),
    # CHANGELOG jax 0.4.26: host_callback deprecated; jax 0.4.35: "Now we removed it" (its functions raise
    # NotImplementedError); JAX 0.8.0: the module is removed.
    RemovedApi(
        "jax.experimental.host_callback", (0, 4, 26), (0, 4, 35),
        "CHANGELOG jax 0.4.26 (deprecated), jax 0.4.35 (removed), JAX 0.8.0 (module removed)",
        how="`jax.debug.callback`, `jax.pure_callback` or `jax.experimental.io_callback`", module=True,
    ),
    RemovedApi(
        "jax.experimental.host_callback.id_tap", (0, 4, 26), (0, 4, 35),
        "CHANGELOG jax 0.4.26 (deprecated), jax 0.4.35 (removed)",
        how="`jax.debug.callback(fn, x)` (it returns None, where `id_tap` returned `x`)",
    ),
    RemovedApi(
        "jax.experimental.host_callback.id_print", (0, 4, 26), (0, 4, 35),
        "CHANGELOG jax 0.4.26 (deprecated), jax 0.4.35 (removed)",
        how="`jax.debug.print`",
    ),
    RemovedApi(
        "jax.experimental.host_callback.call", (0, 4, 26), (0, 4, 35),
        "CHANGELOG jax 0.4.26 (deprecated), jax 0.4.35 (removed)",
        how="`jax.pure_callback(fn, result_shape, x)`, or `jax.experimental.io_callback` for side effects",
    ),
    # CHANGELOG jax 0.4.30: deprecated, use jax.jit(fn).lower(*args).compiler_ir('hlo'); jax 0.4.34: deleted.
    RemovedApi(
        "jax.xla_computation", (0, 4, 30), (0, 4, 34), "CHANGELOG jax 0.4.30 (deprecated), jax 0.4.34 (deleted)",
        how="`jax.jit(fn).lower(*args).compiler_ir('hlo')`",
    ),
    # CHANGELOG jax 0.4.24: "jax.lax.tie_in is deprecated: it has been a no-op since JAX v0.2.0"; jax 0.4.29: removed.
    RemovedApi(
        "jax.lax.tie_in", (0, 4, 24), (0, 4, 29), "CHANGELOG jax 0.4.24 (deprecated), jax 0.4.29 (removed)",
        how="its second argument: `tie_in(x, y)` has returned `y` since JAX 0.2.0",
    ),
    # CHANGELOG JAX 0.8.1: deprecated, use jax.device_put with a sharding; JAX 0.10.0: removed.
    *(
        RemovedApi(
            f"jax.{name}", (0, 8, 1), (0, 10, 0), "CHANGELOG JAX 0.8.1 (deprecated), JAX 0.10.0 (removed)",
            how="`jax.device_put` with a sharding",
        )
        for name in ("device_put_replicated", "device_put_sharded")
    ),
    # CHANGELOG jax 0.4.16: jax.linear_util deprecated, use jax.extend.linear_util; jax 0.4.24: removed.
    RemovedApi(
        "jax.linear_util", (0, 4, 16), (0, 4, 24), "CHANGELOG jax 0.4.16 (deprecated), jax 0.4.24 (removed)",
        (_r("jax.extend.linear_util", (0, 4, 16)),), module=True, safe=False,
    ),
    # CHANGELOG jax 0.4.12: deprecated, see jax.core; jax 0.4.17: removed.
    RemovedApi(
        "jax.abstract_arrays", (0, 4, 12), (0, 4, 17), "CHANGELOG jax 0.4.12 (deprecated), jax 0.4.17 (removed)",
        how="`jax.core.ShapedArray`", module=True,
    ),
    # CHANGELOG jax 0.4.32: its functions deprecated (use jax.extend.backend); JAX 0.8.0: those removed;
    # jax/lib/xla_bridge.py is gone from jax-v0.9.0.
    RemovedApi(
        "jax.lib.xla_bridge", (0, 4, 32), (0, 9, 0),
        "CHANGELOG jax 0.4.32 (deprecated), JAX 0.8.0 (functions removed); file gone at jax-v0.9.0",
        how="`jax.extend.backend` (`get_backend`, `default_backend`), `jax.devices()`", module=True,
    ),
    # CHANGELOG jax 0.4.26: deprecated, use jax.clear_caches, or jax.extend.backend.clear_backends for the same
    # behaviour; jax 0.4.36: removed.
    RemovedApi(
        "jax.clear_backends", (0, 4, 26), (0, 4, 36), "CHANGELOG jax 0.4.26 (deprecated), jax 0.4.36 (removed)",
        (_r("jax.extend.backend.clear_backends", (0, 4, 26)),),
    ),
    # CHANGELOG JAX 0.8.0: "jax.experimental.pjit.pjit is deprecated; going forward use jax.jit" (still there).
    RemovedApi(
        "jax.experimental.pjit.pjit", (0, 8, 0), None, "CHANGELOG JAX 0.8.0 (deprecated)",
        (_r("jax.jit", (0, 8, 0)),), keywords_only=True,
    ),
    # CHANGELOG JAX 0.8.0: "jax.experimental.shard_map.shard_map is deprecated; going forward use jax.shard_map".
    RemovedApi(
        "jax.experimental.shard_map.shard_map", (0, 8, 0), None, "CHANGELOG JAX 0.8.0 (deprecated)",
        how="`jax.shard_map` (`check_rep` is now `check_vma`; arguments after the function are keywords)",
    ),
)

_BY_NAME = {api.name: api for api in REMOVED_APIS}
_MODULES = tuple(api for api in REMOVED_APIS if api.module)
# The leading names every entry starts with: a module that imports none of them is skipped at once.
ROOTS = frozenset(api.name.split(".", 1)[0] for api in REMOVED_APIS)


def lookup(name: str) -> Optional[Tuple[RemovedApi, str]]:
    """The entry that `name` is or lies under (a member of a removed module), with what follows it."""
    api = _BY_NAME.get(name)
    if api is not None:
        return api, ""
    for api in _MODULES:
        if name.startswith(api.name + "."):
            return api, name[len(api.name):]
    return None
