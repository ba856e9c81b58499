"""The bindings one function analysis sees: its own levels (its body, a comprehension in it),
then the enclosing analyses' levels behind them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jaxlint.analysis.engine.lattice import Value, join

if TYPE_CHECKING:
    from jaxlint.analysis.engine.names import FunctionNode


class Env:
    """Local bindings of one function analysis, with the enclosing analyses' bindings behind it.
    `fn` is the function whose names `vars` holds: a nested function called where that function
    is running reads that function's bindings from here (see `closure`)."""

    __slots__ = ("vars", "outer", "fn")

    def __init__(self, vars: dict[str, Value], outer: "Env | None", fn: "FunctionNode | None"):
        self.vars = vars
        self.outer = outer
        self.fn = fn

    def get(self, name: str) -> Value | None:
        env: Env | None = self
        while env is not None:
            value = env.vars.get(name)
            if value is not None:
                return value
            env = env.outer
        return None

    def merge(self, other: "Env") -> None:
        for name, value in other.vars.items():
            mine = self.vars.get(name)
            self.vars[name] = value if mine is None else join(mine, value)


def frozen(level: Env) -> Env:
    """A copy of one function's levels of bindings (its body, a comprehension in it) that the
    steps after a call cannot change."""
    outer = level.outer
    if outer is not None and outer.fn is level.fn:
        outer = frozen(outer)
    return Env(level.vars.copy(), outer, level.fn)
