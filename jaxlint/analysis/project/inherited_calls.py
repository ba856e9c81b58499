"""The methods a class overrides that a traced method of one of its bases calls on `self`.

`Environment.step` is jitted in the base class and calls `self.step_env(key, state, action,
params)`; each environment overrides `step_env`. Called on an instance of the subclass, the
base's traced method runs the override, so the override is traced, its parameters bound to
what the base's call passes there (as the base's module analysed it). A base is a class of this
module or of another module of the project, at any depth, found left to right as Python's
method resolution order finds it; a method a nearer class defines hides a farther class's
method of the same name (a subclass's own `step` runs, not its base's).
"""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass
from typing import Any, Iterator

from jaxlint.analysis.engine.names import FUNCTION_TYPES, FunctionNode, Names
from jaxlint.analysis.engine.walk import walk

_MAX_ANCESTORS = 16


@dataclass(frozen=True)
class Ancestor:
    """A base class, direct or not, and the module facts that define it (None: this module)."""

    facts: Any
    names: Names
    node: ast.ClassDef


@dataclass(frozen=True)
class InheritedCall:
    """`self.<method>(...)` in `caller`, a method of `base`, running `method`, the override."""

    base: Ancestor
    caller: FunctionNode
    call: ast.Call
    method: FunctionNode


def inherited_calls(names: Names, link: Any) -> Iterator[InheritedCall]:
    """Each call a base class's method makes on `self` of a method a class of this module defines
    (and the base does not define nearer), for every class of the module; `link` resolves the
    bases of other modules of the project (None: only this module's)."""
    for scope in list(names.scopes.values()):
        cls = scope.node
        if scope.kind != "class" or not isinstance(cls, ast.ClassDef) or not cls.bases:
            continue
        own = {name: node for name, node in scope.defs.items() if isinstance(node, FUNCTION_TYPES)}
        if not own:
            continue
        hidden = set(own)
        for base in _ancestors(names, link, cls):
            methods = [s for s in base.node.body if isinstance(s, FUNCTION_TYPES)]
            for caller in methods:
                if caller.name in hidden:
                    continue
                for call in _self_calls(base.names, caller, own):
                    yield InheritedCall(base, caller, call, own[call.func.attr])  # type: ignore[union-attr]
            hidden.update(s.name for s in methods)


def _ancestors(names: Names, link: Any, cls: ast.ClassDef) -> list[Ancestor]:
    """The class's bases and theirs, depth first, left to right, each once."""
    found: list[Ancestor] = []
    seen = {id(cls)}

    def visit(facts: Any, names: Names, link: Any, node: ast.ClassDef) -> None:
        outer = names.scopes[id(node)].parent
        for expr in node.bases:
            if len(found) >= _MAX_ANCESTORS:
                return
            if isinstance(expr, ast.Subscript):
                expr = expr.value  # a generic base, `Environment[EnvState, EnvParams]`
            local = names.definition(expr, outer)
            if isinstance(local, ast.ClassDef):
                base = Ancestor(facts, names, local)
            else:
                qualname = names.qualname(expr, outer)
                located = link.class_facts(qualname) if link is not None and qualname else None
                if located is None:
                    continue
                base = Ancestor(located[0], located[0].names, located[1])
            if id(base.node) in seen:
                continue
            seen.add(id(base.node))
            found.append(base)
            visit(base.facts, base.names, base.facts.project if base.facts is not None else link, base.node)

    visit(None, names, link, cls)
    return found


def _self_calls(names: Names, caller: FunctionNode, own: dict[str, FunctionNode]) -> Iterator[ast.Call]:
    """`self.<name>(...)` in `caller` for the names `own` holds (`_calls_on_self`)."""
    for call in _calls_on_self(names, caller):
        if call.func.attr in own:  # type: ignore[attr-defined]
            yield call


# Per module: id(method) -> its calls of methods on its instance, found once however many
# subclasses (of this module or of others) ask.
_ON_SELF: "weakref.WeakKeyDictionary[Names, dict[int, list[ast.Call]]]" = weakref.WeakKeyDictionary()


def _calls_on_self(names: Names, caller: FunctionNode) -> list[ast.Call]:
    """`self.<name>(...)` in `caller` (its first parameter never rebound: then it may no longer
    be the instance); none with `**` arguments, whose keywords are not known."""
    known = _ON_SELF.setdefault(names, {})
    found = known.get(id(caller))
    if found is not None:
        return found
    found = known[id(caller)] = []
    args = caller.args
    positional = [*args.posonlyargs, *args.args]
    if not positional or any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in caller.decorator_list):
        return found
    receiver = positional[0].arg
    scope = names.scopes[id(caller)]
    if receiver in scope.assigned or receiver in scope.other:
        return found
    for node in walk(caller):
        if (
            node.__class__ is ast.Call and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == receiver
            and all(k.arg is not None for k in node.keywords)
        ):
            found.append(node)
    return found
