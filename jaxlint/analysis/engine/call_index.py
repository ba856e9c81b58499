"""The module's calls by the name they are made through, indexed once per module.

Most questions about calls concern a few names (`jit`, `split`, one helper's name): looking
them up costs less than scanning every call of the module for each question. The name of
`f(...)` and `x.f(...)` is `f`; a call of a call (`jax.jit(f)(x)`) is indexed apart, by the
name of the inner callee. Answers keep the order of `Names.calls`.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, List, Tuple
from weakref import WeakKeyDictionary

from jaxlint.analysis.engine.names import Names, Scope

_Entry = Tuple[int, ast.Call, Scope]  # position in `Names.calls`, the call, the scope it is made in
_Table = Dict[str, List[_Entry]]


class _CallIndex:
    __slots__ = ("direct", "curried", "outer", "classes", "_aliases", "spelled")

    def __init__(self, names: Names):
        direct: _Table = {}
        curried: _Table = {}
        outer: Dict[int, List[_Entry]] = {}  # id(inner call) -> the calls of what it returns
        Name, Attribute, Call = ast.Name, ast.Attribute, ast.Call
        for position, (call, scope) in enumerate(names.calls):
            func = call.func
            table = direct
            if func.__class__ is Call:
                outer.setdefault(id(func), []).append((position, call, scope))
                func, table = func.func, curried
            cls = func.__class__
            last = func.attr if cls is Attribute else func.id if cls is Name else None
            if last is not None:
                entries = table.get(last)
                if entries is None:
                    table[last] = [(position, call, scope)]
                else:
                    entries.append((position, call, scope))
        self.direct = direct
        self.curried = curried
        self.outer = outer
        self.classes = frozenset(cls.name for cls in names.classes)
        self._aliases: Dict[str, set] | None = None
        self.spelled: Dict[frozenset, frozenset] = {}  # `spellings`, by the qualified names asked

    def aliases(self, names: Names) -> Dict[str, set]:
        """Qualified name -> the names some scope of the module imports it as."""
        if self._aliases is None:
            self._aliases = {}
            for scope in names.scopes.values():
                for alias, target in scope.imports.items():
                    self._aliases.setdefault(target, set()).add(alias)
        return self._aliases


# The index lives as long as the module's `Names`: nothing in it refers back to that object.
_INDEXES: "WeakKeyDictionary[Names, _CallIndex]" = WeakKeyDictionary()


def _index(names: Names) -> _CallIndex:
    index = _INDEXES.get(names)
    if index is None:
        index = _INDEXES[names] = _CallIndex(names)
    return index


def _gather(lists: List[List[_Entry]]) -> List[Tuple[ast.Call, Scope]]:
    if len(lists) == 1:
        return [(call, scope) for _, call, scope in lists[0]]
    entries = sorted((entry for entries in lists for entry in entries), key=lambda entry: entry[0])
    return [(call, scope) for _, call, scope in entries]


def calls_through(names: Names, lasts: Iterable[str], curried: bool = False) -> List[Tuple[ast.Call, Scope]]:
    """The calls `f(...)` and `x.f(...)` with `f` one of these names (and, when `curried`, the
    calls `f(...)(...)` and `x.f(...)(...)`)."""
    index = _index(names)
    tables = (index.direct, index.curried) if curried else (index.direct,)
    return _gather([table[last] for table in tables for last in set(lasts) if last in table])


def spellings(names: Names, qualified: Iterable[str]) -> frozenset[str]:
    """The last parts of these qualified names, and the import aliases the module binds to them
    (`from jax.tree_util import Partial as P`): what `calls_through` looks calls up by, so that a
    call is found however the module imports its callee."""
    index = _index(names)
    wanted = qualified if isinstance(qualified, frozenset) else frozenset(qualified)
    known = index.spelled.get(wanted)
    if known is not None:
        return known  # the tables (`jax_api`, `shape_api`) are asked again and again
    aliases = index.aliases(names)
    out = set()
    for name in wanted:
        out.add(name.rsplit(".", 1)[-1])
        out.update(aliases.get(name, ()))
    known = index.spelled[wanted] = frozenset(out)
    return known


def calls_through_any(
    names: Names, lasts: Iterable[str], inner: Iterable[ast.Call],
) -> List[Tuple[ast.Call, Scope]]:
    """`calls_through` these names, and the calls `g(...)(...)` with `g(...)` one of `inner`."""
    index = _index(names)
    lists = [index.direct[last] for last in set(lasts) if last in index.direct]
    lists.extend(index.outer[id(call)] for call in inner if id(call) in index.outer)
    return _gather(lists)


def may_resolve_to(names: Names, func: ast.AST, spellings: frozenset[str]) -> bool:
    """Whether a callee can resolve to one of the qualified names whose `attribute_spellings`
    are `spellings`, asked before resolving it: a plain name may be an alias of anything, an
    attribute resolves to a name ending in its own, unless it reads a class body's alias (`ns.f`)."""
    if func.__class__ is not ast.Attribute or func.attr in spellings:
        return True
    value = func.value
    return value.__class__ is ast.Name and value.id in _index(names).classes
