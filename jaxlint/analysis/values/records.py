"""Instances of record classes: what each field holds where traced code builds one, or receives one.

A record class is a `typing.NamedTuple` or a dataclass (`dataclasses.dataclass`,
`flax.struct.dataclass`, `chex.dataclass`, a `flax.struct.PyTreeNode` or Equinox module)
defined in the module or another module of the project whose constructor only stores its
arguments: its fields are the
annotated names of its class body (and of its record bases, first), in order, each taking
a positional or keyword argument or else its default (a Python value). A class that writes
its own `__init__`, `__new__` or `__post_init__`, or a field that converts its argument or is
left out of the constructor, is not one: nothing is known of what such an instance holds.
Copies with fields replaced (`x._replace(f=v)`, `x.replace(f=v)`, `dataclasses.replace(x, f=v)`)
keep the other fields. A traced instance that arrives under an annotation naming a NamedTuple
or a dataclass pytree class holds what each field's declaration says (`traced_instance`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

from jaxlint.analysis.engine.lattice import (
    STATIC, TRACED, TRACED_ARRAY, TRACED_OR_NONE, UNKNOWN, FunctionValue, Record, Trace, Value, constant, named,
    record_value
)
from jaxlint.analysis.engine.named_tuples import named_tuple_class, named_tuple_factory
from jaxlint.analysis.engine.names import Names, Scope, type_name
from jaxlint.analysis.knowledge import array_api, jax_api
from jaxlint.analysis.values.nullness import excludes_none
from jaxlint.analysis.values.pytree_fields import (
    ProjectClasses, leaf_or_none, maybe_static, one_array, scalar_leaf
)
from jaxlint.analysis.knowledge.decorators import plain
from jaxlint.analysis.knowledge.library_classes import library_class
from jaxlint.analysis.tracing.callees import inherited

_DATACLASS_DECORATORS = frozenset({"dataclasses.dataclass", "flax.struct.dataclass", "chex.dataclass"})
# Decorators and bases whose classes flatten every field not declared static as a pytree child
# (an Equinox module too; what a transformation then traces of a non-array field is another matter).
_PYTREE_DATACLASSES = array_api.DATACLASS_PYTREE_DECORATORS | array_api.DATACLASS_PYTREE_BASES | {"equinox.Module"}
_DATACLASS_BASES = array_api.DATACLASS_PYTREE_BASES | {"equinox.Module"}
# Those whose every field not declared static is a child, a Python number a scalar leaf.
_DATACLASS_PYTREES = array_api.DATACLASS_PYTREE_DECORATORS | array_api.DATACLASS_PYTREE_BASES
# Methods that make the constructor do more than store its arguments, or attribute reads do
# more than return them.
_CONSTRUCTORS = frozenset({"__init__", "__new__", "__post_init__", "__getattr__", "__getattribute__"})
# Field specifier keywords that change what the constructor stores.
_TRANSFORMING_KEYWORDS = frozenset({"converter", "init"})
_SPECIFIERS = frozenset({"field", "static_field"})
_CLASS_VARIABLES = frozenset({"typing.ClassVar", "typing_extensions.ClassVar"})
_MAX_BASES = 8
_FIELDLESS_BASES = frozenset({"typing.Generic", "typing_extensions.Generic", "abc.ABC", "object"})
# Copies of an instance with some fields replaced that take the instance first.
_COPY_FUNCTIONS = frozenset({"dataclasses.replace", "copy.replace"})


@dataclass(frozen=True)
class _Field:
    name: str
    default: Optional[Value]  # None: the constructor must be given it
    static: bool
    annotation: Optional[ast.expr] = None


@dataclass(frozen=True)
class _RecordClass:
    cls: ast.ClassDef
    names: Names  # those of the module that defines it
    fields: tuple[_Field, ...]
    named_tuple: bool
    leaves_known: bool
    dataclass_pytree: bool  # every field not declared static is a child, a number one a scalar leaf


class RecordClasses:
    """The record classes the module's code uses, its own or another project module's, each read
    once. `classes` finds a class of another module by its qualified name (`project.py`)."""

    def __init__(self, names: Names, classes: ProjectClasses | None = None):
        self.names = names
        self.classes = classes
        self._classes: dict[int, Optional[_RecordClass]] = {}
        self._imported: dict[str, Optional[tuple[Names, ast.ClassDef]]] = {}
        self._qualnames: dict[int, str] = {}  # id(class of another module) -> its qualified name

    def class_of(
        self, expr: ast.expr, scope: Scope | None, names: Names | None = None
    ) -> Optional[tuple[Names, ast.ClassDef]]:
        """The class an expression of the module `names` (default: this one) names, with the names
        of the module defining it: one of that module's, or one another module of the project defines."""
        names = names or self.names
        cls = names.definition(expr, scope)
        if isinstance(cls, ast.ClassDef):
            return (names, cls) if id(cls) in names.scopes else None
        if cls is not None or not isinstance(expr, (ast.Name, ast.Attribute)):
            return None
        if isinstance(expr, ast.Name):
            # A name bound once to a class or a generic alias of one (`MCTSTree = Tree[MCTSNode]`).
            bound = names.assignments(expr, scope)
            alias = bound[0] if len(bound) == 1 else None
            if isinstance(alias, ast.Subscript):
                alias = alias.value
            if isinstance(alias, (ast.Name, ast.Attribute)) and alias is not expr:
                return self.class_of(alias, names.read_scope.get(id(alias), scope), names)
        qualname = names.qualname(expr, scope)
        declared = library_class(qualname)
        if declared is not None:
            return declared
        if qualname is None or self.classes is None:
            return None
        if qualname not in self._imported:
            found = self._imported[qualname] = self.classes(qualname)
            if found is not None:
                self._qualnames.setdefault(id(found[1]), qualname)
        return self._imported[qualname]

    def foreign_method(self, record: Record, name: str) -> Optional[str]:
        """The qualified name of the plain method `name` that the class of `record` defines, where
        that class is another module's (a method of this module's is followed here,
        `member_of`): a call of it is followed there, the instance given for `self`."""
        qualname = self._qualnames.get(id(record.cls))
        record_class = self._classes.get(id(record.cls))
        if qualname is None or record_class is None or record.field(name) is not None:
            return None
        for stmt in record.cls.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
                return f"{qualname}.{name}" if plain(stmt, record_class.names) else None
        return None

    def construct(self, call: ast.Call, args: list[Value], kwargs: dict[str, Value], scope: Scope) -> Optional[Value]:
        """The instance `call` builds, when it calls a record class with arguments it can place."""
        found = self.class_of(call.func, scope)
        record_class = self._read(*found) if found is not None else None
        if record_class is None or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        if any(k.arg is None for k in call.keywords) or len(args) > len(record_class.fields):
            return None
        values = []
        kwargs = dict(kwargs)
        for i, field in enumerate(record_class.fields):
            value = args[i] if i < len(args) else kwargs.pop(field.name, field.default)
            if value is None:
                return None
            values.append(value)
        if kwargs:
            return None  # a keyword that names no field: the call fails anyway
        return record_value(_record(record_class, tuple(values)))

    def traced_instance(
        self, annotation: ast.expr, scope: Scope | None, names: Names | None = None, depth: int = 0
    ) -> Optional[Value]:
        """A traced instance of the pytree record class an annotation (of the module `names`,
        default this one) names, a NamedTuple (a class, or one made by a call of the module's,
        `collections.namedtuple(...)`, whose fields are traced children of no known structure)
        or a dataclass pytree of any module of the project:
        each field what its declaration says a traced pytree holds there. A field declared an
        array (not a sequence of them) is a traced array, and so is one a dataclass pytree declares
        a Python number; one declared a record class is such an instance in turn; one declared
        static is a Python value; one declared an array or None, or a number or None, is that
        array unless None (`TRACED_OR_NONE`), None being an empty pytree; one that may be None
        otherwise (its type admits None, or its default is None) is not known; any other is a
        pytree child, traced, of a
        structure not known."""
        if not isinstance(annotation, (ast.Name, ast.Attribute)):
            return None
        if named_tuple_factory(annotation, names or self.names, scope):
            # `collections.namedtuple("State", ["values", "idx"])`: every field a pytree child,
            # traced, of a structure not known.
            return Value(Trace.TRACED, fields=True, not_none=True)
        found = self.class_of(annotation, scope, names)
        record_class = self._read(*found) if found is not None else None
        if record_class is None or not (record_class.named_tuple or record_class.dataclass_pytree):
            return None
        there, outer = record_class.names, record_class.names.enclosing_scope(record_class.cls)
        values = []
        for field in record_class.fields:
            annotation = field.annotation
            if field.static:
                held = there.qualname(annotation, outer) if annotation is not None else None
                value = named(held) if held in jax_api.MODULE_APPLIES else STATIC
            elif annotation is None:
                value = UNKNOWN
            elif leaf_or_none(annotation, there, outer, record_class.dataclass_pytree):
                value = TRACED_OR_NONE  # None is an empty pytree: it stays None
            elif field.default is not None and field.default.none:
                value = UNKNOWN
            elif one_array(annotation, there):
                value = TRACED_ARRAY
            elif not excludes_none(annotation, there, outer):
                value = UNKNOWN
            elif record_class.dataclass_pytree and scalar_leaf(annotation, there, outer):
                value = TRACED_ARRAY
            else:
                nested = self.traced_instance(annotation, outer, there, depth + 1) if depth < _MAX_NESTING else None
                value = TRACED if nested is None else nested
            values.append(value)
        return record_value(_record(record_class, tuple(values))).but(trace=Trace.TRACED)

    def declared_field(self, record: Record, name: str) -> Optional[Value]:
        """A traced instance of the record class that `record`'s class declares its field `name`
        to hold (`tree: Tree`), as `traced_instance` reads the declaration: what a traced field
        is where its value shows no structure (a loop's carry built from a value not known)."""
        record_class = self._classes.get(id(record.cls))
        field = next((f for f in record_class.fields if f.name == name), None) if record_class else None
        if field is None or field.static or field.annotation is None or not record_class.leaves_known:
            return None
        there = record_class.names
        return self.traced_instance(field.annotation, there.enclosing_scope(record_class.cls), there)

    def _read(self, names: Names, cls: ast.ClassDef) -> Optional[_RecordClass]:
        if id(cls) in self._classes:
            return self._classes[id(cls)]
        named_tuple = named_tuple_class(cls, names)
        fields = _fields(cls, names, named_tuple, self.class_of)
        result = None
        if fields is not None:
            kinds = _kinds(cls, names) | _subclassed_bases(cls, names, self.class_of)
            kind = named_tuple or bool(kinds & _PYTREE_DATACLASSES)
            pytree = not named_tuple and bool(kinds & _DATACLASS_PYTREES)
            result = _RecordClass(cls, names, fields, named_tuple, kind, pytree)
        self._classes[id(cls)] = result
        return result


