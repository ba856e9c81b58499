"""Which values change from one iteration of a Python loop to the next: a domain of the shared solver.

A state maps each name a function binds to the definitions of it that may reach that point
and the loops across whose iterations its value may change.  A definition's value changes
with the loops around it when it reads a value that does, or calls anything (a call may
answer differently each time: `next(it)`, `rng.normal()`); a constant or arithmetic on
unchanging names (`bs = 32`) does not.  Where two paths bring different definitions (a loop
head: the value from before the loop, then the one from the last iteration), the value
changes with every loop around those definitions.  A loop target changes with its loop;
an in-place change (`xs.append(x)`, `cfg.lr = ...`, `a[i] += 1`) is a new definition of the
container it changes.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional

from jaxlint.analysis.engine import cfg
from jaxlint.analysis.engine.dataflow import Domain, solve
from jaxlint.analysis.engine.names import FUNCTION_TYPES
from jaxlint.analysis.engine.walk import children

LOOP_TYPES = (ast.For, ast.AsyncFor, ast.While)

MUTATING_METHODS = frozenset({
    "append", "extend", "insert", "pop", "update", "add", "setdefault", "remove", "clear",
    "appendleft", "popleft", "discard",
})

# Definition kinds: "assign" (`x = value`), "element" (a for loop's target: an element of
# `value`, at `path` in the unpacking), "augment" (`x += value`), "mutate" (changed in place
# by `node`), "unpack" (a part of a value not written out), "other" (with, except, match,
# import, def, walrus).
ASSIGN, ELEMENT, AUGMENT, MUTATE, UNPACK, OTHER = "assign", "element", "augment", "mutate", "unpack", "other"

_SELF_CHANGING = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)


@dataclass(frozen=True)
class Definition:
    name: str
    kind: str
    node: ast.AST  # the statement (or loop, with item, handler, case) that binds it
    value: Optional[ast.AST]  # the value bound (assign, augment), iterated (element) or changed (mutate)
    path: Optional[tuple]  # element: where the name sits in the loop's unpacking target
    loops: frozenset  # id() of the loops around the definition


@dataclass(frozen=True)
class Binding:
    defs: frozenset  # indices of the definitions that may reach this point
    loops: frozenset  # id() of the loops across whose iterations the value may change


State = Dict[str, Binding]


class LoopVariance(Domain[State]):
    """The domain, over one function's (or the module's) graph.  `around[id(node)]` is the loops
    around each step node (a loop's own target and `while` test are inside it)."""

    def __init__(self, around: Dict[int, frozenset]):
        self.around = around
        self.definitions: List[Definition] = []
        self._index: Dict[tuple, int] = {}
        # Per expression, once however often the solver visits it: (names read, whether it
        # calls anything, its walrus bindings and in-place changes).
        self._scans: Dict[int, tuple] = {}

    # ---- lattice ---------------------------------------------------------------------
    def copy(self, state: State) -> State:
        return dict(state)

    def join(self, a: State, b: State) -> State:
        out = dict(a)
        for name, right in b.items():
            left = out.get(name)
            if left is None or left == right:
                out[name] = right
                continue
            loops = left.loops | right.loops
            defs = left.defs | right.defs
            if left.defs != right.defs:  # a different value on each path: it changes with the loops around them
                for index in defs:
                    loops |= self.definitions[index].loops
            out[name] = Binding(defs, loops)
        return out

    # ---- steps -----------------------------------------------------------------------
    def transfer(self, step: cfg.Step, state: State) -> State:
        node, kind = step.node, step.kind
        loops = self.around.get(id(step), frozenset())
        for expr in step_expressions(step):
            self._side_effects(expr, loops, state)
        if kind == cfg.STMT:
            self._statement(node, loops, state)
        elif kind == cfg.TARGET:
            for name, path in _target_paths(node.target, ()):
                self._define(state, name, ELEMENT, node, node.iter, path, loops, loops)
            self._store_targets(node.target, node, loops, state)
        elif kind == cfg.WITH and node.optional_vars is not None:
            self._bind_other(node.optional_vars, node, loops, state)
        elif kind == cfg.HANDLER and node.name:
            self._define(state, node.name, OTHER, node, None, None, loops, loops)
        elif kind == cfg.CASE:
            for sub in _walk(node.pattern):
                for name in (getattr(sub, "name", None), getattr(sub, "rest", None)):
                    if isinstance(name, str):
                        self._define(state, name, OTHER, node, None, None, loops, loops)
        return state

    def _statement(self, node: ast.stmt, loops: frozenset, state: State) -> None:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            if node.value is None:
                return
            changes = self.changes(node.value, state, loops)
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for name, value in _assigned(target, node.value):
                    kind = UNPACK if value is None else ASSIGN
                    part = changes if value is None else self.changes(value, state, loops)
                    self._define(state, name, kind, node, value, None, part, loops)
                self._store_targets(target, node, loops, state)
        elif isinstance(node, ast.AugAssign):
            if isinstance(node.target, ast.Name):
                changes = self.changes(node.value, state, loops) | self.changes(node.target, state, loops)
                self._define(state, node.target.id, AUGMENT, node, node.value, None, changes, loops)
            else:
                self._mutate(node.target, node, loops, state)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    state.pop(target.id, None)
                else:
                    self._mutate(target, node, loops, state)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                name = (alias.asname or alias.name).split(".")[0]
                self._define(state, name, OTHER, node, None, None, frozenset(), loops)
        elif isinstance(node, (*FUNCTION_TYPES, ast.ClassDef)):
            self._define(state, node.name, OTHER, node, None, None, frozenset(), loops)

    def _side_effects(self, expr: ast.AST, loops: frozenset, state: State) -> None:
        """Walrus bindings and in-place container changes inside an expression."""
        for sub in self._scan(expr)[2]:
            if isinstance(sub, ast.NamedExpr):
                self._define(state, sub.target.id, OTHER, sub, sub.value, None, loops, loops)
            else:
                self._mutate(sub.func.value, sub, loops, state)

    def _store_targets(self, target: ast.AST, node: ast.AST, loops: frozenset, state: State) -> None:
        """`a[i] = v`, `cfg.lr = v` (also inside an unpacking): the container changes."""
        if isinstance(target, ast.Name):
            return
        for sub in _walk(target):
            if isinstance(sub, (ast.Subscript, ast.Attribute)) and isinstance(sub.ctx, ast.Store):
                self._mutate(sub, node, loops, state)

    def _bind_other(self, target: ast.AST, node: ast.AST, loops: frozenset, state: State) -> None:
        for name, _ in _target_paths(target, ()):
            self._define(state, name, OTHER, node, None, None, loops, loops)
        self._store_targets(target, node, loops, state)

    def _mutate(self, target: ast.AST, node: ast.AST, loops: frozenset, state: State) -> None:
        base = target
        while isinstance(base, (ast.Attribute, ast.Subscript)):
            base = base.value
        if isinstance(base, ast.Name):
            old = state.get(base.id)
            changes = loops | (old.loops if old is not None else frozenset())
            self._define(state, base.id, MUTATE, node, target, None, changes, loops)

    def _define(self, state: State, name: str, kind: str, node: ast.AST, value, path, changes: frozenset,
                loops: frozenset) -> None:
        key = (id(node), name, kind)
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = len(self.definitions)
            self.definitions.append(Definition(name, kind, node, value, path, loops))
        state[name] = Binding(frozenset((index,)), changes)

    # ---- questions -------------------------------------------------------------------
    def changes(self, expr: ast.AST, state: State, loops: frozenset) -> frozenset:
        """The loops across whose iterations `expr`, evaluated in `state` inside `loops`, may change."""
        reads = self._scan(expr)
        out: frozenset = loops if reads[1] else frozenset()
        for name in reads[0]:
            binding = state.get(name)
            if binding is not None and binding.loops:
                out |= binding.loops
        return out


    def _scan(self, expr: ast.AST) -> tuple:
        scan = self._scans.get(id(expr))
        if scan is None:
            names, calls, effects = set(), False, []
            nodes = [expr]
            for sub in nodes:  # grows as it goes: a walk without a generator
                nodes.extend(children(sub))
                if isinstance(sub, ast.Name):
                    names.add(sub.id)
                elif isinstance(sub, _SELF_CHANGING):
                    calls = True
                    if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
                        effects.append(sub)
                    elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in MUTATING_METHODS:
                        effects.append(sub)
            scan = self._scans[id(expr)] = (tuple(names), calls, effects)
        return scan


def step_expressions(step: cfg.Step) -> List[ast.AST]:
    """The parts of a step evaluated at that point (not a nested function's body)."""
    node, kind = step.node, step.kind
    if kind == cfg.STMT:
        if isinstance(node, (*FUNCTION_TYPES, ast.ClassDef)):
            args = getattr(node, "args", None)
            defaults = [d for d in (*args.defaults, *args.kw_defaults) if d is not None] if args else []
            return [*node.decorator_list, *defaults, *getattr(node, "bases", ()), *getattr(node, "keywords", ())]
        if isinstance(node, ast.Assign):
            return [*node.targets, node.value]
        if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            return [node.target] if node.value is None else [node.target, node.value]
        return [node]
    if kind == cfg.TEST:
        return [node.test]
    if kind == cfg.ITER:
        return [node.iter]
    if kind == cfg.TARGET:
        return [node.target]
    if kind == cfg.WITH:
        return [node] if node.optional_vars is None else [node.context_expr, node.optional_vars]
    if kind == cfg.HANDLER:
        return [node.type] if node.type is not None else []
    if kind == cfg.SUBJECT:
        return [node.subject]
    if kind == cfg.CASE:
        return [node.pattern] + ([node.guard] if node.guard is not None else [])
    return []


def loops_around(graph: cfg.Graph, body: list) -> Dict[int, frozenset]:
    """id(step) -> id() of the loops of this body around it."""
    by_node: Dict[int, frozenset] = {}
    stack: List[tuple] = [(stmt, frozenset()) for stmt in body]
    while stack:
        stmt, loops = stack.pop()
        by_node[id(stmt)] = loops
        if isinstance(stmt, (*FUNCTION_TYPES, ast.ClassDef)):
            continue
        fields = _BLOCKS.get(type(stmt))
        if not fields:
            continue
        inner = loops | {id(stmt)} if isinstance(stmt, LOOP_TYPES) else loops
        for field in fields:
            if field in ("handlers", "cases"):
                for part in getattr(stmt, field):
                    by_node[id(part)] = loops
                    stack.extend((s, loops) for s in part.body)
            elif field == "items":
                for item in stmt.items:
                    by_node[id(item)] = loops
            else:
                stack.extend((s, inner if field == "body" else loops) for s in getattr(stmt, field))
    out: Dict[int, frozenset] = {}
    for block in graph.blocks:
        for step in block.steps:
            loops = by_node.get(id(step.node), frozenset())
            if step.kind in (cfg.TARGET, cfg.TEST) and isinstance(step.node, LOOP_TYPES):
                loops = loops | {id(step.node)}  # bound, or tested, on every iteration
            out[id(step)] = loops
    return out


# The statement lists (and with items) of each compound statement.
_BLOCKS: Dict[type, tuple] = {
    ast.If: ("body", "orelse"), ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"), ast.With: ("items", "body"), ast.AsyncWith: ("items", "body"),
    ast.Try: ("body", "handlers", "orelse", "finalbody"),
    ast.FunctionDef: ("body",), ast.AsyncFunctionDef: ("body",), ast.ClassDef: ("body",),
}
for _name in ("TryStar", "Match"):
    if hasattr(ast, _name):
        _BLOCKS[getattr(ast, _name)] = ("cases",) if _name == "Match" else ("body", "handlers", "orelse", "finalbody")


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))


