"""Which `.at[...]` updates bound to a name are never read: a backward domain of the dataflow solver.

`x = y.at[i].set(v)` makes a new array; JAX never changes `y`. If no path from the assignment
reads `x` before `x` is bound again or the function returns, the update is lost. The domain is
the set of names whose current value may still be read (live names; the join of two paths is
their union), run over the function's control-flow graph with its edges reversed. A step that
binds a name kills it and makes what it reads live, except an `.at[...]` update whose target is
not live: it has no effect of its own, so what it reads is not needed for it (`x = x.at[i].set(v)`
in a loop, with `x` never read afterwards, keeps no `x` alive).

Names a nested function or lambda reads (it may run later and see any later value) or a
`finally` block reads, globals and nonlocals, names starting with `_`, and functions that call
`locals()`/`vars()`/`eval`/`exec` are left out.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, FrozenSet, Iterable, Optional, Set

from jaxlint.analysis.engine import cfg
from jaxlint.analysis.engine.dataflow import Domain, replay, solve
from jaxlint.analysis.engine.names import FUNCTION_TYPES
from jaxlint.analysis.engine.walk import children, nodes_run_with, target_names

Live = FrozenSet[str]
_INTROSPECTION = frozenset({"locals", "vars", "eval", "exec"})
_TRIES = frozenset({ast.Try, getattr(ast, "TryStar", ast.Try)})  # `except*` from Python 3.11
_NESTED = frozenset({*FUNCTION_TYPES, ast.ClassDef})


class LiveNames(Domain[Live]):
    """Names whose value may still be read, moving backwards through a function."""

    def __init__(self, candidates: Dict[int, FrozenSet[str]]):
        self.candidates = candidates  # id(update statement) -> the names it binds
        self.dead: Optional[Set[int]] = None  # ids of updates whose name is not live after them, when recording
        self._effects: Dict[tuple, tuple] = {}  # (id(step node), kind) -> (names bound, names read)

    def copy(self, state: Live) -> Live:
        return state

    def join(self, a: Live, b: Live) -> Live:
        return a | b

    def transfer(self, step: cfg.Step, state: Live) -> Live:
        bound = self.candidates.get(id(step.node)) if step.kind == cfg.STMT else None
        if bound is not None and not bound & state:
            if self.dead is not None:
                self.dead.add(id(step.node))
            return state  # nothing this update reads is needed for it
        key = (id(step.node), step.kind)
        effect = self._effects.get(key)
        if effect is None:  # a step runs again in loops and in the replay: its names are found once
            uses = frozenset(name for root in cfg.evaluated(step) for name in _reads(root))
            effect = self._effects[key] = (frozenset(_binds(step)), uses)
        return (state - effect[0]) | effect[1]


def dead_updates(fn: ast.AST, updates: Dict[int, FrozenSet[str]], outer: Callable[[ast.Name], bool]) -> Set[int]:
    """The ids of the `updates` (statement id -> names bound) of `fn` that no path reads.

    `outer(name_node)` says whether a name read in a nested function or lambda of `fn` refers
    to `fn`'s own variable."""
    kept_live: Set[str] = set()
    own = nodes_run_with(fn.body)
    for node in _nested(own):
        if isinstance(node, ast.Nonlocal):
            kept_live.update(node.names)
        elif isinstance(node, ast.Name):
            if node.id in _INTROSPECTION:
                return set()
            if outer(node):
                kept_live.add(node.id)
    for node in own:
        cls = node.__class__
        if cls is ast.Name:
            if node.id in _INTROSPECTION:
                return set()
        elif cls in _TRIES:
            # the graph has no edge from a `return` into `finally`: what it reads stays live
            kept_live.update(n.id for n in nodes_run_with(node.finalbody) if isinstance(n, ast.Name))
    candidates = {key: bound for key, bound in updates.items() if not bound & kept_live}
    if not candidates:
        return set()
    graph = _reversed(cfg.build(fn))
    domain = LiveNames(candidates)
    solution = solve(graph, domain, frozenset())
    # Findings from the fixed point only (a block no path leaves the function from, such as
    # `while True:` without a break, has none).
    domain.dead = set()
    replay(graph, domain, solution)
    return domain.dead


def _reversed(graph: cfg.Graph) -> cfg.Graph:
    """The graph with every edge turned around and each block's steps in reverse order, entered
    from one new block that leads to every block control can leave the function from."""
    order = graph.order()
    copies = {b.index: cfg.Block(b.index, list(reversed(b.steps))) for b in order}
    exit_block = cfg.Block(max(copies, default=0) + 1)
    for block in order:
        if not block.edges:
            exit_block.edges.append(cfg.Edge(copies[block.index]))
        for edge in block.edges:
            target = copies.get(edge.target.index)
            if target is not None:
                target.edges.append(cfg.Edge(copies[block.index]))
    return cfg.Graph(exit_block, [*copies.values(), exit_block])


def _binds(step: cfg.Step) -> Set[str]:
    node = step.node
    if step.kind == cfg.STMT:
        if isinstance(node, ast.Assign):
            return {n for t in node.targets for n in target_names(t)}
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            return set(target_names(node.target))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return {node.name}
        return set()
    if step.kind == cfg.TARGET:
        return set(target_names(node.target))
    if step.kind == cfg.WITH and node.optional_vars is not None:
        return set(target_names(node.optional_vars))
    return set()


def _reads(root: ast.AST) -> Iterable[str]:
    for node in nodes_run_with([root]):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            yield node.id


def _nested(own: list[ast.AST]) -> Iterable[ast.AST]:
    """Every node inside the nested functions, lambdas and classes among a function's own nodes."""
    stack = [n for n in own if n.__class__ in _NESTED]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(children(node))
