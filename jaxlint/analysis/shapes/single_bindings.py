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
    index: int | None = None  # unpacked from a flat tuple target: the item it takes (None: not known)


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
        for target in stmt.targets if isinstance(stmt, ast.Assign) else ():
            if _unpacks(target, name.id):
                return Binding(stmt.value, True, _index(target, name.id))
    return None


def _unpacks(target: ast.expr, name: str) -> bool:
    elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else ()
    return any(isinstance(e, ast.Name) and e.id == name for e in elements)


def _index(target: ast.Tuple | ast.List, name: str) -> int | None:
    """Where `name` stands in a flat target (`a, b, c = value`); None past a starred one."""
    for index, element in enumerate(target.elts):
        if isinstance(element, ast.Starred):
            return None
        if isinstance(element, ast.Name) and element.id == name:
            return index
    return None
