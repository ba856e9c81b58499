"""Parameters of a framework module's `__call__` that every call in view passes a Python value.

A Flax, Equinox or Haiku module's `__call__` runs under the framework's transformation, and a
parameter of it is taken for traced only for lack of evidence: the framework passes on what
the caller gives. When the module calls instances of its own classes (`Skip()(x, y.shape)`,
`self.skip = Skip()` then `self.skip(x, y.shape)`, `partial(self.skip_cls)()(x, y.shape)`)
and every such call passes a Python value for a parameter (a literal, a string, a shape, a
tuple of them), that parameter holds a Python value. A class with no call in view, one call
with anything else for the parameter, or a class or instance handed to other code
(`nn.Sequential([Skip()])`) leaves the parameter as it was.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Iterable, List, Set
from weakref import WeakKeyDictionary

from jaxlint.analysis.names import FunctionNode, Names, Scope
from jaxlint.analysis.tracing import first_param, positional_params

_DEPTH = 4  # how many names and `partial`s a class or an instance is followed through
_VALUE_DEPTH = 12  # how deep an argument's expression (names followed) is read
# Attributes of an array that are Python values under tracing.
_STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype"})
# Calls that take a class without calling it.
_TYPE_TESTS = frozenset({"isinstance", "issubclass"})
_PARTIAL = "functools.partial"
# A Flax module's methods that run its `__call__` with the arguments they are given.
_ENTRY_POINTS = frozenset({"apply", "init", "init_with_output", "tabulate"})


def python_valued_parameters(method: FunctionNode, names: Names) -> FrozenSet[str]:
    """The parameters of a module's `__call__` that every call of it in this module passes a
    Python value; none when no call is in view."""
    found = _TABLES.get(names)
    if found is None:
        found = _TABLES[names] = _InstanceCalls(names).python_valued()
    return found.get(id(method), frozenset())


_TABLES: "WeakKeyDictionary[Names, Dict[int, FrozenSet[str]]]" = WeakKeyDictionary()


class _InstanceCalls:
    def __init__(self, names: Names):
        self.names = names
        self.subclasses: Dict[int, List[ast.ClassDef]] = {}
        self.field_tables: Dict[int, Dict[str, List[tuple]]] = {}
        for cls in names.classes:
            for base in self._module_bases(cls):
                self.subclasses.setdefault(id(base), []).append(cls)

    def python_valued(self) -> Dict[int, FrozenSet[str]]:
        calls: Dict[int, List[tuple]] = {}
        methods: Dict[int, FunctionNode] = {}
        escaped: Set[int] = set()
        for call, scope in self.names.calls:
            self._escapes(call, scope, escaped)
            for cls in self._instances(call.func, scope, _DEPTH):
                method = self._call_method(cls)
                if method is not None:
                    calls.setdefault(id(method), []).append((call, scope))
                    methods[id(method)] = method
        escaped_methods = {id(m) for cls_id in escaped for m in self._escaped_methods(cls_id)}
        return {
            key: _passed_python_values(methods[key], found, self.names)
            for key, found in calls.items() if key not in escaped_methods
        }

    # -- which classes an expression is, or is an instance of --------------------------------
    def _classes(self, expr: ast.expr, scope: Scope, depth: int) -> List[ast.ClassDef]:
        """The module's classes `expr` may be (or a `partial` of)."""
        if depth <= 0:
            return []
        if isinstance(expr, ast.Name):
            definition = self.names.definition(expr, scope)
            if isinstance(definition, ast.ClassDef):
                return [definition]
            return [c for value in self._assigned(expr, scope) for c in self._classes(value, scope, depth - 1)]
        if isinstance(expr, ast.Call) and expr.args and self.names.qualname(expr.func, scope) == _PARTIAL:
            return self._classes(expr.args[0], scope, depth - 1)
        if isinstance(expr, ast.Attribute):
            fields = self._field_values(expr, scope)
            return [c for value, inner in fields for c in self._classes(value, inner, depth - 1)]
        return []

    def _instances(self, expr: ast.expr, scope: Scope, depth: int) -> List[ast.ClassDef]:
        """The module's classes `expr` may be an instance of."""
        if depth <= 0:
            return []
        if isinstance(expr, ast.Call):
            return self._classes(expr.func, scope, depth)
        if isinstance(expr, ast.Name):
            return [c for value in self._assigned(expr, scope) for c in self._instances(value, scope, depth - 1)]
        if isinstance(expr, ast.Attribute):
            fields = self._field_values(expr, scope)
            return [c for value, inner in fields for c in self._instances(value, inner, depth - 1)]
        return []

    def _assigned(self, name: ast.Name, scope: Scope) -> List[ast.expr]:
        owner = self.names.lookup(name.id, scope)
        if owner is None or name.id in owner.params or name.id in owner.other:
            return []
        return owner.assigned.get(name.id, [])

    def _field_values(self, expr: ast.Attribute, scope: Scope) -> List[tuple]:
        """What `self.attr` may hold, read in a method: the attribute's class-level values and
        what `setup` or `__init__` assigns to it, in the class, the module's classes it derives
        from and those deriving from it (an override is what a subclass's `self` holds)."""
        cls = self._self_class(expr, scope)
        if cls is None:
            return []
        related = {id(c): c for c in (*self._ancestors(cls), *self._descendants(cls))}
        return [found for c in related.values() for found in self._fields(c).get(expr.attr, ())]

    def _fields(self, cls: ast.ClassDef) -> Dict[str, List[tuple]]:
        """The values a class binds to its attributes, each with the scope it is read in."""
        table = self.field_tables.get(id(cls))
        if table is not None:
            return table
        table = self.field_tables[id(cls)] = {}
        inner = self.names.scopes[id(cls)]
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                table.setdefault(stmt.target.id, []).append((stmt.value, inner))
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        table.setdefault(target.id, []).append((stmt.value, inner))
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in ("setup", "__init__"):
                owner, method_scope = first_param(stmt), self.names.scopes[id(stmt)]
                for node in ast.walk(stmt):
                    if isinstance(node, ast.Assign):
                        for target in node.targets:
                            if _is_attribute_of(target, owner):
                                table.setdefault(target.attr, []).append((node.value, method_scope))
        return table

    def _self_class(self, expr: ast.Attribute, scope: Scope) -> ast.ClassDef | None:
        """The class whose method's `self` (read there or in a function inside it) `expr` reads from."""
        if not isinstance(expr.value, ast.Name):
            return None
        owner = self.names.lookup(expr.value.id, scope)
        if owner is None or owner.kind != "function":
            return None
        cls = self.names.parent_class.get(id(owner.node))
        return cls if cls is not None and first_param(owner.node) == expr.value.id else None

    def _module_bases(self, cls: ast.ClassDef) -> List[ast.ClassDef]:
        scope = self.names.scopes[id(cls)].parent or self.names.module
        return [b for b in (self.names.definition(base, scope) for base in cls.bases) if isinstance(b, ast.ClassDef)]

    def _ancestors(self, cls: ast.ClassDef) -> List[ast.ClassDef]:
        found, todo = [], [cls]
        while todo and len(found) < 64:
            current = todo.pop()
            if all(current is not c for c in found):
                found.append(current)
                todo.extend(self._module_bases(current))
        return found

    def _descendants(self, cls: ast.ClassDef) -> List[ast.ClassDef]:
        found, todo = [], [cls]
        while todo and len(found) < 64:
            current = todo.pop()
            if all(current is not c for c in found):
                found.append(current)
                todo.extend(self.subclasses.get(id(current), ()))
        return found

    def _call_method(self, cls: ast.ClassDef) -> FunctionNode | None:
        """The `__call__` an instance of `cls` runs: its own, else the nearest module base's."""
        for current in self._ancestors(cls):
            for node in current.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "__call__":
                    return node
        return None

    def _escapes(self, call: ast.Call, scope: Scope, escaped: Set[int]) -> None:
        """Classes and instances handed to a call as arguments, and instances whose framework
        entry points are read (`Skip().apply`): what is passed to their `__call__` there is out
        of view."""
        func = call.func
        if isinstance(func, ast.Name) and func.id in _TYPE_TESTS:
            return
        items = [func] if isinstance(func, ast.Attribute) and func.attr in _ENTRY_POINTS else []
        args = list(call.args)
        if args and self.names.qualname(func, scope) == _PARTIAL:
            args = args[1:]
        for arg in (*args, *(k.value for k in call.keywords)):
            items.extend(arg.elts if isinstance(arg, (ast.List, ast.Tuple, ast.Set)) else (arg,))
        for item in items:
            if isinstance(item, ast.Attribute) and item.attr in _ENTRY_POINTS:
                found = self._instances(item.value, scope, _DEPTH)
            elif isinstance(item, (ast.Name, ast.Attribute, ast.Call)):
                found = [*self._classes(item, scope, _DEPTH), *self._instances(item, scope, _DEPTH)]
            else:
                continue
            escaped.update(id(cls) for cls in found)

    def _escaped_methods(self, cls_id: int) -> Iterable[FunctionNode]:
        cls = next(c for c in self.names.classes if id(c) == cls_id)
        for related in self._descendants(cls):
            method = self._call_method(related)
            if method is not None:
                yield method


