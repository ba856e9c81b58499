"""Where PRNG keys flow: where each key is made, where it is consumed, and where it is consumed again.

A key is made by `jax.random.key`/`PRNGKey`/`split`/`fold_in`/`wrap_key_data`/`clone`, or
arrives as a parameter (or any other name) that the function uses as one.  Using a key in a
sampler, in `split`, or by passing it to a function that uses it, consumes it, as JAX's own
checker (`jax_debug_key_reuse`) counts: `fold_in`, `clone`, `key_data`, `jax.debug.print`,
`.shape`, comparisons and returning a key do not.

Each function (and the module's own statements) is interpreted once, path by path: a key
consumed on every path that reaches a second consumption is reused; a key consumed on only
some paths (one branch of an `if`, a static flag) is not reported.  A loop body is run twice,
the second time from the state at the end of the first iteration, so a key consumed in every
iteration but never rebound is found; a `lax.scan`/`fori_loop`/`while_loop` body that consumes
a key it closes over is reused on every iteration by construction.  Calls into functions of
the same module consume what those functions consume (a summary per function); calls into
code the analysis cannot see consume the keys passed to them directly.

Test functions (`test_*`, methods of `TestCase` classes) are interpreted for what they do to
keys but never reported: tests feed one key to two implementations on purpose.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Iterable, Union

from jaxlint.analysis import jax_api
from jaxlint.analysis.names import FUNCTION_TYPES, FunctionNode, Names, Scope
from jaxlint.analysis.tracing import Discovery, transform_of
from jaxlint.analysis.walk import children, walk

# ---- what jaxlint knows about jax.random, as data --------------------------------------
# Make a new key; their arguments are not keys (or, for wrap_key_data, raw key data).
KEY_CONSTRUCTORS = frozenset({"jax.random.key", "jax.random.PRNGKey", "jax.random.wrap_key_data"})
# Derive a new key from a key without consuming it (the checker: `Source`, no `Sink`).
KEY_DERIVATIONS = frozenset({"jax.random.fold_in", "jax.random.clone"})
SPLIT = "jax.random.split"
# Read a key without consuming it.
KEY_READERS = frozenset({"jax.random.key_data", "jax.random.key_impl"})
SAMPLERS = frozenset(
    "jax.random." + name
    for name in (
        "ball bernoulli beta binomial bits categorical cauchy chisquare choice dirichlet "
        "double_sided_maxwell exponential f gamma generalized_normal geometric gumbel laplace "
        "loggamma logistic lognormal maxwell multinomial multivariate_normal normal orthogonal "
        "pareto permutation poisson rademacher randint rayleigh shuffle t triangular "
        "truncated_normal uniform wald weibull_min"
    ).split()
)
# Calls that take a key as their first argument (or `key=`).
KEY_POSITION = SAMPLERS | KEY_DERIVATIONS | KEY_READERS | {SPLIT}

# Calls that look at a key without consuming it: printing, shapes, type checks, test
# assertions, host transfers.  The checker's `debug_callback`, `random_unwrap`, `eq`/`ne`
# and forwarding primitives.
_READING_CALLS = frozenset({
    "builtins.print", "builtins.isinstance", "builtins.len", "builtins.type", "builtins.str",
    "builtins.repr", "builtins.id", "builtins.hash", "builtins.getattr", "builtins.hasattr",
    "builtins.list", "builtins.tuple", "builtins.iter", "builtins.next", "builtins.zip",
    "builtins.enumerate", "builtins.dict", "builtins.sorted", "builtins.reversed",
    "builtins.format", "jax.device_put", "jax.device_get", "jax.eval_shape", "jax.typeof",
    "jax.core.get_aval", "jax.ShapeDtypeStruct", "jax.lax.stop_gradient",
    "jax.block_until_ready", "jax.tree_util.tree_structure", "jax.tree_util.tree_leaves",
    "jax.tree_util.tree_flatten", "jax.tree_util.tree_map", "jax.tree_util.tree_map_with_path",
})
_READING_PREFIXES = (
    "jax.debug.", "jax.numpy.", "numpy.", "logging.", "absl.logging.", "chex.assert",
    "jax.dtypes.", "pprint.", "warnings.",
)

# Control-flow primitives that run their body again and again with the same closure.
LOOP_PRIMITIVES = frozenset({
    "jax.lax.scan", "jax.lax.fori_loop", "jax.lax.while_loop", "jax.lax.map",
    "equinox.internal.while_loop",
})

_RANDOM_API = KEY_POSITION | KEY_CONSTRUCTORS
_RANDOM_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in _RANDOM_API)

NONE, MAYBE, DEFINITE = 0, 1, 2
_MAX_LOOP_DEPTH = 4


# ---- facts the rules read ----------------------------------------------------------------
@dataclass(frozen=True)
class Use:
    """One consumption of a key."""

    node: ast.AST  # the key expression as written at the consuming call
    call: ast.Call
    kind: str  # "split" | "sample" | "call"
    callee: str  # how to name the consumer in a message


@dataclass(frozen=True)
class Reuse:
    """A key consumed again.

    `loop` is None when both consumptions lie on one path; otherwise the loop (a `for`,
    `while` or comprehension node) across whose iterations the key is reused, or, for a key
    closed over by a `lax.scan`/`fori_loop`/`while_loop` body, the primitive's call.
    """

    use: Use  # the second consumption, where it is reported
    first: Use | None  # the earlier one (None for a key closed over by a loop primitive)
    name: str
    loop: ast.AST | None = None
    primitive: str | None = None  # "jax.lax.scan" for a closed-over key


@dataclass(frozen=True)
class ConstantSeed:
    """A key made from a constant seed where its draws repeat: in a loop, a loop body, a step function."""

    call: ast.Call  # `jax.random.key(0)`
    function: FunctionNode | None
    reason: str  # why the draws repeat, for the message


# ---- the analysis ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Elem:
    """An element of a key array (`keys[0]`); `index` is None when not a constant."""

    array: int
    index: int | None


Ref = Union[int, Elem]


@dataclass
class _State:
    env: dict[str, Ref] = field(default_factory=dict)  # name -> key value
    used: dict[object, tuple[int, Use | None]] = field(default_factory=dict)  # slot -> (level, first use)

    def copy(self) -> "_State":
        return _State(dict(self.env), dict(self.used))


@dataclass
class _Summary:
    """What a function does to its key parameters: NONE, MAYBE or DEFINITE consumption, by name."""

    params: dict[str, int]
    key_params: frozenset[str]


_NO_KEYS = _Summary({}, frozenset())


class KeyFlow:
    """The key flow of one module: reuses and constant seeds, found once for every rule."""

    def __init__(self, names: Names, discovery: Discovery, text: str):
        self.names = names
        self.discovery = discovery
        self.reuses: list[Reuse] = []
        self.constant_seeds: list[ConstantSeed] = []
        self._reported: set[int] = set()
        self._reused_firsts: set[int] = set()
        self._summaries: dict[int, _Summary] = {}
        self._keynames: dict[int, frozenset[str]] = {}
        self._active: set[int] = set()
        self._makes_keys: set[int] = set()  # functions that call a key constructor
        self._relevant: set[int] = set()
        self._loop_bodies: dict[int, tuple[ast.Call, str]] = {}
        self._seed_candidates: list[tuple[ast.Call, FunctionNode | None, ast.AST | None, bool]] = []
        self._seed_index: dict[int, int] = {}
        self._seed_names: dict[int, str] = {}  # candidate index -> the name its key is bound to
        if "random" not in text:
            return
        for fn, call, callee in discovery.bodies:
            if callee in LOOP_PRIMITIVES:
                self._loop_bodies.setdefault(id(fn), (call, callee))
        self._tests = _test_functions(names)
        self._relevant = self._key_functions()
        if id(names.module.node) in self._relevant:
            self._analyse(names.module.node)
        for fn in names.functions:
            if id(fn) in self._relevant:
                self.summary(fn)
        self._judge_constant_seeds()

    # ---- queries ---------------------------------------------------------------------
    def summary(self, fn: FunctionNode) -> _Summary:
        cached = self._summaries.get(id(fn))
        if cached is not None:
            return cached
        if id(fn) in self._active or id(fn) not in self._relevant:
            return _NO_KEYS
        return self._analyse(fn)

    def _key_functions(self) -> set[int]:
        """Functions (and the module) that touch `jax.random` directly, or call one that does.

        Only these are analysed: a cheap filter on the calls `Names` already lists, by the
        last name of the callee, before any qualified name is resolved.
        """
        names = self.names
        relevant: set[int] = set()
        others: list[tuple[ast.Call, Scope, str]] = []
        for call, scope in names.calls:
            func = call.func
            last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if last is None:
                continue
            if last in _RANDOM_NAMES and names.qualname(func) in _RANDOM_API:
                relevant.add(id(scope.node))
            else:
                others.append((call, scope, last))
        if not relevant:
            return relevant
        for fn in names.functions:
            if id(fn) not in relevant and _key_parameters(fn):
                relevant.add(id(fn))
        callables = {getattr(fn, "name", None) for fn in names.functions if id(fn) in relevant}
        callables.update(names.call_targets.values())
        changed = True
        while changed:
            changed = False
            for call, scope, last in others:
                if last not in callables or id(scope.node) in relevant:
                    continue
                callee = self.resolve(call.func)
                if callee is not None and id(callee) in relevant:
                    relevant.add(id(scope.node))
                    if isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        callables.add(scope.node.name)
                    changed = True
        return relevant

    def keynames(self, fn: ast.AST) -> frozenset[str]:
        """Names the function uses as keys: made by key calls, at key positions, passed as keys."""
        cached = self._keynames.get(id(fn))
        if cached is not None:
            return cached
        self._keynames[id(fn)] = frozenset()  # recursion guard
        found: set[str] = set()
        aliases: list[tuple[list[ast.AST], ast.AST]] = []
        for node in _own_nodes(fn):
            if isinstance(node, ast.Call):
                qualname = self.names.qualname(node.func)
                if qualname in KEY_CONSTRUCTORS:
                    self._makes_keys.add(id(fn))
                elif qualname in KEY_POSITION:
                    arg = _key_argument(node)
                    base = _base_name(arg) if arg is not None else None
                    if base:
                        found.add(base)
                elif qualname is None:
                    callee = self.resolve(node.func)
                    if callee is not None:
                        params = self.keynames(callee)
                        for arg, param in _bind(callee, node, _bound_self(node, callee)):
                            if param in params and isinstance(arg, ast.Name):
                                found.add(arg.id)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if isinstance(node.value, ast.Call) and self.names.qualname(node.value.func) in (
                    KEY_CONSTRUCTORS | KEY_DERIVATIONS | {SPLIT}
                ):
                    for target in targets:
                        found.update(_target_names(target))
                else:
                    aliases.append((targets, node.value))
        for _ in range(2):
            for targets, value in aliases:
                base = _base_name(value)
                if base in found and isinstance(value, (ast.Name, ast.Subscript)):
                    for target in targets:
                        found.update(_target_names(target))
        if isinstance(fn, FUNCTION_TYPES):
            found.update(_key_parameters(fn))
        result = frozenset(found)
        self._keynames[id(fn)] = result
        return result

    def resolve(self, func: ast.AST) -> FunctionNode | None:
        """The def (or lambda) of this module a call goes to, when the call runs it as written."""
        definition = None
        if isinstance(func, ast.Name):
            definition = self.names.definition(func)
            if definition is None:
                values = self.names.assignments(func)
                if len(values) == 1:
                    value = values[0]
                    if isinstance(value, ast.Lambda):
                        return value
                    if isinstance(value, ast.Call) and value.args:
                        transform = self.names.qualname(value.func)
                        if transform in _PRESERVING_TRANSFORMS:
                            inner = value.args[0]
                            if isinstance(inner, ast.Name):
                                definition = self.names.definition(inner)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            scope = self.names.read_scope.get(id(func.value))
            while scope is not None and scope.kind != "class":
                scope = scope.parent
            if scope is not None:
                definition = scope.defs.get(func.attr)
                if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    _decorator_name(d) in ("staticmethod", "classmethod", "property") for d in definition.decorator_list
                ):
                    return None
        if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope = self.names.enclosing_scope(definition)
            for decorator in definition.decorator_list:
                if _decorator_name(decorator) in ("staticmethod",):
                    continue
                transform = transform_of(decorator, self.names, scope)
                if transform is None or transform.name not in _PRESERVING_TRANSFORMS:
                    return None
            return definition
        return None

    # ---- running one function --------------------------------------------------------
    def _analyse(self, fn: ast.AST) -> _Summary:
        keynames = self.keynames(fn)
        if not keynames and id(fn) not in self._makes_keys:
            summary = _Summary({}, frozenset())
            if isinstance(fn, FUNCTION_TYPES):
                self._summaries[id(fn)] = summary
            return summary
        self._active.add(id(fn))
        try:
            run = _Run(self, fn, keynames)
            summary = run.execute()
        finally:
            self._active.discard(id(fn))
        if isinstance(fn, FUNCTION_TYPES):
            self._summaries[id(fn)] = summary
        return summary

    def _report(self, reuse: Reuse) -> None:
        if id(reuse.use.node) in self._reported:
            return
        if reuse.loop is not None and reuse.first is not None and id(reuse.first.node) in self._reused_firsts:
            return  # already reported as reused within one iteration
        self._reported.add(id(reuse.use.node))
        if reuse.loop is None and reuse.first is not None:
            self._reused_firsts.add(id(reuse.first.node))
        self.reuses.append(reuse)

    # ---- constant seeds ----------------------------------------------------------------
    def _judge_constant_seeds(self) -> None:
        for index, (call, fn, loop, consumed) in enumerate(self._seed_candidates):
            if not consumed:
                continue
            labels = (self._seed_names.get(index, ""), getattr(fn, "name", ""))
            if any(_DETERMINISTIC_BY_DESIGN.search(label) for label in labels):
                continue  # a fixed evaluation or benchmark key is the point
            reason = None
            if loop is not None:
                reason = f"inside the loop at line {loop.lineno}: every iteration"
            elif fn is not None and id(fn) in self._loop_bodies:
                body_call, primitive = self._loop_bodies[id(fn)]
                reason = f"inside a `{_short(primitive)}` body (line {body_call.lineno}): every iteration"
            elif fn is not None:
                name = getattr(fn, "name", "this function")
                site = self._called_in_loop(fn)
                if site is not None:
                    reason = f"inside `{name}`, which is called in the loop at line {site.lineno}: every call"
                elif id(fn) in self._jitted_steps():
                    reason = f"inside the jitted step function `{name}`: every step"
            if reason is not None:
                self.constant_seeds.append(ConstantSeed(call, fn, reason))

    def _called_in_loop(self, fn: FunctionNode) -> ast.AST | None:
        """A loop of this module that calls `fn` (by name, through a jit binding, or `self.`)."""
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        callers = {fn.name} | {bound for bound in self.names.call_targets.values()}
        owners = {}
        for call, scope in self.names.calls:
            func = call.func
            last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if last in callers:
                owners.setdefault(id(scope.node), scope.node)
        for owner in owners.values():
            if isinstance(owner, ast.ClassDef):
                continue
            for call, loop in _calls_in_loops(owner):
                if self.resolve(call.func) is fn:
                    return loop
        return None

    def _jitted_steps(self) -> set[int]:
        """Jitted functions named as step functions (`train_step`, `step`): run once per step."""
        return {
            id(root.node)
            for root in self.discovery.roots
            if root.jit is not None
            and isinstance(root.node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and "step" in root.node.name.lower()
        }


_PRESERVING_TRANSFORMS = frozenset({"jax.jit", "jax.checkpoint", "jax.named_call", "flax.nnx.jit", "equinox.filter_jit"})


class _Run:
    """One path-by-path interpretation of one function body."""

    def __init__(self, flow: KeyFlow, fn: ast.AST, keynames: frozenset[str]):
        self.flow = flow
        self.names = flow.names
        self.fn = fn
        self.keynames = keynames
        self.loop_body = flow._loop_bodies.get(id(fn))
        self.quiet = id(fn) in flow._tests  # test code reuses keys on purpose: not reported
        self.ids: dict[tuple[int, object], int] = {}
        self.arrays: set[int] = set()
        self.closure: set[int] = set()  # values closed over by a loop primitive's body
        self.params: dict[str, int] = {}
        self.loops: list[ast.AST] = []  # enclosing loops, innermost last
        self.carried: ast.AST | None = None  # the loop whose second iteration is being run
        self.exits: list[_State] = []
        self.breaks: list[list[_State]] = []
        self.continues: list[list[_State]] = []
        self.seeds: dict[int, int] = {}  # value id -> index in flow._seed_candidates
        self.instance_keys = any(name.startswith("self.") for name in keynames)

    def value(self, node: ast.AST, part: object = None, array: bool = False) -> int:
        key = (id(node), part)
        vid = self.ids.get(key)
        if vid is None:
            vid = self.ids[key] = len(self.ids) + 1
        if array:
            self.arrays.add(vid)
        return vid

    def execute(self) -> _Summary:
        state = _State()
        fn = self.fn
        if isinstance(fn, FUNCTION_TYPES):
            args = fn.args
            for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
                if arg.arg in self.keynames:
                    vid = self.value(arg)
                    self.params[arg.arg] = vid
                    state.env[arg.arg] = vid
            scope = self.names.scope_of(fn)
            for name in self.keynames:
                if not scope.binds(name) and name not in state.env:
                    vid = self.value(fn, ("free", name))
                    state.env[name] = vid
                    if self.loop_body is not None:
                        self.closure.add(vid)
        try:
            if isinstance(fn, ast.Lambda):
                self.expr(fn.body, state)
                self.exits.append(state)
            else:
                end = self.block(fn.body, state)
                if end is not None:
                    self.exits.append(end)
        except RecursionError:
            return _Summary({}, frozenset(self.params))
        consumed: dict[str, int] = {}
        for name, vid in self.params.items():
            levels = [s.used.get(vid, (NONE, None))[0] for s in self.exits]
            consumed[name] = _join_levels(levels) if levels else NONE
        return _Summary(consumed, frozenset(self.params))

    # ---- statements ----------------------------------------------------------------
    def block(self, body: Iterable[ast.stmt], state: _State | None) -> _State | None:
        for stmt in body:
            if state is None:
                return None
            state = self.stmt(stmt, state)
        return state

    def stmt(self, node: ast.stmt, state: _State) -> _State | None:
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
                self.expr(node.value, state)
            self.exits.append(state)
            return None
        elif isinstance(node, ast.Raise):
            if node.exc is not None:
                self.expr(node.exc, state)
            return None
        elif isinstance(node, ast.If):
            self.expr(node.test, state)
            then = self.block(node.body, state.copy())
            other = self.block(node.orelse, state.copy())
            return self.join([then, other], node)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.expr(node.iter, state)
            return self.loop(node, state, node.body, node.orelse, target=node.target, may_skip=_may_skip(node))
        elif isinstance(node, ast.While):
            return self.loop(node, state, node.body, node.orelse, test=node.test, may_skip=not _always_true(node.test))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                ref = self.expr(item.context_expr, state)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, None, item.context_expr, state)
            return self.block(node.body, state)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
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
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in node.decorator_list:
                self.expr(decorator, state)
            state.env.pop(node.name, None)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    state.env.pop(target.id, None)
        elif isinstance(node, ast.Assert):
            self.expr(node.test, state)
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
            ends = [self.block(case.body, state.copy()) for case in node.cases]
            return self.join([*ends, state], node)
        return state

    def loop(self, node, state, body, orelse, target=None, test=None, may_skip=True) -> _State | None:
        entry = state
        self.loops.append(node)
        ends: list[_State | None] = []
        breaks: list[_State] = []
        back: _State | None = entry
        passes = 2 if len(self.loops) <= _MAX_LOOP_DEPTH else 1
        outer_carried = self.carried
        for index in range(passes):
            if back is None:
                break
            current = back.copy()
            if index == 1:
                self.carried = node if self.carried is None else self.carried
            if test is not None:
                self.expr(test, current)
            if target is not None:
                self.bind(target, None, node, current, fresh=True)
            self.breaks.append([])
            self.continues.append([])
            end = self.block(body, current)
            breaks.extend(self.breaks.pop())
            back = self.join([end, *self.continues.pop()], (node, "back", index))
            ends.append(back)
        self.carried = outer_carried
        self.loops.pop()
        finished = self.join([entry if may_skip else None, *ends], (node, "done"))
        if orelse and finished is not None:
            finished = self.block(orelse, finished)
        return self.join([finished, *breaks], (node, "exit"))

    def join(self, states: list[_State | None], where: object) -> _State | None:
        live = [s for s in states if s is not None]
        if not live:
            return None
        if len(live) == 1:
            return live[0]
        env: dict[str, Ref] = {}
        used: dict[object, tuple[int, Use | None]] = {}
        slots = set()
        for s in live:
            slots.update(s.used)
        for slot in slots:
            entries = [s.used.get(slot, (NONE, None)) for s in live]
            level = _join_levels([e[0] for e in entries])
            first = next((e[1] for e in entries if e[1] is not None), None)
            used[slot] = (level, first)
        names = set()
        for s in live:
            names.update(s.env)
        for name in names:
            refs = [s.env.get(name) for s in live]
            if all(r == refs[0] for r in refs):
                env[name] = refs[0]
                continue
            if any(r is None for r in refs) and name not in self.keynames:
                continue
            # Different values on different paths: a new value whose consumption is their join.
            vid = self.value(where if isinstance(where, ast.AST) else self.fn, ("phi", str(where), name))
            entries = [s.used.get(r, (NONE, None)) if isinstance(r, int) else (NONE, None) for s, r in zip(live, refs)]
            level = _join_levels([e[0] for e in entries])
            first = next((e[1] for e in entries if e[1] is not None), None)
            used[vid] = (level, first)
            env[name] = vid
        return _State(env, used)

    # ---- binding ---------------------------------------------------------------------
    def bind(self, target: ast.AST, ref: object, value: ast.AST, state: _State, fresh: bool = False) -> None:
        if isinstance(target, ast.Name):
            if isinstance(ref, (int, Elem)) and not fresh:
                state.env[target.id] = ref
                if isinstance(ref, int):
                    state.used.setdefault(ref, (NONE, None))
            elif target.id in self.keynames:
                vid = self.value(target)
                state.env[target.id] = vid
                state.used[vid] = (NONE, None)
                if isinstance(ref, tuple) and ref and ref[0] == "array":
                    self.arrays.add(vid)
                if isinstance(ref, tuple) and ref and ref[0] == "seed" and ref[1] is not None:
                    self.seeds[vid] = ref[1]
                    self.flow._seed_names.setdefault(ref[1], target.id)
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
                    self.bind(element, self._alias(items[i], state), items[i], state)
                else:
                    self.bind(element, None, value, state, fresh=True)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, ("array",), value, state, fresh=True)
        elif _self_attribute(target) in self.keynames:
            dotted = _self_attribute(target)
            if isinstance(ref, (int, Elem)) and not fresh:
                state.env[dotted] = ref
            else:
                vid = self.value(target)
                state.env[dotted] = vid
                state.used[vid] = (NONE, None)
        else:
            # attribute or subscript target: the key escapes into an object; not followed
            self.expr(target, state)

    def _alias(self, node: ast.AST, state: _State) -> Ref | None:
        if isinstance(node, ast.Name):
            return state.env.get(node.id)
        return None

    # ---- expressions -----------------------------------------------------------------
    def expr(self, node: ast.AST, state: _State) -> object:
        """Evaluate for its consumptions; return the key value it denotes, if any."""
        if isinstance(node, ast.Name):
            return state.env.get(node.id) if isinstance(node.ctx, ast.Load) else None
        if isinstance(node, ast.Call):
            return self.call(node, state)
        if isinstance(node, ast.Attribute):
            dotted = _self_attribute(node)
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
            self.expr(node.test, state)
            then, other = state.copy(), state.copy()
            self.expr(node.body, then)
            self.expr(node.orelse, other)
            joined = self.join([then, other], node)
            state.env, state.used = joined.env, joined.used
            return None
        if isinstance(node, ast.BoolOp):
            self.expr(node.values[0], state)
            rest = state.copy()
            for value in node.values[1:]:
                self.expr(value, rest)
            joined = self.join([state.copy(), rest], node)
            state.env, state.used = joined.env, joined.used
            return None
        if isinstance(node, ast.NamedExpr):
            ref = self.expr(node.value, state)
            self.bind(node.target, ref, node.value, state)
            return ref
        for child in children(node):
            self.expr(child, state)
        return None

    def _instance_key(self, dotted: str, node: ast.AST, state: _State) -> Ref:
        """The value of `self.key` here: the one last seen, or a new one after anything could have changed it."""
        ref = state.env.get(dotted)
        if ref is None:
            ref = self.value(node, dotted)
            state.env[dotted] = ref
            state.used[ref] = (NONE, None)
        return ref

    def _forget_instance(self, state: _State) -> None:
        """A call that can see `self` may rebind any of its keys."""
        for name in [n for n in state.env if n.startswith("self.")]:
            del state.env[name]

    def comprehension(self, node, state: _State) -> None:
        saved = {}
        for generator in node.generators:
            for name in _target_names(generator.target):
                saved[name] = state.env.get(name)
        self.expr(node.generators[0].iter, state)
        elements = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]

        def body(s: _State) -> _State | None:
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
        self.carried = node if self.carried is None else self.carried
        second = body(first.copy()) if len(self.loops) <= _MAX_LOOP_DEPTH else first
        self.carried = outer_carried
        self.loops.pop()
        joined = self.join([state, first, second], node)
        state.env, state.used = joined.env, joined.used
        for name, ref in saved.items():
            if ref is None:
                state.env.pop(name, None)
            else:
                state.env[name] = ref

    def call(self, node: ast.Call, state: _State) -> object:
        result = self._call(node, state)
        if self.instance_keys and _sees_self(node):
            self._forget_instance(state)
        return result

    def _call(self, node: ast.Call, state: _State) -> object:
        qualname = self.names.qualname(node.func)
        if qualname in KEY_CONSTRUCTORS:
            self._args(node, state)
            index = None
            if (
                qualname != "jax.random.wrap_key_data"
                and _constant_seed(node, self.names)
                and not self.quiet
            ):
                index = self.flow._seed_index.get(id(node))
                if index is not None:
                    return ("seed", index)
                index = self.flow._seed_index[id(node)] = len(self.flow._seed_candidates)
                fn = self.fn if isinstance(self.fn, FUNCTION_TYPES) else None
                loop = next((l for l in self.loops if _steps(l, self.names)), None)
                self.flow._seed_candidates.append((node, fn, loop, False))
            return ("seed", index)
        if qualname in KEY_DERIVATIONS or qualname in KEY_READERS:
            self._args(node, state)
            return ("seed", None) if qualname in KEY_DERIVATIONS else None
        if qualname == SPLIT or qualname in SAMPLERS:
            key = _key_argument(node)
            ref = self.expr(key, state) if key is not None else None
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                if arg is not key:
                    self.expr(arg, state)
            if ref is not None:
                kind = "split" if qualname == SPLIT else "sample"
                self.consume(ref, Use(key, node, kind, f"`{_short(qualname)}`"), DEFINITE, state)
            return ("array",) if qualname == SPLIT else None
        self.expr(node.func, state)
        refs = self._args(node, state)
        if not refs:
            return None
        if qualname is not None:
            if qualname in _READING_CALLS or qualname.startswith(_READING_PREFIXES):
                return None
            if qualname in jax_api.STATIC_QUERIES:
                return None
        if _is_assertion(node.func):
            return None
        if isinstance(node.func, ast.Call) and self.names.qualname(node.func.func) in _TRACING_ONLY:
            return None
        callee = self.flow.resolve(node.func)
        if callee is not None:
            summary = self.flow.summary(callee)
            mapping = {id(arg): param for arg, param in _bind(callee, node, _bound_self(node, callee))}
            for arg, ref in refs:
                param = mapping.get(id(arg))
                level = summary.params.get(param, NONE) if param is not None else NONE
                if level != NONE:
                    name = getattr(callee, "name", "the lambda")
                    self.consume(ref, Use(arg, node, "call", f"`{name}`"), level, state)
            return None
        if isinstance(node.func, ast.Attribute) and node.func.attr in _NON_CONSUMING_METHODS:
            return None
        label = _call_label(node.func)
        for arg, ref in refs:
            self.consume(ref, Use(arg, node, "call", label), DEFINITE, state)
        return None

    def _args(self, node: ast.Call, state: _State) -> list[tuple[ast.AST, Ref]]:
        """Evaluate a call's arguments; the key values passed directly (or in a literal container)."""
        refs: list[tuple[ast.AST, Ref]] = []
        seen: set[object] = set()
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(arg, ast.Starred):
                self.expr(arg.value, state)
                continue
            ref = self.expr(arg, state)
            if isinstance(ref, (int, Elem)) and ref not in seen:
                seen.add(ref)
                refs.append((arg, ref))
            elif isinstance(arg, (ast.Dict, ast.Tuple, ast.List)):
                members = arg.values if isinstance(arg, ast.Dict) else arg.elts
                for member in members:
                    inner = None
                    if isinstance(member, ast.Name):
                        inner = state.env.get(member.id)
                    elif _self_attribute(member) is not None:
                        inner = state.env.get(_self_attribute(member))
                    if isinstance(inner, (int, Elem)) and inner not in seen:
                            seen.add(inner)
                            refs.append((member, inner))
        return refs

    # ---- consumption -----------------------------------------------------------------
    def consume(self, ref: object, use: Use, level: int, state: _State) -> None:
        if isinstance(ref, tuple) and ref and ref[0] == "seed":
            if ref[1] is not None:
                self._mark_seed(ref[1])
            return
        if not isinstance(ref, (int, Elem)):
            return
        if isinstance(ref, Elem):
            if ref.index is None:
                return
            slots = [ref, ref.array]
        else:
            slots = [ref] + [s for s in state.used if isinstance(s, Elem) and s.array == ref]
        if isinstance(ref, int) and ref in self.seeds:
            self._mark_seed(self.seeds[ref])
        if isinstance(ref, int) and ref in self.closure and level == DEFINITE and self.loop_body is not None and not self.quiet:
            call, primitive = self.loop_body
            name = _expr_name(use.node)
            self.flow._report(Reuse(use, None, name, call, primitive))
        if level == DEFINITE:
            for slot in slots:
                previous, first = state.used.get(slot, (NONE, None))
                if previous == DEFINITE and first is not None and first.node is not use.node:
                    self._reuse(use, first)
                    break
                if previous == DEFINITE and first is not None and first.node is use.node and self.carried is not None:
                    self._reuse(use, first)
                    break
        current, first = state.used.get(ref, (NONE, None))
        if level == DEFINITE and current != DEFINITE:
            state.used[ref] = (DEFINITE, use)
        elif current == NONE:
            state.used[ref] = (MAYBE, None)

    def _reuse(self, use: Use, first: Use) -> None:
        if self.quiet:
            return
        # A reuse first seen while running a loop body a second time crosses iterations; one
        # on a single path was already found on the first run (reports are kept first-come).
        self.flow._report(Reuse(use, first, _expr_name(use.node), self.carried))

    def _mark_seed(self, index: int) -> None:
        call, fn, loop, _ = self.flow._seed_candidates[index]
        self.flow._seed_candidates[index] = (call, fn, loop, True)


