"""Calls that run again and again: in a loop, in a comprehension, or in a function called in one."""

from __future__ import annotations

import ast
from functools import cached_property
from typing import TYPE_CHECKING

from jaxlint.analysis.engine.call_index import calls_through
from jaxlint.analysis.engine.names import FUNCTION_TYPES, FunctionNode, function_in
from jaxlint.analysis.engine.walk import end_of, nodes_of_classes, start_of, walk
from jaxlint.analysis.knowledge.jax_api import MODELLED_PACKAGES
from jaxlint.analysis.tracing.callees import module_callees

if TYPE_CHECKING:
    from jaxlint.analysis.effects.effects import Effects
    from jaxlint.analysis.project.traced_module import TracedModule


# Where the bases of plain classes come from (`object`, `abc.ABC`, `typing.NamedTuple`, ...).
_PLAIN_BASE_MODULES = frozenset({"builtins", "abc", "typing", "enum", "collections", "dataclasses"})
# Decorators that leave a function run where it is called.
_PLAIN_DECORATORS = frozenset({
    "builtins.staticmethod", "builtins.classmethod", "builtins.property", "abc.abstractmethod",
    "functools.wraps", "functools.lru_cache", "functools.cache", "functools.cached_property",
})
_COMPREHENSIONS = frozenset({ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp})
_SCOPES = frozenset({*FUNCTION_TYPES, ast.ClassDef})


