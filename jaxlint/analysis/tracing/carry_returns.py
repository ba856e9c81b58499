"""What a loop body's `return` shows of the carry it receives.

`lax.while_loop`, `fori_loop` and `scan` require the carry a body returns to have the structure
of the one it receives (JAX raises otherwise). So where the body returns the carry as a tuple
display, the carry is a tuple of that many items, and an item the body returns as one JAX array
(a call to a JAX array function, or a local name every assignment of which is one) is an array
leaf of the carry on entry too, whatever the initial value's syntax shows.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jaxlint.analysis.engine.lattice import TRACED, TRACED_ARRAY, Trace, Value
from jaxlint.analysis.engine.names import FunctionNode, Names
from jaxlint.analysis.engine.walk import own_nodes
from jaxlint.analysis.knowledge import array_api
from jaxlint.analysis.tracing.tracing import control_flow_bodies

# The loops whose body returns the carry: the body's position and keyword among the call's
# arguments, and where the carry is in what the body returns (None: the whole of it).
_RETURNS_CARRY = {
    "jax.lax.while_loop": (1, "body_fun", None),
    "jax.lax.fori_loop": (2, "body_fun", None),
    "jax.lax.scan": (0, "f", 0),
}


def with_returned_arrays(carry: Value | None, call: ast.Call, callee: str, names: Names) -> Value | None:
    """`carry` (what is known of the carry on entry, None: nothing) with the items the loop's
    body returns as arrays made arrays, where the body shows the carry's length."""
    spec = _RETURNS_CARRY.get(callee)
    if spec is None:
        return carry
    index, keyword, position = spec
    body = call.args[index] if index < len(call.args) else next((k.value for k in call.keywords if k.arg == keyword), None)
    if body is None or any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return carry
    scope = names.read_scope.get(id(body)) if isinstance(body, ast.Name) else None
    shown: list[bool] | None = None
    for fn, bound, passed in control_flow_bodies(call, callee, names, scope):
        if passed is not body or bound.positional or bound.keywords:
            continue
        for items in _returned_carries(fn, position):
            arrays = [_one_array(item, fn, names) for item in items]
            if shown is not None and len(shown) != len(arrays):
                return carry  # returns that disagree: JAX rejects the loop, nothing to learn
            shown = arrays if shown is None else [a or b for a, b in zip(shown, arrays)]
    if shown is None or not any(shown):
        return carry
    known = carry.items if carry is not None and carry.items is not None and len(carry.items) == len(shown) else None
    items = tuple(TRACED_ARRAY if array else (known[k] if known else TRACED) for k, array in enumerate(shown))
    return Value(Trace.TRACED, items=items, not_none=True)


def _returned_carries(fn: FunctionNode, position: int | None) -> Iterator[list[ast.expr]]:
    """The items of each carry `fn` returns as a tuple display (with no `*` item)."""
    returned = [fn.body] if isinstance(fn, ast.Lambda) else [
        n.value for n in own_nodes(fn) if isinstance(n, ast.Return) and n.value is not None
    ]
    for value in returned:
        if position is not None:
            if not isinstance(value, ast.Tuple) or len(value.elts) <= position:
                continue
            value = value.elts[position]
        if isinstance(value, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in value.elts):
            yield value.elts


def _one_array(expr: ast.expr, fn: FunctionNode, names: Names) -> bool:
    """A call that returns one JAX array, or a local name of `fn` bound only by such calls."""
    if isinstance(expr, ast.Call):
        return array_api.array_function(names.qualname(expr.func))
    if not isinstance(expr, ast.Name) or isinstance(fn, ast.Lambda):
        return False
    scope = names.scope_of(fn)
    name = expr.id
    if name in scope.params or name in scope.other or name in scope.globals or name in scope.nonlocals:
        return False
    values = scope.assigned.get(name)
    return bool(values) and all(
        isinstance(v, ast.Call) and array_api.array_function(names.qualname(v.func)) for v in values
    )
