"""What constructing an object of a project class does with the keys passed to it.

`Cls(..., rng)` runs `Cls.__init__`; the object may draw from what it keeps later, in any
method, along paths its fields choose. So constructing an object consumes the keys passed to it,
as a call of code not followed does, but for a key `__init__` neither draws from nor splits (on
any path) and stores only where no other method of the class reads it: that key is never drawn
from (an evaluation manager that keeps a key it never uses), or `__init__` ignores it. Only a class of the project's own, with no base class (whose
methods could read the attribute) and no method reading its attributes by name (`getattr`,
`vars`, `__dict__`), is known so; subclasses elsewhere are not looked for.
"""

from __future__ import annotations

import ast

from jaxlint.analysis.keys.key_state import DEFINITE, NONE, Summary

_BY_NAME = frozenset({"getattr", "vars", "__dict__", "__getattr__", "__getattribute__"})


def constructor(cls: ast.ClassDef) -> ast.FunctionDef | None:
    """The `__init__` a class without bases defines itself."""
    if any(not (isinstance(base, ast.Name) and base.id == "object") for base in cls.bases) or cls.keywords:
        return None
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__" and not stmt.decorator_list:
            return stmt
    return None


def construction(cls: ast.ClassDef, init: ast.FunctionDef, summary: Summary) -> Summary:
    """What `Cls(...)` does to the keys passed to it: what `__init__` does, and a key it stores on
    `self` consumed when another method of the class reads that attribute."""
    me = init.args.args[0].arg if init.args.args else None
    stored: dict[str, set[str]] = {}
    for node in ast.walk(init):
        if (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Name)
            and _own_attribute(node.targets[0], me) is not None
        ):
            stored.setdefault(node.value.id, set()).add(node.targets[0].attr)  # type: ignore[attr-defined]
    read = _read_attributes(cls, init)
    params = dict(summary.params)
    for param in summary.key_params:
        attrs = stored.get(param, set())
        if params.get(param, NONE) != NONE or read is None or attrs & read:
            params[param] = DEFINITE
    return Summary(params, summary.key_params, frozenset(), summary.free, summary.flax, summary.undrawn)


def _read_attributes(cls: ast.ClassDef, init: ast.FunctionDef) -> set[str] | None:
    """The attributes of `self` the class's other methods read (None: any, read by name)."""
    read: set[str] = set()
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        me = method.args.args[0].arg if method.args.args else None
        for node in ast.walk(method):
            if isinstance(node, ast.Name) and node.id in _BY_NAME or isinstance(node, ast.Attribute) and node.attr in _BY_NAME:
                return None
            if method is not init and isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                if _own_attribute(node, me) is not None:
                    read.add(node.attr)
    return read


def _own_attribute(node: ast.AST, me: str | None) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == me:
        return node.attr
    return None
