"""Which parameters a transformation's arguments make static or pass as given, read from its
keywords as JAX reads them: `static_argnums`/`static_argnames` (`nondiff_argnums` and
`nondiff_argnames` of a custom derivative, `static_broadcasted_argnums` of `jax.pmap`), the
`None` entries of a vmap's `in_axes` and of a shard_map's `in_specs`, and what a
differentiation's `argnums` leaves out."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.names import FunctionNode
from jaxlint.analysis.knowledge import jax_api


def positional_params(function: FunctionNode) -> list[ast.arg]:
    return [*function.args.posonlyargs, *function.args.args]


def static_parameters(
    function: FunctionNode, keywords: dict[str, ast.expr], skip: int = 0, transform: str | None = None
) -> frozenset[str]:
    """Parameter names made static by `static_argnums` / `static_argnames` of `transform`,
    resolved as JAX does. A checkpoint honours `static_argnums` only: `jax.checkpoint` accepts
    `static_argnames` but traces those arguments all the same."""
    positional = positional_params(function)[skip:]
    static: set[str] = set()
    numbers = [
        *int_values(keywords.get("static_argnums")),
        *int_values(keywords.get("nondiff_argnums")),
        *int_values(keywords.get("static_broadcasted_argnums")),  # `jax.pmap`'s name for them
    ]
    for index in numbers:
        if -len(positional) <= index < len(positional):
            static.add(positional[index].arg)
    if transform not in jax_api.CHECKPOINTS:
        static.update(str_values(keywords.get("static_argnames")))
    static.update(str_values(keywords.get("nondiff_argnames")))  # a custom derivative's, by name
    return frozenset(static)


def int_values(expr: ast.expr | None) -> list[int]:
    """Literal ints of `3`, `(0, 2)`, `[1]`, `-1`."""
    if expr is None:
        return []
    items = expr.elts if isinstance(expr, (ast.Tuple, ast.List, ast.Set)) else [expr]
    out = []
    for item in items:
        value = _literal(item)
        if isinstance(value, int) and not isinstance(value, bool):
            out.append(value)
    return out


def str_values(expr: ast.expr | None) -> list[str]:
    if expr is None:
        return []
    items = expr.elts if isinstance(expr, (ast.Tuple, ast.List, ast.Set)) else [expr]
    return [v for item in items if isinstance(v := _literal(item), str)]


def _literal(expr: ast.expr):
    try:
        return ast.literal_eval(expr)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


VMAPS = frozenset({"jax.vmap", "flax.nnx.vmap"})


def as_given_positions(transform: str, site: ast.AST | None, keywords: dict[str, ast.expr], count: int) -> frozenset[int]:
    """Argument positions (of the `count` the function takes) that a transformation passes on as
    the caller gives them, traced only if they were: a vmap's `in_axes=None` ones, a shard_map's
    `in_specs` `None` ones (static there), and a differentiation's outside its `argnums` (0 by
    default; `eqx.filter_grad` differentiates its first argument): `value_and_grad(loss)(params,
    x, n)` hands `loss` the caller's `n`. (A
    differentiation passes keyword arguments as given too; `argnums` counts positions only.)"""
    if transform in VMAPS:
        return unbatched_positions(site, keywords)
    if transform in SHARD_MAPS:
        return unmapped_positions(site, keywords)
    if transform not in jax_api.CONCRETE_TRANSFORMS:
        return frozenset()
    argnums = keywords.get("argnums")
    numbers = int_values(argnums) if argnums is not None else [0]
    if argnums is not None and not numbers:
        return frozenset()  # argnums the code computes: which are differentiated is not known
    differentiated = {n % count if count else n for n in numbers}
    return frozenset(i for i in range(count) if i not in differentiated)


SHARD_MAPS = frozenset({"jax.shard_map", "flax.nnx.shard_map"})


def unmapped_positions(site: ast.AST | None, keywords: dict[str, ast.expr]) -> frozenset[int]:
    """Argument positions a shard_map passes on as they are, static: `None` entries of its
    `in_specs` tuple (`P()` replicates an array; `None` hands the value over untouched)."""
    in_specs = keywords.get("in_specs")
    if in_specs is None and isinstance(site, ast.Call) and len(site.args) > 2:
        in_specs = site.args[2]  # shard_map(f, mesh, in_specs, out_specs)
    if not isinstance(in_specs, (ast.Tuple, ast.List)):
        return frozenset()
    return frozenset(
        i for i, spec in enumerate(in_specs.elts) if isinstance(spec, ast.Constant) and spec.value is None
    )


def unbatched_positions(site: ast.AST | None, keywords: dict[str, ast.expr]) -> frozenset[int]:
    """Argument positions a vmap leaves unbatched: `None` entries of its `in_axes` tuple."""
    in_axes = keywords.get("in_axes")
    if in_axes is None and isinstance(site, ast.Call) and len(site.args) > 1:
        in_axes = site.args[1]  # jax.vmap(f, in_axes, out_axes)
    if not isinstance(in_axes, (ast.Tuple, ast.List)):
        return frozenset()
    return frozenset(
        i for i, axis in enumerate(in_axes.elts) if isinstance(axis, ast.Constant) and axis.value is None
    )
