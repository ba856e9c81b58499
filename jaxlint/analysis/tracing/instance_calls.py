"""Parameters of a framework module's `__call__` that every call in view passes a Python value.

A Flax, Equinox or Haiku module's `__call__` runs under the framework's transformation, and a
parameter of it is taken for traced only for lack of evidence: the framework passes on what
the caller gives. When the module calls instances of its own classes (`Skip()(x, y.shape)`,
`self.skip = Skip()` then `self.skip(x, y.shape)`, `partial(self.skip_cls)()(x, y.shape)`)
and every such call passes a Python value for a parameter (a literal, a string, a shape, a
tuple of them, a name bound only to such, unpacked or not: `b, h, w, c = x.shape`), that
parameter holds a Python value. A Flax module's `apply(variables, *args,
**kwargs)` and `init(rngs, *args, **kwargs)` run its `__call__` with the arguments after the
first, unless `method=` names another method; a parameter of the jitted function making the
call that the jit declares static (`static_argnums`) is a Python value there too. A class with
no call in view, one call with anything else for the parameter, or a class or instance handed
to other code (`nn.Sequential([Skip()])`, `Skip().apply(v, x, method=...)`) leaves the
parameter as it was.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, FrozenSet, Iterable, List, Sequence, Set, Tuple
from weakref import WeakKeyDictionary

from jaxlint.analysis.engine.arguments import named_parameter
from jaxlint.analysis.engine.names import FunctionNode, Names, Scope
from jaxlint.analysis.engine.walk import nodes_of_classes, nodes_run_with, own_statements, target_names
from jaxlint.analysis.tracing.traced_functions import TracedFunction
from jaxlint.analysis.tracing.array_annotations import python_annotation
from jaxlint.analysis.tracing.tracing import first_param, framework_class, positional_params

_DEPTH = 4  # how many names and `partial`s a class or an instance is followed through
_VALUE_DEPTH = 12  # how deep an argument's expression (names followed) is read
# Attributes of an array that are Python values under tracing.
_STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype"})
# Calls that take a class without calling it.
_TYPE_TESTS = frozenset({"isinstance", "issubclass"})
_PARTIAL = "functools.partial"
_ASSIGN, _NOTHING = frozenset({ast.Assign}), frozenset()
_CONSTRUCTORS = ("__init__", "__post_init__")
# A Flax module's methods that run its `__call__` with the arguments they are given.
_ENTRY_POINTS = frozenset({"apply", "init", "init_with_output", "tabulate"})
# Those that pass the arguments after their first (named here) to `__call__`, and their own
# keywords, which `__call__` does not receive.
_CALL_RUNNERS = {"apply": "variables", "init": "rngs"}
_RUNNER_KEYWORDS = frozenset({"variables", "rngs", "method", "mutable", "capture_intermediates"})

# A call of `__call__` as jaxlint reads it: positional arguments, keyword arguments, scope.
_Passed = Tuple[List[ast.expr], List[ast.keyword], Scope]
# id(function) -> the parameters its jit declares static.
_JitStatic = Dict[int, FrozenSet[str]]


def python_valued_parameters(method: FunctionNode, names: Names, roots: Sequence[TracedFunction]) -> FrozenSet[str]:
    """The parameters of a module's `__call__` that every call of it in this module passes a
    Python value; none when no call is in view. `roots` are the module's traced functions."""
    found = _TABLES.get(names)
    if found is None:
        found = _TABLES[names] = _InstanceCalls(names, _jit_static(roots)).python_valued()
    return found.get(id(method), frozenset())


def _jit_static(roots: Sequence[TracedFunction]) -> _JitStatic:
    """id(function) -> the parameters every transformation of it declares static."""
    static: _JitStatic = {}
    for root in roots:
        if not root.framework_method:
            known = static.get(id(root.node))
            static[id(root.node)] = root.static_params if known is None else known & root.static_params
    return static


_TABLES: "WeakKeyDictionary[Names, Dict[int, FrozenSet[str]]]" = WeakKeyDictionary()