def _assigned(target: ast.AST, value: ast.AST) -> List[tuple]:
    """(name, the part of `value` it is bound to, or None when that part is not written out)."""
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if isinstance(target, (ast.Tuple, ast.List)):
        if (
            isinstance(value, (ast.Tuple, ast.List))
            and len(target.elts) == len(value.elts)
            and not any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts))
        ):
            return [pair for t, v in zip(target.elts, value.elts) for pair in _assigned(t, v)]
        return [(name, None) for name, _ in _target_paths(target, ())]
    if isinstance(target, ast.Starred):
        return [(name, None) for name, _ in _target_paths(target, ())]
    return []


def _target_paths(target: ast.AST, path: tuple) -> List[tuple]:
    """(name, where it sits in the unpacking: () for the whole, None past a starred part)."""
    if isinstance(target, ast.Name):
        return [(target.id, path)]
    if isinstance(target, (ast.Tuple, ast.List)):
        starred = any(isinstance(e, ast.Starred) for e in target.elts)
        return [
            pair
            for i, elt in enumerate(target.elts)
            for pair in _target_paths(elt, None if starred or path is None else (*path, i))
        ]
    if isinstance(target, ast.Starred):
        return _target_paths(target.value, None)
    return []


COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


class LoopFacts:
    """The loop facts of one module: each function's graph is solved when a question first needs it."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
        self._owners: Optional[Dict[int, ast.AST]] = None
        self._outer: Dict[int, tuple] = {}
        self._solved: Dict[int, "_Solved"] = {}

    def unconverged(self) -> List[ast.AST]:
        """The functions (or module, or class body) whose solve hit the solver's safety bound."""
        return [solved.owner for solved in self._solved.values() if not solved.converged]

    def enclosing(self, loop: ast.AST) -> tuple:
        """The loops of the same function (or module) body around a loop statement, outermost first."""
        if self._owners is None:
            self._owners, self._outer = _loop_owners(self.tree)
        return self._outer.get(id(loop), ())

    def varies(self, expr: ast.AST, loop: ast.AST, at: Optional[ast.AST] = None) -> bool:
        """Whether `expr`, read where `at` (default: `expr` itself) is, can change from one iteration
        of `loop` (a loop statement or a comprehension) to the next."""
        if isinstance(loop, COMPREHENSIONS):
            bound = {name for g in loop.generators for name, _ in _target_paths(g.target, ())}
            return any(isinstance(sub, ast.Name) and sub.id in bound for sub in _own_walk(expr))
        solved = self._solve(loop)
        if solved is None:
            return False
        state = solved.state_at(expr if at is None else at)
        key = id(loop)
        for sub in _own_walk(expr):
            if isinstance(sub, ast.Name):
                if state is None:
                    if any(d.name == sub.id and key in d.loops for d in solved.domain.definitions):
                        return True
                    continue
                binding = state.get(sub.id)
                if binding is not None and key in binding.loops:
                    return True
        return False

    def definitions(self, name: str, loop: ast.AST, at: ast.AST) -> List[Definition]:
        """The definitions of `name` made inside `loop` that may reach `at` (every one made in it when
        `at` is not a point the analysis knows)."""
        if isinstance(loop, COMPREHENSIONS):
            return [
                Definition(name, ELEMENT, g, g.iter, path, frozenset((id(loop),)))
                for g in loop.generators
                for bound, path in _target_paths(g.target, ())
                if bound == name
            ]
        solved = self._solve(loop)
        if solved is None:
            return []
        definitions = solved.domain.definitions
        state = solved.state_at(at)
        if state is None:
            chosen = [d for d in definitions if d.name == name]
        else:
            binding = state.get(name)
            chosen = [definitions[i] for i in sorted(binding.defs)] if binding is not None else []
        return [d for d in chosen if id(loop) in d.loops]

    def reaching(self, name: str, loop: ast.AST, at: ast.AST) -> List[Definition]:
        """Every definition of `name` in the body around `loop` that may reach `at`, inside
        `loop`: the one from before the loop (its first iteration) as much as those made in it."""
        if isinstance(loop, COMPREHENSIONS):
            return []
        solved = self._solve(loop)
        state = solved.state_at(at) if solved is not None else None
        binding = state.get(name) if state is not None else None
        return [solved.domain.definitions[i] for i in sorted(binding.defs)] if binding is not None else []

    def _solve(self, loop: ast.AST) -> Optional["_Solved"]:
        if self._owners is None:
            self._owners, self._outer = _loop_owners(self.tree)
        owner = self._owners.get(id(loop))
        if owner is None:
            return None
        solved = self._solved.get(id(owner))
        if solved is None:
            solved = self._solved[id(owner)] = _Solved(owner)
        return solved


