"""Fields of the module's own pytree classes: which attribute of a traced instance is a traced array.

A class defined in the module that annotates a field as an array (`turn: jax.Array`,
`board: Array`) and does not declare it static holds that array as a pytree leaf, so in a
traced instance the field is a traced array. A dataclass pytree (`flax.struct.dataclass`,
`chex.dataclass`, `jax.tree_util.register_dataclass`, a `flax.struct.PyTreeNode`) makes every
field it does not declare static a child, so a field it annotates as a Python number or bool
(`row: int`, `done: bool`) is a leaf too, which a transformation traces as a scalar array. (An
`equinox.Module` is left out: under `filter_jit` its non-array fields are static.) A field
declared one of these or None (`step: Optional[int] = 0`, `mask: jax.Array | None`) may hold
None, an empty pytree that stays None: it is read as a traced array only where the code shows it
is not None (arithmetic, an ordering, `-x`, the far side of an `is None` test, `Value.unless_none`).

The instance's class is known from the annotation of the parameter it arrives in
(`def step(state: State, ...)`, a class of this module or of another module of the project;
read in the function itself or, through the closure, in a function nested in it; or in the
parameter of a nested function that every call of it passes the annotated one,
`forwarded_parameters.py`),
kept while the function only rebinds the name to copies of it (`state = state.replace(...)`,
`dataclasses.replace(state, ...)`).

Where no annotation says the class (the carry of a `lax.while_loop` or `scan` that eager code
builds, a parameter left unannotated), a field is known by its name: a traced pytree's
attribute that the module's classes declare, every one of them, as an array field of a pytree
class (and that no class of the module gives another type, a method or an instance attribute
of that name) is a traced array.

A property that computes a JAX array (`array_properties.py`) counts as such a field, read from
an annotated parameter or known by its name.
"""

from __future__ import annotations

import ast
import weakref
from typing import Callable, Optional, Tuple

from jaxlint.analysis.engine.arguments import named_parameter
from jaxlint.analysis.engine.named_tuples import NAMED_TUPLE_BASES
from jaxlint.analysis.engine.names import FunctionNode, Names, Scope, type_name
from jaxlint.analysis.engine.walk import walk
from jaxlint.analysis.knowledge import array_api
from jaxlint.analysis.knowledge.library_classes import library_class
from jaxlint.analysis.tracing.array_annotations import SEQUENCE_TYPES, declares_array
from jaxlint.analysis.tracing.forwarded_parameters import forwarded_parameter
from jaxlint.analysis.values.array_properties import computes_array
from jaxlint.analysis.values.nullness import excludes_none, or_none

# A project class's module names and statement, by the class's qualified name (`project.py`).
ProjectClasses = Callable[[str], Optional[Tuple[Names, ast.ClassDef]]]

# Copies of a dataclass instance with some fields replaced: still the same class.
_COPIES = frozenset({"replace", "_replace"})
# Keywords of field specifiers (`flax.struct.field`, `eqx.field`, `dataclasses.field`, ...) that
# can make a field static: a field given any of them is left unknown.
STATIC_KEYWORDS = frozenset({"static", "pytree_node", "metadata"})
# How far up the module's own base classes a field is looked for.
_MAX_BASES = 8
# Python scalars a dataclass pytree's leaf may be annotated with: traced, each is a scalar array.
_SCALARS = frozenset({"builtins.int", "builtins.float", "builtins.bool", "builtins.complex"})


# `array_field`'s answer for a field declared an array or None, or a number or None, that a
# traced instance holds as a traced leaf unless it holds None.
ARRAY_OR_NONE = "array or None"


