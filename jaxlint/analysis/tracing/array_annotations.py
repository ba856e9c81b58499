"""Array annotations: whether a declared type admits only arrays.

Read where an annotation is all the analysis knows of a value: a static argument or a static
field declared as an array (JAX302, JAX307), a field of the module's own pytree classes
(`pytree_fields.py`), a parameter declared a JAX array that traced code calls with a value the
analysis cannot see (`jax_array_parameters`), or declared a callable that returns one
(`calls_declared_array_maker`).
"""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.arguments import named_parameter
from jaxlint.analysis.engine.lattice import Trace, Value
from jaxlint.analysis.engine.names import Names, Scope, annotation_name, type_name
from jaxlint.analysis.knowledge import jax_api

# Annotations every value of which is an array (`ArrayLike` admits Python scalars too, but a
# value declared to take arrays and declared static fails for every array it is given).
_DECLARED_ARRAYS = jax_api.ARRAY_ANNOTATIONS | {"numpy.ndarray", "jaxtyping.ArrayLike"}
# Packages whose types the tables above know: their other `...Array` types (`jax.core.ShapedArray`)
# are not arrays.
_TABLED_PACKAGES = frozenset({
    *jax_api.MODELLED_PACKAGES, "jaxlib", "numpy", "jaxtyping", "kauldron", "typing", "builtins"
})
_UNIONS = frozenset({"typing.Union"})
# A sequence of arrays is no more hashable than an array: hashing a tuple hashes its items.
_SEQUENCES = frozenset({"typing.Sequence", "collections.abc.Sequence", "typing.Tuple", "builtins.tuple"})


def declares_array(annotation: ast.expr | None, names: Names, depth: int = 0) -> bool:
    """An array type, a jaxtyping array (`Float[Array, "n"]`) or a kauldron one (`Float["n"]`), a
    sequence of arrays (`Sequence[ArrayLike]`), a union of only those, or a name the module binds
    once to one of these (`Array = Union[jnp.ndarray, np.ndarray]`)."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Name) and names.qualname(annotation) is None:
        alias = aliased(annotation, names) if depth < ALIAS_DEPTH else None
        return alias is not None and declares_array(alias, names, depth + 1)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return declares_array(annotation.left, names) and declares_array(annotation.right, names)
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        annotation, _ = annotation_name(annotation, names)
        if annotation is None:
            return False
    target = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    name = type_name(target, names)
    if name is None:
        return False
    if name in jax_api.KAULDRON_ARRAY_TYPES:  # `Float["b n"]`, or bare
        return True
    if not isinstance(annotation, ast.Subscript):
        return name in _DECLARED_ARRAYS or _array_alias(name)
    inner = annotation.slice
    members = inner.elts if isinstance(inner, ast.Tuple) else [inner]
    if name in _UNIONS:
        return bool(members) and all(declares_array(m, names) for m in members)
    if name in _SEQUENCES:
        items = [m for m in members if not (isinstance(m, ast.Constant) and m.value is Ellipsis)]
        return bool(items) and all(declares_array(m, names) for m in items)
    if name.startswith("jaxtyping.") and name.rsplit(".", 1)[-1] in jax_api.JAXTYPING_DTYPES and members:
        return declares_array(members[0], names)
    return False


def declares_jax_array(annotation: ast.expr | None, names: Names) -> bool:
    """A JAX array type, or a jaxtyping dtype of one (`Float[jax.Array, "b n"]`)."""
    annotation, name = annotation_name(annotation, names)
    if name is None:
        return False
    if not isinstance(annotation, ast.Subscript):
        return name in jax_api.JAX_ARRAY_ANNOTATIONS
    inner = annotation.slice
    first = inner.elts[0] if isinstance(inner, ast.Tuple) and inner.elts else inner
    return name.startswith("jaxtyping.") and name.rsplit(".", 1)[-1] in jax_api.JAXTYPING_DTYPES and (
        declares_jax_array(first, names)
    )


def jax_array_parameters(fn: ast.AST, names: Names) -> frozenset[str]:
    """The parameters of a def declared a JAX array (`logits: jnp.ndarray`, `x: Float[Array, "n"]`)."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return frozenset()
    a = fn.args
    return frozenset(
        p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs) if declares_jax_array(p.annotation, names)
    )


_CALLABLES = frozenset({"typing.Callable", "collections.abc.Callable", "typing_extensions.Callable"})


def calls_declared_array_maker(call: ast.Call, names: Names, scope: Scope) -> bool:
    """Whether a call's callee is a parameter of a def around it, never rebound there, declared a
    callable that returns a JAX array (`predicate: Callable[[jnp.ndarray], jnp.ndarray]`)."""
    if not isinstance(call.func, ast.Name):
        return False
    name = call.func.id
    owner = names.lookup(name, scope)
    if owner is None or owner.kind != "function" or name not in owner.params:
        return False
    if name in owner.assigned or name in owner.defs or name in owner.other:
        return False
    param = named_parameter(owner.node, name)
    annotation, qualified = annotation_name(param.annotation if param is not None else None, names)
    if qualified not in _CALLABLES or not isinstance(annotation, ast.Subscript):
        return False
    members = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else []
    return len(members) == 2 and declares_jax_array(members[1], names)