# Methods that look at their arguments without running them: lowering and tracing a jitted
# function, container bookkeeping.
_NON_CONSUMING_METHODS = frozenset({
    "lower", "trace", "eval_shape", "astype", "tobytes", "tolist", "item", "block_until_ready",
    "copy", "format", "append", "extend", "insert", "add", "setdefault", "get", "index", "count",
})
# Transformations that only trace: `jax.make_jaxpr(f)(key)` consumes nothing.
_TRACING_ONLY = frozenset({"jax.make_jaxpr", "jax.eval_shape", "jax.xla_computation", "jax.linearize"})


# ---- helpers ---------------------------------------------------------------------------------
def _sees_self(call: ast.Call) -> bool:
    """`self.method(...)`, `obj.method(self)`, `helper(self, ...)`: the call can rebind attributes of `self`."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return True
    return any(
        isinstance(arg, ast.Name) and arg.id == "self"
        for arg in [*call.args, *(k.value for k in call.keywords)]
    )


def _join_levels(levels: list[int]) -> int:
    if all(level == DEFINITE for level in levels):
        return DEFINITE
    if all(level == NONE for level in levels):
        return NONE
    return MAYBE


# Keys and functions whose names say that fixed randomness is intended.
_DETERMINISTIC_BY_DESIGN = re.compile(r"eval|valid|test|bench|demo|plot|visuali[sz]", re.IGNORECASE)

_KEY_PARAMETER = re.compile(r"^(key|rng|subkey|prng|prng_key|rng_key|.+_rng)$")


_KEY_ANNOTATION = re.compile(r"key|rng|prng|array", re.IGNORECASE)
_NAME_METHODS = frozenset({"get", "pop", "setdefault", "startswith", "endswith", "split", "format", "join"})


def _key_parameters(fn: FunctionNode) -> set[str]:
    """Parameters whose names say they are PRNG keys (`key`, `rng`, `dropout_rng`).

    Not one that the function itself treats as a dictionary key or a string: used as an
    index (`d[key]`), compared, formatted, looked up (`getattr(obj, key)`, `d.get(key)`), or
    annotated as something other than a key or an array.
    """
    args = fn.args
    found = {
        a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)
        if _KEY_PARAMETER.match(a.arg)
        and (a.annotation is None or _KEY_ANNOTATION.search(ast.unparse(a.annotation)))
    }
    if not found:
        return found
    for node in _own_nodes(fn):
        if isinstance(node, ast.Subscript):
            found.difference_update(_names_in(node.slice))
        elif isinstance(node, ast.Compare):
            found.difference_update(_names_in(node))
        elif isinstance(node, ast.FormattedValue):
            found.difference_update(_names_in(node.value))
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in ("getattr", "setattr", "hasattr", "delattr", "str"):
                found.difference_update(n for arg in node.args for n in _names_in(arg))
            elif isinstance(func, ast.Attribute) and func.attr in _NAME_METHODS:
                found.difference_update(n for arg in node.args for n in _names_in(arg))
        if not found:
            break
    return found


def _names_in(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Name):
        return {node.id}
    return {n.id for n in walk(node) if isinstance(n, ast.Name)}


def _key_argument(call: ast.Call) -> ast.AST | None:
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    for keyword in call.keywords:
        if keyword.arg == "key":
            return keyword.value
    return None


def _base_name(node: ast.AST) -> str | None:
    """`key` for `key`, `keys` for `keys[0]`/`keys[i]` (an array of keys; not `rngs["params"]`), `self.key`."""
    if isinstance(node, ast.Subscript):
        index = node.slice
        if isinstance(index, ast.Constant) and not isinstance(index.value, int):
            return None
        node = node.value
    if isinstance(node, ast.Name):
        return node.id
    return _self_attribute(node)


def _self_attribute(node: ast.AST) -> str | None:
    """`self.key` for the attribute `self.key` (keys kept on the instance, followed within one method)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return "self." + node.attr
    return None


