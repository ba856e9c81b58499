"""Locals a jitted nested function reads, rebound by the function around it between two calls.

A function jitted inside another one (`g = jax.jit(loss)`, `loss` reading the local `a`) reads
`a` when it is traced, at its first call: the compiled program keeps that value. When the
enclosing function calls `g`, then assigns `a` again, then calls `g` once more (in that order
in its body), the second call runs the program traced with the old value; so does a new
`jax.jit(loss)` of the same function, whose traces JAX caches with the function. An assignment
before the first call is fine, and so are calls after the name is bound to a jit of another
function (`g = jax.jit(lambda x: ...)` again, a `def loss` run anew and jitted), and a name the
jitted function reads only in assertions (`assert python_should_run`): a probe of whether
Python runs, which the compiled program never needs.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jaxlint.analysis.engine.names import FUNCTION_TYPES, Names
from jaxlint.analysis.engine.walk import (
    nodes_run_with,
    own_statements,
    spans,
    target_names,
)
from jaxlint.analysis.tracing.tracing import TracedFunction


@dataclass(frozen=True)
class StaleClosure:
    read: ast.Name  # the read in the jitted function
    assignment: ast.stmt  # the enclosing function's assignment between two calls
    call: ast.Call  # the call before it
    callable_name: str


def stale_closures(names: Names, roots: list[TracedFunction], assertions: list[ast.AST]) -> list[StaleClosure]:
    """`assertions`: the module's assertion statements and calls (`Effects.assertions`)."""
    found = []
    probes: set[int] | None = None  # every node inside an assertion, found when first needed
    for root in roots:
        fn = root.node
        outer = names.parent_function.get(id(fn))
        if root.jit is None or not isinstance(outer, FUNCTION_TYPES) or isinstance(outer, ast.Lambda):
            continue
        callable_name = root.bound_name or getattr(fn, "name", None)
        closed = set(names.closed_over(fn)) & _locals(outer, names)
        if callable_name is None or not closed:
            continue
        order = _events(outer, root, callable_name, closed, names)
        for name in sorted(closed):
            stale = _between_calls(order, name)
            if stale is not None:
                if probes is None:
                    probes = {id(node) for assertion in assertions for node in ast.walk(assertion)}
                read = _first_read(fn, name, probes)
                if read is not None:
                    found.append(StaleClosure(read, stale[1], stale[0], callable_name))
    return found


def _locals(outer: ast.AST, names: Names) -> set[str]:
    scope = names.scopes[id(outer)]
    return set(scope.assigned) | scope.other


def _events(outer, root: TracedFunction, callable_name: str, closed: set[str], names: Names) -> list[tuple]:
    """In source order, in the enclosing function's own body: the statement that binds this jit
    ("bind"), definitions of a new function of the jitted function's name ("redef"), later
    bindings of the jit's name to a jit of that name ("rejit": the same function, whose trace
    JAX keeps, unless redefined) or to anything else ("other": later calls are not to this
    jit), calls of the name, and assignments of the closed-over names."""
    events = []
    for node in nodes_run_with(outer.body):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == callable_name:
            events.append(((node.lineno, node.col_offset), "call", node))
    scope = names.scopes[id(outer)]
    for statement in own_statements(outer.body):
        # A statement binds once it has evaluated its value: where it ends.
        at = (statement.end_lineno or statement.lineno, statement.end_col_offset or 0)
        if root.site is not None and spans(statement, root.site) and not isinstance(statement, ast.If):
            events.append((at, "bind", statement))
            continue
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if statement.name == callable_name:
                events.append((at, "other", statement))
            elif statement.name == getattr(root.node, "name", None):
                events.append((at, "redef", statement))  # a new function of the same name
        if not isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        bound = {name for target in targets for name in target_names(target)}
        if callable_name in bound:
            same = _jit_of(statement.value, root.node, names, scope)
            events.append((at, "rejit" if same else "other", statement))
        for closed_name in bound & closed:
            events.append((at, closed_name, statement))
    return sorted(events, key=lambda event: event[0])


def _jit_of(value: ast.AST | None, fn, names: Names, scope) -> bool:
    """`jax.jit(f)` (any transformation of a name) with `f` naming the function `fn`."""
    return (
        isinstance(value, ast.Call) and bool(value.args) and isinstance(value.args[0], ast.Name)
        and names.definition(value.args[0], scope) is fn
    )


def _between_calls(events: list[tuple], name: str):
    """The first (call, assignment of `name`) after this jit is bound, with a later call of it."""
    active = redefined = False
    last_call = pending = None
    for _, kind, node in events:
        if kind == "bind":
            active, redefined, last_call, pending = True, False, None, None
        elif kind == "redef":
            redefined = True
        elif kind == "other" or kind == "rejit" and redefined:
            active = False  # bound to a jit of another function: later calls are not to this one
        elif not active:
            continue
        elif kind == "call":
            if pending is not None:
                return pending
            last_call = node
        elif kind == name and last_call is not None and pending is None:
            pending = (last_call, node)
    return None


def _first_read(fn, name: str, probes: set[int]) -> ast.Name | None:
    """The first read of `name` in the jitted function's own body; None when every read of it
    sits in an assertion (`probes`)."""
    body = [fn.body] if isinstance(fn, ast.Lambda) else fn.body
    used = [
        node for node in nodes_run_with(body)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) and id(node) not in probes
    ]
    return min(used, key=lambda node: (node.lineno, node.col_offset)) if used else None