class _InstanceCalls:
    def __init__(self, names: Names, jit_static: _JitStatic):
        self.names = names
        self.jit_static = jit_static
        self.subclasses: Dict[int, List[ast.ClassDef]] = {}
        self.field_tables: Dict[int, Dict[str, List[tuple]]] = {}
        # id(class) -> the classes its fields declared without a value are annotated with
        self.declared_tables: Dict[int, Dict[str, List[tuple]]] = {}
        for cls in names.classes:
            for base in self._module_bases(cls):
                self.subclasses.setdefault(id(base), []).append(cls)
        self.reaching = self._reaching_keys()

    def _reaching_keys(self) -> Set[str]:
        """The names and attribute names through which an expression may lead to a class of the
        module (`_reaches`): the classes' names, then, to a fixed point, every name or field bound
        to a value that leads to one. `_classes` and `_instances` follow nothing else, so an
        expression that leads to none of these cannot be, or make, an instance of a module class."""
        reaching = {cls.name for cls in self.names.classes}
        bindings = [
            (name, value)
            for scope in self.names.scopes.values() for name, values in scope.assigned.items() for value in values
        ]
        for cls in self.names.classes:
            for table in (self._fields(cls), self._declared(cls)):
                bindings.extend((attr, value) for attr, found in table.items() for value, _ in found)
        changed = True
        while changed:
            changed = False
            pending = []
            for key, value in bindings:
                if key in reaching:
                    continue
                if _reaches(value, reaching):
                    reaching.add(key)
                    changed = True
                else:
                    pending.append((key, value))
            bindings = pending
        return reaching

    def python_valued(self) -> Dict[int, FrozenSet[str]]:
        calls: Dict[int, List[_Passed]] = {}
        methods: Dict[int, FunctionNode] = {}
        escaped: Set[int] = set()
        for call, scope in self.names.calls:
            self._escapes(call, scope, escaped)
            func, passed, runner = call.func, (call.args, call.keywords, scope), None
            if _runs_call(call):
                assert isinstance(func, ast.Attribute)
                func, passed, runner = func.value, _runner_arguments(call, scope), func.attr
            if not _reaches(func, self.reaching):
                continue
            for cls in self._instances(func, scope, _DEPTH):
                if runner is not None and self._defines(cls, runner):
                    escaped.add(id(cls))  # its own `apply`: what reaches `__call__` is out of view
                    continue
                method = self._call_method(cls)
                if method is not None:
                    calls.setdefault(id(method), []).append(passed)
                    methods[id(method)] = method
        escaped_methods = {id(m) for cls_id in escaped for m in self._escaped_methods(cls_id)}
        return {
            key: _passed_python_values(methods[key], found, self.names, self.jit_static)
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
            found = [c for value, inner in fields for c in self._instances(value, inner, depth - 1)]
            declared = self._field_values(expr, scope, declared=True)
            return found + [c for kind, inner in declared for c in self._classes(kind, inner, depth - 1)]
        return []

    def _assigned(self, name: ast.Name, scope: Scope) -> List[ast.expr]:
        owner = self.names.lookup(name.id, scope)
        if owner is None or name.id in owner.params or name.id in owner.other:
            return []
        return owner.assigned.get(name.id, [])

    def _field_values(self, expr: ast.Attribute, scope: Scope, declared: bool = False) -> List[tuple]:
        """What `self.attr` may hold, read in a method: the attribute's class-level values and
        what `setup` or `__init__` assigns to it, in the class, the module's classes it derives
        from and those deriving from it (an override is what a subclass's `self` holds).
        `declared`: the classes a field declared without a value is annotated with instead
        (`pos_emb: PositionalEmbedding`, which the constructor fills)."""
        cls = self._self_class(expr, scope)
        if cls is None:
            return []
        related = {id(c): c for c in (*self._ancestors(cls), *self._descendants(cls))}
        tables = [self._declared(c) if declared else self._fields(c) for c in related.values()]
        return [found for table in tables for found in table.get(expr.attr, ())]

    def _fields(self, cls: ast.ClassDef) -> Dict[str, List[tuple]]:
        """The values a class binds to its attributes, each with the scope it is read in (and, in
        `declared_tables`, the annotation of each field declared without a value)."""
        table = self.field_tables.get(id(cls))
        if table is not None:
            return table
        table = self.field_tables[id(cls)] = {}
        declared = self.declared_tables[id(cls)] = {}
        inner = self.names.scopes[id(cls)]
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if stmt.value is not None:
                    table.setdefault(stmt.target.id, []).append((stmt.value, inner))
                elif isinstance(stmt.annotation, (ast.Name, ast.Attribute)):
                    declared.setdefault(stmt.target.id, []).append((stmt.annotation, inner))
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        table.setdefault(target.id, []).append((stmt.value, inner))
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in ("setup", "__init__"):
                owner, method_scope = first_param(stmt), self.names.scopes[id(stmt)]
                for node in nodes_of_classes([stmt], _ASSIGN, _NOTHING):
                    for target in node.targets:
                        if _is_attribute_of(target, owner):
                            table.setdefault(target.attr, []).append((node.value, method_scope))
        return table

    def _declared(self, cls: ast.ClassDef) -> Dict[str, List[tuple]]:
        """The classes the fields of `cls` declared without a value are annotated with (`_fields`)."""
        self._fields(cls)
        return self.declared_tables[id(cls)]

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
        return _reached(cls, self._module_bases)

    def _descendants(self, cls: ast.ClassDef) -> List[ast.ClassDef]:
        return _reached(cls, lambda current: self.subclasses.get(id(current), ()))

    def _defines(self, cls: ast.ClassDef, name: str) -> bool:
        """Whether `cls` or a module class it derives from defines the method `name`."""
        return any(
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
            for current in self._ancestors(cls) for node in current.body
        )

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
        if self._only_stores(func, scope):
            return  # the instances become fields, whose calls are in view (`_field_values`)
        items = [func] if isinstance(func, ast.Attribute) and func.attr in _ENTRY_POINTS and not _runs_call(call) else []
        args = list(call.args)
        reaching = self.reaching
        if args and _reaches(args[0], reaching) and self.names.qualname(func, scope) == _PARTIAL:
            args = args[1:]
        for arg in (*args, *(k.value for k in call.keywords)):
            items.extend(arg.elts if isinstance(arg, (ast.List, ast.Tuple, ast.Set)) else (arg,))
        for item in items:
            if isinstance(item, ast.Attribute) and item.attr in _ENTRY_POINTS:
                if not _reaches(item.value, reaching):
                    continue
                found = self._instances(item.value, scope, _DEPTH)
            elif isinstance(item, (ast.Name, ast.Attribute, ast.Call)) and _reaches(item, reaching):
                found = [*self._classes(item, scope, _DEPTH), *self._instances(item, scope, _DEPTH)]
            else:
                continue
            escaped.update(id(cls) for cls in found)

    def _only_stores(self, func: ast.expr, scope: Scope) -> bool:
        """Whether calling `func` makes a framework module of this module whose constructor only
        stores what it is given: no class on the way defines `__init__` or `__post_init__`."""
        if not _reaches(func, self.reaching):
            return False
        classes = self._classes(func, scope, _DEPTH)
        return bool(classes) and all(
            framework_class(cls, self.names) and not any(self._defines(cls, name) for name in _CONSTRUCTORS)
            for cls in classes
        )

    def _escaped_methods(self, cls_id: int) -> Iterable[FunctionNode]:
        cls = next(c for c in self.names.classes if id(c) == cls_id)
        for related in self._descendants(cls):
            method = self._call_method(related)
            if method is not None:
                yield method


def _reached(cls: ast.ClassDef, step: Callable[[ast.ClassDef], Iterable[ast.ClassDef]]) -> List[ast.ClassDef]:
    """`cls` and the classes `step` leads to from it, repeatedly (at most 64)."""
    found, todo = [], [cls]
    while todo and len(found) < 64:
        current = todo.pop()
        if all(current is not c for c in found):
            found.append(current)
            todo.extend(step(current))
    return found


def _reaches(expr: ast.expr, reaching: Set[str]) -> bool:
    """Whether `_classes` or `_instances` could find a class in `expr`: a name or attribute among
    `reaching`, or a call of one (or a `partial` whose first argument is one)."""
    while True:
        cls = expr.__class__
        if cls is ast.Name:
            return expr.id in reaching
        if cls is ast.Attribute:
            return expr.attr in reaching
        if cls is not ast.Call:
            return False
        if expr.args and _reaches(expr.args[0], reaching):
            return True
        expr = expr.func


def _runs_call(call: ast.Call) -> bool:
    """`m.apply(variables, ...)` or `m.init(rngs, ...)` that runs `__call__`: no `method=`, which
    may name another method, nor `**kwargs`, which may hold it."""
    func = call.func
    return (
        isinstance(func, ast.Attribute) and func.attr in _CALL_RUNNERS
        and all(k.arg is not None and k.arg != "method" for k in call.keywords)
    )


def _runner_arguments(call: ast.Call, scope: Scope) -> _Passed:
    """What `apply`/`init` passes on to `__call__`: the arguments after its first, less its own keywords."""
    assert isinstance(call.func, ast.Attribute)
    first = _CALL_RUNNERS[call.func.attr]
    skip = 0 if any(k.arg == first for k in call.keywords) else 1
    return call.args[skip:], [k for k in call.keywords if k.arg not in _RUNNER_KEYWORDS], scope


def _is_attribute_of(target: ast.expr, owner: str | None) -> bool:
    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == owner


# -- what the calls pass ----------------------------------------------------------------------
def _passed_python_values(
    method: FunctionNode, calls: List[_Passed], names: Names, jit_static: _JitStatic
) -> FrozenSet[str]:
    positional = [p.arg for p in positional_params(method)[1:]]
    keyword_only = [p.arg for p in method.args.kwonlyargs]
    candidates = set(positional) | set(keyword_only)
    for args, keywords, scope in calls:
        if any(isinstance(a, ast.Starred) for a in args) or any(k.arg is None for k in keywords):
            return frozenset()
        passed = dict(zip(positional, args))
        passed.update((k.arg, k.value) for k in keywords if k.arg is not None)
        candidates = {
            p for p in candidates if p in passed and _python_value(passed[p], names, scope, _VALUE_DEPTH, jit_static)
        }
        if not candidates:
            break
    return frozenset(candidates)


def _python_value(expr: ast.expr, names: Names, scope: Scope, depth: int, jit_static: _JitStatic) -> bool:
    """A value Python holds even under tracing: a literal, an array's shape, rank, size or dtype
    (and entries of a shape), a tuple of such, arithmetic on them, a name bound only to such, a
    parameter that the jit tracing its function declares static."""
    if depth <= 0:
        return False
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, (ast.Tuple, ast.List)):
        return all(_python_value(e, names, scope, depth - 1, jit_static) for e in expr.elts)
    if isinstance(expr, ast.Attribute):
        return expr.attr in _STATIC_ATTRIBUTES
    if isinstance(expr, ast.Subscript):
        value, index = expr.value, expr.slice
        return _python_value(value, names, scope, depth - 1, jit_static) and _static_index(
            index, names, scope, depth - 1, jit_static
        )
    if isinstance(expr, ast.UnaryOp):
        return _python_value(expr.operand, names, scope, depth - 1, jit_static)
    if isinstance(expr, ast.BinOp):
        left, right = expr.left, expr.right
        return _python_value(left, names, scope, depth - 1, jit_static) and _python_value(
            right, names, scope, depth - 1, jit_static
        )
    if isinstance(expr, ast.Name):
        owner = names.lookup(expr.id, scope)
        if owner is None:
            return False
        if expr.id in owner.params:
            static = jit_static.get(id(owner.node))
            return expr.id in static if static is not None else _declared_python(owner.node, expr.id, names)
        if expr.id in owner.other:
            return _unpacked_python_value(expr.id, names, owner, depth - 1, jit_static)
        values = owner.assigned.get(expr.id, [])
        return bool(values) and all(_python_value(v, names, owner, depth - 1, jit_static) for v in values)
    return False


