"""Array annotations: whether a declared type admits only arrays.

Read where an annotation is all the analysis knows of a value: a static argument or a static
field declared as an array (JAX302, JAX307), a field of the module's own pytree classes
(`pytree_fields.py`).
"""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.names import Names, annotation_name
from jaxlint.analysis.knowledge import jax_api

# Annotations every value of which is an array (`ArrayLike` admits Python scalars too, but a
# value declared to take arrays and declared static fails for every array it is given).
_DECLARED_ARRAYS = jax_api.ARRAY_ANNOTATIONS | {"numpy.ndarray", "jaxtyping.ArrayLike"}
# Packages whose types the tables above know: their other `...Array` types (`jax.core.ShapedArray`)
# are not arrays.
_TABLED_PACKAGES = frozenset({*jax_api.MODELLED_PACKAGES, "jaxlib", "numpy", "jaxtyping", "typing", "builtins"})
_UNIONS = frozenset({"typing.Union"})
# A sequence of arrays is no more hashable than an array: hashing a tuple hashes its items.
_SEQUENCES = frozenset({"typing.Sequence", "collections.abc.Sequence", "typing.Tuple", "builtins.tuple"})


def declares_array(annotation: ast.expr | None, names: Names) -> bool:
    """An array type, a jaxtyping array (`Float[Array, "n"]`), a sequence of arrays
    (`Sequence[ArrayLike]`), or a union of only those."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return declares_array(annotation.left, names) and declares_array(annotation.right, names)
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        annotation, _ = annotation_name(annotation, names)
        if annotation is None:
            return False
    target = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    name = names.qualname(target)
    if name is None:
        return False
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


# Types whose every value is a JAX array (not `ArrayLike`, not a union with NumPy's types).
_JAX_ARRAYS = frozenset({"jax.Array", "jax._src.typing.Array", "jax.numpy.ndarray", "jaxtyping.Array"})


def declares_jax_array(annotation: ast.expr | None, names: Names) -> bool:
    """`jax.Array`, or a jaxtyping array of one (`Float[Array, "n"]`): a JAX array, never a
    Python number, a NumPy array or a container."""
    annotation, name = annotation_name(annotation, names)
    if annotation is None:
        return False
    if not isinstance(annotation, ast.Subscript):
        return name in _JAX_ARRAYS
    if name is None or not name.startswith("jaxtyping.") or name.rsplit(".", 1)[-1] not in jax_api.JAXTYPING_DTYPES:
        return False
    inner = annotation.slice
    first = inner.elts[0] if isinstance(inner, ast.Tuple) and inner.elts else inner
    return names.qualname(first) in _JAX_ARRAYS


_HOMOGENEOUS_SEQUENCES = frozenset({
    "builtins.list", "builtins.tuple", "typing.List", "typing.Tuple", "typing.Sequence", "collections.abc.Sequence",
})


def declares_jax_arrays(annotation: ast.expr | None, names: Names) -> bool:
    """A sequence every item of which is a JAX array: `list[jax.Array]`, `tuple[jax.Array, ...]`,
    `Sequence[jax.Array]`."""
    annotation, name = annotation_name(annotation, names)
    if not isinstance(annotation, ast.Subscript) or name not in _HOMOGENEOUS_SEQUENCES:
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
    `Float[Array, "n"]`, `jax.Array | Sequence[int]`, `Optional[np.ndarray]`, an `...Array` or
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
        if name in _DECLARED_ARRAYS or "Array" in last or last == "ndarray":
            return True
    return False
