"""Which parameter of the function around it a nested function's parameter always receives.

`def project(sys, x: Transform)` with `@jax.vmap def op(x): ...` inside, called only as
`op(x)` (or `jax.vmap(op)(x)`): `op`'s `x` is always `project`'s `x`, so what `project`
declares of it (its class) holds in `op` too. A transformation maps over the leaves of what
it is given and keeps the pytree's structure, so a transformed nested function (its
decorators all JAX transformations, or a transformation called at once on it) receives an
instance of the same class. A nested function whose name is read anywhere else (handed to
another function, returned, stored) may be called elsewhere with anything, and receives
nothing known.
"""

from __future__ import annotations

import ast
from weakref import WeakKeyDictionary

from jaxlint.analysis.engine.call_index import calls_through
from jaxlint.analysis.engine.names import FunctionNode, Names
from jaxlint.analysis.engine.walk import walk
from jaxlint.analysis.knowledge import jax_api
from jaxlint.analysis.tracing.static_arguments import positional_params

Forwarded = tuple[FunctionNode, ast.arg]  # the enclosing function, and its parameter


# Answers per module, kept as long as its `Names`: a function reads its parameters' fields many times.
_ANSWERS: WeakKeyDictionary[Names, dict[tuple[int, str], Forwarded | None]] = WeakKeyDictionary()


def forwarded_parameter(fn: FunctionNode, param: ast.arg, names: Names) -> Forwarded | None:
    """The enclosing function and its parameter that every call of the nested `fn` passes, unchanged
    (a bare name), for `param`; None when some call passes anything else, or `fn` escapes."""
    answers = _ANSWERS.setdefault(names, {})
    key = (id(fn), param.arg)
    if key not in answers:
        answers[key] = _forwarded(fn, param, names)
    return answers[key]


def _forwarded(fn: FunctionNode, param: ast.arg, names: Names) -> Forwarded | None:
    if isinstance(fn, ast.Lambda) or fn.decorator_list and not all(_transform(d, fn, names) for d in fn.decorator_list):
        return None
    outer = names.enclosing_scope(fn)
    if outer.kind != "function" or isinstance(outer.node, ast.Lambda):
        return None
    outer_params = {a.arg: a for a in (*positional_params(outer.node), *outer.node.args.kwonlyargs)}
    positional = positional_params(fn)
    index = positional.index(param) if param in positional else None
    calls = [
        (call, scope, call.func) for call, scope in calls_through(names, [fn.name])
        if isinstance(call.func, ast.Name) and names.definition(call.func, scope) is fn
    ]
    calls += [
        (node, names.read_scope[id(node.func.args[0])], node.func.args[0]) for node in walk(outer.node)
        if _transformed_at_once(node, fn, names)
    ]
    if not calls or _escapes(fn, outer.node, {id(name) for _, _, name in calls}):
        return None
    passed = set()
    for call, scope, _ in calls:
        arg = _argument(call, index, param.arg)
        if not isinstance(arg, ast.Name) or arg.id not in outer_params or names.lookup(arg.id, scope) is not outer:
            return None
        passed.add(arg.id)
    if len(passed) != 1:
        return None
    return outer.node, outer_params[passed.pop()]


def _transformed_at_once(node: ast.AST, fn: FunctionNode, names: Names) -> bool:
    """`jax.vmap(fn)(...)`: a call of what a JAX transformation makes of `fn` alone."""
    inner = node.func if isinstance(node, ast.Call) else None
    if not (isinstance(inner, ast.Call) and len(inner.args) == 1 and isinstance(inner.args[0], ast.Name)):
        return False
    scope = names.read_scope.get(id(inner.args[0]))
    return (
        scope is not None and names.definition(inner.args[0], scope) is fn
        and names.qualname(inner.func, scope) in jax_api.TRANSFORMS
    )


def _transform(decorator: ast.expr, fn: FunctionNode, names: Names) -> bool:
    return names.qualname(decorator, names.enclosing_scope(fn)) in jax_api.TRANSFORMS


def _argument(call: ast.Call, index: int | None, name: str) -> ast.expr | None:
    """What a call passes for the parameter at `index` (positional) or named `name`; None where a
    `*` or `**` argument may pass it instead."""
    if any(isinstance(a, ast.Starred) for a in call.args[: (index or 0) + 1]):
        return None
    if index is not None and index < len(call.args):
        return call.args[index]
    for keyword in call.keywords:
        if keyword.arg is None:
            return None
        if keyword.arg == name:
            return keyword.value
    return None


def _escapes(fn: FunctionNode, outer: FunctionNode, callees: set[int]) -> bool:
    """Whether the enclosing function reads `fn`'s name other than as a callee of `callees`."""
    return any(
        isinstance(node, ast.Name) and node.id == fn.name and id(node) not in callees
        and isinstance(node.ctx, ast.Load)
        for node in walk(outer)
    )