def array_field(
    fn: FunctionNode, node: ast.Attribute, names: Names, classes: ProjectClasses | None = None
) -> bool | str | None:
    """Whether `node` (`name.attr`, read in `fn`) is a field that `name`'s annotated class declares
    an array, or a number that a dataclass pytree holds as a leaf: a traced array in a traced
    instance; `ARRAY_OR_NONE` for one declared that or None (`Optional[int]`).
    None where no annotation names a class the analysis can read.
    `classes` finds a class another module of the project defines, by its qualified name."""
    base = node.value
    if not isinstance(base, ast.Name):
        return None
    # A nested function (a vmapped member, a `lax.cond` branch) reads the parameter of the
    # function around it through its closure: that function's annotation says the class.
    owner = names.lookup(base.id, names.read_scope.get(id(base), names.scope_of(fn)))
    if owner is None or owner.kind != "function" or isinstance(owner.node, ast.Lambda):
        return None
    fn = owner.node
    param = named_parameter(fn, base.id)
    if param is None:
        return None
    if param.annotation is None:
        # A nested function's parameter always given the enclosing function's: its class is that one's.
        forwarded = forwarded_parameter(fn, param, names)
        if forwarded is None or forwarded[1].annotation is None:
            return None  # no class known: the field's name may say (`array_field_by_name`)
        if not _keeps_class(fn, base.id, node.attr, names):
            return False
        fn, param = forwarded
    if not _keeps_class(fn, param.arg, node.attr, names):
        return False
    annotation = param.annotation
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str) and annotation.value.isidentifier():
        annotation = ast.Name(annotation.value, ast.Load())  # `state: "State"`
    scope = names.enclosing_scope(fn)
    cls = names.definition(annotation, scope) if isinstance(annotation, ast.Name) else None
    if cls is None and isinstance(annotation, (ast.Name, ast.Attribute)):
        qualname = names.qualname(annotation, scope)
        found = library_class(qualname) or (classes(qualname) if classes is not None and qualname is not None else None)
        if found is not None:
            names, cls = found  # read where the class is defined
    if not isinstance(cls, ast.ClassDef):
        return None
    declaring = cls
    for _ in range(_MAX_BASES):
        if not isinstance(cls, ast.ClassDef):
            return False
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == node.attr:
                if maybe_static(stmt.value):
                    return False
                if declares_array(stmt.annotation, names):
                    return True
                scope = names.enclosing_scope(cls)
                none = isinstance(stmt.value, ast.Constant) and stmt.value.value is None
                scalar = not none and scalar_leaf(stmt.annotation, names, scope)
                if scalar:
                    return _dataclass_pytree(declaring, names)
                pytree = _dataclass_pytree(declaring, names)
                return ARRAY_OR_NONE if leaf_or_none(stmt.annotation, names, scope, pytree) else False
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == node.attr:
                return computes_array(stmt, names)
        names, cls = _base(cls, names)
    return False


def array_field_by_name(attr: str, names: Names) -> bool:
    """Whether the module's classes declare `attr` only as an array field of a pytree class."""
    fields = _FIELD_KINDS.get(names)
    if fields is None:
        fields = _FIELD_KINDS[names] = _field_kinds(names)
    return fields.get(attr, False)


# Per module: each attribute name its classes declare -> whether every declaration is an array
# field of a pytree class.
_FIELD_KINDS: "weakref.WeakKeyDictionary[Names, dict[str, bool]]" = weakref.WeakKeyDictionary()


def _field_kinds(names: Names) -> dict[str, bool]:
    kinds: dict[str, bool] = {}
    for scope in names.scopes.values():
        cls = scope.node
        if scope.kind != "class" or not isinstance(cls, ast.ClassDef):
            continue
        outer = names.enclosing_scope(cls)
        pytree = _dataclass_pytree(cls, names) or any(names.qualname(b, outer) in NAMED_TUPLE_BASES for b in cls.bases)
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                array = pytree and not maybe_static(stmt.value) and one_array(stmt.annotation, names)
                kinds[stmt.target.id] = kinds.get(stmt.target.id, True) and array
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                kinds[stmt.name] = kinds.get(stmt.name, True) and computes_array(stmt, names)
                for node in walk(stmt):  # `self.x = ...`: an instance attribute of another kind
                    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                        kinds[node.attr] = False
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        kinds[target.id] = False
    return kinds


