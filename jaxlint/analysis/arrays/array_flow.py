"""Array-ness as a domain of the dataflow solver: what kind of array each of a scope's names holds.

The state at a program point is a set of (name, kind) pairs, each true on every path reaching
it (the join of two paths is their intersection), but one: `SOME_PATHS`, which the join makes
of a name that is a JAX array on one side and of no known kind on the other (a store into it
raises on the first path). The kinds: `JAX` (a JAX array), `NUMPY` (a
new host array, `np.array([...])`), `VIEW` (`np.asarray` of a JAX array: a NumPy array over
JAX's read-only buffer, so a `NUMPY` one too) and `INSTANCE` (what calling a class of the
module or of the project made, `a = Array([1.0])`: an instance of that class, never a JAX
array, though it may offer `.at` as well as item assignment, as a mutable array wrapper
does) and `ITEMS` (a list or tuple literal, or a list comprehension, whose every item is a
JAX array: `mos = [jnp.reshape(m, s) for m in mos]`, so `mos[0]` is one). A step binds
names: an assignment adds the
kinds of its value; unpacking a JAX array or a sequence of them (`q, r = jnp.linalg.qr(a)`),
or looping over a JAX array, binds JAX arrays (a starred name gets a list); any other binding
(an unknown value, a `with` target, an import, a def) clears the name; `x += v` keeps what
`x` was. An edge on which an `isinstance` test shows a name not to be a JAX array
(`type_tests.py`: `isinstance(x, np.ndarray)` held, `isinstance(x, jax.Array)` failed) drops
its `JAX` kind. Evaluating `x.at[i].get()` (or `.set`,
`.add`, ...) shows `x` to be a JAX array from then on, unless it holds an `INSTANCE`: only JAX
arrays and such wrappers have that indexer with those methods. A parameter starts as a JAX
array when it is annotated as one, or when the function never rebinds it and uses it with
`.at[...]` anywhere; as `ITEMS` when it is annotated as a mapping or sequence of JAX arrays
(`Dict[str, jnp.ndarray]`, `list[jax.Array]`, through a name the module binds once to such a
type), until an item of it is replaced by something else (`batch["label"] = {}`). After the
fixed point, one
backward sweep of each basic block marks a read of a name that the block goes on to use so,
unrebound: the same value (`x[i] = v` then `x = x.at[j].set(w)`).

What kind an expression is (`jnp.zeros(3)`, `x * 2`, `np.asarray(x)`) is answered by
`ArrayFacts`, given the state; this module only moves the state through the graph and records,
for every name read, the state at the step that reads it (after the step's expressions are
evaluated, before it binds). Most reads ask about a name no state can hold (a dict, a list, a
plain parameter): `possible_arrays` bounds the states from the binding steps alone, so most
scopes are never solved.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Protocol, Tuple

from jaxlint.analysis.engine import cfg
from jaxlint.analysis.engine.dataflow import Domain, replay, solve
from jaxlint.analysis.engine.names import FUNCTION_TYPES, Names, Scope
from jaxlint.analysis.engine.walk import nodes_run_with, own_statements, target_names, walk
from jaxlint.analysis.knowledge import array_api
from jaxlint.analysis.tracing.type_tests import not_jax_arrays

JAX, NUMPY, VIEW, INSTANCE, ITEMS = "jax", "numpy", "view", "instance", "items"
# A JAX array on some path reaching the point and not on another (`jnp.zeros(...)` in one
# branch, what a dict held in the other): made by the join alone, from `JAX` on one side.
SOME_PATHS = "jax on some path"
_JAX_KINDS = (JAX, SOME_PATHS)
Arrays = FrozenSet[Tuple[str, str]]  # (name, kind)
NOTHING: Arrays = frozenset()
NOTHING_NAMES: FrozenSet[str] = frozenset()
ARRAY, UNKNOWN = "array", "unknown"  # a binding annotated as an array, one of unknown value (`scope_bindings`)
# `.at[...]` methods: only JAX arrays (and look-alikes as immutable) have them.
_AT_METHODS = array_api.AT_UPDATE_METHODS | {"get"}


class ArrayQuestions(Protocol):
    """What the domain asks of the array facts (`arrays.ArrayFacts`) about one step's expressions,
    given the state: the solver moves the state, the facts answer."""

    names: Names
    at_updates_in_text: bool  # `.at[` appears in the module's text
    at_calls_in_text: bool  # ... with any gap between its tokens

    def array_in(self, expr: ast.AST, scope: Scope, arrays: Arrays) -> bool: ...

    def kinds_in(self, value: ast.AST, scope: Scope, arrays: Arrays) -> tuple[str, ...]: ...

    def unpacks_to_arrays(self, value: ast.AST, scope: Scope, arrays: Arrays) -> bool: ...

    def class_instance(self, value: ast.AST, scope: Scope) -> bool: ...

    def array_annotation(self, annotation: ast.expr | None, scope: Scope) -> bool: ...

    def items_annotation(self, annotation: ast.expr | None, scope: Scope) -> bool: ...

    def may_show_at(self, name: str) -> bool: ...


class ArrayNames(Domain[Arrays]):
    """The solver's domain: the names of one scope known to hold an array, with its kind."""

    def __init__(self, facts: ArrayQuestions, scope: Scope):
        self.facts = facts
        self.scope = scope
        self.reads: Optional[Dict[int, Arrays]] = None  # id(ast.Name read) -> state there, when recording
        self._steps: Dict[tuple, _StepNodes] = {}

    def copy(self, state: Arrays) -> Arrays:
        return state

    def join(self, a: Arrays, b: Arrays) -> Arrays:
        if a is b or a == b:
            return a
        joined = a & b
        one_side = {name for name, kind in a ^ b if kind in _JAX_KINDS}
        if one_side:
            # Not where the other side knows it for something else (`np.zeros`): code written
            # for both kinds of array, whose store the analysis leaves alone.
            other = {name for name, kind in a | b if kind not in _JAX_KINDS}
            joined = joined | {(n, SOME_PATHS) for n in one_side - other if (n, JAX) not in joined}
        return joined

    def transfer(self, step: cfg.Step, state: Arrays) -> Arrays:
        nodes = self.nodes(step)
        if nodes.shown:
            shown = nodes.shown.difference(name for name, kind in state if kind == INSTANCE)
            state = frozenset(p for p in state if p[0] not in shown) | {(name, JAX) for name in shown}
        if self.reads is not None:
            for node in nodes.reads:
                self.reads[id(node)] = state
        return self._bind(step, state, nodes.walrus)

    def assume(self, edge: cfg.Edge, state: Arrays) -> Arrays:
        """Along an edge where an `isinstance` test shows a name not to be a JAX array, it is not one."""
        if not state:
            return state
        names = set(not_jax_arrays(edge.test, edge.outcome, self.facts.names, self.scope))
        if not names:
            return state
        return frozenset(p for p in state if p[0] not in names or p[1] not in _JAX_KINDS)

    def nodes(self, step: cfg.Step) -> "_StepNodes":
        key = (id(step.node), step.kind)
        found = self._steps.get(key)
        if found is None:
            found = self._steps[key] = _StepNodes(cfg.evaluated(step), self.facts.at_calls_in_text)
        return found

    def _bind(self, step: cfg.Step, state: Arrays, walrus: FrozenSet[str]) -> Arrays:
        node = step.node
        cleared: set = set(walrus)
        added: set = set()
        dropped: set = set()  # (name, kind) pairs a step takes away, the name kept
        if step.kind == cfg.STMT:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    self._assign(target, node.value, state, cleared, added, dropped)
            elif isinstance(node, ast.AnnAssign):
                if isinstance(node.target, ast.Name):
                    if node.value is not None:
                        self._assign(node.target, node.value, state, cleared, added, dropped)
                    elif self.facts.array_annotation(node.annotation, self.scope):
                        cleared.add(node.target.id)
                        added.add((node.target.id, JAX))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                cleared.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                cleared.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            elif isinstance(node, ast.Delete):
                for target in node.targets:
                    cleared.update(target_names(target))
        elif step.kind == cfg.TARGET:
            self._iterate(node.target, node.iter, state, cleared, added)
        elif step.kind == cfg.WITH:
            if node.optional_vars is not None:
                cleared.update(target_names(node.optional_vars))
        elif step.kind == cfg.HANDLER:
            if node.name:
                cleared.add(node.name)
        elif step.kind == cfg.CASE:
            for sub in walk(node.pattern):
                name = getattr(sub, "name", None) or getattr(sub, "rest", None)
                if isinstance(name, str):
                    cleared.add(name)
        if not cleared and not dropped:
            return state
        return frozenset(p for p in state if p[0] not in cleared and p not in dropped) | added

    def _assign(
        self, target: ast.AST, value: ast.AST, before: Arrays, cleared: set, added: set, dropped: set
    ) -> None:
        if isinstance(target, ast.Name):
            cleared.add(target.id)
            added.difference_update({p for p in added if p[0] == target.id})
            kinds = self.facts.kinds_in(value, self.scope, before)
            if not kinds and self.facts.may_show_at(target.id) and self.facts.class_instance(value, self.scope):
                kinds = (INSTANCE,)
            added.update((target.id, kind) for kind in kinds)
        elif parallel(target, value):
            for part, item in zip(target.elts, value.elts):
                self._assign(part, item, before, cleared, added, dropped)
        elif isinstance(target, (ast.Tuple, ast.List)) and self.facts.unpacks_to_arrays(value, self.scope, before):
            _unpack(target, cleared, added)
        elif (
            isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
            and (target.value.id, ITEMS) in before and JAX not in self.facts.kinds_in(value, self.scope, before)
        ):
            dropped.add((target.value.id, ITEMS))  # `batch["label"] = {}`: an item no JAX array now
        else:
            cleared.update(target_names(target))

    def _iterate(self, target: ast.AST, iterable: ast.AST, before: Arrays, cleared: set, added: set) -> None:
        """`for target in iterable`: rows of a JAX array are JAX arrays (`enumerate` of one too)."""
        if (
            isinstance(iterable, ast.Call)
            and self.facts.names.qualname(iterable.func, self.scope) == "builtins.enumerate"
            and len(iterable.args) == 1
            and isinstance(target, (ast.Tuple, ast.List))
            and len(target.elts) == 2
        ):
            cleared.update(target_names(target.elts[0]))
            target, iterable = target.elts[1], iterable.args[0]
        if self.facts.array_in(iterable, self.scope, before):
            _unpack(target, cleared, added)
        else:
            cleared.update(target_names(target))


