"""Where a key made from a constant seed draws the same numbers on every step.

A constant-seed key is harmless in code that runs once, and in a loop whose draws are meant
to repeat (a fixed evaluation key each epoch).  It is a bug where the code that makes it
runs once per step of something that is meant to change: its draws feed state that the
loop carries into its next iteration (`x = x + noise`, `params = update(params, noisy)`), or
they are what the loop collects (`results.append(...)`) while nothing else the iterations read
changes (the loop's variable unread, nothing carried, every call one that computes from its
arguments): every iteration collects the same values. Or it sits in a `lax.scan`/`fori_loop`/`while_loop` body, in a jit-compiled step function (one
that returns an update of its own parameter, `w - lr * g`), or in a model's forward pass;
but not in the body of a `lax.scan` whose results serve only as example inputs of an `init`
(a dummy trajectory that gives a replay buffer its structure): their numbers decide nothing.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from jaxlint.analysis.engine.call_index import calls_through
from jaxlint.analysis.engine.names import FUNCTION_TYPES, FunctionNode, Names
from jaxlint.analysis.engine.walk import body_nodes, children, target_names
from jaxlint.analysis.keys.key_draws import only_example_inputs
from jaxlint.analysis.keys.key_function_forms import calls_in_loops, returned
from jaxlint.analysis.knowledge import random_api as api

if TYPE_CHECKING:
    from jaxlint.analysis.keys.key_state import ModuleKeys

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


def identical_iterations(loop: ast.AST, source: ast.AST, names: Names, follows: Callable[[ast.Call], bool]) -> bool:
    """Whether every iteration of the loop collects the same values: what is computed from
    `source` is appended to (or stored in) a container from outside the loop or yielded, while
    the body reads neither the loop's variable nor anything an earlier iteration left, and calls
    only what computes from its arguments (JAX, NumPy but its stateful `numpy.random`, builtins,
    functions of the module, the container's own methods)."""
    if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)) or isinstance(loop, ast.While) and not _constant(loop.test):
        return False
    body = list(loop.body)
    nodes = list(_nodes(body))
    loop_targets = set(target_names(loop.target)) if isinstance(loop, (ast.For, ast.AsyncFor)) else set()
    if any(isinstance(n, ast.Name) and n.id in loop_targets and isinstance(n.ctx, ast.Load) for n in nodes):
        return False
    assigns: list[tuple[list[str], ast.AST, ast.stmt]] = []
    for stmt in _statements(body):
        if isinstance(stmt, ast.AugAssign):
            return False  # carried from one iteration to the next
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if not all(isinstance(t, (ast.Name, ast.Tuple, ast.List)) for t in targets):
                return False
            assigns.append(([n for t in targets for n in target_names(t)], stmt.value, stmt))
        elif not isinstance(stmt, (ast.Expr, ast.Pass)):
            return False
    bound = {name for targets, _, _ in assigns for name in targets}
    first = {name: min(s.lineno for t, _, s in assigns if name in t) for name in bound}
    if any(isinstance(n, ast.Name) and n.id in bound and isinstance(n.ctx, ast.Load) and n.lineno < first[n.id] for n in nodes):
        return False  # read before the body binds it: what the previous iteration left
    if not all(_computes(call, names) or follows(call) for call in nodes if isinstance(call, ast.Call)):
        return False
    tainted: set[str] = set()
    for targets, value, _ in assigns:
        if _contains(value, source) or _reads(value) & tainted:
            tainted.update(targets)
    for node in nodes:
        collected = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _COLLECTING:
            holder = node.func.value
            if isinstance(holder, ast.Name) and holder.id not in bound:
                collected = node.args
        elif isinstance(node, (ast.Yield, ast.YieldFrom)) and node.value is not None:
            collected = [node.value]
        if collected and any(_contains(arg, source) or _reads(arg) & tainted for arg in collected):
            return True
    return False


_COLLECTING = frozenset({"append", "extend", "add", "insert"})
# Calls that compute from their arguments alone (a `numpy.random` draw does not).
_COMPUTING = ("jax.", "numpy.", "math.", "builtins.")
# Builtins whose result changes from one call to the next.
_STATEFUL_BUILTINS = frozenset({"builtins.next", "builtins.iter", "builtins.input", "builtins.open"})