def leaf_or_none(annotation: ast.expr, names: Names, scope: Scope | None, dataclass_pytree: bool) -> bool:
    """A field declared an array or None (`jax.Array | None`), or, in a dataclass pytree, a
    Python number or None (`Optional[int]`): a traced leaf of a traced instance, unless None."""
    held = or_none(annotation, names, scope)
    return held is not None and (
        one_array(held, names) or dataclass_pytree and scalar_leaf(held, names, scope)
    )


def one_array(annotation: ast.expr, names: Names) -> bool:
    """An array annotation that is not a sequence of arrays (whose truth is its length)."""
    if isinstance(annotation, ast.Subscript) and names.qualname(annotation.value) in SEQUENCE_TYPES:
        return False
    return declares_array(annotation, names)


def scalar_leaf(annotation: ast.expr, names: Names, scope: Scope) -> bool:
    """A field annotated as a Python number or bool that cannot be None (its default aside)."""
    return names.qualname(annotation, scope) in _SCALARS and excludes_none(annotation, names, scope)


def _dataclass_pytree(cls: ast.ClassDef, names: Names) -> bool:
    """A class whose fields are all pytree children unless declared static: a dataclass pytree,
    or a subclass of one of the module's."""
    for _ in range(_MAX_BASES):
        scope = names.enclosing_scope(cls)
        if any(type_name(d, names, scope) in array_api.DATACLASS_PYTREE_DECORATORS for d in cls.decorator_list):
            return True
        if any(names.qualname(b, scope) in array_api.DATACLASS_PYTREE_BASES for b in cls.bases):
            return True
        names, cls = _base(cls, names)
        if not isinstance(cls, ast.ClassDef):
            return False
    return False


def _base(cls: ast.ClassDef, names: Names) -> tuple[Names, ast.AST | None]:
    """The base of a class to look for fields in, with the names of the module declaring it: its
    one base named plainly (a class of the same module), or its one base, a library pytree class
    (`library_classes`); None for anything else."""
    scope = names.enclosing_scope(cls)
    plain_bases = [b for b in cls.bases if isinstance(b, ast.Name)]
    found = names.definition(plain_bases[0], scope) if len(plain_bases) == 1 else None
    if found is not None or len(cls.bases) != 1:
        return names, found
    declared = library_class(names.qualname(cls.bases[0], scope))
    return declared if declared is not None else (names, None)


def _keeps_class(fn: FunctionNode, name: str, field: str, names: Names) -> bool:
    """The parameter is rebound in `fn` only to copies of itself that leave `field` as it was
    (a replaced field may hold a Python value now)."""
    scope = names.scope_of(fn)
    if name in scope.other:
        return False
    return all(_copy_of(value, name, field, names) for value in scope.assigned.get(name, ()))


def _copy_of(value: ast.expr, name: str, field: str, names: Names) -> bool:
    """`name.replace(...)`, `name._replace(...)` or `dataclasses.replace(name, ...)`, not given `field`."""
    if not isinstance(value, ast.Call) or any(k.arg in (field, None) for k in value.keywords):
        return False
    func = value.func
    if names.qualname(func) == "dataclasses.replace":
        first = value.args[0] if value.args else None
        return isinstance(first, ast.Name) and first.id == name
    return isinstance(func, ast.Attribute) and func.attr in _COPIES and isinstance(func.value, ast.Name) and func.value.id == name


def maybe_static(value: ast.expr | None) -> bool:
    """Whether a field's value (what the class body assigns it) may declare it static: a field
    specifier named so (`static_field()`, the spelling of Flax's older API and of the projects
    that copy it) or given a keyword that can say so (`static=`, `pytree_node=`, `metadata=`)."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return name == "static_field" or any(k.arg in STATIC_KEYWORDS for k in value.keywords)
