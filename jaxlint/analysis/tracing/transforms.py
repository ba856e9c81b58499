"""Which JAX transformation an expression denotes (`jax.jit`, `partial(jax.jit, ...)`,
`jax.jit(static_argnames=...)`): what tracing discovery and the resolver both ask of a decorator."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.names import Names, Scope
from jaxlint.analysis.knowledge import jax_api
from jaxlint.analysis.tracing.traced_functions import Transform

PARTIAL = frozenset({"functools.partial", "jax.tree_util.Partial"})


def transform_of(expr: ast.AST, names: Names, scope: Scope | None = None) -> Transform | None:
    """The transformation an expression denotes: `jax.jit`, `partial(jax.jit, ...)`, `jax.jit(static_argnames=...)`."""
    if isinstance(expr, ast.Call):
        callee = names.qualname(expr.func, scope)
        if callee in PARTIAL and expr.args:
            inner = names.qualname(expr.args[0], scope)
            if inner in jax_api.TRANSFORMS:
                return Transform(inner, keywords(expr), expr)
            return None
        if callee in jax_api.TRANSFORMS and not expr.args:
            return Transform(callee, keywords(expr), expr)
        return None
    name = names.qualname(expr, scope)
    if name in jax_api.TRANSFORMS:
        return Transform(name, {}, expr)
    return None


def keywords(call: ast.Call) -> dict[str, ast.expr]:
    """The keyword arguments a call names (a `**` spread aside)."""
    return {k.arg: k.value for k in call.keywords if k.arg}
