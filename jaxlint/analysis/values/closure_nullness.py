"""Which names a body closes over are not None where eager code hands it to a control-flow primitive.

`lax.cond(pred, branch, x)` traces `branch` there and then, so a name of the enclosing function
that `branch` reads holds the value it holds at that call.  A small forward domain over the
enclosing function's graph finds the names a test has shown not to be None (`if x is None:
return`, `assert x is not None`) and keeps them until they are rebound.  A name bound by a plain
copy (`b = a`) holds the same object as `a` until either is rebound, so a test of one shows it
of both.  Only names the function binds and no nested function rebinds (`nonlocal`) are kept.
"""

from __future__ import annotations

import ast
from typing import Callable, FrozenSet, Iterable, List, Optional, Tuple

from jaxlint.analysis.engine import cfg
from jaxlint.analysis.engine.dataflow import Domain, solve
from jaxlint.analysis.engine.names import FunctionNode, Names
from jaxlint.analysis.engine.walk import own_nodes
from jaxlint.analysis.values.nullness import narrowed

# (names known not None, pairs of names holding the same object)
State = Tuple[FrozenSet[str], FrozenSet[Tuple[str, str]]]

_NOTHING = ast.Pass()  # what a step that evaluates nothing walks

# Expressions whose value is never None by their syntax alone.
_NEVER_NONE = (
    ast.Tuple, ast.List, ast.Dict, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
    ast.JoinedStr, ast.Lambda, ast.BinOp, ast.Compare,
)


def closed_not_none(
    fn: FunctionNode, graph_of: Callable[[FunctionNode], cfg.Graph], calls: Iterable[ast.Call], names: Names,
    body: Callable[[FunctionNode], List[ast.AST]] = own_nodes,
) -> frozenset[str]:
    """The names that `fn` tests against None in its `if` and `while` statements, reads from its
    enclosing function, and that are not None at every one of `calls` (the control-flow calls
    that trace it, all in that enclosing function); `graph_of` gives a function's control-flow
    graph, `body` its own nodes."""
    graph = graph_of(fn)
    outer = names.parent_function.get(id(fn))
    if outer is None or isinstance(outer, ast.Lambda):
        return frozenset()
    scope, inner = names.scope_of(outer), names.scope_of(fn)
    tested = {
        name for block in graph.blocks for step in block.steps if step.kind == cfg.TEST
        for node in ast.walk(step.node.test) if isinstance(node, ast.Compare)
        for outcome in (False, True) for name in narrowed(node, outcome)
    }
    wanted = {
        name for name in tested
        if (name in scope.params or name in scope.assigned) and not inner.binds(name)
        and name not in scope.defs and name not in scope.imports
    }
    wanted -= {name for other in names.iter_function_scopes() for name in other.nonlocals}
    if not wanted:
        return frozenset()
    ids = {id(node) for node in body(outer)}
    calls = list(calls)
    if not calls or not all(id(call) in ids for call in calls):
        return frozenset()
    states = _states_at(graph_of(outer), {id(call) for call in calls})
    if len(states) < len(calls):
        return frozenset()  # a call on no path the graph reaches, or not found in a step
    found = frozenset(wanted)
    for known, _ in states:
        found &= known
    return found


def _states_at(graph: cfg.Graph, calls: set[int]) -> list[State]:
    """The state before each step (of the enclosing function's `graph`) that makes one of the calls."""
    domain = _NotNone()
    solution = solve(graph, domain, (frozenset(), frozenset()))
    out: list[State] = []
    for block in graph.order():
        state: Optional[State] = solution.entry_states.get(block.index)
        if state is None:
            continue
        for step in block.steps:
            if any(id(node) in calls for node in ast.walk(_evaluated(step))):
                out.append(state)
            state = domain.transfer(step, state)
    return out


def _evaluated(step: cfg.Step) -> ast.AST:
    """The part of a step's statement that the step runs."""
    node = step.node
    if step.kind == cfg.TEST:
        return node.test
    if step.kind == cfg.ITER:
        return node.iter
    if step.kind == cfg.WITH:
        return node.context_expr
    if step.kind == cfg.SUBJECT:
        return node.subject
    if step.kind == cfg.STMT and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node
    return _NOTHING  # a def's or class's body runs later, if at all


class _NotNone(Domain[State]):
    def __init__(self) -> None:
        self.bound: dict = {}  # id(step) -> the names it binds

    def copy(self, state: State) -> State:
        return state

    def join(self, a: State, b: State) -> State:
        return a[0] & b[0], a[1] & b[1]

    def transfer(self, step: cfg.Step, state: State) -> State:
        node = step.node
        bound = self.bound.get(id(step))
        if bound is None:
            bound = self.bound[id(step)] = _bound(step)
        for target in bound:
            state = _kill(state, target)
        if step.kind == cfg.STMT and isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name):
                known, same = state
                if isinstance(value, ast.Name) and value.id != target.id:
                    partners = {value.id} | {a if b == value.id else b for a, b in same if value.id in (a, b)}
                    same = same | {(target.id, p) for p in partners}
                    if value.id in known:
                        known = known | {target.id}
                elif isinstance(value, _NEVER_NONE) or isinstance(value, ast.Constant) and value.value is not None:
                    known = known | {target.id}
                state = known, same
        elif step.kind == cfg.STMT and isinstance(node, ast.Assert):
            state = _narrow(state, narrowed(node.test, True))
        return state

    def assume(self, edge: cfg.Edge, state: State) -> Optional[State]:
        return _narrow(state, narrowed(edge.test, edge.outcome))


def _narrow(state: State, names: Iterable[str]) -> State:
    known, same = state
    shown = set(names)
    if not shown:
        return state
    for a, b in same:
        if a in shown or b in shown:
            shown.update((a, b))
    return known | shown, same


def _kill(state: State, name: str) -> State:
    known, same = state
    if name not in known and not any(name in pair for pair in same):
        return state
    return known - {name}, frozenset(pair for pair in same if name not in pair)


def _bound(step: cfg.Step) -> list[str]:
    """The names a step binds."""
    node = step.node
    targets: list[ast.AST] = []
    if step.kind == cfg.TARGET:
        targets.append(node.target)
    elif step.kind == cfg.WITH and node.optional_vars is not None:
        targets.append(node.optional_vars)
    elif step.kind == cfg.HANDLER and node.name:
        return [node.name]
    elif step.kind == cfg.STMT:
        if isinstance(node, ast.Assign):
            targets.extend(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets.append(node.target)
        elif isinstance(node, ast.Delete):
            targets.extend(node.targets)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return [node.name]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            return [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    out = [n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)]
    # An assignment expression anywhere in what the step evaluates binds too.
    out += [n.target.id for n in ast.walk(_evaluated(step)) if isinstance(n, ast.NamedExpr)]
    return out
