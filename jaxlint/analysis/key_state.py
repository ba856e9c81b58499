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
from typing import Callable, Iterable, Union

NONE, MAYBE, DEFINITE = 0, 1, 2


@dataclass(frozen=True)
class Use:
    """One consumption of a key (or, for `fold_in`, one derivation from it)."""

    node: ast.AST  # the key expression as written at the consuming call
    call: ast.AST
    kind: str  # "split" | "sample" | "call" | "fold_in" | "carry" | "flax"
    callee: str  # how to name the consumer in a message
    module: str | None = None  # for "flax": the Flax module the key runs (`flax_runs`)
    init: bool = False  # for "flax": the run builds parameters (`init`)


@dataclass(frozen=True)
class Elem:
    """An element of a key array (`keys[0]`); `index` is None when not a constant."""

    array: int
    index: int | None


Ref = Union[int, Elem]


@dataclass(frozen=True)
class Spent:
    """In a function's summary: the function returns a key it consumed on every path, as its
    whole result (`position` None) or as the item `position` of the tuple it returns."""

    position: int | None


@dataclass(frozen=True)
class Mark:
    """What has happened to one key value on the paths that reach a point."""

    level: int  # NONE, MAYBE or DEFINITE
    first: Use | None = None  # the consumption (the first, where there were several)
    guard: ast.AST | None = None  # for MAYBE: the condition whose branch consumed it


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
    if level != MAYBE:
        return Mark(level, first)
    if any(m.level == DEFINITE for m in marks):
        return Mark(MAYBE, first, guard)
    guards = {id(m.guard): m.guard for m in marks if m.level == MAYBE}
    return Mark(MAYBE, first, next(iter(guards.values())) if len(guards) == 1 else None)


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