def _unpack(target: ast.AST, cleared: set, added: set) -> None:
    """Names a target binds to the items of a JAX array (or of a sequence of them): JAX arrays,
    except a starred name, which gets a list."""
    if isinstance(target, ast.Name):
        cleared.add(target.id)
        added.difference_update({p for p in added if p[0] == target.id})
        added.add((target.id, JAX))
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            _unpack(elt, cleared, added)
    else:
        cleared.update(target_names(target))


def solve_scope(facts: ArrayQuestions, scope: Scope, graph: cfg.Graph) -> Dict[int, Arrays]:
    """The state at every read of a name in a function's (or the module's) own code."""
    domain = ArrayNames(facts, scope)
    solution = solve(graph, domain, _initial(facts, scope))
    domain.reads = {}
    replay(graph, domain, solution)
    if facts.at_calls_in_text:
        _shown_later(graph, solution.entry_states, domain)
    return domain.reads


def possible_arrays(
    facts: ArrayQuestions, scope: Scope, graph: cfg.Graph, candidates: FrozenSet[str],
) -> Optional[Tuple[FrozenSet[str], FrozenSet[int]]]:
    """The names some state of the scope's solve can hold as JAX arrays, found without solving,
    and the reads of its own code that no step records (a nested def's annotations, a `match`
    pattern). Every binding step is evaluated in the most generous state (every name found so
    far an array) until nothing new is found: `ArrayFacts` answers monotonically in the state
    and the solve never prunes a branch, so no state of the solve holds a name outside. Only a
    step binding one of `candidates` (a superset from the syntax) can add one. None where code
    the flow never reaches holds steps: a read there is answered from the bindings."""
    order = graph.order()
    if sum(1 for b in graph.blocks if b.steps) != sum(1 for b in order if b.steps):
        return None
    domain = ArrayNames(facts, scope)
    binding, unrecorded = [], set()
    for block in order:
        for step in block.steps:
            node, kind = step.node, step.kind
            if kind == cfg.TARGET or kind == cfg.STMT and node.__class__ in (ast.Assign, ast.AnnAssign):
                if not candidates.isdisjoint(_binds(step)):
                    binding.append(step)
            elif kind == cfg.STMT and node.__class__ in (ast.FunctionDef, ast.AsyncFunctionDef):
                a = node.args
                params = (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
                for annotation in (*(p.annotation for p in params if p is not None), node.returns):
                    if annotation is not None:
                        unrecorded.update(id(n) for n in walk(annotation))
            elif kind == cfg.CASE:
                unrecorded.update(id(n) for n in walk(node.pattern))
    state = _initial(facts, scope)
    if facts.at_calls_in_text:
        body = [scope.node.body] if isinstance(scope.node, ast.Lambda) else scope.node.body
        state |= {(name, JAX) for name in map(at_updated, nodes_run_with(body)) if name is not None}
    while True:
        grown = state
        for step in binding:
            grown = grown | domain._bind(step, state, NOTHING_NAMES)
        if grown == state:
            return frozenset(name for name, kind in state if kind == JAX), frozenset(unrecorded)
        state = grown


def _initial(facts: ArrayQuestions, scope: Scope) -> Arrays:
    node = scope.node
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _array_parameters(facts, scope, node)
    return NOTHING


def scope_bindings(facts: ArrayQuestions, scope: Scope) -> Dict[str, List[object]]:
    """Every binding of every name in one scope: a value expression, `ARRAY` (annotated as an
    array) or `UNKNOWN`."""
    out: Dict[str, List[object]] = {}

    def add(name: str, value: object) -> None:
        out.setdefault(name, []).append(value)

    node = scope.node
    if isinstance(node, FUNCTION_TYPES):
        args = node.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None:
                add(arg.arg, ARRAY if facts.array_annotation(arg.annotation, scope) else UNKNOWN)
        body = [] if isinstance(node, ast.Lambda) else node.body
    else:
        body = node.body
    for name in scope.imports:
        add(name, UNKNOWN)
    for stmt in own_statements(body):
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    add(target.id, stmt.value)
                elif parallel(target, stmt.value):
                    for part, value in zip(target.elts, stmt.value.elts):
                        if isinstance(part, ast.Name):
                            add(part.id, value)
                        else:
                            for name in target_names(part):
                                add(name, UNKNOWN)
                else:
                    for name in target_names(target):
                        add(name, UNKNOWN)
        elif isinstance(stmt, ast.AnnAssign):
            if isinstance(stmt.target, ast.Name):
                if stmt.value is not None:
                    add(stmt.target.id, stmt.value)
                elif facts.array_annotation(stmt.annotation, scope):
                    add(stmt.target.id, ARRAY)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            for name in target_names(stmt.target):
                add(name, UNKNOWN)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    for name in target_names(item.optional_vars):
                        add(name, UNKNOWN)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(stmt.name, UNKNOWN)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                add((alias.asname or alias.name).split(".")[0], UNKNOWN)
        elif isinstance(stmt, (ast.Global, ast.Nonlocal)):
            for name in stmt.names:
                add(name, UNKNOWN)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            for handler in stmt.handlers:
                if handler.name:
                    add(handler.name, UNKNOWN)
        elif type(stmt).__name__ == "Match":
            for case in stmt.cases:
                for sub in walk(case.pattern):
                    name = getattr(sub, "name", None) or getattr(sub, "rest", None)
                    if isinstance(name, str):
                        add(name, UNKNOWN)
    return out


def _shown_later(graph: cfg.Graph, reached: Dict[int, Arrays], domain: ArrayNames) -> None:
    """A name read where, later in the same run of steps and not rebound in between, it is shown
    to be a JAX array by an `.at[...]` method: the same value is one where it is read, too
    (`x[i] = v` then `x = x.at[j].set(w)`). Added to the state recorded for that read alone,
    unless the name is known there to hold another kind of array."""
    reads = domain.reads
    for block in graph.order():
        if block.index not in reached:
            continue
        later: set = set()
        for step in reversed(block.steps):
            nodes = domain.nodes(step)
            later.difference_update(_binds(step))
            later.difference_update(nodes.walrus)
            if later:
                for node in nodes.reads:
                    name = node.id
                    state = reads.get(id(node))
                    if name in later and state is not None and not any(p[0] == name for p in state):
                        reads[id(node)] = state | {(name, JAX)}
            later.update(nodes.shown)


def _binds(step: cfg.Step) -> List[str]:
    """The plain names a step binds (an item or attribute store binds none)."""
    node = step.node
    kind = step.kind
    if kind == cfg.TARGET:
        return target_names(node.target)
    if kind == cfg.WITH:
        return target_names(node.optional_vars) if node.optional_vars is not None else []
    if kind == cfg.HANDLER:
        return [node.name] if node.name else []
    if kind == cfg.CASE:
        return [n for sub in walk(node.pattern) for n in (getattr(sub, "name", None), getattr(sub, "rest", None))
                if isinstance(n, str)]
    if kind != cfg.STMT:
        return []
    if isinstance(node, ast.Assign):
        return [name for target in node.targets for name in target_names(target)]
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return target_names(node.target)
    if isinstance(node, ast.Delete):
        return [name for target in node.targets for name in target_names(target)]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    return []


class _StepNodes:
    """What the transfer needs of one step, found in one walk: the names shown to be arrays by
    an `.at[...]` method, the names read, the names a walrus binds."""

    __slots__ = ("shown", "reads", "walrus")

    def __init__(self, roots: List[ast.AST], at_calls: bool):
        shown, reads, walrus = set(), [], set()
        for node in nodes_run_with(roots):
            cls = node.__class__
            if cls is ast.Name:
                if node.ctx.__class__ is ast.Load:
                    reads.append(node)
            elif cls is ast.Call:
                if at_calls:
                    name = at_updated(node)
                    if name is not None:
                        shown.add(name)
            elif cls is ast.NamedExpr and isinstance(node.target, ast.Name):
                walrus.add(node.target.id)
        self.shown = frozenset(shown)
        self.reads = reads
        self.walrus = frozenset(walrus)


def _array_parameters(facts: ArrayQuestions, scope: Scope, fn: ast.AST) -> Arrays:
    args = fn.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs]  # `*xs: Array` makes `xs` a tuple
    found = {p.arg for p in params if facts.array_annotation(p.annotation, scope)}
    unchanged = {p.arg for p in params} - set(scope.assigned) - scope.other
    if unchanged - found and facts.at_updates_in_text:
        for node in nodes_run_with(fn.body):
            name = at_updated(node)
            if name in unchanged:
                found.add(name)
    items = {(p.arg, ITEMS) for p in params if p.arg not in found and facts.items_annotation(p.annotation, scope)}
    return frozenset((name, JAX) for name in found) | items


def at_updated(node: ast.AST) -> Optional[str]:
    """`x` when `node` is `x.at[i].get()`, `x.at[i].set(v)`, ..."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _AT_METHODS
        and isinstance(node.func.value, ast.Subscript)
        and isinstance(node.func.value.value, ast.Attribute)
        and node.func.value.value.attr == "at"
        and isinstance(node.func.value.value.value, ast.Name)
    ):
        return node.func.value.value.value.id
    return None


def parallel(target: ast.AST, value: ast.AST) -> bool:
    """`a, b = x, y`: a tuple target and a tuple value of the same length, nothing starred."""
    return (
        isinstance(target, (ast.Tuple, ast.List))
        and isinstance(value, (ast.Tuple, ast.List))
        and len(target.elts) == len(value.elts)
        and not any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts))
    )
