"""Static loop bounds that change between calls of the jitted function.

A Python `for` loop over `range(n)` in a jitted function, with `n` a static parameter, is
unrolled into a program whose size follows `n`, and each new `n` is a new compilation. The
bound changes between calls when a call of the jit in a loop passes it a value that changes
on every iteration: the loop's own target (`for steps in (1, 8, 32)`: each value a program of
its own length, which `lax.fori_loop` with a traced count compiles once), or a number the
loop updates (`changing_numbers`). It is followed through the plain functions and methods
that pass their own parameter on to the jit (`def train(self, steps): self._train(steps)`),
to their calls, a few levels up.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jaxlint.analysis.engine.arguments import bind, implicit_count, receiver
from jaxlint.analysis.engine.names import FunctionNode
from jaxlint.analysis.engine.source_text import short_source
from jaxlint.analysis.shapes.changing_numbers import changing_number
from jaxlint.analysis.shapes.repeated_calls import RepeatedCalls

if TYPE_CHECKING:
    from jaxlint.analysis.project.traced_module import TracedModule

_MAX_DEPTH = 3  # functions followed from the jit's call up to the loop that changes the bound


class StaticBounds:
    def __init__(self, module: TracedModule, repeated: RepeatedCalls):
        self.module = module
        self.repeated = repeated

    def changing_bound(self, loop: ast.AST) -> str | None:
        """Why the static parameter a `for ... in range(param)` loop of a jitted function counts
        to changes between calls, or None."""
        if not isinstance(loop, (ast.For, ast.AsyncFor)) or not isinstance(loop.iter, ast.Call):
            return None
        if self.module.qualname(loop.iter.func) != "builtins.range" or loop.iter.keywords:
            return None
        bounds = [a for a in loop.iter.args if isinstance(a, ast.Name)]
        names = self.module.names
        for bound in bounds:
            owner = names.lookup(bound.id, names.read_scope.get(id(bound), names.module))
            if owner is None or owner.kind != "function" or bound.id not in owner.params or bound.id in owner.assigned:
                continue
            for site in self.module.call_sites:
                root = site.target
                if root.node is not owner.node or bound.id not in root.static_params:
                    continue
                arg = site.argument(bound.id)
                why = self._changes(arg, site.call, site.function, 0) if arg is not None else None
                if why is not None:
                    return f"`{bound.id}`, static in `{getattr(owner.node, 'name', 'the jitted function')}`, {why}"
        return None

    def _changes(self, arg: ast.expr, call: ast.Call, function: FunctionNode | None, depth: int) -> str | None:
        """Why what `call` passes as `arg` changes from one call to the next, or None."""
        module = self.module
        if module.runs_staged(function):
            return None  # staged code runs once per trace
        for loop in reversed(module.loops_around(call)):
            heads = [loop] if isinstance(loop, (ast.For, ast.AsyncFor)) else getattr(loop, "generators", [])
            for head in heads:
                if isinstance(arg, ast.Name) and _binds(head.target, arg.id):
                    return (
                        f"takes each value of the loop on line {loop.lineno} "
                        f"(`for {ast.unparse(head.target)} in {short_source(head.iter, 30)}`) at the call on line "
                        f"{call.lineno}"
                    )
            if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
                continue
            number = module.varies_in_loop(arg, loop) and changing_number(arg, loop, module)
            if number:
                return f"is {number} in the loop on line {loop.lineno}, at the call on line {call.lineno}"
        if depth >= _MAX_DEPTH or not isinstance(arg, ast.Name) or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        scope = module.names.scopes.get(id(function))
        if scope is None or arg.id not in scope.params or arg.id in scope.assigned or arg.id in scope.other:
            return None
        for outer in self.repeated.calls_of(function):
            implicit = implicit_count(function, receiver(outer.func, function, module.names))
            passed = bind(function, outer, implicit).argument(arg.id)
            if passed is None:
                continue
            why = self._changes(passed, outer, self.repeated.function_of(outer), depth + 1)
            if why is not None:
                return f"{why}, through `{function.name}`"
        return None


def _binds(target: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target))
