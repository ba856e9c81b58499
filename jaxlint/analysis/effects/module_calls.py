"""Which module-level statements run a jitted function: whether a global rebound after its
definition can be stale in it.

JAX reads a global when it traces, at the first call, and keeps that value. A rebinding of the
global matters only when a call traced the function before it and a call runs it after it (a
notebook that defines a jitted function, uses it, rebinds the global in a later cell and never
calls the function again keeps nothing stale; a module that rebinds before any call has the new
value traced). The module-level calls that run the function are those the module's resolver
says run its body (`Callees.body_run`: by its name, a name a transformation of it is bound to,
a method, a forwarder), or run a function of the module that makes such a call, transitively.
A module-level loop that both rebinds and calls runs the call after the rebinding on its next
round.
"""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.names import FunctionNode, Names, Scope
from jaxlint.analysis.tracing.callees import Callees


Runners = dict[int, list[tuple[ast.Call, Scope]]]  # id(function) -> the calls that run its body


def runners(callees: Callees) -> Runners:
    """Each function of the module that some call runs, with those calls and their scopes."""
    found: Runners = {}
    for call, scope in callees.names.calls:
        body = callees.body_run(call.func)
        if body is not None:
            found.setdefault(id(body), []).append((call, scope))
    return found


def running_calls(function: FunctionNode, runners: Runners) -> list[ast.Call]:
    """The calls, in module-level code (not in defs or classes), that run `function`, directly or
    through the functions of the module they run."""
    found: list[ast.Call] = []
    seen = {id(function)}
    stack = [function]
    while stack:
        for call, scope in runners.get(id(stack.pop()), ()):
            if scope.kind == "module":
                found.append(call)
            elif scope.kind == "function" and id(scope.node) not in seen:
                seen.add(id(scope.node))
                stack.append(scope.node)
    return found


def called_around(store: ast.stmt, calls: list[ast.Call], after: int, names: Names) -> bool:
    """Whether a call after line `after` runs before the module-level `store` and another after
    it, or a module-level loop holds both the store and a call."""
    top = _top_statement(store, names)
    if isinstance(top, (ast.For, ast.AsyncFor, ast.While)) and any(_top_statement(c, names) is top for c in calls):
        return True
    return any(after < c.lineno < store.lineno for c in calls) and any(c.lineno > store.lineno for c in calls)


def _top_statement(node: ast.AST, names: Names) -> ast.AST:
    parents = names.parents
    module = names.module.node
    while id(node) in parents and parents[id(node)] is not module:
        node = parents[id(node)]
    return node
