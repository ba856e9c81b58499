"""Uses of one key that are deliberate, not reuses: two computations fed one key and compared,
one permutation drawn for several arrays (rows kept aligned), in a loop over them or one after
another, and draws that exclusive masks keep at most one of."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jaxlint.analysis.engine.walk import attribute_path, own_nodes, spans, walk
from jaxlint.analysis.keys.key_state import Use
from jaxlint.analysis.keys.key_syntax import bind, target_names
from jaxlint.analysis.knowledge import random_api as api

if TYPE_CHECKING:
    from jaxlint.analysis.engine.names import Names
    from jaxlint.analysis.keys.key_names import KeyNames


_CHECKS = (ast.Assert, ast.Compare, ast.Call)
_ASSIGNMENTS = (ast.Assign, ast.AnnAssign)
_VALUED = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.Expr)


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
        operand = _reordered_operand(call)
    else:
        placed = _position_operands(keynames, call, use.node)
        if placed is None:
            return False
        operand = ast.Tuple(placed, ast.Load())
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


def aligned_reorders(keynames: KeyNames, first: Use, second: Use) -> bool:
    """Two permutations of different arrays with one key (`permutation(key, x)`, then
    `permutation(key, y)`; or a function of the module that does nothing with the key but
    permute, called on each, or mapped over a tree): both arrays get the same order, which keeps
    their rows aligned. That is why the key is used twice; drawing a second order would break it."""
    a, b = _reordered(keynames, first), _reordered(keynames, second)
    return a is not None and b is not None and ast.dump(a) != ast.dump(b)


def aligned_positions(keynames: KeyNames, first: Use, second: Use) -> bool:
    """Two calls of one function of the module that draws only positions from its key (a crop
    offset, an order: `_position_operands`), each handed a different array with one key
    (`crop(key, image)`, then `crop(key, mask)`): both arrays get the same positions, which keeps
    them aligned, as a loop handing each array that function with one key does (JAX203)."""
    a, b = first.call, second.call
    if not (isinstance(a, ast.Call) and isinstance(b, ast.Call)) or a is b:
        return False
    callee = _callee(keynames, a)[0]
    if callee is None or callee is not _callee(keynames, b)[0]:
        return False
    placed_a, placed_b = _position_operands(keynames, a, first.node), _position_operands(keynames, b, second.node)
    if not placed_a or not placed_b:
        return False
    return ast.dump(ast.Tuple(placed_a, ast.Load())) != ast.dump(ast.Tuple(placed_b, ast.Load()))


def _callee(keynames: KeyNames, call: ast.Call) -> tuple[ast.AST | None, int]:
    """The def of the module a call runs, a `jax.vmap`ped one too, and the parameters the call
    binds implicitly."""
    target = keynames.target(call.func)
    if target is not None:
        return target.function, target.implicit
    return keynames.names.definition(call.func), 0


def exclusive_masks(keynames: KeyNames, fn: ast.AST, first: Use, second: Use) -> bool:
    """Two draws each multiplied by a test of one value for a different constant
    (`randint(k, ...) * (kind == 0)`, then `randint(k, ...) * (kind == 1)`): at most one of the
    products keeps its draw, the branchless form of `if kind == 0: ... elif kind == 1: ...`."""
    a, b = _masks(keynames, fn, first.call), _masks(keynames, fn, second.call)
    return any(subject == other and value != value_b for subject, value in a for other, value_b in b)


def _masks(keynames: KeyNames, fn: ast.AST, call: ast.AST) -> list[tuple[str, object]]:
    """The equality tests with a constant (`kind == 0`: ("kind", 0)) that the value of the
    statement holding `call` is a product of, with the draw as another factor."""
    statement = next(
        (s for s in keynames.nodes_of(fn, _VALUED) if s.value is not None and any(n is call for n in walk(s.value))),
        None,
    )
    if statement is None:
        return []
    factors = _factors(statement.value)
    if sum(any(n is call for n in walk(f)) for f in factors) != 1:
        return []
    masks = []
    for factor in factors:
        if isinstance(factor, ast.Call) and isinstance(factor.func, ast.Attribute) and factor.func.attr == "astype":
            factor = factor.func.value
        if isinstance(factor, ast.Compare) and len(factor.ops) == 1 and isinstance(factor.ops[0], ast.Eq):
            left, right = factor.left, factor.comparators[0]
            if isinstance(right, ast.Constant) and not isinstance(left, ast.Constant):
                masks.append((ast.dump(left), right.value))
            elif isinstance(left, ast.Constant) and not isinstance(right, ast.Constant):
                masks.append((ast.dump(right), left.value))
    return masks


def _factors(expr: ast.expr) -> list[ast.expr]:
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        return _factors(expr.left) + _factors(expr.right)
    return [expr]


def _reordered(keynames: KeyNames, use: Use) -> ast.expr | None:
    """What a use of a key permutes: the array of a permutation, or the arguments of a call of a
    function that only permutes with the key (None: the use draws, or permutes a size)."""
    call, names = use.call, keynames.names
    if not isinstance(call, ast.Call):
        return None
    qualname = api.public(names.qualname(call.func))
    if qualname in api.PERMUTING:
        operand = _reordered_operand(call)
        return None if operand is None or isinstance(operand, ast.Constant) else operand
    key_passed = any(arg is use.node for arg in (*call.args, *(k.value for k in call.keywords)))
    if qualname in api.TREE_MAPS:  # `tree_map(shuffle, batch)`, `shuffle` reading the key around it
        fn = keynames.function_of(call.args[0]) if call.args else None
        if fn is None or key_passed or not isinstance(use.node, ast.Name):
            return None
        param, operands = use.node.id, call.args[1:]
    else:
        target = keynames.target(call.func)
        if target is None:
            return None
        fn = target.function
        if key_passed:
            param = next((p for a, p in target.bind(call).pairs() if a is use.node), None)
        else:  # a nested function reading the key around it
            param = use.node.id if isinstance(use.node, ast.Name) else None
        operands = [a for a in (*call.args, *(k.value for k in call.keywords)) if a is not use.node]
    if param is None or not operands or not only_reorders(names, fn, param, api.PERMUTING):
        return None
    return ast.Tuple(operands, ast.Load())


def _reordered_operand(call: ast.Call) -> ast.expr | None:
    if len(call.args) > 1:
        return call.args[1]
    return next((k.value for k in call.keywords if k.arg in ("x", "a")), None)


def only_reorders(names: Names, fn: ast.AST, name: str, kinds: frozenset[str] = api.REORDERING) -> bool:
    """Every read of `name` in the function's own body is the key of a draw of these `kinds`
    that reorders an array."""
    keys = {
        id(key) for node in own_nodes(fn) if isinstance(node, ast.Call)
        and api.public(names.qualname(node.func)) in kinds
        and not isinstance(_reordered_operand(node), ast.Constant)
        for key in [*node.args[:1], *(k.value for k in node.keywords if k.arg == "key")]
    }
    reads = [n for n in own_nodes(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return bool(reads) and all(id(n) in keys for n in reads)


def _position_operands(keynames: KeyNames, call: ast.Call, key: ast.AST) -> list[ast.expr] | None:
    """Where `call` runs a function of the module (mapped with `jax.vmap` or not) whose every
    draw from the parameter `key` binds draws positions (`api.POSITION_DRAWS`): the arguments
    of the call the positions are drawn in, those bound to the parameters the draws read
    (`choice(key, jnp.arange(board.shape[0]))` reads `board`), or every other argument where
    the draws read none. None for any other call."""
    callee, implicit = _callee(keynames, call)
    if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    binding = bind(callee, call, implicit)
    param = next((p for a, p in binding if a is key), None)
    if param is None:
        return None
    draws = [
        c for c in keynames.nodes_of(callee, (ast.Call,))
        if api.public(keynames.names.qualname(c.func)) in api.KEY_POSITION
        and isinstance(api.key_argument(c), ast.Name) and api.key_argument(c).id == param
    ]
    if not draws or not all(api.public(keynames.names.qualname(c.func)) in api.POSITION_DRAWS for c in draws):
        return None
    read = {
        n.id for c in draws for a in (*c.args, *(k.value for k in c.keywords)) if a is not api.key_argument(c)
        for n in walk(a) if isinstance(n, ast.Name)
    }
    others = [(a, p) for a, p in binding if a is not key]
    placed = [a for a, p in others if p in read]
    return placed if placed else [a for a, _ in others]


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
