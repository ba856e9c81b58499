"""Slice sizes as polynomials over symbols: `x[i * bs:(i + 1) * bs]` is `bs` long whatever `i` is."""

from __future__ import annotations

import ast
from typing import Callable

from jaxlint.analysis.engine.walk import walk

Polynomial = dict[tuple[str, ...], int]


def has_slice(index: ast.AST) -> bool:
    return isinstance(index, ast.Slice) or (isinstance(index, ast.Tuple) and any(isinstance(e, ast.Slice) for e in index.elts))


def bounded(bound: ast.AST | None) -> bool:
    """`min(bs, n - i)`: at most two sizes."""
    return (
        isinstance(bound, ast.Call)
        and isinstance(bound.func, ast.Name)
        and bound.func.id == "min"
    )


def strided(part: ast.Slice) -> bool:
    """A slice with a step other than 1 or -1 (`x[c::n]`).

    Its start picks a phase of the stride: the length is `ceil((len(x) - c) / n)`, so the `n`
    phases `c` in `range(n)` have at most two lengths (one when `n` divides `len(x)`).
    """
    step = part.step
    if step is None:
        return False
    if isinstance(step, ast.UnaryOp) and isinstance(step.op, ast.USub):
        step = step.operand
    return not (isinstance(step, ast.Constant) and step.value == 1)


def slice_size_uses(index: ast.AST, variables: set[str]) -> bool:
    """A slice whose size (not just its position) depends on `variables`: `x[:n]`, not `x[i:i + bs]`,
    nor a phase `x[c::n]` of a fixed stride."""
    for part in index.elts if isinstance(index, ast.Tuple) else [index]:
        if not isinstance(part, ast.Slice) or (part.lower is None and part.upper is None):
            continue
        if strided(part) and not mentions(part.step, variables) and (part.upper is None or not mentions(part.upper, variables)):
            continue
        if part.lower is None or part.upper is None:
            if mentions(part.lower or part.upper, variables):
                return True
            continue
        difference = subtract(polynomial(part.upper), polynomial(part.lower))
        if difference is None:
            if mentions(part, variables):
                return True
        elif any(symbol in variables or _mentions_text(symbol, variables) for m in difference for symbol in m):
            return True
    return False


def _mentions_text(symbol: str, variables: set[str]) -> bool:
    try:
        return mentions(ast.parse(symbol, mode="eval").body, variables)
    except SyntaxError:
        return True


def mentions(expr: ast.AST, variables: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in variables for n in walk(expr))


def polynomial(
    expr: ast.AST | None, depth: int = 0, expand: Callable[[ast.Name], ast.expr | None] | None = None,
) -> Polynomial | None:
    """`i * bs + 1` -> {("bs", "i"): 1, (): 1}; None when not a polynomial we can read. `expand`
    gives the expression a name stands for where it is read (`end = (i + 1) * bs`), or None to
    keep the name a symbol."""
    if expr is None or depth > 8:
        return None
    if expand is not None and isinstance(expr, ast.Name):
        value = expand(expr)
        if value is not None:
            return polynomial(value, depth + 1, expand)
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return {(): expr.value}
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        inner = polynomial(expr.operand, depth + 1, expand)
        return {k: -v for k, v in inner.items()} if inner is not None else None
    if isinstance(expr, ast.BinOp):
        left, right = polynomial(expr.left, depth + 1, expand), polynomial(expr.right, depth + 1, expand)
        if left is None or right is None:
            return None
        if isinstance(expr.op, ast.Add):
            return _add(left, right, 1)
        if isinstance(expr.op, ast.Sub):
            return _add(left, right, -1)
        if isinstance(expr.op, ast.Mult):
            out: Polynomial = {}
            for a, x in left.items():
                for b, y in right.items():
                    key = tuple(sorted(a + b))
                    out[key] = out.get(key, 0) + x * y
            return {k: v for k, v in out.items() if v}
        return None
    if isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
        return {(ast.unparse(expr),): 1}
    return None


def _add(left: Polynomial, right: Polynomial, sign: int) -> Polynomial:
    out = dict(left)
    for k, v in right.items():
        out[k] = out.get(k, 0) + sign * v
    return {k: v for k, v in out.items() if v}


def subtract(upper: Polynomial | None, lower: Polynomial | None) -> Polynomial | None:
    if upper is None or lower is None:
        return None
    return _add(upper, lower, -1)
