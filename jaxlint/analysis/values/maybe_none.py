"""Whether what a call passes may be None, as far as the code shows.

A function tests a parameter against None to tell "not given" from a value (`def mixup(batch,
rng=None): if rng is None: ...`): a call that passes an argument gives a value, unless what it
passes may itself be None. An expression may be None when it is:

- the literal None;
- a name bound, on some path that reaches it, to a value that may be None: a parameter whose
  default is None or whose annotation names None (`Optional[...]`, `X | None`), or an assignment
  of such a value, unless a test on that path has shown it is not since (`if x is None: x = ...`,
  `if x is not None:`, `assert x is not None`, a bare `if x:`). A name of the function around,
  or of the module, may be None when any of its bindings may be;
- a call the analysis knows can return None: of a plain function of the module, or (given
  `functions`) of the project, a `return` of which may (a bare `return` or the end of its body
  reached included), or a lookup whose default is None (`d.get(k)`, `getattr(obj, name, None)`,
  `next(it, None)`);
- a conditional expression an arm of which may be, an `or` whose last operand may be, an `and`
  any operand of which may be, an assignment expression whose value may be.
- anything the analysis does not follow to the end (more than `_DEPTH` steps deep, or a call of
  a function that is being solved: recursion).

Anything else is a value: an attribute, an item, an arithmetic result, a literal, a call of code
the analysis cannot see, a name a loop, a `with` or an `except` binds.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Optional, Tuple
from weakref import WeakKeyDictionary

from jaxlint.analysis.engine import cfg
from jaxlint.analysis.engine.dataflow import Domain, solve
from jaxlint.analysis.engine.names import FunctionNode, Names, Scope
from jaxlint.analysis.engine.walk import own_nodes
from jaxlint.analysis.tracing.parameters import default_of
from jaxlint.analysis.tracing.tracing import positional_params
from jaxlint.analysis.values.nullness import declares_optional, narrowed
from jaxlint.analysis.values.project_defs import ProjectDefinitions

State = FrozenSet[str]  # the names of the function that may be None

_DEPTH = 8  # expressions, names and functions followed this deep
_NOTHING: State = frozenset()
# Lookups that return their default where they find nothing: the default's position.
_DEFAULTED = {"builtins.getattr": 2, "builtins.next": 1}
_GET = "get"  # `mapping.get(key)`: None where the key is missing, unless a default is given


def may_be_none(expr: ast.expr, names: Names, functions: ProjectDefinitions | None = None) -> bool:
    """Whether `expr`, an expression of the module `names` indexes, may be None where it is
    evaluated (see the module's docstring); `functions` resolves calls into the project's other
    modules."""
    return _flow(names).may(expr, functions, _DEPTH, None, _NOTHING)


def optional_parameters(fn: FunctionNode, names: Names) -> frozenset[str]:
    """The parameters of `fn` that may be None when a call leaves them or passes None: a default
    of None, or an annotation that names None."""
    if isinstance(fn, ast.Lambda):
        params = [*positional_params(fn), *fn.args.kwonlyargs]
        return frozenset(p.arg for p in params if _none_default(fn, p))
    scope = names.enclosing_scope(fn)
    return frozenset(
        p.arg for p in (*positional_params(fn), *fn.args.kwonlyargs)
        if _none_default(fn, p) or p.annotation is not None and declares_optional(p.annotation, names, scope)
    )


def _none_default(fn: FunctionNode, param: ast.arg) -> bool:
    default = default_of(fn, param)
    return isinstance(default, ast.Constant) and default.value is None


def _flow(names: Names) -> "_NoneFlow":
    flow = _FLOWS.get(names)
    if flow is None:
        flow = _FLOWS[names] = _NoneFlow(names)
    return flow


class _NoneFlow:
    """One module's answers: per function, the names that may be None before each step, and
    whether it may return None; each function solved once, on first ask."""

    def __init__(self, names: Names):
        self.names = names
        self._before: Dict[int, Dict[int, State]] = {}  # id(function) -> id(step's node) -> state
        self._returns: Dict[int, bool] = {}  # id(function) -> whether it may return None
        self._active: set[int] = set()

    # ---- expressions ------------------------------------------------------------------------
    def may(self, expr: ast.AST, functions: ProjectDefinitions | None, depth: int,
            local: Optional[Tuple[Scope, State]], shown: State) -> bool:
        """`local`: the function being solved and its state where `expr` is evaluated; `shown`:
        names a test around `expr` shows are not None (a conditional expression's)."""
        if depth <= 0:
            return True  # not followed to the end: it may be, as far as the analysis knows
        cls = expr.__class__
        if cls is ast.Constant:
            return expr.value is None
        if cls is ast.Name:
            return expr.id not in shown and self._name(expr, functions, depth, local)
        if cls is ast.Call:
            return self._call(expr, functions, depth, local, shown)
        if cls is ast.IfExp:
            return self.may(expr.body, functions, depth - 1, local, shown | set(narrowed(expr.test, True))) or (
                self.may(expr.orelse, functions, depth - 1, local, shown | set(narrowed(expr.test, False)))
            )
        if cls is ast.BoolOp:
            if isinstance(expr.op, ast.Or):  # a None operand is false: only the last one is returned as it is
                return self.may(expr.values[-1], functions, depth - 1, local, shown)
            return any(self.may(v, functions, depth - 1, local, shown) for v in expr.values)
        if cls is ast.NamedExpr:
            return self.may(expr.value, functions, depth - 1, local, shown)
        return False

    def _name(self, node: ast.Name, functions: ProjectDefinitions | None, depth: int,
              local: Optional[Tuple[Scope, State]]) -> bool:
        scope = self.names.read_scope.get(id(node))
        owner = self.names.lookup(node.id, scope) if scope is not None else None
        if owner is None:
            return False  # a builtin, or a name never bound
        if local is not None and owner is local[0]:
            return node.id in local[1]
        if owner is scope and owner.kind == "function" and not isinstance(owner.node, ast.Lambda):
            state = self._state_before(node, owner.node, functions)
            if state is not None:
                return node.id in state
        return self._ever(owner, node.id, functions, depth)

    def _ever(self, owner: Scope, name: str, functions: ProjectDefinitions | None, depth: int) -> bool:
        """Whether any binding of `name` in `owner` may be None (read from another scope)."""
        if name in owner.params and name in optional_parameters(owner.node, self.names):
            return True
        return any(self.may(value, functions, depth - 1, None, _NOTHING) for value in owner.assigned.get(name, ()))

    def _call(self, call: ast.Call, functions: ProjectDefinitions | None, depth: int,
              local: Optional[Tuple[Scope, State]], shown: State) -> bool:
        func = call.func
        qualname = self.names.qualname(func)
        position = _DEFAULTED.get(qualname) if qualname is not None else None
        if position is None and isinstance(func, ast.Attribute) and func.attr == _GET:
            position = 1
            if len(call.args) == 1 and not call.keywords:
                return True  # `mapping.get(key)`
        if position is not None:
            return len(call.args) > position and self.may(call.args[position], functions, depth - 1, local, shown)
        definition = self.names.definition(func) if isinstance(func, ast.Name) else None
        if definition is not None:
            if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)) and not definition.decorator_list:
                return self.returns_none(definition, functions)
            return False  # a class (an instance), or a decorated def
        found = functions(qualname) if qualname is not None and functions is not None else None
        if found is None or isinstance(found.node, ast.ClassDef):
            return False
        return _flow(found.names).returns_none(found.node, found.definitions)

    # ---- functions --------------------------------------------------------------------------
    def returns_none(self, fn: ast.AST, functions: ProjectDefinitions | None) -> bool:
        """Whether a plain def may return None: a `return` of a value that may be, a bare one, or
        the end of its body reached. A generator or a coroutine function returns neither."""
        known = self._returns.get(id(fn))
        if known is None:
            if isinstance(fn, ast.AsyncFunctionDef) or any(
                isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(fn)
            ):
                self._returns[id(fn)] = False
                return False
            self._solve(fn, functions)
            known = self._returns.get(id(fn), True)  # unknown while it is being solved (recursion): it may
        return known

    def _state_before(self, node: ast.AST, fn: ast.AST, functions: ProjectDefinitions | None) -> Optional[State]:
        """The state before the step of `fn` that evaluates `node`; None where no path reaches it."""
        states = self._before.get(id(fn))
        if states is None:
            states = self._solve(fn, functions)
        parents = self.names.parents
        current: Optional[ast.AST] = node
        while current is not None and current is not fn:
            state = states.get(id(current))
            if state is not None:
                return state
            current = parents.get(id(current))
        return None

    def _solve(self, fn: ast.AST, functions: ProjectDefinitions | None) -> Dict[int, State]:
        """Solved with the whole depth, whoever asks first: a function's answers do not depend on
        the order of the questions (the same findings in a folder run and a one-file run)."""
        if id(fn) in self._active:
            return {}  # asked again while being solved (a recursive function): not yet known
        self._active.add(id(fn))
        try:
            graph = cfg.build(fn)
            domain = _Domain(self, self.names.scope_of(fn), functions, _DEPTH)
            solution = solve(graph, domain, optional_parameters(fn, self.names))  # type: ignore[arg-type]
            states: Dict[int, State] = {}
            returns = False
            for block in graph.order():
                state = solution.entry_states.get(block.index)
                if state is None:
                    continue
                for step in block.steps:
                    if step.kind != cfg.TARGET:  # a loop's target is read before by its iterable's step
                        states.setdefault(id(step.node), state)
                    node = step.node
                    if step.kind == cfg.STMT and isinstance(node, ast.Return):
                        returns = returns or node.value is None or domain.may(node.value, state)
                    state = domain.transfer(step, state)
                last = block.steps[-1] if block.steps else None
                if not block.edges and not (last is not None and isinstance(last.node, (ast.Return, ast.Raise))):
                    returns = True  # the end of the body: None is returned
        finally:
            self._active.discard(id(fn))
        self._before[id(fn)] = states
        self._returns[id(fn)] = returns
        return states


