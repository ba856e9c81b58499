"""What rules out None: parameter annotations, and the tests that narrow a name past `is None`.

A parameter annotated with a type that excludes None (`int`, `jax.Array`, a class, `list[int]`,
`Union[int, float]`) and without a `None` default (PEP 484's implicit Optional) is not None.
An annotation admits None when any of its top-level alternatives is `None`, `Optional[...]`,
`Any`, `object`, `Hashable`, `jaxtyping.PyTree`, a type variable, or a type alias of this
module that admits None.
"""

from __future__ import annotations

import ast
from typing import Iterator

from jaxlint.analysis.engine.names import FunctionNode, Names, Scope
from jaxlint.analysis.tracing.parameters import default_of
from jaxlint.analysis.tracing.tracing import positional_params

# Types None is a value of: `object`, `Any`, `Hashable`, and a pytree (None is an empty one).
_ADMITS_NONE = frozenset({
    "typing.Optional", "typing_extensions.Optional", "typing.Any", "typing_extensions.Any", "builtins.object",
    "typing.Hashable", "collections.abc.Hashable", "jaxtyping.PyTree",
})
_UNIONS = frozenset({"typing.Union", "typing_extensions.Union"})
_ANNOTATED = frozenset({"typing.Annotated", "typing_extensions.Annotated"})
_MAX_ALIASES = 4  # type aliases followed through this many assignments


def or_none(annotation: ast.expr | None, names: Names, scope: Scope | None) -> ast.expr | None:
    """`T` of an annotation that is `T` or None (`Optional[T]`, `T | None`, `Union[T, None]`)."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        parts = [annotation.left, annotation.right]
    elif isinstance(annotation, ast.Subscript):
        qualified = names.qualname(annotation.value, scope)
        if qualified in ("typing.Optional", "typing_extensions.Optional"):
            return annotation.slice
        if qualified not in _UNIONS:
            return None
        parts = list(annotation.slice.elts) if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    else:
        return None
    rest = [part for part in parts if not (isinstance(part, ast.Constant) and part.value is None)]
    return rest[0] if len(rest) == 1 and len(parts) == 2 else None


def not_none_parameters(fn: FunctionNode, names: Names) -> frozenset[str]:
    """The parameters of `fn` whose annotation excludes None and whose default is not None."""
    if isinstance(fn, ast.Lambda):
        return frozenset()
    scope = names.enclosing_scope(fn)
    a = fn.args
    out = set()
    for param in (*positional_params(fn), *a.kwonlyargs):
        if param.annotation is None:
            continue
        default = default_of(fn, param)
        if isinstance(default, ast.Constant) and default.value is None:
            continue
        if excludes_none(param.annotation, names, scope):
            out.add(param.arg)
    return frozenset(out)


def excludes_none(annotation: ast.expr, names: Names, scope: Scope | None, depth: int = 0) -> bool:
    """Whether a value of this annotated type can never be None."""
    if depth > _MAX_ALIASES:
        return False
    if isinstance(annotation, ast.Constant):
        if isinstance(annotation.value, str):  # a string annotation: parse it
            parsed = names.parse_expression(annotation.value)
            if parsed is None:
                return False
            return excludes_none(parsed, names, scope, depth + 1)
        return False  # `None`, or a literal that is no type
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return excludes_none(annotation.left, names, scope, depth) and excludes_none(annotation.right, names, scope, depth)
    base = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    qualified = names.qualname(base, scope)
    if qualified in _ADMITS_NONE:
        return False
    if isinstance(annotation, ast.Subscript) and qualified in _UNIONS | _ANNOTATED:
        parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        if qualified in _ANNOTATED:
            parts = parts[:1]  # `Annotated[T, metadata...]` is a T
        return all(excludes_none(part, names, scope, depth) for part in parts)
    if not isinstance(base, (ast.Name, ast.Attribute)):
        return False
    if isinstance(base, ast.Name):
        assigned = names.assignments(base, scope)
        if assigned:  # a type alias (`Maybe = Optional[int]`) or a type variable (`T = TypeVar("T")`)
            return all(
                not isinstance(value, ast.Call) and excludes_none(value, names, scope, depth + 1) for value in assigned
            )
    return True


def narrowed(test: ast.expr, outcome: bool) -> Iterator[str]:
    """The names a branch edge shows are not None: the false edge of `x is None`, the true edge of
    `x is not None` or of a bare `x` (a truthy value is not None), through `not`, `and` and `or`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from narrowed(test.operand, not outcome)
    elif isinstance(test, ast.BoolOp):
        # Every operand of an `and` that held is true; every operand of an `or` that failed is false.
        if outcome == isinstance(test.op, ast.And):
            for value in test.values:
                yield from narrowed(value, outcome)
    elif isinstance(test, ast.Name):
        if outcome:
            yield test.id
    elif (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.IsNot))
        and isinstance(test.left, ast.Name)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        if outcome == isinstance(test.ops[0], ast.IsNot):
            yield test.left.id
