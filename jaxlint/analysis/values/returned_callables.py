"""Which functions a callable stands for when a function of the project made it: a factory or a
registry (`get_model(name)`, `make_loss(cfg)`).

A call of a plain function of the module, or of another module of the project, every `return` of
which names a function or a class of the project returns one of those: a `def` or `class` of its
module (a `def` nested in it included), a lambda, or a name it imports from another module of the
project, through a conditional expression's arms. A `return None`, or the end of the body,
returns nothing that can be called, and is passed over; a `return` of anything else, or a
decorated `def` (its decorator may replace it), leaves the call unknown. What the call returns
stands for those functions, and so does a name every binding of which is such a call or names
one of them (`loss_fn = make_loss(cfg)`), and a name a `for` loop binds from a list, a tuple or a
comprehension of them, held in a name never changed in place (`for fn in [get_fn(n) for n in
names]:`). Where several may be returned, a fact holds of the callable only where it holds of
every one of them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple
from weakref import WeakKeyDictionary

from jaxlint.analysis.engine.names import Names, Scope
from jaxlint.analysis.engine.walk import own_nodes, own_statements
from jaxlint.analysis.values.project_defs import ProjectDefinitions

_DEPTH = 6  # factories returning factories' results, and names bound to names, followed this deep
_CHANGING_METHODS = frozenset({"append", "extend", "insert", "__setitem__", "update", "setdefault"})


@dataclass(frozen=True)
class Returned:
    """One function (or class) a callable may be."""

    node: ast.AST  # a `def`, a lambda or a `class`
    names: Names  # the names of the module that defines it
    qualname: Optional[str]  # where another module defines it at its top level: its qualified name
    facts: Any  # where another module defines it: that module's facts (`ProjectDef.facts`)


Found = Optional[Tuple[Returned, ...]]


def returned_callables(func: ast.expr, names: Names, definitions: ProjectDefinitions | None = None) -> Found:
    """The functions the callable `func` (the callee of a call in the module `names` indexes)
    stands for by way of the factories that made it; None where it is not known so."""
    if isinstance(func, ast.Call):
        return _made_by(func, names, definitions, _DEPTH)
    if isinstance(func, ast.Name):
        return _bound(func, names, definitions, _DEPTH)
    return None


def _made_by(call: ast.Call, names: Names, definitions: ProjectDefinitions | None, depth: int) -> Found:
    """What a call of a factory returns."""
    if depth <= 0:
        return None
    factory = names.definition(call.func) if isinstance(call.func, ast.Name) else None
    if isinstance(factory, (ast.FunctionDef, ast.AsyncFunctionDef)) and not factory.decorator_list:
        return _returns(factory, names, definitions, None, depth - 1)
    if factory is not None:
        return None
    qualname = names.qualname(call.func)
    found = definitions(qualname) if qualname is not None and definitions is not None else None
    if found is None or not isinstance(found.node, ast.FunctionDef):
        return None
    return _returns(found.node, found.names, found.definitions, found, depth - 1)


def _returns(factory: ast.FunctionDef | ast.AsyncFunctionDef, names: Names, definitions: ProjectDefinitions | None,
             home: Any, depth: int) -> Found:
    """The functions every `return` of `factory` names (None returned aside); `home`: the
    `ProjectDef` of the factory where another module defines it (what it returns is then told
    apart from the asking module's own functions, and not kept)."""
    memo = _RETURNS.setdefault(names, {}) if home is None else {}
    if id(factory) in memo:
        return memo[id(factory)]
    found: list[Returned] = []
    known = not isinstance(factory, ast.AsyncFunctionDef) and not any(
        isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(factory)
    )
    for statement in own_statements(factory.body) if known else ():
        if isinstance(statement, ast.Return) and not _none(statement.value):
            named = _named(statement.value, names, definitions, home, depth)
            if named is None:
                known = False
                break
            found.extend(named)
    result = tuple(dict.fromkeys(found)) if known and found else None
    memo[id(factory)] = result
    return result


def _named(expr: ast.expr, names: Names, definitions: ProjectDefinitions | None, home: Any, depth: int) -> Found:
    """The function or class `expr` names, in the module `names` indexes (`home`: that module's
    `ProjectDef`-bearing answer where it is another module)."""
    if isinstance(expr, ast.IfExp):
        body = _named(expr.body, names, definitions, home, depth)
        orelse = _named(expr.orelse, names, definitions, home, depth) if body is not None else None
        return None if orelse is None else (*body, *orelse)  # type: ignore[misc]
    if isinstance(expr, ast.Lambda):
        return (Returned(expr, names, None, None if home is None else home.facts),)
    definition = names.definition(expr) if isinstance(expr, ast.Name) else None
    if definition is not None:
        if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)) and definition.decorator_list:
            return None
        if home is None:
            return (Returned(definition, names, None, None),)
        top = names.module.defs.get(getattr(definition, "name", "")) is definition
        qualname = f"{home.qualname.rpartition('.')[0]}.{definition.name}" if top else None  # type: ignore[attr-defined]
        return (Returned(definition, names, qualname, home.facts),)
    if isinstance(expr, ast.Call):
        return _made_by(expr, names, definitions, depth - 1)
    if not isinstance(expr, (ast.Name, ast.Attribute)):
        return None
    qualname = names.qualname(expr)
    found = definitions(qualname) if qualname is not None and definitions is not None else None
    if found is None:
        return None
    return (Returned(found.node, found.names, found.qualname, found.facts),)