_MAX_NESTING = 3  # how deep records held in the fields of an annotated record are read


def _record(record_class: _RecordClass, values: tuple[Value, ...]) -> Record:
    return Record(
        record_class.cls,
        tuple(f.name for f in record_class.fields),
        values,
        record_class.named_tuple,
        record_class.leaves_known,
        frozenset(f.name for f in record_class.fields if f.static),
    )


def _kinds(cls: ast.ClassDef, names: Names) -> set[str]:
    outer = names.enclosing_scope(cls)
    # Through the project's own copies (`type_name`): a vendored `flax.struct.dataclass` is Flax's.
    decorators = {type_name(d.func if isinstance(d, ast.Call) else d, names, outer) for d in cls.decorator_list}
    return {*decorators, *(names.qualname(b, outer) for b in cls.bases)} - {None}


def member_of(value: Value, name: str, names: Names) -> Optional[Value]:
    """`x.name` of an instance: the field's value, or a plain method its class defines or inherits
    from a base of the same module (a class of the module `names` indexes: a method is followed
    in its own module), bound to the instance as it was built."""
    record = value.record
    if record is None:
        return None
    field = record.field(name)
    if field is not None:
        return field
    if id(record.cls) not in names.scopes:
        return None
    method = names.scopes[id(record.cls)].defs.get(name) or inherited(names, record.cls, name)
    if isinstance(method, ast.FunctionDef) and plain(method, names):  # its own, or a base's of the module
        return Value(Trace.STATIC, function=FunctionValue(method, method_self=value))
    return None


