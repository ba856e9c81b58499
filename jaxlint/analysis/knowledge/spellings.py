"""How JAX and the frameworks spell their names: aliases of one object resolved to one
spelling, and private implementation paths to the public name they back. `Names` reads this
through `SPELLING`."""

from __future__ import annotations

from functools import lru_cache

from jaxlint.analysis.engine.names import Spelling
from jaxlint.analysis.knowledge.jax_exports import EXPORTS

# Public aliases that name the same object: resolved to one spelling so tables stay small.
_CANONICAL = {
    "jax.tree_map": "jax.tree_util.tree_map",
    "jax.tree.map": "jax.tree_util.tree_map",
    "jax.tree.leaves": "jax.tree_util.tree_leaves",
    "jax.tree.flatten": "jax.tree_util.tree_flatten",
    "jax.tree.unflatten": "jax.tree_util.tree_unflatten",
    "jax.tree.structure": "jax.tree_util.tree_structure",
    "jax.tree_leaves": "jax.tree_util.tree_leaves",
    "jax.tree_flatten": "jax.tree_util.tree_flatten",
    # Before JAX 0.3.16, `tree_map` over several trees was spelled `tree_multimap`.
    "jax.tree_multimap": "jax.tree_util.tree_map",
    "jax.tree_util.tree_multimap": "jax.tree_util.tree_map",
    "jax.remat": "jax.checkpoint",
    "jax.experimental.shard_map.shard_map": "jax.shard_map",
    "jax.experimental.pjit.pjit": "jax.jit",
    "jax.random.PRNGKey": "jax.random.PRNGKey",
    "flax.linen.remat": "flax.linen.checkpoint",
    "haiku.remat": "haiku.checkpoint",
    "numpy.random.RandomState": "numpy.random.RandomState",
}
_CANONICAL_PREFIXES = (
    ("jax.experimental.host_callback.", "jax.experimental.host_callback."),
    ("jax.tree.", "jax.tree_util.tree_"),
)


_REWRITTEN_PREFIXES = tuple((prefix, new) for prefix, new in _CANONICAL_PREFIXES if prefix != new)
_REWRITTEN_STARTS = tuple(prefix for prefix, _ in _REWRITTEN_PREFIXES)


def canonical(name: str) -> str:
    name = _CANONICAL.get(name, name)
    if name.startswith(_REWRITTEN_STARTS):
        for prefix, replacement in _REWRITTEN_PREFIXES:
            if name.startswith(prefix):
                return replacement + name[len(prefix):]
    return name


def attribute_spellings(qualnames) -> frozenset[str]:
    """Every attribute name a call `x.attr(...)` can end in and still resolve to one of these
    qualified names: their last parts, and those of the aliases `canonical` rewrites to them."""
    lasts = {name.rsplit(".", 1)[-1] for name in qualnames}
    lasts.update(alias.rsplit(".", 1)[-1] for alias, name in _CANONICAL.items() if name.rsplit(".", 1)[-1] in lasts)
    for prefix, replacement in _REWRITTEN_PREFIXES:  # `jax.tree.map` is `jax.tree_util.tree_map`
        stem = replacement.rsplit(".", 1)[-1]
        lasts.update(last[len(stem):] for last in list(lasts) if stem and last.startswith(stem))
    return frozenset(lasts)


# JAX's private implementation packages and the public namespace that re-exports their
# names, with the sub-namespaces that stay public under it (MIRROR: the whole layout does).
# `jax._src.numpy.lax_numpy.where` is `jax.numpy.where`; `jax._src.lax.control_flow.loops.fori_loop`
# is `jax.lax.fori_loop`; `jax._src.numpy.linalg.solve` is `jax.numpy.linalg.solve`.
# Names the public namespace does not export (internal helpers) stay unresolved.
MIRROR = ("*",)
_PRIVATE_PACKAGES: dict[str, tuple[str, tuple[str, ...]]] = {
    "jax._src.api": ("jax", ()),
    "jax._src.custom_derivatives": ("jax", ()),
    "jax._src.ad_checkpoint": ("jax", ()),
    "jax._src.pjit": ("jax", ()),
    "jax._src.shard_map": ("jax", ()),
    "jax._src.numpy": ("jax.numpy", ("linalg", "fft")),
    "jax._src.lax": ("jax.lax", ("linalg",)),
    "jax._src.random": ("jax.random", ()),
    "jax._src.prng": ("jax.random", ()),
    "jax._src.nn": ("jax.nn", ("initializers",)),
    "jax._src.scipy": ("jax.scipy", MIRROR),
    "jax._src.tree_util": ("jax.tree_util", ()),
    "jax._src.debugging": ("jax.debug", ()),
    "jax._src.dtypes": ("jax.dtypes", ()),
    "jax._src.core": ("jax.core", ()),
    "jax._src.typing": ("jax.typing", ()),
    "jax._src.checkify": ("jax.experimental.checkify", ()),
    # The frameworks' own sources name their public classes through implementation modules.
    "flax.linen.module": ("flax.linen", ()),
    "flax.nnx.module": ("flax.nnx", ()),
    "haiku._src.module": ("haiku", ()),
    "haiku._src.base": ("haiku", ()),
    "haiku._src.transform": ("haiku", ()),
    "optax._src.base": ("optax", ()),
    "optax._src.numerics": ("optax", ()),
    "equinox._module": ("equinox", ()),
}
_PRIVATE_PREFIXES = tuple(f"{package}." for package in _PRIVATE_PACKAGES) + ("jax._src.",)


@lru_cache(maxsize=4096)
def public(name: str) -> str:
    """The public spelling of a name reached through JAX's private modules (see _PRIVATE_PACKAGES)."""
    if not name.startswith(_PRIVATE_PREFIXES):
        return name
    parts = name.split(".")
    for end in range(len(parts), 1, -1):
        entry = _PRIVATE_PACKAGES.get(".".join(parts[:end]))
        if entry is None:
            continue
        namespace, keep = entry
        rest = parts[end:]
        if not rest:
            return namespace
        if keep is MIRROR:
            return canonical(".".join([namespace, *rest]))
        namespace = ".".join([namespace, *(part for part in rest[:-1] if part in keep)])
        exported = EXPORTS.get(namespace)
        if rest[-1] not in exported if exported is not None else rest[-1].startswith("_"):
            return name  # an internal helper: not part of the public API
        return canonical(f"{namespace}.{rest[-1]}")
    return name


SPELLING = Spelling(canonical, public, _PRIVATE_PREFIXES)
