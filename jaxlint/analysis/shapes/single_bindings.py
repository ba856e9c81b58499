"""The one binding of a name in the scope that binds it: an assignment, or a tuple unpacking.

What a value passed to a jitted function is, the calling code often shows through one name bound
once: `w = jnp.ones(3)`, or a part of what a call returns, `carry, ys = lax.scan(...)` or
`params, static = eqx.partition(model, ...)`. A name bound more than once, or otherwise (a
parameter, a loop target, an import), has no single binding.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.engine.walk import nodes_run_with, own_statements


class Binding(NamedTuple):
    value: ast.expr  # the assigned value, or the value unpacked
    unpacked: bool  # the name takes a part of `value` (`a, b = value`)


def single_binding(name: ast.Name, names: Names) -> Binding | None:
    """The one binding of `name` in the scope it is read from, if it has exactly one."""
    scope = names.read_scope.get(id(name))
    owner = names.lookup(name.id, scope) if scope is not None else None
    if owner is None or name.id in owner.params or name.id in owner.imports or name.id in owner.defs:
        return None
    values = owner.assigned.get(name.id, [])
    if name.id not in owner.other:
        return Binding(values[0], False) if len(values) == 1 else None
    if values or not isinstance(owner.node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    stores = [
        n for n in nodes_run_with(owner.node.body)
        if isinstance(n, ast.Name) and n.id == name.id and isinstance(n.ctx, ast.Store)
    ]
    if len(stores) != 1:
        return None
    for stmt in own_statements(owner.node.body):
        if isinstance(stmt, ast.Assign) and any(_unpacks(t, name.id) for t in stmt.targets):
            return Binding(stmt.value, True)
    return None


def _unpacks(target: ast.expr, name: str) -> bool:
    elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else ()
    return any(isinstance(e, ast.Name) and e.id == name for e in elements)
