"""Partials only traced for shapes: `functools.partial(f, ..., key)` fixes arguments, it runs
nothing, so the keys it is given are drawn where the partial is called. Handed only to
`jax.eval_shape` (or `jax.make_jaxpr`), or to a transformation whose result is only lowered or
shape-evaluated (`jax.jit(p, ...).eval_shape()`, `.lower(...)`), it is never called for its
values: the keys draw nothing (`jax.eval_shape(functools.partial(model.init, key), x)`)."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.knowledge import random_api as api

_PARTIAL = "functools.partial"
# Methods of a transformed function that trace or compile it without running it.
_NOT_RUNNING = frozenset({"eval_shape", "lower", "trace"})


def only_traced_for_shapes(call: ast.Call, fn: ast.AST, names: Names) -> bool:
    """Whether `call` is a `functools.partial` that `fn` only traces for shapes: handed straight
    to such a use, or bound once to a name whose every read is one."""
    if names.qualname(call.func) != _PARTIAL:
        return False
    parents = names.parents
    if _shape_use(call, parents, names):
        return True
    statement = parents.get(id(call))
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
        return False
    name = statement.targets[0].id
    scope = names.scope_of(fn)
    if len(scope.assigned.get(name, ())) != 1 or name in scope.other or name in scope.params:
        return False
    reads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return bool(reads) and all(_shape_use(read, parents, names) for read in reads)


def _shape_use(expr: ast.AST, parents: dict[int, ast.AST], names: Names) -> bool:
    """`expr` as the function `jax.eval_shape` traces, or transformed and then only lowered or
    shape-evaluated."""
    parent = parents.get(id(expr))
    if not (isinstance(parent, ast.Call) and parent.args and parent.args[0] is expr):
        return False
    callee = api.public(names.qualname(parent.func))
    if callee in api.SHAPE_ONLY:
        return True
    if callee not in api.PRESERVING_TRANSFORMS:
        return False
    method = parents.get(id(parent))
    return (
        isinstance(method, ast.Attribute) and method.attr in _NOT_RUNNING
        and isinstance(parents.get(id(method)), ast.Call) and parents[id(method)].func is method
    )
