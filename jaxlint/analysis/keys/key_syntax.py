"""The syntax of keys and calls that the key flow reads: the name an expression holds a key
under (`key`, `keys[i]`, `self.key`), the names a target binds, and how a call's arguments bind
to a known function's parameters."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine import arguments
from jaxlint.analysis.engine.names import FunctionNode
from jaxlint.analysis.engine.walk import attribute_path, walk


def names_in(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Name):
        return {node.id}
    return {n.id for n in walk(node) if isinstance(n, ast.Name)}


def base_name(node: ast.AST) -> str | None:
    """`key` for `key`, `keys` for `keys[0]`/`keys[i]` (an array of keys; not `rngs["params"]`),
    `self.key`, `state.key`."""
    if isinstance(node, ast.Subscript):
        index = node.slice
        if isinstance(index, ast.Constant) and not isinstance(index.value, int):
            return None
        node = node.value
    if isinstance(node, ast.Name):
        return node.id
    return attribute_path(node)


def target_names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Attribute):
        dotted = attribute_path(target)
        return [dotted] if dotted else []
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in target_names(element)]
    return []


def bound_to(parents: dict[int, ast.AST], call: ast.AST) -> tuple[str, ...] | None:
    """The names the statement around `call` binds what it returns to (`rng, _rng = split(rng)`,
    `key = split(key)[0]`, `key, x = step(key, x)`); None when its result is not assigned."""
    node = call
    parent = parents.get(id(node))
    while isinstance(parent, (ast.Subscript, ast.Starred)) and parent.value is node:
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, ast.Assign) and parent.value is node:
        return tuple(name for target in parent.targets for name in target_names(target))
    if isinstance(parent, (ast.AnnAssign, ast.NamedExpr)) and parent.value is node:
        return tuple(target_names(parent.target))
    return None


def bind(callee: FunctionNode, call: ast.Call, implicit: int) -> list[tuple[ast.AST, str]]:
    """(argument expression, parameter name) pairs for a call of a known function, after its
    first `implicit` parameters (`engine.arguments.bind`)."""
    return arguments.bind(callee, call, implicit).pairs()