def traced_where_declared(params: dict[str, Value], declared: frozenset[str]) -> dict[str, Value]:
    """The values traced code passes a function, where a parameter declared a JAX array gets a
    value the analysis cannot see (what a library or an unknown object returned): inside a
    trace, a JAX array that code computes is a tracer. A value it can see keeps what it is."""
    unseen = [name for name in declared if name in params and _unseen(params[name])]
    if not unseen:
        return params
    return {**params, **{name: _DECLARED_TRACED for name in unseen}}


def _unseen(value: Value) -> bool:
    # A Pallas reference or a callable is known to be what it is, not an array.
    return value.trace is Trace.UNKNOWN and not value.ref and value.function is None


_DECLARED_TRACED = Value(Trace.TRACED, array=True)


# Sequence types whose one parameter is every item's type (`list[jax.Array]`, `tuple[X, ...]`).
SEQUENCE_TYPES = frozenset({
    "builtins.list", "builtins.tuple", "typing.List", "typing.Tuple", "typing.Sequence", "collections.abc.Sequence",
})


def declares_jax_arrays(annotation: ast.expr | None, names: Names) -> bool:
    """A sequence every item of which is a JAX array: `list[jax.Array]`, `tuple[jax.Array, ...]`,
    `Sequence[jax.Array]`."""
    annotation, name = annotation_name(annotation, names)
    if not isinstance(annotation, ast.Subscript) or name not in SEQUENCE_TYPES:
        return False
    inner = annotation.slice
    members = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
    if name in ("builtins.tuple", "typing.Tuple"):
        if len(members) != 2 or not (isinstance(members[1], ast.Constant) and members[1].value is Ellipsis):
            return False
        members = members[:1]
    return len(members) == 1 and declares_jax_array(members[0], names)


def _array_alias(name: str) -> bool:
    """A project's own array type (`from mylib.types import Array, IntArray`; `Array = space.Array`):
    JAX projects name their aliases of `jax.Array` so, and a file linted without its package
    cannot follow the alias to its definition."""
    return name.rsplit(".", 1)[-1].endswith("Array") and name.split(".", 1)[0] not in _TABLED_PACKAGES


def names_array(annotation: ast.expr | None, names: Names) -> bool:
    """Whether a declared type names an array type anywhere, so that it may hold one: `jax.Array`,
    `Float[Array, "n"]`, kauldron's `Float["n"]`, `jax.Array | Sequence[int]`,
    `Optional[np.ndarray]`, an `...Array` or
    `ArrayLike` of any package, a string annotation of one of these."""
    annotation, _ = annotation_name(annotation, names)
    if annotation is None:
        return False
    for node in ast.walk(annotation):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node is not annotation:
            if names_array(node, names):  # `Optional["jax.Array"]`
                return True
        if not isinstance(node, (ast.Name, ast.Attribute)):
            continue
        name = names.qualname(node) or (node.id if isinstance(node, ast.Name) else node.attr)
        last = name.rsplit(".", 1)[-1]
        if name in _DECLARED_ARRAYS or name in jax_api.KAULDRON_ARRAY_TYPES or "Array" in last or last == "ndarray":
            return True
    return False


ALIAS_DEPTH = 4
_TYPE_EXPRESSIONS = (ast.Subscript, ast.Name, ast.Attribute, ast.Constant, ast.BinOp)


def aliased(annotation: ast.expr | None, names: Names) -> ast.expr | None:
    """The type a name stands for when the module binds it once to a type expression:
    `Shape = tuple[int, ...]`, `Mode: TypeAlias = Literal["train", "decode"]`."""
    if not isinstance(annotation, ast.Name):
        return None
    values = names.assignments(annotation)
    if not values and names.lookup(annotation.id, names.module) is names.module:
        values = [
            stmt.value for stmt in names.module.node.body
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
            and stmt.target.id == annotation.id and stmt.value is not None
        ]
    return values[0] if len(values) == 1 and isinstance(values[0], _TYPE_EXPRESSIONS) else None


# Python scalars and strings: a value declared one of these holds no tracer.
_PYTHON_SCALARS = frozenset({"builtins.int", "builtins.float", "builtins.bool", "builtins.str", "builtins.bytes"})
_LITERALS = frozenset({"typing.Literal", "typing_extensions.Literal"})


def python_annotation(annotation: ast.expr | None, names: Names, scope: Scope | None = None, depth: int = 0) -> bool:
    """A Python number, string or bool, a `Literal`, or a tuple or sequence of only those
    (`Tuple[int, int]`, `tuple[int, ...]`): a type no tracer belongs to."""
    annotation, _ = annotation_name(annotation, names)
    if annotation is None or depth > ALIAS_DEPTH:
        return False
    target = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    name = names.qualname(target, scope)
    if not isinstance(annotation, ast.Subscript):
        return name in _PYTHON_SCALARS
    if name in _LITERALS:
        return True
    if name not in SEQUENCE_TYPES:
        return False
    inner = annotation.slice
    members = [
        m for m in (inner.elts if isinstance(inner, ast.Tuple) else [inner])
        if not (isinstance(m, ast.Constant) and m.value is Ellipsis)
    ]
    return bool(members) and all(python_annotation(m, names, scope, depth + 1) for m in members)