def _target_names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Attribute):
        dotted = _self_attribute(target)
        return [dotted] if dotted else []
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in _target_names(element)]
    return []


def _own_nodes(fn: ast.AST):
    """The nodes of a function's (or module's) own body, nested functions and classes excluded."""
    if isinstance(fn, ast.Lambda):
        stack: list[ast.AST] = [fn.body]
    else:
        stack = list(fn.body)
    while stack:
        node = stack.pop()
        yield node
        for child in children(node):
            if isinstance(child, FUNCTION_TYPES):
                if not isinstance(child, ast.Lambda):
                    stack.extend(child.decorator_list)
                continue
            if isinstance(child, ast.ClassDef):
                continue
            stack.append(child)


def _bound_self(call: ast.Call, callee: FunctionNode) -> int:
    return 1 if isinstance(call.func, ast.Attribute) else 0


def _bind(callee: FunctionNode, call: ast.Call, skip: int) -> list[tuple[ast.AST, str]]:
    """(argument expression, parameter name) pairs for a call of a known function."""
    args = callee.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)][skip:]
    pairs = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        if i < len(positional):
            pairs.append((arg, positional[i]))
    names = {a.arg for a in (*args.args, *args.kwonlyargs)}
    for keyword in call.keywords:
        if keyword.arg in names:
            pairs.append((keyword.value, keyword.arg))
    return pairs