def _declared_python(function: ast.AST, name: str, names: Names) -> bool:
    """Whether `name` is a parameter that a method of a framework module (not itself transformed)
    declares a Python type no tracer belongs to (`def filters(self, length: int)`): the module's
    own code calls it, with what the declaration says."""
    cls = names.parent_class.get(id(function))
    if cls is None or not framework_class(cls, names):
        return False
    param = named_parameter(function, name)
    return param is not None and python_annotation(param.annotation, names, names.enclosing_scope(function))


def _unpacked_python_value(name: str, names: Names, owner: Scope, depth: int, jit_static: _JitStatic) -> bool:
    """Whether every binding of `name` in its scope assigns it a Python value, unpacking one
    included (`b, h, w, c = x.shape`): each store of the name must be a target of such an
    assignment, so a loop, a `with` or any other binding of it decides against."""
    body = getattr(owner.node, "body", None)
    if not isinstance(body, list):
        return False
    stores = sum(
        1 for node in nodes_run_with(body)
        if node.__class__ is ast.Name and node.id == name and node.ctx.__class__ is ast.Store
    )
    assigned = 0
    for statement in own_statements(body):
        if statement.__class__ is not ast.Assign:
            continue
        bound = sum(target_names(target).count(name) for target in statement.targets)
        if bound:
            if not _python_value(statement.value, names, owner, depth, jit_static):
                return False
            assigned += bound
    return stores > 0 and assigned == stores


def _static_index(index: ast.expr, names: Names, scope: Scope, depth: int, jit_static: _JitStatic) -> bool:
    if isinstance(index, ast.Slice):
        parts = (index.lower, index.upper, index.step)
        return all(part is None or _python_value(part, names, scope, depth, jit_static) for part in parts)
    return _python_value(index, names, scope, depth, jit_static)
