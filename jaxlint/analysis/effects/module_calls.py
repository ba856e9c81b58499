"""Which module-level statements run a jitted function: whether a global rebound after its
definition can be stale in it.

JAX reads a global when it traces, at the first call, and keeps that value. A rebinding of the
global matters only when a call traced the function before it and a call runs it after it (a
notebook that defines a jitted function, uses it, rebinds the global in a later cell and never
calls the function again keeps nothing stale; a module that rebinds before any call has the new
value traced). The module-level calls that run the function are those of a name bound to it
(the def, or the name a transformation's result is bound to), or of a function of the module
that calls such a name, transitively. A module-level loop that both rebinds and calls runs the
call after the rebinding on its next round.
"""

from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.analysis.engine.names import FunctionNode, Names
from jaxlint.analysis.engine.walk import nodes_of_classes, own_nodes


_CALL = frozenset({ast.Call})
_DEFINITIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def running_names(function: FunctionNode, bound: Iterable[str], names: Names) -> frozenset[str]:
    """The module-level names a call of which runs `function`: `bound` (what a transformation of it
    is bound to), its own name when it is a module-level def, and each module-level def calling
    one of those."""
    module = names.module
    found = set(bound)
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and module.defs.get(function.name) is function:
        found.add(function.name)
    defs = [d for d in module.defs.values() if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))]
    calls = {id(d): _called_names(own_nodes(d)) for d in defs}
    changed = bool(found)
    while changed:
        changed = False
        for d in defs:
            if d.name not in found and calls[id(d)] & found:
                found.add(d.name)
                changed = True
    return frozenset(found)


def module_level_calls(running: frozenset[str], names: Names) -> list[ast.Call]:
    """The calls, in module-level code (not in defs or classes), of one of the `running` names."""
    body = [s for s in names.module.node.body if s.__class__ not in _DEFINITIONS]
    return [
        node for node in nodes_of_classes(body, _CALL, _DEFINITIONS)
        if isinstance(node.func, ast.Name) and node.func.id in running
    ]


def called_around(store: ast.stmt, calls: list[ast.Call], after: int, names: Names) -> bool:
    """Whether a call after line `after` runs before the module-level `store` and another after
    it, or a module-level loop holds both the store and a call."""
    top = _top_statement(store, names)
    if isinstance(top, (ast.For, ast.AsyncFor, ast.While)) and any(_top_statement(c, names) is top for c in calls):
        return True
    return any(after < c.lineno < store.lineno for c in calls) and any(c.lineno > store.lineno for c in calls)


def _called_names(nodes: Iterable[ast.AST]) -> set[str]:
    return {n.func.id for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def _top_statement(node: ast.AST, names: Names) -> ast.AST:
    parents = names.parents
    module = names.module.node
    while id(node) in parents and parents[id(node)] is not module:
        node = parents[id(node)]
    return node