def _is_attribute_of(target: ast.expr, owner: str | None) -> bool:
    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == owner


# -- what the calls pass ----------------------------------------------------------------------
def _passed_python_values(method: FunctionNode, calls: List[tuple], names: Names) -> FrozenSet[str]:
    positional = [p.arg for p in positional_params(method)[1:]]
    keyword_only = [p.arg for p in method.args.kwonlyargs]
    candidates = set(positional) | set(keyword_only)
    for call, scope in calls:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return frozenset()
        passed = dict(zip(positional, call.args))
        passed.update((k.arg, k.value) for k in call.keywords if k.arg is not None)
        candidates = {p for p in candidates if p in passed and _python_value(passed[p], names, scope, _VALUE_DEPTH)}
        if not candidates:
            break
    return frozenset(candidates)


def _python_value(expr: ast.expr, names: Names, scope: Scope, depth: int) -> bool:
    """A value Python holds even under tracing: a literal, an array's shape, rank, size or dtype
    (and entries of a shape), a tuple of such, arithmetic on them, a name bound only to such."""
    if depth <= 0:
        return False
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, (ast.Tuple, ast.List)):
        return all(_python_value(e, names, scope, depth - 1) for e in expr.elts)
    if isinstance(expr, ast.Attribute):
        return expr.attr in _STATIC_ATTRIBUTES
    if isinstance(expr, ast.Subscript):
        value, index = expr.value, expr.slice
        return _python_value(value, names, scope, depth - 1) and _static_index(index, names, scope, depth - 1)
    if isinstance(expr, ast.UnaryOp):
        return _python_value(expr.operand, names, scope, depth - 1)
    if isinstance(expr, ast.BinOp):
        return _python_value(expr.left, names, scope, depth - 1) and _python_value(expr.right, names, scope, depth - 1)
    if isinstance(expr, ast.Name):
        owner = names.lookup(expr.id, scope)
        if owner is None or expr.id in owner.params or expr.id in owner.other:
            return False
        values = owner.assigned.get(expr.id, [])
        return bool(values) and all(_python_value(v, names, owner, depth - 1) for v in values)
    return False


def _static_index(index: ast.expr, names: Names, scope: Scope, depth: int) -> bool:
    if isinstance(index, ast.Slice):
        parts = (index.lower, index.upper, index.step)
        return all(part is None or _python_value(part, names, scope, depth) for part in parts)
    return _python_value(index, names, scope, depth)