class _Solved:
    """One function's (or the module body's) loop variance at its fixed point."""

    def __init__(self, owner: ast.AST):
        self.owner = owner
        self.graph = cfg.build(owner)
        self.domain = LoopVariance(loops_around(self.graph, owner.body))
        self.solution = solve(self.graph, self.domain, {})
        self.converged = self.solution.converged
        self._where: Optional[Dict[int, tuple]] = None
        self._replayed: Dict[int, List[State]] = {}

    def state_at(self, node: ast.AST) -> Optional[State]:
        """The state before the step that evaluates `node` (None: not a point of this graph, or never reached)."""
        if self._where is None:
            self._where = {}
            around = self.domain.around
            for block in self.graph.blocks:
                for i, step in enumerate(block.steps):
                    if not around.get(id(step)):
                        continue  # questions are asked only about what runs inside a loop
                    self._where[id(step.node)] = (block, i)  # the statement (or clause) itself
                    for expr in step_expressions(step):
                        for sub in _walk(expr):
                            self._where[id(sub)] = (block, i)
        where = self._where.get(id(node))
        if where is None:
            return None
        block, i = where
        states = self._replayed.get(block.index)
        if states is None:
            entry = self.solution.entry_states.get(block.index)
            if entry is None:
                return None
            states = []
            state = dict(entry)
            for step in block.steps:
                states.append(dict(state))
                state = self.domain.transfer(step, state)
            self._replayed[block.index] = states
        return states[i]


