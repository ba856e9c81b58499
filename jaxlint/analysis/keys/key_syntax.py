"""The syntax of keys and calls that the key flow reads: the name an expression holds a key
under (`key`, `keys[i]`, `self.key`), the names a target binds, and how a call's arguments bind
to a known function's parameters."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.names import FunctionNode, Names
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


def bound_self(call: ast.Call, callee: FunctionNode | None = None) -> int:
    """How many leading parameters the call binds implicitly (`self` of `obj.method(...)`,
    `cls` of a class method; none of a static method's)."""
    if not isinstance(call.func, ast.Attribute):
        return 0
    static = isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        decorator_name(d) == "staticmethod" for d in callee.decorator_list
    )
    return 0 if static else 1


def bind(callee: FunctionNode, call: ast.Call, skip: int) -> list[tuple[ast.AST, str]]:
    """(argument expression, parameter name) pairs for a call of a known function."""
    args = callee.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)][skip:]
    pairs = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        if i < len(positional):
            pairs.append((arg, positional[i]))
    names = {a.arg for a in (*args.args, *args.kwonlyargs)}
    for keyword in call.keywords:
        if keyword.arg in names:
            pairs.append((keyword.value, keyword.arg))
    return pairs


def decorator_name(decorator: ast.AST) -> str | None:
    if isinstance(decorator, ast.Name):
        return decorator.id
    if isinstance(decorator, ast.Attribute):
        return decorator.attr
    return None


def inherited(names: Names, cls: ast.ClassDef, attr: str, seen: set[int] | None = None) -> ast.AST | str | None:
    """What `self.<attr>` finds in the bases of a class that does not define it: the statement a
    base of the same module defines it by, or the qualified name of the first base defined
    elsewhere (whose module answers). Bases are searched depth first, left to right, as Python's
    method resolution does for a single chain of bases."""
    seen = set() if seen is None else seen
    scope = names.scopes[id(cls)].parent or names.module
    for base in cls.bases:
        definition = names.definition(base, scope)
        if isinstance(definition, ast.ClassDef):
            if id(definition) in seen:
                continue
            seen.add(id(definition))
            found = names.scopes[id(definition)].defs.get(attr) or inherited(names, definition, attr, seen)
        else:
            found = names.qualname(base, scope)
        if found is not None:
            return found
    return None
