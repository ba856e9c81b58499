"""Seeds that never reach the key: a function that makes its key from a seed parameter with a
constant default (`def __init__(self, seed=0): self.rng = jax.random.PRNGKey(seed)`), called
without that parameter by code that reads a seed of its own (`args.seed`).

The seed reaches the key through the function itself, or through functions and constructors of
the project it hands the parameter to. A call leaves the parameter to its default when it passes
it neither by position nor by name, nor in a `**` dict literal (or a name bound once to one and
never stored into). The caller shows it has a seed to give when it reads a name or an attribute
called like the parameter: every run then draws the same numbers, whatever seed it was given.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

from jaxlint.analysis.engine.names import FunctionNode, Names
from jaxlint.analysis.engine.walk import own_nodes, walk
from jaxlint.analysis.engine.arguments import Receiver, implicit_count, named_parameter, named_parameters
from jaxlint.analysis.keys.key_syntax import bind
from jaxlint.analysis.knowledge import random_api as api
from jaxlint.analysis.tracing.parameters import default_of
from jaxlint.analysis.knowledge.decorators import plain

_DEPTH = 4  # functions and constructors a seed is followed through to the key

# The `def` or `class` a callee names, in its module or another of the project, with that
# module's names (`KeyFlow.definition_of`).
Locate = Callable[[ast.expr, Names], Optional[Tuple[Names, ast.AST]]]


@dataclass(frozen=True)
class DefaultedSeed:
    call: ast.Call  # the call that leaves the seed to its default
    function: FunctionNode  # the function making it
    callee: str  # what it calls, as written
    param: str  # the seed parameter
    default: ast.Constant
    read: ast.AST  # the caller's own seed (`args.seed`)


def defaulted_seeds(names: Names, locate: Locate) -> list[DefaultedSeed]:
    found: list[DefaultedSeed] = []
    seeded: dict[int, frozenset[str]] = {}
    readers = _seed_readers(names)
    for call, scope in names.calls:
        caller = scope.node
        if id(caller) not in readers:
            continue
        callee = _callee(call, names, locate)
        if callee is None:
            continue
        there, function, skip = callee
        params = _seeded(there, function, locate, seeded, _DEPTH)
        if not params:
            continue
        spread = _spread(call, names)
        if spread is None:
            continue  # a `**` argument that may pass anything
        given = {param for _, param in bind(function, call, skip)} | spread
        for param in sorted(params - given):
            default = default_of(function, named_parameter(function, param))
            read = _reads_seed(caller, param) if isinstance(default, ast.Constant) else None
            if read is not None:
                found.append(DefaultedSeed(call, caller, ast.unparse(call.func), param, default, read))
    return found


def _seed_readers(names: Names) -> set[int]:
    """The functions that read a name or an attribute called like a seed (`seed`, `args.seed`)."""
    found: set[int] = set()
    if not any("seed" in word for word in names.words):
        return found  # the module spells no such name (`Names.words`): nothing to walk for
    for node in walk(names.module.node):
        if isinstance(node, ast.Attribute) and "seed" in node.attr:
            while isinstance(node, ast.Attribute):
                node = node.value
        elif not (isinstance(node, ast.Name) and "seed" in node.id):
            continue
        scope = names.read_scope.get(id(node)) if isinstance(node, ast.Name) else None
        if scope is not None and scope.kind == "function":
            found.add(id(scope.node))
    return found


def _callee(call: ast.Call, names: Names, locate: Locate) -> tuple[Names, FunctionNode, int] | None:
    """The function (or class's `__init__`) of the project a call runs, its module's names, and
    how many parameters the call binds itself."""
    located = locate(call.func, names)
    if located is None:
        return None
    there, definition = located
    if isinstance(definition, ast.ClassDef):
        init = next((s for s in definition.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        return (there, init, 1) if init is not None else None
    if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)) and plain(definition, there):
        # `helpers.f(x)` reaches a module's function, `obj.f(x)` a method through its instance.
        method = isinstance(call.func, ast.Attribute) and id(definition) in there.parent_class
        return there, definition, implicit_count(definition, Receiver.INSTANCE if method else Receiver.FUNCTION)
    return None


def _seeded(
    names: Names, function: FunctionNode, locate: Locate, memo: dict[int, frozenset[str]], depth: int,
) -> frozenset[str]:
    """The parameters of `function` (of the module `names` describes) that reach a key constructor's seed."""
    known = memo.get(id(function))
    if known is not None:
        return known
    memo[id(function)] = frozenset()  # a cycle of calls adds nothing
    params = {a.arg for a in named_parameters(function)}
    found: set[str] = set()
    for node in own_nodes(function):
        if not isinstance(node, ast.Call):
            continue
        if api.public(names.qualname(node.func)) in api.KEY_CONSTRUCTORS:
            found.update(a.id for a in node.args[:1] if isinstance(a, ast.Name) and a.id in params)
        elif depth > 0:
            callee = _callee(node, names, locate)
            if callee is not None:
                inner = _seeded(callee[0], callee[1], locate, memo, depth - 1)
                found.update(
                    arg.id for arg, param in bind(callee[1], node, callee[2])
                    if param in inner and isinstance(arg, ast.Name) and arg.id in params
                )
    result = memo[id(function)] = frozenset(found)
    return result


def _spread(call: ast.Call, names: Names) -> set[str] | None:
    """The parameters `**` arguments pass: the keys of a dict literal (or of a name bound once to
    one and never stored into); None when they are not known."""
    given: set[str] = set()
    for keyword in call.keywords:
        if keyword.arg is not None:
            continue
        spread = keyword.value
        if isinstance(spread, ast.Name):
            values = names.assignments(spread)
            if len(values) != 1 or _stored_into(spread, names):
                return None
            spread = values[0]
        if not isinstance(spread, ast.Dict) or not all(
            isinstance(k, ast.Constant) and isinstance(k.value, str) for k in spread.keys
        ):
            return None
        given.update(k.value for k in spread.keys)  # type: ignore[union-attr]
    return given


def _stored_into(name: ast.Name, names: Names) -> bool:
    scope = names.read_scope.get(id(name), names.module)
    owner = names.lookup(name.id, scope)
    node = owner.node if owner is not None else names.module.node
    return any(
        isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == name.id
        and isinstance(n.ctx, ast.Store)
        or isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
        and n.func.value.id == name.id and n.func.attr in ("update", "setdefault")
        for n in ast.walk(node)
    )


def _reads_seed(caller: ast.AST, param: str) -> ast.AST | None:
    """A read of a value the caller has under the parameter's name (`seed`, `args.seed`)."""
    for node in own_nodes(caller):
        if isinstance(node, ast.Attribute) and node.attr == param and isinstance(node.ctx, ast.Load):
            return node
        if isinstance(node, ast.Name) and node.id == param and isinstance(node.ctx, ast.Load):
            return node
    return None