class RepeatedCalls:
    def __init__(self, module: TracedModule, effects: Effects):
        self.module = module
        self.effects = effects
        self.names = module.names
        self._comprehensions: dict[int, list[tuple]] = {}
        self._calls: dict[int, list[ast.Call]] = {}
        self._traced: dict[int, bool] = {}  # `may_be_traced`
        self._repeating: dict[tuple[int, int], ast.AST | None] = {}  # `called_repeatedly`

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
        that is itself called in a loop (a few levels up). Memoised."""
        key = (id(function), depth)
        if key not in self._repeating:
            self._repeating[key] = self._called_repeatedly(function, depth)
        return self._repeating[key]

    def _called_repeatedly(self, function: FunctionNode, depth: int) -> ast.AST | None:
        if depth > 2 or isinstance(function, ast.Lambda):
            return None
        for call in self.calls_of(function):
            caller = self.function_of(call)
            if self.may_be_traced(caller):
                continue  # traced code runs once per trace: its loops do not repeat the call
            if self.in_loop(call, caller) is not None or self.in_comprehension(call, caller):
                return call
            if caller is not None and caller is not function and self.called_repeatedly(caller, depth + 1):
                return call
        return None

    def may_be_traced(self, function: FunctionNode | None, seen: frozenset[int] = frozenset()) -> bool:
        """`function` runs under a transformation, or may: it is traced, or lies in a function that
        is; it is a method of a class with a base from another module (a framework module's
        methods run traced, and that base may be one); it is decorated by something else than
        a method kind; or the module hands it, as a value, to JAX or a library it models
        (`jax.pmap(f)`), or uses it as a value in code that may be traced (`fn = f if c else g`
        there), where the analysis does not follow it."""
        if function is None:
            return False
        known = self._traced.get(id(function))
        if known is None:
            known = self._traced[id(function)] = self._may_be_traced(function, seen)
        return known

    def _may_be_traced(self, function: FunctionNode | None, seen: frozenset[int]) -> bool:
        names = self.names
        while function is not None and id(function) not in seen:
            seen = seen | {id(function)}
            if id(function) in self.effects.contexts:
                return True
            cls = names.parent_class.get(id(function))
            if cls is not None and self._foreign_base(cls, set()):
                return True
            if not isinstance(function, ast.Lambda):
                if any(self._may_trace(d) for d in function.decorator_list):
                    return True
                if cls is None and any(self._hands_to_traced(use, seen) for use in self._value_uses.get(function.name, ())):
                    return True
            function = names.parent_function.get(id(function))
        return False

    def _may_trace(self, decorator: ast.expr) -> bool:
        """A decorator that may run the function under a transformation: one of JAX or a library
        it models, or one of the project's own (a module's `my_jit`); not another library's
        (`pytest.mark.parametrize`, `functools.wraps`) nor a method kind."""
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        qualname = self.module.qualname(target)
        if qualname is None and isinstance(target, ast.Name):
            # A name the module binds: its own decorator function, or a value made by another call.
            if isinstance(self.names.definition(target), (ast.FunctionDef, ast.AsyncFunctionDef)):
                return True
            values = self.names.assignments(target)
            return not values or any(self._may_trace(v) for v in values)
        if qualname is None or qualname in _PLAIN_DECORATORS:
            return qualname is None
        return qualname.split(".", 1)[0] in MODELLED_PACKAGES or not self._imported(target)

    def _imported(self, target: ast.expr) -> bool:
        """`target` is read through a name imported from another package than the module's own."""
        root = target
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return False
        owner = self.names.lookup(root.id, self.names.read_scope.get(id(root), self.names.module))
        if owner is None or root.id not in owner.imports:
            return False
        package = self.module.project.package if self.module.project is not None else None
        top = owner.imports[root.id].split(".", 1)[0]
        return not (package and top == package.split(".", 1)[0]) and not owner.imports[root.id].startswith(".")

    def _hands_to_traced(self, use: ast.Name, seen: frozenset[int]) -> bool:
        call = self._argument_of.get(id(use))
        if call is not None and (self.module.qualname(call.func) or "").split(".", 1)[0] in MODELLED_PACKAGES:
            return True
        return self.may_be_traced(function_in(self.names.read_scope.get(id(use))), seen)

    @cached_property
    def _argument_of(self) -> dict[int, ast.Call]:
        """id(argument) -> the call it is passed to (a node is an argument of one call at most)."""
        return {
            id(arg): call for call, _ in self.names.calls for arg in (*call.args, *(k.value for k in call.keywords))
        }

    @cached_property
    def _value_uses(self) -> dict[str, list[ast.Name]]:
        """The module's reads of each name otherwise than as the function of a call."""
        called = {id(call.func) for call, _ in self.names.calls}
        found: dict[str, list[ast.Name]] = {}
        for node in walk(self.module.tree):
            if node.__class__ is ast.Name and node.ctx.__class__ is ast.Load and id(node) not in called:
                found.setdefault(node.id, []).append(node)
        return found

    def _foreign_base(self, cls: ast.ClassDef, seen: set[int]) -> bool:
        """A base of `cls` (or of its bases in this module) is a class of another module."""
        seen.add(id(cls))
        scope = self.names.scopes[id(cls)].parent or self.names.module
        for base in cls.bases:
            local = self.names.definition(base, scope)
            if isinstance(local, ast.ClassDef):
                if id(local) not in seen and self._foreign_base(local, seen):
                    return True
            elif (self.module.qualname(base) or "").split(".", 1)[0] not in _PLAIN_BASE_MODULES:
                return True
        return False

    def in_comprehension(self, node: ast.AST, function: FunctionNode | None) -> bool:
        """Whether `node` is evaluated once per element of a comprehension in `function`."""
        spans = self._comprehensions.get(id(function))
        if spans is None:
            body = function.body if function is not None else self.module.tree.body
            spans = []
            for child in nodes_of_classes(body if isinstance(body, list) else [body], _COMPREHENSIONS, _SCOPES):
                first = child.generators[0].iter
                spans.append((start_of(child), end_of(child), start_of(first), end_of(first)))
            self._comprehensions[id(function)] = spans
        where = start_of(node)
        return any(a <= where <= b and not (c <= where <= d) for a, b, c, d in spans)

    def calls_of(self, function: FunctionNode) -> list[ast.Call]:
        """The calls of `function` in this module (by its name, or as a method of `self` or an instance)."""
        found = self._calls.get(id(function))
        if found is None:
            found = self._calls[id(function)] = self._find_calls_of(function)
        return found

    def _find_calls_of(self, function: FunctionNode) -> list[ast.Call]:
        names = self.names
        callees = module_callees(names)
        out = [call for call, _, _ in callees.calls_of(function)]
        out += [call for call, _ in callees.handed_calls(function)]  # `train(eval_fn=evaluate)`
        cls = names.parent_class.get(id(function))
        seen = {id(call) for call in out}
        name = function.name
        for call, scope in calls_through(names, (name,)):
            func = call.func
            if id(call) not in seen and func.__class__ is ast.Name and names.definition(func, scope) is function:
                out.append(call)  # a decorated function's name: what the decorator returns runs it
            elif (
                id(call) not in seen
                and cls is not None
                and func.__class__ is ast.Attribute
                and func.attr == name
                and func.value.__class__ is ast.Name
                and (func.value.id in ("self", "cls") or self._instance_of(func.value, function, scope))
            ):
                out.append(call)  # `self.step(x)` of a subclass, `model.step(x)` of an instance made here
        return out

    def _instance_of(self, name: ast.Name, method: FunctionNode, scope) -> bool:
        """`model` in `model.predict(x)` is bound only to instances of classes of this module
        (`Model(...)`) whose `predict` is `method`: their own, or inherited from a base."""
        values = self.names.assignments(name, scope)
        return bool(values) and all(
            isinstance(v, ast.Call)
            and isinstance(v.func, ast.Name)
            and self.method_of(self.names.definition(v.func, scope), method.name) is method
            for v in values
        )

    def method_of(self, cls: ast.AST | None, name: str, seen: set[int] | None = None) -> ast.AST | None:
        """What `name` is on instances of `cls`: its own definition, else the first one its bases
        of this module define (depth first, left to right: Python's order for a single chain)."""
        seen = set() if seen is None else seen
        if not isinstance(cls, ast.ClassDef) or id(cls) in seen:
            return None
        seen.add(id(cls))
        scope = self.names.scopes[id(cls)]
        if name in scope.defs or name in scope.assigned:
            return scope.defs.get(name)
        for base in cls.bases:
            found = self.method_of(self.names.definition(base, scope.parent or self.names.module), name, seen)
            if found is not None:
                return found
        return None

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


def _in_header(node: ast.AST, loop: ast.AST) -> bool:
    return isinstance(loop, ast.While) and loop.test.lineno <= node.lineno <= (loop.test.end_lineno or loop.test.lineno)

