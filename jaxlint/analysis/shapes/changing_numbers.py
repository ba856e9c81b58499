"""Numbers that change from one iteration of a Python loop to the next: the loop index, a value
updated or recomputed in the loop, a float swept over a range, a conversion of one of these,
the length of a collection the loop grows. Passed as a static argument, each is a new key of
the compilation cache on every iteration. The size of each item a loop visits (`len(batch)`)
is not one: equal-sized batches give one value.

`module` is the module's facts: what `loops` says changes in a loop, and qualified names.
"""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.loop_variance import ASSIGN, AUGMENT, MUTATE
from jaxlint.analysis.engine.walk import walk

_NUMERIC_BUILTINS = frozenset({"builtins.len", "builtins.float", "builtins.int", "builtins.round", "builtins.abs"})


def changing_number(arg: ast.AST, loop: ast.AST, module, seen: frozenset = frozenset()) -> str | None:
    """Why an argument is a number that changes every iteration, or None when it need not be."""
    if isinstance(arg, ast.Name):
        if arg.id in seen:
            return None
        seen = seen | {arg.id}
        if _is_range_index(arg.id, loop, module):
            return f"the loop index `{arg.id}`"
        floats = _float_sweep(arg.id, loop, module)
        if floats:
            return f"`{arg.id}`, a float swept over {floats}"
        for definition in module.loops.definitions(arg.id, loop, arg):
            node = definition.node
            if definition.kind == AUGMENT and _numeric_op(node.op):
                return f"`{arg.id}`, updated on every iteration (`{ast.unparse(node)}`, line {node.lineno})"
            if definition.kind == ASSIGN and isinstance(node, ast.Assign):
                value = definition.value
                if _self_update(value, arg.id) or _numeric_expression(value, loop, module, seen):
                    return f"`{arg.id}`, recomputed on every iteration (`{ast.unparse(node)}`, line {node.lineno})"
        return None
    if _numeric_expression(arg, loop, module, seen):
        return f"`{ast.unparse(arg)}`, a number that changes on every iteration"
    return None


_FLOAT_RANGES = frozenset({
    "numpy.linspace", "numpy.logspace", "numpy.geomspace", "jax.numpy.linspace", "jax.numpy.logspace",
    "jax.numpy.geomspace",
})


def _float_sweep(name: str, loop: ast.AST, module) -> str | None:
    """`for lr in (0.1, 0.01)`, `for i, lr in enumerate(np.logspace(-4, -1, 8))`: a float target."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return None
    it, target = loop.iter, loop.target
    if (
        isinstance(it, ast.Call)
        and module.qualname(it.func) == "builtins.enumerate"
        and it.args
        and isinstance(target, ast.Tuple)
        and len(target.elts) == 2
    ):
        it, target = it.args[0], target.elts[1]
    if not _is(target, name):
        return None
    if isinstance(it, ast.Name):
        values = module.names.assignments(it)
        if len(values) != 1:
            return None
        it = values[0]
    if isinstance(it, ast.Call) and module.qualname(it.func) in _FLOAT_RANGES:
        return f"`{ast.unparse(it)}`"
    if not isinstance(it, (ast.Tuple, ast.List)) or len(it.elts) < 2:
        return None
    values = []
    for element in it.elts:
        node = element.operand if isinstance(element, ast.UnaryOp) and isinstance(element.op, ast.USub) else element
        if not (isinstance(node, ast.Constant) and isinstance(node.value, float)):
            return None
        values.append(ast.unparse(element))
    return ", ".join(values)


def _numeric_expression(expr: ast.AST, loop: ast.AST, module, seen: frozenset = frozenset()) -> bool:
    """A number that changes every iteration: built from one that does (a loop index, a value
    updated in the loop, a float sweep, a conversion of a changing value, the length of a
    collection that grows in the loop). The size of each item a loop visits (`len(batch)`,
    `batch.shape[0]`) is not one: equal-sized batches give one value."""
    if not module.varies_in_loop(expr, loop):
        return False
    if isinstance(expr, ast.BinOp) and _numeric_op(expr.op):
        if _stringy(expr):
            return False
        return any(_numeric_expression(side, loop, module, seen) for side in (expr.left, expr.right))
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return _numeric_expression(expr.operand, loop, module, seen)
    if isinstance(expr, ast.Call) and module.qualname(expr.func) == "builtins.len":
        return len(expr.args) == 1 and isinstance(expr.args[0], ast.Name) and _grows_in_loop(expr.args[0], loop, module)
    if isinstance(expr, ast.Call) and module.qualname(expr.func) in _NUMERIC_BUILTINS:
        return True
    if isinstance(expr, ast.Name):
        return changing_number(expr, loop, module, seen) is not None
    return False


def _self_update(value: ast.AST, name: str) -> bool:
    """`lr = lr / 2`: arithmetic on the name's own previous value."""
    return (
        isinstance(value, ast.BinOp)
        and _numeric_op(value.op)
        and not _stringy(value)
        and any(_is(n, name) for n in walk(value))
    )


_GROWING_METHODS = frozenset({"append", "extend", "insert", "add", "update"})


def _grows_in_loop(name: ast.Name, loop: ast.AST, module) -> bool:
    """What `name` holds was changed in the loop by `name.append(...)`, `name += ...` or
    `name = f(name, ...)`."""
    for definition in module.loops.definitions(name.id, loop, name):
        node = definition.node
        if definition.kind == MUTATE and isinstance(node, ast.Call) and node.func.attr in _GROWING_METHODS:
            return True
        if definition.kind == AUGMENT:
            return True
        if definition.kind == ASSIGN and isinstance(node, ast.Assign) and any(_is(n, name.id) for n in walk(definition.value)):
            return True
    return False


def _numeric_op(op: ast.operator) -> bool:
    return isinstance(op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Pow, ast.Mod))


def _stringy(expr: ast.AST) -> bool:
    return any(isinstance(n, (ast.JoinedStr, ast.Constant)) and isinstance(getattr(n, "value", None), str) for n in walk(expr))


def _is_range_index(name: str, loop: ast.AST, module) -> bool:
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    it, target = loop.iter, loop.target
    if isinstance(it, ast.Call) and module.qualname(it.func) == "builtins.enumerate":
        return isinstance(target, ast.Tuple) and target.elts and _is(target.elts[0], name)
    if isinstance(it, ast.Call) and module.qualname(it.func) == "builtins.range":
        return _is(target, name)
    return False


def _is(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name
