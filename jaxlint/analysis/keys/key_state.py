"""The key state domain: which key each name holds, and whether each key is consumed.

A key value is a number (one per place a key is made or arrives); an element of a key
array (`keys[0]`) is an `Elem`.  Each value carries a `Mark`: not consumed, consumed on
every path (with the first consumption), or consumed on some paths only.  States join where
paths meet: a value consumed on every incoming path stays consumed; consumed on some is
"maybe", remembering the condition that chose the consuming path; a name bound to different
values on different paths gets a new value whose mark is the join of theirs.  The join is
a least upper bound over a finite lattice, so loops reach a fixed point.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Protocol, Union

if TYPE_CHECKING:
    from jaxlint.analysis.engine.names import FunctionNode, Names
    from jaxlint.analysis.keys.key_names import KeyNames

NONE, MAYBE, DEFINITE = 0, 1, 2


@dataclass(frozen=True)
class Use:
    """One consumption of a key (or, for `fold_in`, one derivation from it)."""

    node: ast.AST  # the key expression as written at the consuming call
    call: ast.AST
    kind: str  # "split" | "sample" | "call" | "fold_in" | "carry" | "flax" | "return" | "held"
    callee: str  # how to name the consumer in a message
    module: str | None = None  # for "flax": the Flax module the key runs (`flax_runs`)
    init: bool = False  # for "flax": the run builds parameters (`init`)
    # Whether numbers come of it (`key_draws`): False for a consumption that draws nothing (a
    # helper that only splits the key and hands back children its caller drops, a draw only
    # made to give an `init` example inputs); None for a split, which draws through its
    # children, decided once the whole function is solved.
    draws: bool | None = True
    # For "held" (a key consumed after it was put in the value the function returns): where it was put.
    put: ast.AST | None = None


@dataclass(frozen=True)
class Elem:
    """An element of a key array (`keys[0]`); `index` is None when not a constant."""

    array: int
    index: int | None


Ref = Union[int, Elem]


@dataclass(frozen=True)
class Streams:
    """A dict of named streams bound to a name (`rngs = {"params": k1, "dropout": k2}`), or a record
    built around keys (`state.replace(rng=k)`, `record`): the keys it holds, each with the
    expression that put it there, as it was built."""

    keys: tuple[tuple[ast.expr, Ref], ...]  # (the key as it was put in, its value)
    record: bool = False  # a record: handed to a call, it hands on no key (it keeps them)
    # A `functools.partial` fixing the keys: called, it draws from them; stored on an object,
    # it may be called at any time.
    fixed: bool = False


@dataclass(frozen=True)
class Tied:
    """What a call returns when the function returns one key at several places of a tuple
    (`return key, key`): the places, in groups that hold one key each."""

    groups: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Mark:
    """What has happened to one key value on the paths that reach a point."""

    level: int  # NONE, MAYBE or DEFINITE
    first: Use | None = None  # the consumption (the first, where there were several)
    guard: ast.AST | None = None  # for MAYBE: the condition whose branch consumed it
    drawn: Use | None = None  # the first consumption known to draw numbers, where `first` may not
    # For MAYBE: the consumer is a function seen that draws from the key on some of its own paths
    # only, under tests this caller does not decide (`restore_cfg.fallback_to_scratch`). Code not
    # seen counts as drawing: seeing it must not say less, so a later use is reused on those paths.
    partial: bool = False


UNUSED = Mark(NONE)


@dataclass
class KeyState:
    env: dict[str, Ref] = field(default_factory=dict)  # name -> key value
    used: dict[object, Mark] = field(default_factory=dict)  # slot -> mark

    def copy(self) -> "KeyState":
        return KeyState(dict(self.env), dict(self.used))

    def mark(self, slot: object) -> Mark:
        return self.used.get(slot, UNUSED)

    def same(self, other: "KeyState") -> bool:
        """Equal as lattice elements: the same bindings and the same consumption levels."""
        if self.env != other.env or self.used.keys() != other.used.keys():
            return False
        return all(mark.level == other.used[slot].level for slot, mark in self.used.items())


def join_levels(levels: Iterable[int]) -> int:
    levels = list(levels)
    if all(level == DEFINITE for level in levels):
        return DEFINITE
    if all(level == NONE for level in levels):
        return NONE
    return MAYBE


def join_marks(marks: list[Mark], guard: ast.AST | None) -> Mark:
    """The mark of a value reached by several paths; `guard` is the condition that split them."""
    level = join_levels(m.level for m in marks)
    first = next((m.first for m in marks if m.first is not None), None)
    drawn = next((m.drawn for m in marks if m.drawn is not None), None)
    if level != MAYBE:
        return Mark(level, first, drawn=drawn)
    definite = next((m for m in marks if m.level == DEFINITE), None)
    if definite is not None:
        # `guard` chose the path that consumed it for certain: that path's use is the one to name.
        return Mark(MAYBE, definite.first or first, guard, drawn)
    maybes = [m for m in marks if m.level == MAYBE]
    partial = all(m.partial for m in maybes)
    guards = {id(m.guard): m.guard for m in maybes}
    if partial and guard is not None:
        chosen = guard  # it chose the path that ran the function: that path is the one to name
    else:
        chosen = next(iter(guards.values())) if len(guards) == 1 else None
    return Mark(MAYBE, first, chosen, drawn, partial)


def join(
    states: list[KeyState | None],
    fresh: Callable[[str], int],
    keep: Callable[[str], bool],
    guard: ast.AST | None = None,
) -> KeyState | None:
    """The state where these paths meet (None when none of them continues).

    `fresh(name)` gives the value a name holds when paths bind it differently (always the
    same value for the same meeting point and name, so loops converge); `keep(name)` says
    whether a name bound on only some paths is still followed there.
    """
    live = [s for s in states if s is not None]
    if not live:
        return None
    if len(live) == 1:
        return live[0]
    used = _join_used(live, guard)
    env: dict[str, Ref] = {}
    names: dict[str, None] = {}
    for s in live:
        names.update(dict.fromkeys(s.env))
    for name in names:
        refs = [s.env.get(name) for s in live]
        if all(r == refs[0] for r in refs):
            env[name] = refs[0]  # type: ignore[assignment]
            continue
        if any(r is None for r in refs) and not keep(name):
            continue
        vid = fresh(name)
        marks = [s.mark(r) if r is not None else UNUSED for s, r in zip(live, refs)]
        used[vid] = join_marks(marks, guard)
        env[name] = vid
    return KeyState(env, used)


def _join_used(live: list[KeyState], guard: ast.AST | None) -> dict[object, Mark]:
    """The marks where paths meet, slot by slot (in the order the paths list them)."""
    used = dict(live[0].used)
    for other in live[1:]:
        for slot in other.used:
            if slot not in used:
                used[slot] = UNUSED
    others = [s.used for s in live[1:]]
    for slot, mark in used.items():
        # Equal marks join to themselves: most slots are untouched by the paths that meet.
        for other in others:
            m = other.get(slot, UNUSED)
            if m is not mark and m != mark:
                used[slot] = join_marks([s.used.get(slot, UNUSED) for s in live], guard)
                break
    return used


class Summary:
    """What a function does to its key parameters: NONE, MAYBE or DEFINITE consumption, by name,
    and which parameters it returns unchanged."""

    def __init__(
        self, params: dict[str, int], key_params: frozenset[str], returns: frozenset[str] = frozenset(),
        free: dict[str, int] | None = None,
        flax: dict[str, tuple[tuple[str, bool, int], ...]] | None = None,
        undrawn: dict[str, frozenset[tuple[int, ...]]] | None = None,
    ):
        self.params = params
        self.key_params = key_params
        self.returns = returns
        self.free = free or {}  # keys it reads from the function around it, and their consumption
        self.free_uses: dict[str, ast.AST] = {}  # where it first consumes each of them
        self.returned_from: frozenset[str] = frozenset()  # parameters its returns mention
        # Parameters it hands to Flax runs: (module as written, `init`, level) per run's module.
        self.flax = flax or {}
        # Parameters it consumes only by splitting them, drawing from none of the children: per
        # parameter, where in the returned value (indices into nested tuples) children come back.
        # A caller that drops what comes back there draws nothing from the key (`key_draws`).
        self.undrawn = undrawn or {}
        # Parameters holding several keys (`keys`, unpacked `key, actor_key = keys`): per
        # parameter, the level at which each element of a constant index is consumed. A caller
        # that writes the container out (`setup((key, actor_key))`) consumes each item as its
        # element is.
        self.elements: dict[str, dict[int, int]] = {}
        # Whether a conditional expression on a flag holds keys on one arm only: a call that
        # decides the flag decides what is consumed.
        self.chooses_keys = False
        # Places of the returned tuple that every `return` fills with one key (`Tied`).
        self.tied: tuple[tuple[int, ...], ...] = ()
        # Parameters consumed (DEFINITE) only where its loops run (`key_domain._looped`): a call
        # that makes a loop run zero times (`n=0` for `range(n)`) consumes them not at all.
        self.looped: frozenset[str] = frozenset()

    def consumes(self, param: str) -> bool:
        """Whether the function may consume the parameter (MAYBE or DEFINITE)."""
        return self.params.get(param, NONE) != NONE

    def with_params(self, levels: dict[str, int]) -> "Summary":
        """A copy that also says `levels` of some parameters (what `*args` or `**kwargs` do)."""
        copy = Summary(
            {**self.params, **levels}, self.key_params | frozenset(levels), self.returns, self.free, self.flax,
            self.undrawn,
        )
        copy.free_uses, copy.returned_from, copy.elements = self.free_uses, self.returned_from, self.elements
        copy.looped = self.looped
        return copy

    def covering(self, other: "Summary", params: Iterable[str]) -> "Summary":
        """A copy that also says what `other` (the function followed with every parameter a key)
        says of `params`, which this one does not follow as keys."""
        extra = frozenset(params) - self.key_params
        if not extra:
            return self
        copy = Summary(
            {**self.params, **{p: level for p, level in other.params.items() if p in extra}},
            self.key_params | extra,
            self.returns | (other.returns & extra),
            self.free,
            {**self.flax, **{p: runs for p, runs in other.flax.items() if p in extra}},
            {**self.undrawn, **{p: where for p, where in other.undrawn.items() if p in extra}},
        )
        copy.free_uses, copy.returned_from = self.free_uses, self.returned_from | (other.returned_from & extra)
        copy.elements = {**self.elements, **{p: levels for p, levels in other.elements.items() if p in extra}}
        copy.looped = self.looped | (other.looped & extra)
        return copy


NO_KEYS = Summary({}, frozenset())


@dataclass(frozen=True)
class Helper:
    """A call into a function whose key summary is known: the summary, and which parameter each argument binds."""

    name: str
    summary: Summary
    parameters: dict[int, str]  # id(argument expression) -> parameter name
    # A submodule's `__call__`: which of its paths runs turns on the instance's fields, which
    # the caller does not see, so a key it draws from on some path counts as drawn.
    submodule: bool = False
    arguments: dict[str, str] = field(default_factory=dict)  # parameter -> its argument as written
    members: dict[int, str] = field(default_factory=dict)  # id(item of a list, tuple or dict argument) -> parameter
    positions: dict[int, int] = field(default_factory=dict)  # id(item of a list or tuple argument) -> its index

    def member_level(self, item: ast.AST, param: str) -> int:
        """The level at which the function consumes an item of a list or tuple argument: the
        parameter's, or the element's at the item's index where the function reads it apart."""
        level = self.summary.params.get(param, NONE)
        index = self.positions.get(id(item))
        if index is None:
            return level
        return max(level, self.summary.elements.get(param, {}).get(index, NONE))