def _decorator_name(decorator: ast.AST) -> str | None:
    if isinstance(decorator, ast.Name):
        return decorator.id
    if isinstance(decorator, ast.Attribute):
        return decorator.attr
    return None


def _constant_seed(call: ast.Call, names: Names) -> bool:
    if not call.args:
        return False
    seed = call.args[0]
    if isinstance(seed, ast.UnaryOp) and isinstance(seed.op, ast.USub):
        seed = seed.operand
    if isinstance(seed, ast.Constant):
        return isinstance(seed.value, int) and not isinstance(seed.value, bool)
    return False


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


def _calls_in_loops(owner: ast.AST):
    """(call, outermost enclosing loop) for every call inside a loop of a function's own body."""
    body = [owner.body] if isinstance(owner, ast.Lambda) else list(owner.body)
    stack: list[tuple[ast.AST, ast.AST | None]] = [(node, None) for node in body]
    while stack:
        node, loop = stack.pop()
        if isinstance(node, (*FUNCTION_TYPES, ast.ClassDef)):
            continue
        if isinstance(node, ast.Call) and loop is not None:
            yield node, loop
        inner = loop
        if loop is None and isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            inner = node
        for child in children(node):
            if loop is None and isinstance(node, (ast.For, ast.AsyncFor)) and child is node.iter:
                stack.append((child, None))
            else:
                stack.append((child, inner))


