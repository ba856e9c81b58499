"""What one step of a function does to the key state: statements, expressions, bindings.

The control-flow graph and the solver (`key_domain`) decide the order and the joins; this
is the transfer function of one step on one `KeyState`, with what it needs to know of the
step's place: the loops and branch conditions that enclose it, and the loop whose later
iterations are being run (`carried`).  Expressions keep their own small control flow:
`a and b`, `x if c else y` and comprehensions join their paths here, a comprehension run
until its state repeats.
"""

from __future__ import annotations

import ast
import itertools
from typing import TYPE_CHECKING, Callable

from jaxlint.analysis.engine import cfg
from jaxlint.analysis.engine.names import FUNCTION_TYPES
from jaxlint.analysis.engine.walk import attribute_path, children
from jaxlint.analysis.keys.key_calls import CallTransfer, record_field
from jaxlint.analysis.keys.key_draws import Draws
from jaxlint.analysis.keys.flax_runs import streams_for_init
from jaxlint.analysis.keys.key_state import (
    DEFINITE,
    UNUSED,
    Elem,
    KeyState,
    Ref,
    Streams,
    Tied,
    Use,
    join,
)
from jaxlint.analysis.keys.key_syntax import target_names
from jaxlint.analysis.knowledge import random_api as api

if TYPE_CHECKING:
    from jaxlint.analysis.keys.key_state import ModuleKeys

_FUNCTIONS = frozenset(FUNCTION_TYPES)
_COMPREHENSIONS = frozenset({ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp})
SETTING = "setting: "  # the prefix of a flag that decides a setting test (`key_function_forms.setting_tests`)
COMPARED = "compared: "  # of one that decides a comparison of a parameter with a number (`compared_parameters`)
_MAX_PASSES = 8  # a safety net for comprehensions: the lattice is finite and they converge in two or three


