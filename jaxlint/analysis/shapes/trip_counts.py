"""How many iterations a `for` loop over a static `range` makes."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jaxlint.analysis.engine.names import FunctionNode

if TYPE_CHECKING:
    from jaxlint.analysis.effects.effects import Effects
    from jaxlint.analysis.project.traced_module import TracedModule


class TripCounts:
    def __init__(self, module: TracedModule, effects: Effects):
        self.module = module
        self.effects = effects
        self.names = module.names

    def trip_count(self, loop: ast.AST) -> int | None:
        """The number of iterations of `for ... in range(<constants>)`, when known."""
        if not isinstance(loop, (ast.For, ast.AsyncFor)) or not isinstance(loop.iter, ast.Call):
            return None
        if self.module.qualname(loop.iter.func) != "builtins.range" or loop.iter.keywords:
            return None
        values = [self._constant_int(a) for a in loop.iter.args]
        if not values or None in values or len(values) > 3:
            return None
        try:
            return len(range(*values))
        except (ValueError, TypeError, OverflowError):
            return None

    def _constant_int(self, expr: ast.AST, depth: int = 0) -> int | None:
        if depth > 4:
            return None
        if isinstance(expr, ast.Constant) and type(expr.value) is int:
            return expr.value
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            value = self._constant_int(expr.operand, depth + 1)
            return -value if value is not None else None
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Pow)):
            left, right = self._constant_int(expr.left, depth + 1), self._constant_int(expr.right, depth + 1)
            if left is None or right is None:
                return None
            if isinstance(expr.op, ast.Pow) and (right > 64 or right < 0):
                return None
            try:
                return {
                    ast.Add: lambda: left + right,
                    ast.Sub: lambda: left - right,
                    ast.Mult: lambda: left * right,
                    ast.FloorDiv: lambda: left // right,
                    ast.Pow: lambda: left ** right,
                }[type(expr.op)]()
            except ZeroDivisionError:
                return None
        if isinstance(expr, ast.Name):
            scope = self.names.read_scope.get(id(expr))
            owner = self.names.lookup(expr.id, scope) if scope is not None else None
            if owner is not None and owner.kind == "function" and expr.id in owner.params:
                return self._largest_static_argument(owner.node, expr.id, depth)
            if owner is None or owner.kind != "module" or expr.id in self.effects.global_writers:
                return None
            values = owner.assigned.get(expr.id, [])
            if len(values) == 1 and expr.id not in owner.other:
                return self._constant_int(values[0], depth + 1)
        return None

    def _largest_static_argument(self, function: FunctionNode, param: str, depth: int) -> int | None:
        """The largest constant that a call in this module passes for a static parameter of a
        jitted function: that compilation sees it as a Python number."""
        module = self.module
        largest = None
        for site in module.call_sites:
            root = site.target
            if root.node is not function or param not in root.static_params:
                continue
            arg = site.argument(param)
            value = self._constant_int(arg, depth + 1) if arg is not None else None
            if value is not None and (largest is None or value > largest):
                largest = value
        return largest