def _steps(loop: ast.AST, names: Names) -> bool:
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


def _test_functions(names: Names) -> set[int]:
    """Test code: `test*` functions, methods of test classes, and everything nested in them."""
    tests: set[int] = set()
    test_classes = {
        id(cls) for cls in names.classes
        if cls.name.startswith("Test") or cls.name.endswith(("Test", "Tests", "TestCase"))
        or any(_base_label(base).endswith(("TestCase", "Test")) for base in cls.bases)
    }
    for fn in names.functions:
        name = getattr(fn, "name", "")
        cls = names.parent_class.get(id(fn))
        if name.startswith("test") or (cls is not None and id(cls) in test_classes):
            tests.add(id(fn))
    changed = True
    while changed:
        changed = False
        for fn in names.functions:
            parent = names.parent_function.get(id(fn))
            if id(fn) not in tests and parent is not None and id(parent) in tests:
                tests.add(id(fn))
                changed = True
    return tests


def _base_label(base: ast.AST) -> str:
    if isinstance(base, ast.Attribute):
        return base.attr
    if isinstance(base, ast.Name):
        return base.id
    return ""


def _is_assertion(func: ast.AST) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name.startswith(("assert", "_assert", "check_"))


def _call_label(func: ast.AST) -> str:
    try:
        text = ast.unparse(func)
    except Exception:  # pragma: no cover - unparse handles every expression node
        text = "a function"
    if len(text) > 40:
        text = text[:37] + "..."
    return f"`{text}`"


def _expr_name(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover
        return "the key"


def _short(qualname: str) -> str:
    if qualname.startswith("jax.random."):
        return "jax.random." + qualname[len("jax.random."):]
    if qualname.startswith("jax.lax."):
        return "lax." + qualname[len("jax.lax."):]
    return qualname