def copied(
    node: ast.Call, callee: Optional[str], args: list[Value], kwargs: dict[str, Value], receiver: Optional[Value]
) -> Optional[Value]:
    """A copy of an instance with the fields the call names replaced: `dataclasses.replace(x, ...)`,
    `x._replace(...)` of a NamedTuple, `x.replace(...)` of a dataclass that does not define it."""
    if callee is not None:
        record = args[0].record if callee in _COPY_FUNCTIONS and args else None
        first = 1
    else:
        record = receiver.record if receiver is not None else None
        first = 0
        if record is None or not _copy_method(record, node.func.attr):  # type: ignore[attr-defined]
            return None
    if record is None or len(node.args) > first or any(k.arg is None for k in node.keywords):
        return None
    if not set(kwargs) <= set(record.names):
        return None
    return record_value(record.with_values(tuple(kwargs.get(n, v) for n, v in zip(record.names, record.values))))


def _copy_method(record: Record, method: str) -> bool:
    if record.named_tuple:
        return method == "_replace"
    return method == "replace" and not any(
        isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "replace" for stmt in record.cls.body
    )


def dataclass_like(cls: ast.ClassDef, names: Names) -> bool:
    """A dataclass, `flax.struct` node or Equinox module: its instances compare field by field."""
    outer = names.enclosing_scope(cls)
    return any(
        type_name(d.func if isinstance(d, ast.Call) else d, names, outer) in _DATACLASS_DECORATORS
        for d in cls.decorator_list
    ) or any(names.qualname(base, outer) in _DATACLASS_BASES for base in cls.bases)


