"""Fast traversal of `ast` trees: the analysis walks every module, so this is its hot loop.

`ast.iter_child_nodes` is a generator over every field, including the `Load`/`Store`
context and operator singletons; skipping those and caching each node type's fields
halves the cost of a walk.
"""

from __future__ import annotations

import ast
from typing import Iterator

from jaxlint.analysis.names import FUNCTION_TYPES

_AST = ast.AST
_FIELDS: dict[type, tuple[str, ...]] = {}
_LEAF_FIELDS = frozenset({"ctx", "op"})


def node_fields(cls: type) -> tuple[str, ...]:
    """The fields of a node type that can hold child nodes (context and operator singletons left out)."""
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = _FIELDS[cls] = tuple(f for f in cls._fields if f not in _LEAF_FIELDS)
    return fields


def children(node: ast.AST) -> list[ast.AST]:
    """The child nodes of `node` (context and operator singletons left out)."""
    cls = node.__class__
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = node_fields(cls)
    out: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if value.__class__ is list:
            out.extend(x for x in value if isinstance(x, _AST))
        elif isinstance(value, _AST):
            out.append(value)
    return out


def own_nodes(fn: ast.AST) -> list[ast.AST]:
    """Every node of a function's body, not descending into nested functions or lambdas.

    A nested def's decorators and default values are evaluated by the enclosing function,
    so they are included.
    """
    stack: list[ast.AST] = [fn.body] if isinstance(fn, ast.Lambda) else list(fn.body)
    out: list[ast.AST] = []
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, FUNCTION_TYPES):
            if not isinstance(node, ast.Lambda):
                stack.extend(node.decorator_list)
            stack.extend(d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None)
            continue
        stack.extend(children(node))
    return out


def target_names(target: ast.AST) -> list[str]:
    """The plain names an assignment target binds (`a`, `a, (b, *c)`)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in target_names(elt)]
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    return []


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node below `node` (itself included), as `ast.walk` but faster and without context singletons."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))


def own_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of one scope, nested blocks included, nested function and class bodies excluded."""
    stack = list(body)
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if type(block) is list:
                stack.extend(block)
        for handler in getattr(stmt, "handlers", ()) or ():
            stack.extend(handler.body)
        for case in getattr(stmt, "cases", ()) or ():
            stack.extend(case.body)