class KeyTransfer(CallTransfer):
    """The transfer function of one function body (or the module's statements) over `KeyState`."""

    def __init__(
        self, flow: ModuleKeys, fn: ast.AST, keynames: frozenset[str], quiet: bool = False,
        flags: dict[str, bool] | None = None,
    ):
        self.flow = flow
        self.quiet = quiet  # a summary for other modules: nothing is reported
        self.flags = flags or {}  # what the call being summarised decides (`key_domain.analyse`)
        self.chooses_keys = False  # a conditional expression on a flag holds keys on one arm only
        # Per `return` run, the places of its tuple holding one key (`Tied`); whether an exit
        # returns nothing.
        self.ties: list[frozenset[tuple[int, ...]]] = []
        self.fell_off = False
        self.names = flow.names
        self.fn = fn
        self.keynames = keynames
        self.loop_body = flow.loop_bodies.get(id(fn))  # (call, primitive) when fn is a loop body
        self.ids: dict[tuple[object, object], int] = {}
        self.arrays: set[int] = set()
        self.closure: set[int] = set()  # values closed over by a loop primitive's body
        self.globals: dict[int, str] = {}  # module-level keys read by a compiled function
        self.params: dict[str, int] = {}
        self.free: dict[str, int] = {}  # keys read from the function around it (`enclosing_keys`)
        # id(`ts.rng`) -> the key `ts = ts.replace(rng=rng)` put there (`rng`), by which messages name it
        self.field_reads: dict[int, ast.expr] = {}
        # The loops (innermost last) and branch conditions around the step being run, asked
        # of `locate` only when a rule of consumption needs them.
        self.locate: Callable[[cfg.Step], tuple[list, list]] | None = None
        self._around: tuple[list, list] | None = ([], [])
        self.carried: ast.AST | None = None  # the loop whose later iterations are being run
        self.seeds: dict[int, int] = {}  # value id -> index in flow.seed_candidates
        # The names of the objects keys are kept on (`self` of `self.key`, `state` of `state.key`).
        self.holders = frozenset(name.split(".", 1)[0] for name in keynames if "." in name)
        # Reports wait, per (block, phase) run, until the states are solved: only a block's last
        # run, from its final state, counts.  `at` is the block, phase and position being run.
        self.reports: dict[tuple, list[tuple[tuple, Callable[[], None]]]] = {}
        self.at: tuple = (-1, (), None)  # the block, phase and step being run
        self._seq = itertools.count()
        self.draws = Draws()  # what the splits' children become (`key_draws`)
        self._binding: ast.stmt | None = None  # the assignment being run
        # id(split call) -> where its undrawn children are handed back (`Draws.undrawn`), once solved.
        self.undrawn: dict[int, frozenset[tuple[int, ...]]] = {}

    def value(self, node: object, part: object = None, array: bool = False) -> int:
        key = (node if isinstance(node, tuple) else id(node), part)
        vid = self.ids.get(key)
        if vid is None:
            vid = self.ids[key] = len(self.ids) + 1
        if array:
            self.arrays.add(vid)
        return vid

    def join(self, states: list[KeyState | None], where: object, guard: ast.AST | None = None) -> KeyState | None:
        anchor = where if isinstance(where, (ast.AST, tuple)) else self.fn
        return join(
            states,
            lambda name: self.value(anchor, ("phi", name)),
            lambda name: name in self.keynames,
            guard,
        )

    def entry(self) -> KeyState:
        """The state on entry: the key parameters, and keys the body reads from outside."""
        state = KeyState()
        fn = self.fn
        if not isinstance(fn, FUNCTION_TYPES):
            return state
        args = fn.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None and arg.arg in self.keynames:
                vid = self.value(arg)
                self.params[arg.arg] = vid
                state.env[arg.arg] = vid
        scope = self.names.scope_of(fn)
        enclosing = self.flow.keynames.enclosing_keys(fn)
        compiled = id(fn) in self.flow.compiled and not self.quiet
        for name in self.keynames:
            # `state.key` is the function's own when it binds `state` (a loop body's carry).
            if not scope.binds(name.split(".", 1)[0]) and name not in state.env:
                vid = self.value(fn, ("free", name))
                state.env[name] = vid
                if name in enclosing:
                    self.free[name] = vid
                if self.loop_body is not None:
                    self.closure.add(vid)
                if compiled and name in self.flow.module_keys and self.names.lookup(name, scope) is self.names.module:
                    self.globals[vid] = name
        return state

    def module_key(self, name: str) -> int:
        """The module-level key `name`, read here as the function would read the name itself."""
        vid = self.value(self.fn, ("free", name))
        if id(self.fn) in self.flow.compiled and not self.quiet:
            self.globals[vid] = name
        return vid

    def returns_params(self, value: ast.AST | None, state: KeyState) -> frozenset[str]:
        """The parameters a `return` hands back unchanged, by name."""
        if not isinstance(value, ast.Name):
            return frozenset()
        ref = state.env.get(value.id)
        return frozenset(name for name, vid in self.params.items() if vid == ref)

    # ---- reports: kept until the states are solved, then made in the interpreter's order ----
    def report_reuse(self, use: Use, first: Use | None, loop: ast.AST | None,
                     primitive: str | None = None, guard: ast.AST | None = None, other: Use | None = None,
                     partial: bool = False) -> None:
        """`other`: a consumption before `use` known to draw, where `first` may draw nothing;
        `partial`: `first` is a function seen that draws on some of its paths only (`Mark.partial`)."""
        if not self.quiet:
            self._defer(lambda: self.flow.report_reuse(self, use, first, loop, primitive, guard, other, partial))

    def draws_numbers(self, use: Use) -> bool:
        """Whether numbers come of a consumption (`key_draws`); a split's is known once solved."""
        if use.draws is not None:
            return use.draws
        return self.undrawn.get(id(use.call)) != frozenset()

    def report_global(self, name: str, use: Use) -> None:
        if not self.quiet:
            self._defer(lambda: self.flow.report_global(self.fn, name, use))

    def seed_consumed(self, index: int) -> None:
        if not self.quiet:
            self._defer(lambda: self.flow.seed_consumed(index))

    def _defer(self, report: Callable[[], None]) -> None:
        """Keep a report with where an interpreter walking the code would make it: in statement
        order, a loop's later iterations after its first (by iteration)."""
        block, phase, step = self.at
        position = _position(step) if step is not None else (0, 0)
        if phase:
            loop, count = phase[0]
            order = (loop.end_lineno or 0, loop.end_col_offset or 0, count, *position)
        else:
            order = (*position, 0, 0, 0)
        self.reports.setdefault((block, phase), []).append(((*order, next(self._seq)), report))

    @property
    def loops(self) -> list[ast.AST]:
        return self._place()[0]

    @property
    def guards(self) -> list[ast.AST]:
        return self._place()[1]

    def _place(self) -> tuple[list, list]:
        if self._around is None:
            self._around = self.locate(self.at[2])
        return self._around

    # ---- steps -----------------------------------------------------------------------
    def step(self, step: cfg.Step, state: KeyState) -> None:
        node, kind = step.node, step.kind
        if kind == cfg.STMT:
            self.stmt(node, state)
        elif kind == cfg.TEST:
            self.condition(node.test, state)
        elif kind == cfg.ITER:
            self.expr(node.iter, state)
        elif kind == cfg.TARGET:
            self.bind(node.target, None, node, state, fresh=True)
            if self.splits(node.iter):
                for name in target_names(node.target):
                    if isinstance(state.env.get(name), int):
                        self.draws.bound(state.env[name], node.iter, node)
        elif kind == cfg.WITH:
            self.expr(node.context_expr, state)
            if node.optional_vars is not None:
                self.bind(node.optional_vars, None, node.context_expr, state)
        elif kind == cfg.SUBJECT:
            self.expr(node.subject, state)
        # an except clause, a match case: nothing binds a key

    def stmt(self, node: ast.stmt, state: KeyState) -> None:
        self._binding = node if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
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
            self.ties.append(_ties(node.value, state))
            if node.value is not None:
                self.carry(node.value, state)
                self.expr(node.value, state)
                self.returned_functions(node, state)
                self.hand_back(node, state)
                for name, ref, position in self.returned_keys(node.value, state):
                    self.draws.handed_back(ref, name, position)
        elif isinstance(node, ast.Raise):
            if node.exc is not None:
                self.expr(node.exc, state)
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

    def iterate(self, iteration, first: KeyState | None, node: ast.AST) -> list[KeyState | None]:
        """A comprehension's states at the end of its second and later iterations, run until they repeat.

        Each iteration starts from the state the previous one ended with, so a key is reported
        only where every path through the iterations before consumed it.  Past `_MAX_PASSES`
        the states are joined instead (coarser, still sound).
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
            if target.id in self.holders:
                _forget_held(target.id, state)  # another object: the keys it holds are its own
            if isinstance(ref, (int, Elem)) and not fresh:
                state.env[target.id] = ref
                if isinstance(ref, int):
                    state.used.setdefault(ref, UNUSED)
                    if ref in self.draws.children:
                        self.draws.copied(ref, value, self._statement(value))
            elif isinstance(ref, Streams) and target.id not in self.keynames:
                state.env[target.id] = ref  # handed on, it hands on its keys (`CallTransfer._args`)
            elif isinstance(value, (ast.Tuple, ast.List)) and target.id not in self.keynames and not fresh and (held := _listed(value, state)):
                # `args = (model_type, rng, shape)`: handed on, or spread (`create(*args)`), it
                # hands on its keys as the literal would.
                state.env[target.id] = Streams(held)
            elif target.id in self.keynames:
                vid = self.value(target)
                state.env[target.id] = vid
                self.fresh(vid, state)
                if isinstance(ref, tuple) and ref and ref[0] == "array":
                    self.arrays.add(vid)
                split = self.splits(value)
                if split is not None:
                    self.draws.bound(vid, split, self._statement(value))
                if isinstance(ref, tuple) and ref and ref[0] == "seed" and ref[1] is not None:
                    self.seeds[vid] = ref[1]
            else:
                state.env.pop(target.id, None)
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(ref, Tied) and not fresh and not any(
            isinstance(e, ast.Starred) for e in target.elts
        ):
            # `key, rng = random_split(rng)` of a function returning `key, key`: one key twice.
            for i, element in enumerate(target.elts):
                group = next((g for g in ref.groups if i in g), None)
                if group is None or not isinstance(element, ast.Name) or element.id not in self.keynames:
                    self.bind(element, None, value, state, fresh=True)
                    continue
                vid = self.value(value, ("tied", group))
                if i == group[0]:
                    self.fresh(vid, state)
                self.bind(element, vid, value, state)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = None
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) and not fresh:
                items = value.elts
            # `key, actor_key = keys` of a key array (or a parameter holding several keys): each
            # name is that element, as `keys[0]` is.
            unpacked = isinstance(ref, int) and not fresh and not any(isinstance(e, ast.Starred) for e in target.elts)
            for i, element in enumerate(target.elts):
                if unpacked:
                    self.bind(element, Elem(ref, i), value, state)
                elif isinstance(element, ast.Starred):
                    self.bind(element.value, ("array",), value, state, fresh=True)
                elif items is not None:
                    self.bind(element, _alias(items[i], state), items[i], state)
                else:
                    self.bind(element, None, value, state, fresh=True)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, ("array",), value, state, fresh=True)
        elif attribute_path(target) in self.keynames:
            dotted = attribute_path(target)
            if isinstance(ref, (int, Elem)) and not fresh:
                state.env[dotted] = ref
            else:
                vid = self.value(target)
                state.env[dotted] = vid
                self.fresh(vid, state)
        else:
            # attribute or subscript target: the key escapes into an object; not followed
            self.expr(target, state)
            if isinstance(ref, Streams) and ref.fixed:
                # A partial stored on an object may be called at any time: its keys are used.
                for member, held in ref.keys:
                    self.consume(held, Use(member, value, "call", "`functools.partial`"), DEFINITE, state)

    def splits(self, value: ast.AST) -> ast.Call | None:
        """The `jax.random.split` call whose children `value` holds: the call, an element of it
        (`split(k)[0]`), or a starred rest."""
        while isinstance(value, (ast.Subscript, ast.Starred)):
            value = value.value
        if isinstance(value, ast.Call) and api.public(self.names.qualname(value.func)) == api.SPLIT:
            return value
        return None

    def _statement(self, value: ast.AST) -> ast.stmt | None:
        """The statement that binds `value`: the assignment being run (a loop's own statement, for
        its target)."""
        return value if isinstance(value, ast.stmt) else self._binding

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
        """`a and b`: the first operand always runs, the others perhaps not: join both outcomes.
        The first operand chooses whether the others run, as an `if` on it would: a key they
        consume is consumed when it held (`and`) or did not (`or`)."""
        first = node.values[0]
        evaluate(first, state)
        rest = state.copy()
        self.guards.append(first)
        for value in node.values[1:]:
            evaluate(value, rest)
        self.guards.pop()
        joined = self.join([state.copy(), rest], node, first)
        state.env, state.used = joined.env, joined.used

    def expr(self, node: ast.AST, state: KeyState) -> object:
        """Evaluate for its consumptions; return the key value it denotes, if any."""
        cls = node.__class__
        if cls is ast.Name:
            return state.env.get(node.id) if node.ctx.__class__ is ast.Load else None
        if cls is ast.Call:
            result = self.call(node, state)
            if self.holders:
                for holder in _seen_holders(node, self.holders):
                    _forget_held(holder, state)  # a call that can see the object may rebind its keys
            return result
        if cls is ast.Attribute:
            if node.value.__class__ is ast.Name and node.ctx.__class__ is ast.Load:
                held = _field_key(node.value.id, node.attr, state, self.names)
                if held is not None:  # `ts.rng` of `ts = ts.replace(rng=rng)`: that key
                    self.field_reads[id(node)] = held[0]
                    return held[1]
            dotted = attribute_path(node)
            if dotted is not None and dotted in self.keynames and node.ctx.__class__ is ast.Load:
                return self._instance_key(dotted, node, state)
            self.expr(node.value, state)
            return None
        if cls is ast.Constant:
            return None
        if cls is ast.Subscript:
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
        if cls in _FUNCTIONS:
            return None  # analysed on its own
        if cls in _COMPREHENSIONS:
            self.comprehension(node, state)
            return None
        if cls is ast.Dict:
            return self._streams(node, state)
        if cls is ast.IfExp:
            arm = self.decided_arm(node)
            if arm is not None:  # a literal test, or one the call decides: the other branch never runs
                return self.expr(arm, state)
            self.condition(node.test, state)
            then, other = state.copy(), state.copy()
            self.guards.append(node.test)
            chosen = (self.expr(node.body, then) is None, self.expr(node.orelse, other) is None)
            self.guards.pop()
            if chosen[0] != chosen[1] and _decidable(node.test):
                # Keys on one arm only (`rngs={"dropout": rng} if train else {}`): a call that
                # decides the test decides whether they are handed on (`KeyFlow.deciding_flags`).
                self.chooses_keys = True
            joined = self.join([then, other], node, node.test)
            state.env, state.used = joined.env, joined.used
            return None
        if cls is ast.BoolOp:
            self._short_circuit(node, state, self.expr)
            return None
        if cls is ast.NamedExpr:
            ref = self.expr(node.value, state)
            self.bind(node.target, ref, node.value, state)
            return ref
        for child in children(node):
            self.expr(child, state)
        return None

    def decided_arm(self, node: ast.IfExp) -> ast.expr | None:
        """The arm of a conditional expression that a literal test, or the call, chooses."""
        truth = known_truth(node.test, self.flags)
        return None if truth is None else node.body if truth else node.orelse

    def _streams(self, node: ast.Dict, state: KeyState) -> Streams | None:
        """A dict of named streams (Flax's `rngs={"dropout": k, "noise": k}`) given one key in two
        slots: each slot is a stream derived from its key the same way, so the two draw the same
        numbers. A `params` slot draws only while parameters are made, when what the other
        streams draw decides nothing that is kept, and an `init` keeps nothing but the
        parameters: there the key is used twice, but no kept number repeats (JAX207's).

        The keys it holds, when it holds any: bound to a name and handed on, the dict hands them
        on as the literal would."""
        seen: dict[object, Use] = {}
        held: list[tuple[ast.expr, Ref]] = []
        spent: bool | None = None  # whether only an `init` reads the streams (`streams_for_init`)
        for slot, value in zip(node.keys, node.values):
            if slot is not None:
                self.expr(slot, state)
            ref = self.expr(value, state)
            if isinstance(ref, (int, Elem)) and all(ref != r for _, r in held):
                held.append((value, ref))
            if not isinstance(ref, int) or not isinstance(slot, ast.Constant) or not isinstance(slot.value, str):
                continue
            if spent is None:  # asked again on every pass of the solver: kept per dict
                spent = self.flow.init_streams.get(id(node))
                if spent is None:
                    spent = self.flow.init_streams[id(node)] = streams_for_init(node, self.fn, self.names)
            draws = slot.value != "params" and not spent
            use = Use(value, node, "slot", f"the `{slot.value}` stream", init=spent, draws=draws)
            if ref in seen:
                self.report_reuse(use, seen[ref], None)
            if ref not in seen or use.draws and not seen[ref].draws:
                seen[ref] = use  # a stream that draws: what a later one repeats
        return Streams(tuple(held)) if held else None

    def fresh(self, vid: int, state: KeyState) -> None:
        """A new key bound where an earlier iteration bound one: nothing has happened to it yet."""
        state.used[vid] = UNUSED
        state.used.pop(("fold", vid), None)
        for slot in [s for s in state.used if _flax_slot_of(s, vid)]:
            del state.used[slot]
        if vid in self.arrays:
            for slot in [s for s in state.used if isinstance(s, Elem) and s.array == vid]:
                del state.used[slot]

    def _instance_key(self, dotted: str, node: ast.AST, state: KeyState) -> Ref:
        """The value of `self.key` (`state.key`) here: the one last seen, or a new one after
        anything could have changed it."""
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

def _listed(node: ast.Tuple | ast.List, state: KeyState) -> tuple[tuple[ast.expr, Ref], ...]:
    """The keys a tuple or list literal writes out by name, each with the name."""
    held: list[tuple[ast.expr, Ref]] = []
    for item in node.elts:
        ref = state.env.get(item.id) if isinstance(item, ast.Name) else None
        if isinstance(ref, (int, Elem)) and all(ref != r for _, r in held):
            held.append((item, ref))
    return tuple(held)


def _alias(node: ast.AST, state: KeyState) -> Ref | None:
    if isinstance(node, ast.Name):
        return state.env.get(node.id)
    return None


def _seen_holders(call: ast.Call, holders: frozenset[str]) -> set[str]:
    """The objects holding keys that the call can rebind attributes of: `self.method(...)`,
    `obj.method(self)`, `helper(state, ...)`."""
    func = call.func
    seen = {arg.id for arg in [*call.args, *(k.value for k in call.keywords)] if isinstance(arg, ast.Name)}
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        seen.add(func.value.id)
    return seen & holders


def _forget_held(holder: str, state: KeyState) -> None:
    prefix = holder + "."
    for name in [n for n in state.env if n.startswith(prefix)]:
        del state.env[name]


def _position(step: cfg.Step) -> tuple[int, int]:
    node = step.node
    if isinstance(node, ast.withitem):
        node = node.context_expr
    elif type(node).__name__ == "match_case":
        node = node.pattern
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def known_truth(test: ast.expr, flags: dict[str, bool]) -> bool | None:
    """The truth of a literal (`if False:`), of `flag`, `flag is None`, `flag is not None`,
    `isinstance(flag, int)` or `flag > 0` (a comparison with a number) where the caller decides it, or of `not` any of those, of a setting test given by its text
    (`key_function_forms.setting_tests`), else None."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    operand = test.operand if negated else test
    if flags and any(flag.startswith(SETTING) for flag in flags):
        setting = flags.get(SETTING + ast.unparse(test))
        if setting is not None:
            return setting
    if flags and isinstance(operand, ast.Compare) and any(flag.startswith(COMPARED) for flag in flags):
        compared = flags.get(COMPARED + ast.unparse(operand))
        if compared is not None:
            return compared is not negated
    if isinstance(operand, ast.Constant):
        return bool(operand.value) is not negated
    if isinstance(operand, ast.Name):
        truth = flags.get(operand.id)
    else:
        tested = keyless_test(operand)
        if tested is None:
            return None
        _, holds, flag = tested
        truth = flags.get(flag)
        negated = negated is holds
    if truth is None:
        return None
    return truth is not negated


def _ties(value: ast.expr | None, state: KeyState) -> frozenset[tuple[int, ...]]:
    """The places of a returned tuple that hold one key (`return key, key`), in groups."""
    if not isinstance(value, ast.Tuple):
        return frozenset()
    places: dict[int, list[int]] = {}
    for i, element in enumerate(value.elts):
        ref = state.env.get(element.id) if isinstance(element, ast.Name) else None
        if isinstance(ref, int):
            places.setdefault(ref, []).append(i)
    return frozenset(tuple(found) for found in places.values() if len(found) > 1)


def _decidable(test: ast.expr) -> bool:
    """Whether a call can decide `test` (`known_truth`): a name, `name is None`, their negations."""
    operand = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
    return isinstance(operand, ast.Name) or keyless_test(operand) is not None


def keyless_test(test: ast.expr) -> tuple[str, bool, str] | None:
    """`(name, True, flag)` for a test that holds where `name` is given no key: `name is None`,
    or `isinstance(name, int)` (a seed given in its place); `(name, False, flag)` for `name is
    not None`; else None. `flag` names the test among the flags a call decides
    (`KeyFlow._literal_flags`): `"name is None"`, `"name is an int"`."""
    if (
        isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.IsNot))
        and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None
    ):
        return test.left.id, isinstance(test.ops[0], ast.Is), f"{test.left.id} is None"
    if (
        isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
        and len(test.args) == 2 and not test.keywords and isinstance(test.args[0], ast.Name)
        and isinstance(test.args[1], ast.Name) and test.args[1].id == "int"
    ):
        return test.args[0].id, True, f"{test.args[0].id} is an int"
    return None


def _flax_slot_of(slot: object, vid: int) -> bool:
    """Whether `slot` records the Flax runs (`CallTransfer.consume`) of the key `vid` or of an element of it."""
    if not (isinstance(slot, tuple) and len(slot) == 3 and slot[0] == "flax"):
        return False
    key = slot[1]
    return key == vid or (isinstance(key, Elem) and key.array == vid)


def _field_key(base: str, field_name: str, state: KeyState, names) -> tuple[ast.expr, Ref] | None:
    """The key the record bound to the name `base` holds in a field (`ts.rng` of `ts =
    ts.replace(rng=rng)`, the field kept by later copies), with how it was put in, if one was."""
    streams = state.env.get(base)
    if not isinstance(streams, Streams) or not streams.record:
        return None
    return next(((put, ref) for put, ref in streams.keys if record_field(put, names) == field_name), None)
