"""Local bindings at one program point, sharing what they have in common with their neighbours.

A function of thousands of statements has thousands of blocks and thousands of names; if
every block copied every binding, the analysis would cost blocks x names.  A `Bindings`
is a shared, never-changed `base` plus the few names this path has changed (`own`), so
a copy costs only the changes, and two paths that share a base join by their changes.
Once the changes outgrow the square root of the base they are folded into a new base,
which balances the cost of copying the changes against the cost of folding.
"""

from __future__ import annotations

from typing import Dict, Iterator, Optional

from jaxlint.analysis.engine.lattice import Value, join

_FOLD_AFTER = 64  # changed names always kept apart before they are folded into a new base
_GONE = object()  # a name deleted on this path (`del x`) that the base still binds


class Bindings:
    __slots__ = ("base", "own")

    def __init__(self, base: Dict[str, Value], own: Optional[dict] = None):
        self.base = base  # shared between copies: never changed in place
        self.own = {} if own is None else own

    # ---- the mapping that eval and bind use ----------------------------------------------
    def get(self, name: str, default=None):
        value = self.own.get(name)
        if value is None:
            return self.base.get(name, default)
        return default if value is _GONE else value

    def __setitem__(self, name: str, value: Value) -> None:
        self.own[name] = value

    def __getitem__(self, name: str) -> Value:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def pop(self, name: str, default=None):
        value = self.get(name)
        if name in self.base:
            self.own[name] = _GONE
        else:
            self.own.pop(name, None)
        return default if value is None else value

    def keys(self) -> Iterator[str]:
        for name in self.base:
            if name not in self.own:
                yield name
        for name, value in self.own.items():
            if value is not _GONE:
                yield name

    def items(self) -> Iterator[tuple]:
        for name in self.keys():
            yield name, self.get(name)

    # ---- what the solver needs ----------------------------------------------------------
    def copy(self) -> "Bindings":
        if len(self.own) > _FOLD_AFTER and len(self.own) ** 2 > len(self.base):
            # Fold in place: every copy made from here on shares the new base.
            self.base = self.flat()
            self.own = {}
        return Bindings(self.base, dict(self.own))

    def flat(self) -> Dict[str, Value]:
        """Every binding in one new dict."""
        out = {**self.base, **self.own}
        for name, value in self.own.items():
            if value is _GONE:
                del out[name]
        return out

    def join(self, other: "Bindings") -> "Bindings":
        if other.base is not self.base:
            out = self.flat()
            for name, value in other.flat().items():
                mine = out.get(name)
                out[name] = value if mine is None else join(mine, value)
            return Bindings(out)
        changed: dict = {}
        for name in (*self.own, *other.own):
            if name in changed:
                continue
            mine, theirs = self.get(name), other.get(name)
            if mine is None or theirs is None:
                value = theirs if mine is None else mine
            else:
                value = join(mine, theirs)
            changed[name] = _GONE if value is None else value
        return Bindings(self.base, changed)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Bindings):
            return NotImplemented
        if other.base is self.base:
            for name in (*self.own, *other.own):
                mine, theirs = self.get(name), other.get(name)
                if mine is not theirs and mine != theirs:  # most bindings are the same object
                    return False
            return True
        return self.flat() == other.flat()

    __hash__ = None  # type: ignore[assignment]
