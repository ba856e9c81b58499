"""Uses of one key that are deliberate, not reuses: two computations fed one key and compared,
and one permutation drawn for every array a loop goes through (rows kept aligned)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jaxlint.analysis.engine.walk import attribute_path, spans, walk
from jaxlint.analysis.keys.key_state import Use
from jaxlint.analysis.keys.key_syntax import bind, target_names
from jaxlint.analysis.knowledge import random_api as api

if TYPE_CHECKING:
    from jaxlint.analysis.engine.names import Names
    from jaxlint.analysis.keys.key_names import KeyNames


_CHECKS = (ast.Assert, ast.Compare, ast.Call)
_ASSIGNMENTS = (ast.Assign, ast.AnnAssign)


def compared(keynames: KeyNames, fn: ast.AST, first: Use, second: Use) -> bool:
    """Whether the results of two consumptions meet in one comparison or assertion.

    Feeding one key to two implementations and checking that they agree is the point of
    such code, not a reuse.
    """
    results_first, results_second = _results(keynames, fn, first.call), _results(keynames, fn, second.call)
    for node in keynames.nodes_of(fn, _CHECKS):
        checked = None
        if node.__class__ is ast.Assert:
            checked = node.test
        elif node.__class__ is ast.Compare:
            checked = node
        else:
            func = node.func
            label = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if label.startswith(("assert", "check")):
                checked = node
        if checked is None:
            continue
        if checked.__class__ is ast.Compare:
            # Two sides that each hold a result: a comparison with a constant (`out == 0`) checks
            # one draw, not that two agree.
            sides = [_mentioned(side) for side in (checked.left, *checked.comparators)]
            if any(
                a & results_first and b & results_second
                for i, a in enumerate(sides) for j, b in enumerate(sides) if i != j
            ):
                return True
            continue
        mentioned = _mentioned(checked)
        if mentioned & results_first and mentioned & results_second:
            return True
    return False


def _mentioned(node: ast.AST) -> set:
    """The names, key paths and node ids an expression mentions."""
    mentioned: set = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name):
            mentioned.add(inner.id)
        elif isinstance(inner, ast.Attribute):
            mentioned.add(attribute_path(inner))
        mentioned.add(id(inner))
    return mentioned


def aligned_permutation(keynames: KeyNames, fn: ast.AST, use: Use) -> bool:
    """A permutation (or `choice`) drawn with one key for each array a loop goes through
    (`[jax.random.permutation(key, a) for a in (x, y)]`), or a function of the module that draws
    only positions from its key (a permutation, a `randint` crop offset) handed each array with
    that key: every iteration reorders or crops a different array the same way, which keeps them
    aligned, as one permutation for every leaf of a tree does. A loop that reorders the same data
    on every pass is not this."""
    names = keynames.names
    call = use.call
    if not isinstance(call, ast.Call):
        return False
    if api.public(names.qualname(call.func)) in api.REORDERING:
        operand = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg in ("x", "a")), None
        )
    elif _draws_positions(keynames, call, use.node):
        operand = ast.Tuple([a for a in (*call.args, *(k.value for k in call.keywords)) if a is not use.node], ast.Load())
    else:
        return False
    if operand is None:
        return False
    # The innermost loop around the call (whose passes are the ones run with one key): its target.
    innermost, targets = None, []
    for node in walk(fn):
        if isinstance(node, (ast.For, ast.AsyncFor)):
            bound_there = [node.target]
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            bound_there = [g.target for g in node.generators]
        else:
            continue
        if any(inner is call for inner in walk(node)) and (innermost is None or spans(innermost, node)):
            innermost, targets = node, bound_there
    bound = {n.id for t in targets for n in walk(t) if isinstance(n, ast.Name)}
    return any(isinstance(n, ast.Name) and n.id in bound for n in walk(operand))


def _draws_positions(keynames: KeyNames, call: ast.Call, key: ast.AST) -> bool:
    """Whether `call` runs a function of the module (mapped with `jax.vmap` or not) whose every
    draw from the parameter `key` binds draws positions (`api.POSITION_DRAWS`)."""
    target = keynames.target(call.func)
    callee = target.function if target is not None else keynames.names.definition(call.func)  # a `jax.vmap`ped one too
    if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    param = next((p for a, p in bind(callee, call, target.implicit if target else 0) if a is key), None)
    if param is None:
        return False
    draws = [
        c for c in keynames.nodes_of(callee, (ast.Call,))
        if api.public(keynames.names.qualname(c.func)) in api.KEY_POSITION
        and isinstance(api.key_argument(c), ast.Name) and api.key_argument(c).id == param
    ]
    return bool(draws) and all(api.public(keynames.names.qualname(c.func)) in api.POSITION_DRAWS for c in draws)


def _results(keynames: KeyNames, fn: ast.AST, call: ast.AST) -> set[object]:
    """The call itself and the names its statement binds from it (`w.x` for `w.x = ...`: the
    object `w` around it is no result)."""
    found: set[object] = {id(call)}
    for node in keynames.nodes_of(fn, _ASSIGNMENTS):
        if node.value is not None:
            if any(inner is call for inner in walk(node.value)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    found.update(target_names(target))
    return found
