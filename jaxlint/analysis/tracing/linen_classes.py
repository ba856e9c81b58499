"""Flax Linen module classes: a class deriving from `flax.linen.Module`, directly or through
classes of its module. Read by the key flow (a Linen run draws at its layers' paths) and the
value analysis (`network.apply(params, x)` of an instance runs the model). Also Flax's
variables: a dict holding a `"params"` collection, which only a Linen run takes."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.names import Names

LINEN_MODULE = frozenset({"flax.linen.Module", "flax.linen.module.Module"})
_DEPTH = 4  # how many module classes a base chain is followed through


def linen_class(cls: ast.AST | None, names: Names, depth: int = _DEPTH) -> bool:
    """Whether `cls` (of the module `names` indexes) is a Linen module class."""
    if not isinstance(cls, ast.ClassDef) or depth <= 0 or id(cls) not in names.scopes:
        return False
    scope = names.scopes[id(cls)].parent or names.module
    return any(
        names.qualname(base, scope) in LINEN_MODULE or linen_class(names.definition(base, scope), names, depth - 1)
        for base in cls.bases
    )


def variables_dict(expr: ast.expr, names: Names, scope) -> bool:
    """Whether `expr` is a Flax variables dict written out: a dict display with a `"params"`
    key (`{"params": p}`, `{"params": p, **state}`), or a name every binding of which in its
    scope is one (what a later `variables.update(state)` adds keeps it one)."""
    if isinstance(expr, ast.Name):
        values = names.assignments(expr, scope)
        return bool(values) and all(_params_display(v) for v in values)
    return _params_display(expr)


def _params_display(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Dict) and any(
        isinstance(key, ast.Constant) and key.value == "params" for key in expr.keys
    )