def _fields(
    cls: ast.ClassDef, names: Names, named_tuple: bool, class_of, depth: int = 0,
) -> Optional[tuple[_Field, ...]]:
    """The constructor's fields, in order, or None when the class is not a record class.
    `class_of` (`RecordClasses.class_of`) finds a base: of the module, of a library it models
    (`train_state.TrainState`), or of another module of the project (`core.State`)."""
    outer = names.enclosing_scope(cls)
    from_bases: tuple[_Field, ...] = ()
    if not named_tuple:
        decorated = dataclass_like(cls, names)
        for base in cls.bases:
            if isinstance(base, ast.Subscript):
                base = base.value  # a generic base, `Tree[Node]`: the class it parametrises
            if names.qualname(base, outer) in _DATACLASS_BASES:
                continue
            if names.qualname(base, outer) in _FIELDLESS_BASES:
                continue  # `Generic[NodeType]`, `abc.ABC`: no fields, no constructor of their own
            found = class_of(base, outer, names)
            if found is None or depth >= _MAX_BASES:
                return None
            there, parent = found
            parent_fields = _fields(parent, there, False, class_of, depth + 1)
            if parent_fields is None:
                return None
            from_bases += parent_fields
        decorated = decorated or bool(_subclassed_bases(cls, names, class_of))
        if not decorated or cls.keywords or _no_constructor(cls, names, outer):
            return None
    own = []
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in _CONSTRUCTORS:
            return None
        if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
            continue
        if _class_variable(stmt.annotation, names, outer):
            continue
        field = _field(stmt)
        if field is None:
            return None
        own.append(field)
    own_names = {f.name for f in own}
    return (*(f for f in from_bases if f.name not in own_names), *own)


def _subclassed_bases(cls: ast.ClassDef, names: Names, class_of, depth: int = 0) -> frozenset[str]:
    """The bases that make every subclass a dataclass (`flax.struct.PyTreeNode`, whose
    `__init_subclass__` makes one; `equinox.Module`, whose metaclass does) that the class derives
    from, directly or through classes of the module or of the project: `class
    GARepertoire(Repertoire)` with `class Repertoire(flax.struct.PyTreeNode)` is a dataclass
    pytree with no decorator of its own."""
    outer = names.enclosing_scope(cls)
    found: set[str] = set()
    for base in cls.bases:
        if isinstance(base, ast.Subscript):
            base = base.value
        qualname = names.qualname(base, outer)
        if qualname in _DATACLASS_BASES:
            found.add(qualname)
        elif depth < _MAX_BASES and qualname not in _FIELDLESS_BASES:
            parent = class_of(base, outer, names)
            if parent is not None:
                found |= _subclassed_bases(parent[1], parent[0], class_of, depth + 1)
    return frozenset(found)


def _field(stmt: ast.AnnAssign) -> Optional[_Field]:
    name = stmt.target.id  # type: ignore[union-attr]
    value = stmt.value
    if value is None:
        return _Field(name, None, False, stmt.annotation)
    specifier = _specifier(value)
    if specifier is None:
        return _Field(name, _default(value), False, stmt.annotation)  # a default computed when the class is defined
    keywords = {k.arg: k.value for k in value.keywords}  # type: ignore[union-attr]
    if None in keywords or _TRANSFORMING_KEYWORDS & set(keywords) or value.args:  # type: ignore[union-attr]
        return None
    static = maybe_static(value)
    if "default" in keywords:
        return _Field(name, _default(keywords["default"]), static, stmt.annotation)
    return _Field(name, STATIC if "default_factory" in keywords else None, static, stmt.annotation)


def _specifier(value: ast.expr) -> Optional[str]:
    """The name of a field specifier call (`field(...)`, `eqx.field(...)`, `static_field()`)."""
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return name if name in _SPECIFIERS else None


def _no_constructor(cls: ast.ClassDef, names: Names, scope: Scope) -> bool:
    """`@dataclass(init=False)`: the class's own code fills its fields."""
    return any(
        isinstance(d, ast.Call) and names.qualname(d.func, scope) in _DATACLASS_DECORATORS
        and any(k.arg == "init" for k in d.keywords)
        for d in cls.decorator_list
    )


def _default(value: ast.expr) -> Value:
    """A default is a Python value, computed when the class is defined."""
    return constant(value.value) if isinstance(value, ast.Constant) else STATIC


def _class_variable(annotation: ast.expr, names: Names, scope: Scope) -> bool:
    target = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return names.qualname(target, scope) in _CLASS_VARIABLES
