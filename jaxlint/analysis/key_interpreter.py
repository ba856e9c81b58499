"""The transfer functions of the key state: one function body, statement by statement.

Branches run from copies of the state and join; a loop body runs from the loop's entry, then
from the state each iteration ends with, until that state repeats (joined past a bound, an
ascending chain that reaches a fixed point); a loop entered again with a state it has already
seen reuses its result.  Every report made on the way is sound on its own: a key is reported
as reused only where every path that reaches the use consumed it before.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Iterable

from jaxlint.analysis import random_api as api
from jaxlint.analysis.key_calls import CallTransfer
from jaxlint.analysis.key_names import self_attribute, target_names
from jaxlint.analysis.key_state import NONE, UNUSED, Elem, KeyState, Ref, join, join_levels
from jaxlint.analysis.names import FUNCTION_TYPES
from jaxlint.analysis.walk import children

if TYPE_CHECKING:
    from jaxlint.analysis.keys import KeyFlow

_MAX_PASSES = 8  # a safety net: the lattice is finite and every loop converges in two or three


class Summary:
    """What a function does to its key parameters: NONE, MAYBE or DEFINITE consumption, by name,
    and which parameters it returns unchanged."""

    def __init__(self, params: dict[str, int], key_params: frozenset[str], returns: frozenset[str] = frozenset()):
        self.params = params
        self.key_params = key_params
        self.returns = returns


NO_KEYS = Summary({}, frozenset())


class KeyInterpreter(CallTransfer):
    """One interpretation of one function body (or the module's statements)."""

    def __init__(self, flow: "KeyFlow", fn: ast.AST, keynames: frozenset[str], quiet: bool = False):
        self.flow = flow
        self.quiet = quiet  # a summary for other modules: nothing is reported
        self.names = flow.names
        self.fn = fn
        self.keynames = keynames
        self.loop_body = flow.loop_bodies.get(id(fn))  # (call, primitive) when fn is a loop body
        self.ids: dict[tuple[int, object], int] = {}
        self.arrays: set[int] = set()
        self.closure: set[int] = set()  # values closed over by a loop primitive's body
        self.globals: dict[int, str] = {}  # module-level keys read by a compiled function
        self.params: dict[str, int] = {}
        self.loops: list[ast.AST] = []  # enclosing loops, innermost last
        self.guards: list[ast.AST] = []  # conditions of the enclosing `if`s
        self.carried: ast.AST | None = None  # the loop whose later iterations are being run
        self.exits: list[KeyState] = []
        self.returned: list[frozenset[str]] = []  # per return: the parameters it returns as they came
        self.breaks: list[list[KeyState]] = []
        self.continues: list[list[KeyState]] = []
        self.seeds: dict[int, int] = {}  # value id -> index in flow.seed_candidates
        self.memo: dict[tuple, tuple[KeyState | None, list[KeyState], list[frozenset[str]]]] = {}
        self.instance_keys = any(name.startswith("self.") for name in keynames)

    def value(self, node: ast.AST, part: object = None, array: bool = False) -> int:
        key = (id(node), part)
        vid = self.ids.get(key)
        if vid is None:
            vid = self.ids[key] = len(self.ids) + 1
        if array:
            self.arrays.add(vid)
        return vid

    def join(self, states: list[KeyState | None], where: object, guard: ast.AST | None = None) -> KeyState | None:
        anchor = where if isinstance(where, ast.AST) else self.fn
        return join(
            states,
            lambda name: self.value(anchor, ("phi", str(where), name)),
            lambda name: name in self.keynames,
            guard,
        )

    def execute(self) -> Summary:
        state = KeyState()
        fn = self.fn
        if isinstance(fn, FUNCTION_TYPES):
            args = fn.args
            for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
                if arg.arg in self.keynames:
                    vid = self.value(arg)
                    self.params[arg.arg] = vid
                    state.env[arg.arg] = vid
            scope = self.names.scope_of(fn)
            compiled = id(fn) in self.flow.compiled
            for name in self.keynames:
                if not scope.binds(name) and name not in state.env:
                    vid = self.value(fn, ("free", name))
                    state.env[name] = vid
                    if self.loop_body is not None:
                        self.closure.add(vid)
                    if compiled and not self.quiet and name in self.flow.module_keys and self.names.lookup(name, scope) is self.names.module:
                        self.globals[vid] = name
        try:
            if isinstance(fn, ast.Lambda):
                self.carry(fn.body, state)
                self.expr(fn.body, state)
                self.exits.append(state)
                self.returned.append(self.returns_params(fn.body, state))
            else:
                end = self.block(fn.body, state)
                if end is not None:
                    self.exits.append(end)
                    self.returned.append(frozenset())
        except RecursionError:
            return Summary({}, frozenset(self.params))
        consumed: dict[str, int] = {}
        for name, vid in self.params.items():
            levels = [s.mark(vid).level for s in self.exits]
            consumed[name] = join_levels(levels) if levels else NONE
        returns = frozenset.intersection(*self.returned) if self.returned else frozenset()
        return Summary(consumed, frozenset(self.params), returns)

    def returns_params(self, value: ast.AST | None, state: KeyState) -> frozenset[str]:
        if not isinstance(value, ast.Name):
            return frozenset()
        ref = state.env.get(value.id)
        return frozenset(name for name, vid in self.params.items() if vid == ref)

    # ---- statements ----------------------------------------------------------------
    def block(self, body: Iterable[ast.stmt], state: KeyState | None) -> KeyState | None:
        for stmt in body:
            if state is None:
                return None
            state = self.stmt(stmt, state)
        return state

    def stmt(self, node: ast.stmt, state: KeyState) -> KeyState | None:
        if isinstance(node, ast.Assign):
            ref = self.expr(node.value, state)
            for target in node.targets:
                self.bind(target, ref, node.value, state)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.bind(node.target, self.expr(node.value, state), node.value, state)
        elif isinstance(node, ast.AugAssign):
            self.expr(node.value, state)
            self.bind(node.target, None, node, state)
        elif isinstance(node, ast.Expr):
            self.expr(node.value, state)
        elif isinstance(node, ast.Return):
            if node.value is not None:
                self.carry(node.value, state)
                self.expr(node.value, state)
            self.exits.append(state)
            self.returned.append(self.returns_params(node.value, state))
            return None
        elif isinstance(node, ast.Raise):
            if node.exc is not None:
                self.expr(node.exc, state)
            return None
        elif isinstance(node, ast.If):
            self.condition(node.test, state)
            self.guards.append(node.test)
            then = self.block(node.body, state.copy())
            other = self.block(node.orelse, state.copy())
            self.guards.pop()
            return self.join([then, other], node, node.test)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.expr(node.iter, state)
            return self.loop(node, state, node.body, node.orelse, target=node.target, may_skip=_may_skip(node))
        elif isinstance(node, ast.While):
            return self.loop(node, state, node.body, node.orelse, test=node.test, may_skip=not _always_true(node.test))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                self.expr(item.context_expr, state)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, None, item.context_expr, state)
            return self.block(node.body, state)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            return self.try_(node, state)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in node.decorator_list:
                self.expr(decorator, state)
            state.env.pop(node.name, None)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    state.env.pop(target.id, None)
        elif isinstance(node, ast.Assert):
            self.condition(node.test, state)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                state.env.pop((alias.asname or alias.name).split(".")[0], None)
        elif isinstance(node, ast.Break):
            if self.breaks:
                self.breaks[-1].append(state)
            return None
        elif isinstance(node, ast.Continue):
            if self.continues:
                self.continues[-1].append(state)
            return None
        elif type(node).__name__ == "Match":
            self.expr(node.subject, state)
            self.guards.append(node.subject)
            ends = [self.block(case.body, state.copy()) for case in node.cases]
            self.guards.pop()
            return self.join([*ends, state], node, node.subject)
        return state

    def try_(self, node: ast.AST, state: KeyState) -> KeyState | None:
        entry = state.copy()
        end = self.block(node.body, state)
        ends = []
        for handler in node.handlers:
            start = self.join([entry, end], handler) if end is not None else entry.copy()
            if start is not None:
                ends.append(self.block(handler.body, start))
        if end is not None:
            end = self.block(node.orelse, end)
        after = self.join([end, *ends], node)
        if node.finalbody:
            if after is None:
                self.block(node.finalbody, entry.copy())
                return None
            after = self.block(node.finalbody, after)
        return after

    def loop(self, node, state, body, orelse, target=None, test=None, may_skip=True) -> KeyState | None:
        memo_key = (id(node), id(self.carried), _fingerprint(state))
        cached = self.memo.get(memo_key)
        if cached is not None:
            after, exits, returned = cached
            self.exits.extend(exits)
            self.returned.extend(returned)
            return after.copy() if after is not None else None
        exits_before, returned_before = len(self.exits), len(self.returned)
        self.loops.append(node)
        breaks: list[KeyState] = []
        outer_carried = self.carried

        def iteration(start: KeyState) -> KeyState | None:
            current = start.copy()
            if test is not None:
                self.condition(test, current)
            if target is not None:
                self.bind(target, None, node, current, fresh=True)
            self.breaks.append([])
            self.continues.append([])
            end = self.block(body, current)
            breaks.extend(self.breaks.pop())
            return self.join([end, *self.continues.pop()], (node, "back"))

        first = iteration(state)
        self.carried = node if outer_carried is None else outer_carried
        ends = [first, *self.iterate(iteration, first, node)]
        self.carried = outer_carried
        self.loops.pop()
        finished = self.join([state if may_skip else None, *ends], (node, "done"))
        if orelse and finished is not None:
            finished = self.block(orelse, finished)
        after = self.join([finished, *breaks], (node, "exit"))
        self.memo[memo_key] = (
            after.copy() if after is not None else None,
            self.exits[exits_before:],
            self.returned[returned_before:],
        )
        return after

    def iterate(self, iteration, first: KeyState | None, node: ast.AST) -> list[KeyState | None]:
        """The states at the end of the second and later iterations, run until the loop state repeats.

        Each iteration starts from the state the previous one ended with (`first`: the end of
        the first), so a key is reported only where every path through the iterations before
        consumed it; the states are finite, so they repeat.  Past `_MAX_PASSES` the states are
        joined instead (coarser, still sound), an ascending chain in a finite lattice.
        """
        ends: list[KeyState | None] = []
        seen = [first] if first is not None else []
        head = first
        for passes in range(2 * _MAX_PASSES):
            if head is None:
                break
            back = iteration(head)
            ends.append(back)
            if back is None:
                break
            if passes >= _MAX_PASSES:
                back = self.join([head, back], (node, "head"))
            if any(back.same(s) for s in seen):
                break
            seen.append(back)
            head = back
        return ends

    # ---- binding ---------------------------------------------------------------------
    def bind(self, target: ast.AST, ref: object, value: ast.AST, state: KeyState, fresh: bool = False) -> None:
        if isinstance(target, ast.Name):
            if isinstance(ref, (int, Elem)) and not fresh:
                state.env[target.id] = ref
                if isinstance(ref, int):
                    state.used.setdefault(ref, UNUSED)
            elif target.id in self.keynames:
                vid = self.value(target)
                state.env[target.id] = vid
                self.fresh(vid, state)
                if isinstance(ref, tuple) and ref and ref[0] == "array":
                    self.arrays.add(vid)
                if isinstance(ref, tuple) and ref and ref[0] == "seed" and ref[1] is not None:
                    self.seeds[vid] = ref[1]
            else:
                state.env.pop(target.id, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = None
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) and not fresh:
                items = value.elts
            for i, element in enumerate(target.elts):
                if isinstance(element, ast.Starred):
                    self.bind(element.value, ("array",), value, state, fresh=True)
                elif items is not None:
                    self.bind(element, _alias(items[i], state), items[i], state)
                else:
                    self.bind(element, None, value, state, fresh=True)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, ("array",), value, state, fresh=True)
        elif self_attribute(target) in self.keynames:
            dotted = self_attribute(target)
            if isinstance(ref, (int, Elem)) and not fresh:
                state.env[dotted] = ref
            else:
                vid = self.value(target)
                state.env[dotted] = vid
                self.fresh(vid, state)
        else:
            # attribute or subscript target: the key escapes into an object; not followed
            self.expr(target, state)

    # ---- expressions -----------------------------------------------------------------
    def condition(self, node: ast.AST, state: KeyState) -> None:
        """A test (`if`, `while`, `assert`): a call whose result is only tested is a predicate."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self.condition(node.operand, state)
        elif isinstance(node, ast.BoolOp):
            self._short_circuit(node, state, self.condition)
        elif (
            isinstance(node, ast.Call)
            and api.public(self.names.qualname(node.func)) not in api.RANDOM_API
            and self.flow.resolve(node.func) is None
        ):
            self.expr(node.func, state)
            self._args(node, state)  # looked at, not drawn from
        else:
            self.expr(node, state)

    def _short_circuit(self, node: ast.BoolOp, state: KeyState, evaluate: Callable[[ast.AST, KeyState], object]) -> None:
        """`a and b`: the first operand always runs, the others perhaps not: join both outcomes."""
        evaluate(node.values[0], state)
        rest = state.copy()
        for value in node.values[1:]:
            evaluate(value, rest)
        joined = self.join([state.copy(), rest], node)
        state.env, state.used = joined.env, joined.used

    def expr(self, node: ast.AST, state: KeyState) -> object:
        """Evaluate for its consumptions; return the key value it denotes, if any."""
        if isinstance(node, ast.Name):
            return state.env.get(node.id) if isinstance(node.ctx, ast.Load) else None
        if isinstance(node, ast.Call):
            result = self.call(node, state)
            if self.instance_keys and _sees_self(node):
                for name in [n for n in state.env if n.startswith("self.")]:
                    del state.env[name]  # a call that can see `self` may rebind any of its keys
            return result
        if isinstance(node, ast.Attribute):
            dotted = self_attribute(node)
            if dotted is not None and dotted in self.keynames and isinstance(node.ctx, ast.Load):
                return self._instance_key(dotted, node, state)
            self.expr(node.value, state)
            return None
        if isinstance(node, ast.Subscript):
            base = self.expr(node.value, state)
            self.expr(node.slice, state)
            if isinstance(base, int) and base in self.arrays:
                index = node.slice
                if isinstance(index, ast.Constant) and isinstance(index.value, int) and not isinstance(index.value, bool):
                    return Elem(base, index.value)
                if isinstance(index, ast.Slice):
                    return None
                return Elem(base, None)
            return None
        if isinstance(node, FUNCTION_TYPES):
            return None  # analysed on its own
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            self.comprehension(node, state)
            return None
        if isinstance(node, ast.IfExp):
            self.condition(node.test, state)
            then, other = state.copy(), state.copy()
            self.guards.append(node.test)
            self.expr(node.body, then)
            self.expr(node.orelse, other)
            self.guards.pop()
            joined = self.join([then, other], node, node.test)
            state.env, state.used = joined.env, joined.used
            return None
        if isinstance(node, ast.BoolOp):
            self._short_circuit(node, state, self.expr)
            return None
        if isinstance(node, ast.NamedExpr):
            ref = self.expr(node.value, state)
            self.bind(node.target, ref, node.value, state)
            return ref
        for child in children(node):
            self.expr(child, state)
        return None

    def fresh(self, vid: int, state: KeyState) -> None:
        """A new key bound where an earlier iteration bound one: nothing has happened to it yet."""
        state.used[vid] = UNUSED
        state.used.pop(("fold", vid), None)
        if vid in self.arrays:
            for slot in [s for s in state.used if isinstance(s, Elem) and s.array == vid]:
                del state.used[slot]

    def _instance_key(self, dotted: str, node: ast.AST, state: KeyState) -> Ref:
        """The value of `self.key` here: the one last seen, or a new one after anything could have changed it."""
        ref = state.env.get(dotted)
        if ref is None:
            ref = self.value(node, dotted)
            state.env[dotted] = ref
            state.used[ref] = UNUSED
        return ref

    def comprehension(self, node, state: KeyState) -> None:
        saved = {}
        for generator in node.generators:
            for name in target_names(generator.target):
                saved[name] = state.env.get(name)
        self.expr(node.generators[0].iter, state)
        elements = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]

        def body(s: KeyState) -> KeyState:
            for i, generator in enumerate(node.generators):
                if i:
                    self.expr(generator.iter, s)
                self.bind(generator.target, None, node, s, fresh=True)
                for condition in generator.ifs:
                    self.expr(condition, s)
            for element in elements:
                self.expr(element, s)
            return s

        self.loops.append(node)
        outer_carried = self.carried
        first = body(state.copy())
        self.carried = node if outer_carried is None else outer_carried
        ends: list[KeyState | None] = [first, *self.iterate(lambda s: body(s.copy()), first, node)]
        self.carried = outer_carried
        self.loops.pop()
        joined = self.join([state, *ends], node)
        state.env, state.used = joined.env, joined.used
        for name, ref in saved.items():
            if ref is None:
                state.env.pop(name, None)
            else:
                state.env[name] = ref

def _fingerprint(state: KeyState) -> tuple:
    return (
        frozenset(state.env.items()),
        frozenset(
            (slot, mark.level, id(mark.first.node) if mark.first else 0, id(mark.guard))
            for slot, mark in state.used.items()
        ),
    )


def _alias(node: ast.AST, state: KeyState) -> Ref | None:
    if isinstance(node, ast.Name):
        return state.env.get(node.id)
    return None


def _sees_self(call: ast.Call) -> bool:
    """`self.method(...)`, `obj.method(self)`, `helper(self, ...)`: the call can rebind attributes of `self`."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return True
    return any(
        isinstance(arg, ast.Name) and arg.id == "self"
        for arg in [*call.args, *(k.value for k in call.keywords)]
    )


def _may_skip(node: ast.For | ast.AsyncFor) -> bool:
    """Whether a `for` loop can run zero times (unknown iterables can)."""
    it = node.iter
    if isinstance(it, (ast.Tuple, ast.List)) and it.elts:
        return False
    if (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "range"
        and len(it.args) == 1
        and isinstance(it.args[0], ast.Constant)
        and isinstance(it.args[0].value, int)
        and it.args[0].value > 0
    ):
        return False
    return True


def _always_true(test: ast.AST) -> bool:
    return isinstance(test, ast.Constant) and bool(test.value)
