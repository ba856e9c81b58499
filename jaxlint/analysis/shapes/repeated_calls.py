"""Calls that run again and again: in a loop, in a comprehension, or in a function called in one."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jaxlint.analysis.engine.call_index import calls_through
from jaxlint.analysis.engine.names import FUNCTION_TYPES, FunctionNode, Scope
from jaxlint.analysis.engine.walk import nodes_of_classes

if TYPE_CHECKING:
    from jaxlint.analysis.effects.effects import Effects
    from jaxlint.analysis.project.traced_module import TracedModule


_COMPREHENSIONS = frozenset({ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp})
_SCOPES = frozenset({*FUNCTION_TYPES, ast.ClassDef})


class RepeatedCalls:
    def __init__(self, module: TracedModule, effects: Effects):
        self.module = module
        self.effects = effects
        self.names = module.names
        self._comprehensions: dict[int, list[tuple]] = {}
        self._calls: dict[int, list[ast.Call]] = {}

    def in_loop(self, node: ast.AST, function: FunctionNode | None) -> ast.stmt | None:
        """The innermost loop of `function`'s own body whose body contains `node`."""
        best = None
        for loop, owner in self.effects.loops:
            if owner is not function:
                continue
            first = loop.body[0].lineno
            if first <= node.lineno <= (loop.end_lineno or loop.lineno) or _in_header(node, loop):
                if best is None or loop.lineno >= best.lineno:
                    best = loop
        return best

    def called_repeatedly(self, function: FunctionNode, depth: int = 0) -> ast.AST | None:
        """A call of `function` that runs again and again: inside a loop, or inside a function
        that is itself called in a loop (a few levels up)."""
        if depth > 2 or isinstance(function, ast.Lambda):
            return None
        for call in self.calls_of(function):
            caller = self.function_of(call)
            if self.in_loop(call, caller) is not None or self.in_comprehension(call, caller):
                return call
            if caller is not None and caller is not function and self.called_repeatedly(caller, depth + 1):
                return call
        return None

    def in_comprehension(self, node: ast.AST, function: FunctionNode | None) -> bool:
        """Whether `node` is evaluated once per element of a comprehension in `function`."""
        spans = self._comprehensions.get(id(function))
        if spans is None:
            body = function.body if function is not None else self.module.tree.body
            spans = []
            for child in nodes_of_classes(body if isinstance(body, list) else [body], _COMPREHENSIONS, _SCOPES):
                first = child.generators[0].iter
                spans.append((_start(child), _end(child), _start(first), _end(first)))
            self._comprehensions[id(function)] = spans
        where = _start(node)
        return any(a <= where <= b and not (c <= where <= d) for a, b, c, d in spans)

    def calls_of(self, function: FunctionNode) -> list[ast.Call]:
        """The calls of `function` in this module (by its name, or as a method of `self` or an instance)."""
        found = self._calls.get(id(function))
        if found is None:
            found = self._calls[id(function)] = self._find_calls_of(function)
        return found

    def _find_calls_of(self, function: FunctionNode) -> list[ast.Call]:
        names = self.names
        out = []
        cls = names.parent_class.get(id(function))
        name = function.name
        for call, scope in calls_through(names, (name,)):
            func = call.func
            kind = func.__class__
            if kind is ast.Name:
                if func.id == name and names.definition(func, scope) is function:
                    out.append(call)
            elif (
                cls is not None
                and kind is ast.Attribute
                and func.attr == name
                and func.value.__class__ is ast.Name
                and (func.value.id in ("self", "cls") or self._instance_of(func.value, cls, scope))
            ):
                out.append(call)
        return out

    def _instance_of(self, name: ast.Name, cls: ast.ClassDef, scope) -> bool:
        """`model` in `model.predict(x)` is bound only to `Model(...)`, an instance of `cls`."""
        values = self.names.assignments(name, scope)
        return bool(values) and all(
            isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and self.names.definition(v.func, scope) is cls
            for v in values
        )

    def function_of(self, call: ast.Call) -> FunctionNode | None:
        table = self.call_functions
        return table.get(id(call))

    @property
    def call_functions(self) -> dict[int, FunctionNode | None]:
        table = getattr(self, "_call_functions_table", None)
        if table is None:
            table = {id(call): function_in(scope) for call, scope in self.names.calls}
            self._call_functions_table = table
        return table


def function_in(scope: Scope | None) -> FunctionNode | None:
    """The function whose body runs code read in `scope` (a class body runs in the function around it)."""
    while scope is not None and scope.kind == "class":
        scope = scope.parent
    node = scope.node if scope is not None else None
    return node if isinstance(node, FUNCTION_TYPES) else None


def _in_header(node: ast.AST, loop: ast.AST) -> bool:
    return isinstance(loop, ast.While) and loop.test.lineno <= node.lineno <= (loop.test.end_lineno or loop.test.lineno)


def _start(node: ast.AST) -> tuple[int, int]:
    return (node.lineno, node.col_offset)


def _end(node: ast.AST) -> tuple[int, int]:
    return (node.end_lineno or node.lineno, node.end_col_offset or 0)