class _Domain(Domain[State]):
    """The names of one function that may be None, step by step."""

    def __init__(self, flow: _NoneFlow, scope: Scope, functions: ProjectDefinitions | None, depth: int):
        self.flow, self.scope, self.functions, self.depth = flow, scope, functions, depth

    def may(self, expr: ast.AST, state: State) -> bool:
        return self.flow.may(expr, self.functions, self.depth, (self.scope, state), _NOTHING)

    def copy(self, state: State) -> State:
        return state

    def join(self, a: State, b: State) -> State:
        return a | b

    def transfer(self, step: cfg.Step, state: State) -> State:
        node = step.node
        kind = step.kind
        if kind == cfg.STMT:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    state = self._bind(target, node.value, state)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                state = self._bind(node.target, node.value, state)
            elif isinstance(node, (ast.AugAssign, ast.Delete)):
                targets = [node.target] if isinstance(node, ast.AugAssign) else node.targets
                state = state - {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                state = state - {node.name}
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                state = state - {(alias.asname or alias.name).split(".")[0] for alias in node.names}
            elif isinstance(node, ast.Assert):
                state = state - set(narrowed(node.test, True))
        elif kind in (cfg.TARGET, cfg.WITH):
            target = node.target if kind == cfg.TARGET else node.optional_vars
            if target is not None:
                state = state - {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif kind == cfg.HANDLER and node.name:
            state = state - {node.name}
        for expr in cfg.evaluated(step) if kind != cfg.STMT or not isinstance(node, _DEFINITIONS) else ():
            for inner in ast.walk(expr):
                if isinstance(inner, ast.NamedExpr):
                    state = self._bind(inner.target, inner.value, state)
        return state

    def _bind(self, target: ast.AST, value: ast.AST, state: State) -> State:
        if isinstance(target, ast.Name):
            return state | {target.id} if self.may(value, state) else state - {target.id}
        if (
            isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
            and len(target.elts) == len(value.elts)
            and not any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts))
        ):
            for inner, item in zip(target.elts, value.elts):
                state = self._bind(inner, item, state)
            return state
        if isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            return state - {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        return state  # an attribute or an item

    def assume(self, edge: cfg.Edge, state: State) -> Optional[State]:
        test = edge.test
        if isinstance(test, ast.Constant) and bool(test.value) != edge.outcome:
            return None  # `while True:` is never left by its test
        shown = set(narrowed(test, edge.outcome))
        return state - shown if shown & state else state


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# Per module: what is known of its functions.
_FLOWS: "WeakKeyDictionary[Names, _NoneFlow]" = WeakKeyDictionary()