def _loop_owners(tree: ast.Module) -> tuple:
    """id(loop statement) -> the function, class or module whose body it is in; and -> the
    loops of that body around it, outermost first."""
    owners: Dict[int, ast.AST] = {}
    outer: Dict[int, tuple] = {}
    stack: List[tuple] = [(stmt, tree, ()) for stmt in tree.body]
    while stack:
        stmt, owner, loops = stack.pop()
        fields = _BLOCKS.get(type(stmt))
        if not fields:
            continue
        inner, inner_loops = owner, loops
        if isinstance(stmt, LOOP_TYPES):
            owners[id(stmt)], outer[id(stmt)] = owner, loops
            inner_loops = (*loops, stmt)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner, inner_loops = stmt, ()
        for field in fields:
            if field in ("handlers", "cases"):
                for part in getattr(stmt, field):
                    stack.extend((child, inner, loops) for child in part.body)
            elif field != "items":
                stack.extend((child, inner, inner_loops if field == "body" else loops) for child in getattr(stmt, field))
    return owners, outer


def _own_walk(expr: ast.AST) -> Iterator[ast.AST]:
    """The nodes of an expression, nested functions and lambdas left out."""
    stack = [expr]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child for child in children(current) if not isinstance(child, FUNCTION_TYPES))
