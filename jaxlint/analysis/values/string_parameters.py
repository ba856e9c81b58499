"""Parameters declared to hold strings: JAX never traces a string.

A transformation makes tracers of arrays and numbers only: a string given to a jitted function
for a parameter that is not static is refused at the call (`TypeError`), and one given to a
framework module's `__call__` or to a helper arrives as itself. So a parameter annotated `str`,
`bytes`, a `Literal` of strings, or a union of these with None holds a Python value, even where
the analysis lost track of what the caller passes (a mode handed on through a module's
`__call__` that declares no type for it).
"""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.names import FunctionNode, Names, Scope
from jaxlint.analysis.tracing.tracing import positional_params

_STRINGS = frozenset({"builtins.str", "builtins.bytes"})
_LITERALS = frozenset({"typing.Literal", "typing_extensions.Literal"})
_OPTIONAL = frozenset({"typing.Optional", "typing_extensions.Optional"})
_UNIONS = frozenset({"typing.Union", "typing_extensions.Union"})


def string_parameters(fn: FunctionNode, names: Names) -> frozenset[str]:
    """The parameters of `fn` whose annotation admits only strings (and None)."""
    if isinstance(fn, ast.Lambda):
        return frozenset()
    scope = names.enclosing_scope(fn)
    return frozenset(
        param.arg for param in (*positional_params(fn), *fn.args.kwonlyargs)
        if param.annotation is not None and _only_strings(param.annotation, names, scope, depth=0)
    )


def _only_strings(annotation: ast.expr, names: Names, scope: Scope | None, depth: int) -> bool:
    if depth > 2:
        return False
    if isinstance(annotation, ast.Constant):
        if isinstance(annotation.value, str):  # a string annotation: parse it
            parsed = names.parse_expression(annotation.value)
            return parsed is not None and _only_strings(parsed, names, scope, depth + 1)
        return False
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [s for s in (annotation.left, annotation.right) if not _is_none(s)]
        return bool(sides) and all(_only_strings(s, names, scope, depth) for s in sides)
    base = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    qualified = names.qualname(base, scope)
    if isinstance(annotation, ast.Subscript):
        parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        if qualified in _LITERALS:
            return all(isinstance(p, ast.Constant) and isinstance(p.value, (str, bytes)) for p in parts)
        if qualified in _OPTIONAL | _UNIONS:
            kept = [p for p in parts if not _is_none(p)]
            return bool(kept) and all(_only_strings(p, names, scope, depth) for p in kept)
        return False
    return qualified in _STRINGS


def _is_none(annotation: ast.expr) -> bool:
    return isinstance(annotation, ast.Constant) and annotation.value is None