def _computes(call: ast.Call, names: Names) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _COLLECTING:
        return True
    qualname = names.qualname(func) or ""
    if qualname.startswith("numpy.random.") or qualname in _STATEFUL_BUILTINS:
        return False
    if qualname.startswith(_COMPUTING):
        return True
    if isinstance(func, ast.Name):
        definition = names.definition(func)
        if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return True
        values = names.assignments(func)
        # A module-level name bound once to a transformation of a function (`jax.jit(vmap(f))`).
        return len(values) == 1 and isinstance(values[0], ast.Call) and (names.qualname(values[0].func) or "").startswith("jax.")
    return False


def _constant(test: ast.AST) -> bool:
    return isinstance(test, ast.Constant) and bool(test.value)


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


def repeats(flow: ModuleKeys, candidate: Candidate) -> str | None:
    """Why the draws of this constant-seed key repeat where they are meant to differ, if they do."""
    call, fn, loop = candidate.call, candidate.function, candidate.loop
    if loop is not None:
        if feeds_carried_state(loop, call):
            return f"inside the loop at line {loop.lineno}: every iteration"
        if identical_iterations(loop, call, flow.names, lambda inner: flow.helper(inner, True) is not None):
            return f"inside the loop at line {loop.lineno}, whose iterations differ in nothing else: every iteration"
        return None
    if fn is None:
        return None
    if id(fn) in flow.loop_bodies and flow.loop_bodies[id(fn)][1] in api.LOOP_PRIMITIVES:
        body_call, primitive = flow.loop_bodies[id(fn)]
        runs = flow.loop_calls.get(id(fn)) or [body_call]
        if all(only_example_inputs(run, _enclosing(flow.names, run), flow.names) for run in runs):
            return None  # a dummy trajectory whose shapes alone build what an `init` makes
        return f"inside a `{api.short(primitive)}` body (line {body_call.lineno}): every iteration"
    name = getattr(fn, "name", "this function")
    site = _called_in_loop(flow, fn)
    if site is not None:
        return f"inside `{name}`, which is called in the loop at line {site.lineno}: every call"
    body = _called_by_loop_body(flow, fn)
    if body is not None:
        body_call, primitive = body
        return (
            f"inside `{name}`, which a `{api.short(primitive)}` body (line {body_call.lineno}) calls: "
            "every iteration"
        )
    if id(fn) in flow.compiled and is_step(fn, flow.names):
        return f"inside the jit-compiled step function `{name}`: every step"
    forward = flow.forward_passes.get(id(fn))
    if forward is not None:
        if forward == name:
            return f"inside the forward pass `{name}` of a model: every step"
        return f"inside `{name}`, which the forward pass `{forward}` of a model runs: every step"
    return None

def _enclosing(names: Names, node: ast.AST) -> ast.AST:
    """The function (or the module) whose code `node` is part of."""
    parent = names.parents.get(id(node))
    while parent is not None and not isinstance(parent, FUNCTION_TYPES):
        parent = names.parents.get(id(parent))
    return parent if parent is not None else names.module.node


def _called_in_loop(flow: ModuleKeys, fn: FunctionNode) -> ast.AST | None:
    """A stepping loop of this module that calls `fn` and carries what the call returns."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    callers = {fn.name} | set(flow.names.call_targets.values())
    owners = {}
    for call, scope in calls_through(flow.names, callers):
        owners.setdefault(id(scope.node), scope.node)
    for owner in owners.values():
        if isinstance(owner, ast.ClassDef):
            continue
        for call, loop in calls_in_loops(owner):
            if flow.resolve(call.func) is fn and steps(loop, flow.names) and feeds_carried_state(loop, call):
                return loop
    return None

def _called_by_loop_body(flow: ModuleKeys, fn: FunctionNode) -> tuple[ast.Call, str] | None:
    """The `lax` loop call whose body calls `fn` and returns what the call returns (as the
    carry, or part of it), as a stepping loop's body would feed its carried state."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    for body in flow.names.functions:
        entry = flow.loop_bodies.get(id(body))
        if entry is None or entry[1] not in api.LOOP_PRIMITIVES:
            continue
        for call in flow.keynames.nodes_of(body, (ast.Call,)):
            if flow.resolve(call.func) is fn and returned(body, call):
                return entry
    return None