def _bound(name: ast.Name, names: Names, definitions: ProjectDefinitions | None, depth: int) -> Found:
    """What a name bound to factories' results (or iterating a collection of them) stands for."""
    scope = names.read_scope.get(id(name))
    owner = names.lookup(name.id, scope) if scope is not None else None
    if owner is None or name.id in owner.defs or name.id in owner.imports or name.id in owner.params:
        return None
    values = _bindings(owner, name.id, names)
    if not values:
        return None
    found: list[Returned] = []
    for value, iterated in values:
        named = _elements(value, owner, names, definitions, depth) if iterated else _value(value, names, definitions, depth)
        if named is None:
            return None
        found.extend(named)
    return tuple(dict.fromkeys(found))


def _value(expr: ast.expr, names: Names, definitions: ProjectDefinitions | None, depth: int) -> Found:
    if isinstance(expr, ast.Call):
        return _made_by(expr, names, definitions, depth - 1)
    return _named(expr, names, definitions, None, depth - 1)


def _elements(expr: ast.expr, owner: Scope, names: Names, definitions: ProjectDefinitions | None, depth: int) -> Found:
    """What iterating `expr` binds: the items of a list or tuple literal, what a comprehension
    makes, or those of a name bound only to one of these and never changed in place."""
    if depth <= 0:
        return None
    if isinstance(expr, (ast.List, ast.Tuple)):
        found: list[Returned] = []
        for item in expr.elts:
            named = None if isinstance(item, ast.Starred) else _value(item, names, definitions, depth)
            if named is None:
                return None
            found.extend(named)
        return tuple(found) or None
    if isinstance(expr, (ast.ListComp, ast.GeneratorExp)):
        return _value(expr.elt, names, definitions, depth)
    if not isinstance(expr, ast.Name):
        return None
    held = _bindings(owner, expr.id, names) if names.lookup(expr.id, owner) is owner else []
    if not held or any(iterated for _, iterated in held) or _changed(owner, expr.id, names):
        return None
    found = []
    for value, _ in held:
        named = _elements(value, owner, names, definitions, depth - 1)
        if named is None:
            return None
        found.extend(named)
    return tuple(found)


def _bindings(owner: Scope, name: str, names: Names) -> list[tuple[ast.expr, bool]]:
    """Every binding of `name` in `owner`: (the value assigned, False) or (the iterable a `for`
    loop binds it from, True); empty where it is bound any other way."""
    memo = _BINDINGS.setdefault(names, {})
    key = (id(owner), name)
    if key in memo:
        return memo[key]
    found: list[tuple[ast.expr, bool]] = []
    stores = 0
    for node in _owned(owner):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            stores += 1
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and _is(node.targets[0], name):
            found.append((node.value, False))
        elif isinstance(node, (ast.For, ast.AsyncFor)) and _is(node.target, name):
            found.append((node.iter, True))
    if stores != len(found) or name in owner.globals or name in owner.nonlocals:
        found = []
    memo[key] = found
    return found


def _changed(owner: Scope, name: str, names: Names) -> bool:
    """Whether a list `name` is changed in place in `owner` (an item stored, a method that adds)."""
    for node in _owned(owner):
        if isinstance(node, ast.Subscript) and _is(node.value, name) and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, ast.Attribute) and _is(node.value, name) and node.attr in _CHANGING_METHODS:
            return True
        if isinstance(node, ast.AugAssign) and _is(node.target, name):
            return True
    return False


def _owned(owner: Scope) -> list[ast.AST]:
    node = owner.node
    return own_nodes(node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else list(ast.walk(node))


def _is(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _none(value: Optional[ast.expr]) -> bool:
    return value is None or isinstance(value, ast.Constant) and value.value is None


# Per module: id(factory) -> what it returns, asked from the module; (id(scope), name) -> the name's bindings.
_RETURNS: "WeakKeyDictionary[Names, Dict[int, Found]]" = WeakKeyDictionary()
_BINDINGS: "WeakKeyDictionary[Names, Dict[tuple, list]]" = WeakKeyDictionary()