def container_members(arg: ast.AST) -> list:
    """The items a list, tuple or dict argument writes out (none for any other argument): each
    is handed on with the parameter the container fills."""
    return arg.values if isinstance(arg, ast.Dict) else arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else []


def helper_for(name: str, summary: Summary, bound: list, submodule: bool = False) -> Helper:
    """A `Helper` for a call whose arguments bind the parameters as `bound` pairs them."""
    members, positions = {}, {}
    for arg, param in bound:
        members.update((id(item), param) for item in container_members(arg))
        if isinstance(arg, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in arg.elts):
            positions.update((id(item), index) for index, item in enumerate(arg.elts))
    arguments = {param: ast.unparse(arg) for arg, param in bound}
    return Helper(name, summary, {id(arg): param for arg, param in bound}, submodule, arguments, members, positions)


class ModuleKeys(Protocol):
    """What the analysis of one function asks of the module's key flow (`keys.KeyFlow`): which
    function a call runs and what it does to keys, and where to report what the function does."""

    names: Names
    keynames: KeyNames
    compiled: set[int]  # id(function) of the module's jitted functions
    loop_bodies: dict[int, tuple[ast.Call, str]]
    loop_calls: dict[int, list[ast.Call]]  # id(function) -> every `lax` loop call running it
    module_keys: set[str]
    forward_passes: dict[int, str]  # id(function) -> the forward pass (`__call__` of a model) that runs it
    linen: dict[int, frozenset[str]]  # id(function) -> the modules it runs with `rngs=` (`flax_runs`)

    def resolve(self, func: ast.AST) -> FunctionNode | None: ...

    def helper(self, call: ast.Call, exported: bool = False, keyed: Collection[ast.expr] = ()) -> Helper | None: ...

    def summary(self, fn: FunctionNode) -> Summary: ...

    def flax_paths(self, call: ast.AST, module: ast.expr | None = None) -> frozenset[str] | None: ...

    def report_reuse(
        self, run: Any, use: Use, first: Use | None, loop: ast.AST | None,
        primitive: str | None = None, guard: ast.AST | None = None, other: Use | None = None,
        partial: bool = False,
    ) -> None: ...  # `run`: the `key_transfer.KeyTransfer` that found it

    def report_global(self, fn: ast.AST, name: str, use: Use) -> None: ...

    def seed_candidate(self, call: ast.Call, fn: ast.AST, loops: list[ast.AST]) -> int | None: ...

    def seed_consumed(self, index: int) -> None: ...
