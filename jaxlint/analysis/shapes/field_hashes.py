"""Instances hashed by their fields, and the halves `eqx.partition` makes of them (JAX302's evidence).

An Equinox module hashes the tuple of its fields' values (`eqx.Module.__hash__`), and so does a
dataclass whose `__hash__` is generated: `frozen=True` or `unsafe_hash=True` (with the default
`eq`; `chex.dataclass` as `dataclasses.dataclass`), and every `flax.struct.dataclass` and `flax.struct.PyTreeNode`, which are frozen. One
field holding a list, a dict, a set or an array makes such an instance unhashable, static
fields included, but one the hash leaves out (`field(hash=False)`, or `compare=False`). A class
that defines `__init__` (or `__hash__`) of its own is judged by its annotations, not by what its
constructor is given: a field declared a list, dict or set, or a JAX array.

`eqx.partition(tree, spec)` returns two trees of the same classes, the leaves the spec rejects
replaced by None in one and the others in the other; `eqx.filter(tree, spec)` returns one of
them. A list, dict or set is a pytree node, not a leaf: both halves keep it. So the non-array
half of a module with an array field hashes (the array is None there), but that of a module
with a dict field does not.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional, Tuple

from jaxlint.analysis.engine.names import Names, annotation_name
from jaxlint.analysis.shapes.single_bindings import single_binding
from jaxlint.analysis.tracing.array_annotations import declares_array

# A class of the project by its qualified name: the names of its module and its statement.
ProjectClasses = Callable[[str], Optional[Tuple[Names, ast.ClassDef]]]

_MODULE_BASES = frozenset({"equinox.Module", "flax.struct.PyTreeNode"})
_FROZEN_DECORATORS = frozenset({"flax.struct.dataclass"})
_DATACLASS_DECORATORS = frozenset({"dataclasses.dataclass", "chex.dataclass"})
_FIELD_FUNCTIONS = frozenset({"dataclasses.field"})
_CONTAINERS = {
    "builtins.list": "a list", "typing.List": "a list", "builtins.dict": "a dict", "typing.Dict": "a dict",
    "builtins.set": "a set", "typing.Set": "a set",
}
_MAX_BASES = 8


def class_of(func: ast.expr, names: Names, scope, classes: ProjectClasses | None) -> Tuple[Names, ast.ClassDef] | None:
    """The class a constructor call's callee names: of this module, or of another module of the project."""
    found = names.definition(func, scope) if isinstance(func, ast.Name) else None
    if isinstance(found, ast.ClassDef):
        return names, found
    qualname = names.qualname(func, scope)
    return classes(qualname) if qualname is not None and classes is not None else None


def hashes_fields(cls: ast.ClassDef, names: Names) -> bool:
    """A dataclass whose generated `__hash__` hashes its fields (`frozen=True` or `unsafe_hash=True`,
    with the default `eq`), an Equinox module or a frozen Flax dataclass (through the module's own
    base classes), the class defining no `__hash__` of its own."""
    for _ in range(_MAX_BASES):
        if any(isinstance(s, ast.FunctionDef) and s.name == "__hash__" for s in cls.body):
            return False
        options = dataclass_options(cls, names)
        if options is not None:
            return literal_true(options.get("eq"), True) and hashes_by_fields(options)
        scope = names.enclosing_scope(cls)
        if any(names.qualname(d, scope) in _FROZEN_DECORATORS for d in cls.decorator_list):
            return True
        if any(names.qualname(b, scope) in _MODULE_BASES for b in cls.bases):
            return True
        bases = [b for b in cls.bases if isinstance(b, ast.Name)]
        found = names.definition(bases[0], scope) if len(bases) == 1 else None
        if not isinstance(found, ast.ClassDef):
            return False
        cls = found
    return False


def dataclass_options(cls: ast.ClassDef, names: Names) -> dict[str, ast.expr] | None:
    """The keywords of the class's `@dataclasses.dataclass` decorator, or of `@chex.dataclass`,
    which takes the same ones and makes the same `__hash__` (none for the bare one); None when it
    has no such decorator."""
    for decorator in cls.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if names.qualname(target) in _DATACLASS_DECORATORS:
            return {k.arg: k.value for k in decorator.keywords} if isinstance(decorator, ast.Call) else {}
    return None


def hashes_by_fields(options: dict[str, ast.expr]) -> bool:
    return literal_true(options.get("frozen"), False) or literal_true(options.get("unsafe_hash"), False)


def literal_true(value: ast.expr | None, default: bool) -> bool:
    return default if value is None else isinstance(value, ast.Constant) and value.value is True


def own_constructor(cls: ast.ClassDef) -> bool:
    """The class defines `__init__` itself: what its constructor is given need not be its fields."""
    return any(isinstance(s, ast.FunctionDef) and s.name == "__init__" for s in cls.body)


def unhashable_field(cls: ast.ClassDef, names: Names, arrays: bool) -> str | None:
    """What a field the class declares holds that cannot be hashed (a list, a dict, a set; with
    `arrays`, a JAX array too), as a message says it."""
    for stmt in cls.body:
        if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
            continue
        if isinstance(stmt.value, ast.Constant) and stmt.value.value is None:
            continue
        if _left_out_of_hash(stmt.value, names):
            continue
        annotation, qualname = annotation_name(stmt.annotation, names)
        if qualname in _CONTAINERS:
            return f"{_CONTAINERS[qualname]} (its field `{stmt.target.id}`)"
        if arrays and annotation is not None and declares_array(annotation, names):
            return f"an array (its field `{stmt.target.id}`)"
    return None


def _left_out_of_hash(value: ast.expr | None, names: Names) -> bool:
    """A field the generated `__hash__` leaves out: `field(hash=False)`, or `field(compare=False)`
    with no `hash=` (which then follows `compare`)."""
    if not isinstance(value, ast.Call) or names.qualname(value.func) not in _FIELD_FUNCTIONS:
        return False
    given = {k.arg: k.value for k in value.keywords}
    flag = given.get("hash", given.get("compare"))
    return isinstance(flag, ast.Constant) and flag.value is False


def partitioned(name: ast.Name, names: Names) -> ast.expr | None:
    """The tree that `name` holds a half of: bound once, by `a, b = eqx.partition(tree, ...)` or
    `b = eqx.filter(tree, ...)`, in the scope that binds it."""
    binding = single_binding(name, names)
    if binding is None or not isinstance(binding.value, ast.Call):
        return None
    call = binding.value
    if names.qualname(call.func) != ("equinox.partition" if binding.unpacked else "equinox.filter"):
        return None
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "pytree"), None)
