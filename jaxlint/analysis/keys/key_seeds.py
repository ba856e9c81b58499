"""Where a key made from a constant seed draws the same numbers on every step.

A constant-seed key is harmless in code that runs once, and in a loop whose draws are meant
to repeat (a fixed evaluation key each epoch).  It is a bug where the code that makes it
runs once per step of something that is meant to change: its draws feed state that the
loop carries into its next iteration (`x = x + noise`, `params = update(params, noisy)`),
it sits in a `lax.scan`/`fori_loop`/`while_loop` body, in a jit-compiled step function (one
that returns an update of its own parameter, `w - lr * g`), or in a model's forward pass.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jaxlint.analysis.engine.names import FUNCTION_TYPES, FunctionNode, Names
from jaxlint.analysis.engine.walk import body_nodes, children, target_names

# Calls that return the next state from the current one (optax, Flax `TrainState`).
_STATE_UPDATES = frozenset({"optax.apply_updates"})
_STATE_UPDATE_METHODS = frozenset({"apply_gradients", "replace"})


@dataclass(frozen=True)
class Candidate:
    call: ast.Call  # `jax.random.key(0)`
    function: FunctionNode | None
    loop: ast.AST | None  # the innermost enclosing loop that steps


def steps(loop: ast.AST, names: Names) -> bool:
    """A loop that steps (a `while`, `range`, a data iterator), not one over a fixed set of configurations."""
    if isinstance(loop, ast.While):
        return True
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    it = loop.iter
    while isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("enumerate", "zip") and it.args:
        it = it.args[0]
    if isinstance(it, ast.Name):
        values = names.assignments(it)
        if len(values) == 1:
            it = values[0]
    if isinstance(it, (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.ListComp, ast.GeneratorExp, ast.Constant)):
        return False
    if isinstance(it, ast.Call):
        func = it.func
        if isinstance(func, ast.Attribute) and func.attr in ("items", "keys", "values", "product", "permutations", "combinations"):
            return False
    return True


def feeds_carried_state(loop: ast.AST, source: ast.AST) -> bool:
    """Whether a value computed from `source` (an expression in the loop) reaches a name the
    loop carries into its next iteration: one read in the body before the body rebinds it, or
    updated from itself (`x = f(x, noise)`, `total += noise`)."""
    body = list(loop.body) if isinstance(loop, (ast.For, ast.AsyncFor, ast.While)) else []
    assigns: list[tuple[list[str], ast.AST, ast.stmt]] = []
    for stmt in _statements(body):
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            assigns.append(([n for t in targets for n in target_names(t)], stmt.value, stmt))
    loop_targets = set(target_names(loop.target)) if isinstance(loop, (ast.For, ast.AsyncFor)) else set()
    tainted: set[str] = set()
    for _ in range(2):
        for targets, value, _stmt in assigns:
            if _contains(value, source) or _reads(value) & tainted:
                tainted.update(targets)
    for targets, value, stmt in assigns:
        for name in set(targets) & tainted - loop_targets:
            if isinstance(stmt, ast.AugAssign) or name in _reads(value):
                return True
            first = min(s.lineno for t, _, s in assigns if name in t)
            if any(
                isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and n.lineno < first
                for n in _nodes(body)
            ):
                return True
    return False


def is_step(fn: FunctionNode, names: Names) -> bool:
    """A function that returns an update of one of its own parameters: it maps a state to the next."""
    if isinstance(fn, ast.Lambda):
        return False
    args = fn.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    updated: set[str] = set()
    nodes = body_nodes(fn)
    for node in nodes:
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in params:
            updated.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names_bound = {n for t in node.targets for n in target_names(t)}
            for name in names_bound & params:
                if _updates(node.value, name, names):
                    updated.add(name)
    for node in nodes:
        if isinstance(node, ast.Return) and node.value is not None:
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            for value in values:
                if isinstance(value, ast.Name) and value.id in updated:
                    return True
                if any(_updates(value, name, names) for name in params):
                    return True
    return False


def _updates(value: ast.AST, name: str, names: Names) -> bool:
    """`name - lr * g`, `optax.apply_updates(name, u)`, `name.apply_gradients(...)`: the next `name`."""
    if isinstance(value, ast.BinOp):
        return any(isinstance(side, ast.Name) and side.id == name for side in (value.left, value.right))
    if isinstance(value, ast.Call):
        func = value.func
        if names.qualname(func) in _STATE_UPDATES and value.args:
            first = value.args[0]
            return isinstance(first, ast.Name) and first.id == name
        if isinstance(func, ast.Attribute) and func.attr in _STATE_UPDATE_METHODS:
            return isinstance(func.value, ast.Name) and func.value.id == name
    return False


def _statements(body: list[ast.stmt]):
    """Every statement of a loop body, nested blocks included, nested functions excluded."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (*FUNCTION_TYPES, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            stack.extend(reversed(getattr(stmt, field, []) or []))
        for handler in getattr(stmt, "handlers", []) or []:
            stack.extend(reversed(handler.body))


def _nodes(body: list[ast.stmt]):
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        for child in children(node):
            if not isinstance(child, (*FUNCTION_TYPES, ast.ClassDef)):
                stack.append(child)


def _reads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _contains(node: ast.AST, target: ast.AST) -> bool:
    return any(n is target for n in ast.walk(node))
