"""Keys a class keeps on `self` as a stream: a method that draws from one and leaves it there
draws the same numbers again on its next call.

A class that replaces a key held on `self` where it draws from it (`key, self.rng =
jax.random.split(self.rng)`, `self.rng = jax.random.split(self.rng)[0]`,
`self.rng = jax.random.fold_in(self.rng, step)`) shows that the
attribute is a stream, advanced on every use: each call gets a fresh key. A method of the same
class that splits `self.rng`, or samples from it, after every statement of the method that
stores into `self.rng` (or with none) leaves the key it consumed in place, so its next call, or
whatever next draws from the stream, consumes it again. The constructor and `setup` run once
per instance and are not counted. A class that never advances the attribute shows no stream (a
key kept on purpose, for the same noise on every call, is not reported), nor does an attribute
that is a property. A store the method makes after the draw, on any path, is taken to advance
the key, and so is a call of a method of `self` (or one handed `self`) anywhere in the method:
it may store a fresh key (`self.reseed()`). Each method's last such draw is the one reported.

The same holds from outside the class: a function handed the object (a parameter annotated with
the class, of this module or another of the project) that consumes its stream (held under a
key's name: `obj.key`, `obj.rng`, `obj._rng`; only such classes are looked up), in a
sampler or any call but a reading one (`q.random_action(schedule.key)`), and neither stores into
`obj.key` after that nor hands the object on (or calls a method of it), leaves the consumed key
in place for the class's next advance to split again.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Tuple

from jaxlint.analysis.engine.call_index import calls_through
from jaxlint.analysis.engine.names import FunctionNode, Names
from jaxlint.analysis.engine.walk import calls_reaching, nodes_run_with, own_nodes, spans
from jaxlint.analysis.keys.key_names import key_named
from jaxlint.analysis.knowledge import random_api as api
from jaxlint.analysis.tracing.tracing import first_param

_DRAWS = api.SAMPLERS | {api.SPLIT}
_ADVANCING = frozenset({api.SPLIT, api.FOLD_IN})
_RUN_ONCE = frozenset({"__init__", "__post_init__", "setup"})


@dataclass(frozen=True)
class StaleDraw:
    """`call` is the last draw from `self.<attr>` in `method`, after the method's last store into
    it, while `advance` (a statement of the method, or else of another one) advances the stream."""

    call: ast.Call
    key: ast.expr  # `self.<attr>`, as the call takes it
    attr: str
    method: FunctionNode
    advance: ast.stmt
    owner: str = ""  # the class that advances it, when the draw is made from outside it


# Where a class a module names is defined: its module's names and statement (`ModuleLink.class_of`).
ClassOf = Callable[[str], Optional[Tuple[Names, ast.ClassDef]]]


# Whether a call draws from the key it is given as an argument (`KeyFlow.draws_from`).
DrawsFrom = Callable[[ast.Call, ast.expr], bool]


def stale_draws(names: Names, class_of: ClassOf | None = None, draws_from: DrawsFrom | None = None) -> list[StaleDraw]:
    """Draws from a stream a class keeps on `self`, within the class and from outside it."""
    return sorted(
        _own_stale_draws(names) + _outside_stale_draws(names, class_of, draws_from or (lambda call, arg: True)),
        key=lambda draw: (draw.call.lineno, draw.call.col_offset),
    )


def _own_stale_draws(names: Names) -> list[StaleDraw]:
    draws: dict[int, list[tuple[ast.Call, str, FunctionNode]]] = {}  # id(class) -> its draws from self
    classes: dict[int, ast.ClassDef] = {}
    for call, scope in calls_through(names, {name.rsplit(".", 1)[-1] for name in _DRAWS}):
        method = scope.node
        cls = names.parent_class.get(id(method))
        if cls is not None and any(getattr(d, "id", None) == "staticmethod" for d in method.decorator_list):
            continue  # its first parameter is no instance
        attr = _self_attribute(api.key_argument(call), method)
        if cls is None or attr is None or api.public(names.qualname(call.func, scope)) not in _DRAWS:
            continue
        classes[id(cls)] = cls
        draws.setdefault(id(cls), []).append((call, attr, method))
    last: dict[tuple[int, str], StaleDraw] = {}  # (id(method), attribute) -> its last such draw
    for key, cls in classes.items():
        stores, advances = _stores(cls, names)
        for call, attr, method in draws[key]:
            advance = next((a for a in advances.get(attr, ()) if spans(method, a)), None) or next(
                iter(advances.get(attr, ())), None
            )
            later = [at for at in stores.get((id(method), attr), ()) if at > (call.lineno, call.col_offset)]
            if (
                advance is not None and method.name not in _RUN_ONCE and not later
                and attr not in names.scopes[id(cls)].defs and not _hands_on_self(method)
            ):
                known = last.get((id(method), attr))
                if known is None or (known.call.lineno, known.call.col_offset) < (call.lineno, call.col_offset):
                    last[(id(method), attr)] = StaleDraw(call, api.key_argument(call), attr, method, advance)
    return list(last.values())


def _outside_stale_draws(names: Names, class_of: ClassOf | None, draws_from: DrawsFrom) -> list[StaleDraw]:
    """Consumptions of `obj.<attr>`, a stream of the class a parameter is annotated with, that
    leave it in place."""
    found: list[StaleDraw] = []
    # The holders any call of the module hands a key-named attribute of: a function's own calls
    # are among the module's, so a function with no parameter of these names needs no walk.
    anywhere = _holders(call for call, _ in names.calls)
    if not anywhere:
        return found
    for fn in names.functions:
        if isinstance(fn, ast.Lambda):
            continue
        params = (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)
        if not any(param.arg in anywhere and param.annotation is not None for param in params):
            continue
        handed = _holders(call for call in own_nodes(fn) if isinstance(call, ast.Call))
        for param in params:
            if param.arg not in handed or param.annotation is None:
                continue  # only a class whose key-named attribute is handed to a call is looked up
            located = _annotated_class(param.annotation, names, fn, class_of)
            if located is None:
                continue
            cls_names, cls = located
            advances = _stores(cls, cls_names)[1]
            if advances:
                found.extend(_left_in_place(fn, param.arg, advances, cls, names, class_of, draws_from))
    return found


def _holders(calls: Iterable[ast.Call]) -> set[str]:
    """The names `obj` of the calls' arguments `obj.<key-named attribute>`."""
    return {
        arg.value.id for call in calls for arg in (*call.args, *(k.value for k in call.keywords))
        if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and key_named(arg.attr.lstrip("_"))
    }


def _left_in_place(
    fn: FunctionNode, holder: str, advances: dict[str, list[ast.stmt]], cls: ast.ClassDef, names: Names,
    class_of: ClassOf | None, draws_from: DrawsFrom,
):
    """The last call of `fn` consuming each stream of `holder` that nothing after it replaces."""
    body = own_nodes(fn)
    last: dict[str, tuple[ast.Call, ast.Attribute]] = {}
    for call in (n for n in body if isinstance(n, ast.Call)):
        if _reads_only(call, names, fn):
            continue
        for arg in (*call.args, *(k.value for k in call.keywords)):
            if (
                isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == holder
                and arg.attr in advances and isinstance(arg.ctx, ast.Load)
                and not _ignored(call, arg, fn, names, class_of) and draws_from(call, arg)
            ):
                known = last.get(arg.attr)
                if known is None or (known[0].lineno, known[0].col_offset) < (call.lineno, call.col_offset):
                    last[arg.attr] = (call, arg)
    for attr, (call, arg) in last.items():
        after = (call.end_lineno or call.lineno, call.end_col_offset or 0)
        statement = _statement_of(call, names)
        stored = any(
            isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)) and n.attr == attr
            and isinstance(n.value, ast.Name) and n.value.id == holder
            and ((n.lineno, n.col_offset) > after or statement is not None and spans(statement, n))
            for n in body
        )
        handed = any((c.lineno, c.col_offset) > after for c in calls_reaching(fn, holder))
        if not stored and not handed:
            yield StaleDraw(call, arg, attr, fn, advances[attr][0], cls.name)


def _statement_of(node: ast.AST, names: Names) -> ast.stmt | None:
    """The statement a node is part of (its stores happen once the node is evaluated)."""
    while node is not None and not isinstance(node, ast.stmt):
        node = names.parents.get(id(node))
    return node


def _ignored(call: ast.Call, arg: ast.expr, fn: FunctionNode, names: Names, class_of: ClassOf | None) -> bool:
    """A method of a parameter's annotated class (`q.best_action(..., key)`) that never reads the
    parameter the key is passed to: it consumes nothing."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return False
    annotation = next(
        (p.annotation for p in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)
         if p.arg == func.value.id and p.annotation is not None),
        None,
    )
    located = _annotated_class(annotation, names, fn, class_of) if annotation is not None else None
    if located is None:
        return False
    method = next((m for m in located[1].body if isinstance(m, ast.FunctionDef) and m.name == func.attr), None)
    if method is None:
        return False
    static = any(getattr(d, "id", None) == "staticmethod" for d in method.decorator_list)
    params = [p.arg for p in (*method.args.posonlyargs, *method.args.args)][0 if static else 1:]
    if arg in call.args:
        index = call.args.index(arg)
        param = params[index] if index < len(params) else None
    else:
        param = next(k.arg for k in call.keywords if k.value is arg)
    if param is None:
        return False
    return not any(isinstance(n, ast.Name) and n.id == param and isinstance(n.ctx, ast.Load) for n in ast.walk(method))


def _reads_only(call: ast.Call, names: Names, fn: FunctionNode) -> bool:
    """A call that looks at a key without consuming it (printing, `key_data`, `fold_in`)."""
    qualname = api.public(names.qualname(call.func, names.scope_of(fn)))
    if qualname is None:
        return False
    return (
        qualname in api.READING_CALLS or qualname.startswith(api.READING_PREFIXES)
        or qualname in api.KEY_DERIVATIONS or qualname in api.KEY_READERS
    )


def _annotated_class(annotation: ast.expr, names: Names, fn: FunctionNode, class_of: ClassOf | None):
    """The class of this module or the project a parameter's annotation names."""
    scope = names.enclosing_scope(fn)
    definition = names.definition(annotation, scope)
    if isinstance(definition, ast.ClassDef):
        return names, definition
    qualname = names.qualname(annotation, scope)
    if class_of is None or qualname is None or "." not in qualname:
        return None
    return class_of(qualname)


def _hands_on_self(method: FunctionNode) -> bool:
    """Whether the method calls a method of `self` or hands `self` to a call: either may store a
    fresh key (`self.reseed()`), so what its draws leave behind is not known."""
    me = first_param(method)
    return me is not None and any(True for _ in calls_reaching(method, me))


def _stores(
    cls: ast.ClassDef, names: Names
) -> tuple[dict[tuple[int, str], list[tuple[int, int]]], dict[str, list[ast.stmt]]]:
    """Where each method of `cls` stores into each attribute of `self` (nested functions included),
    and for each attribute the statements outside the run-once methods that advance it."""
    stores: dict[tuple[int, str], list[tuple[int, int]]] = {}
    advances: dict[str, list[ast.stmt]] = {}
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for statement in ast.walk(method):
            if not isinstance(statement, ast.stmt):
                continue
            # A statement stores once it has evaluated what it stores: where it ends.
            end = (statement.end_lineno or statement.lineno, statement.end_col_offset or 0)
            for target in _targets(statement):
                for node in ast.walk(target):
                    if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
                        attr = _self_attribute(node, method)
                        if attr is not None:
                            stores.setdefault((id(method), attr), []).append(end)
        if method.name in _RUN_ONCE:
            continue
        for node in nodes_run_with(method.body):
            if not isinstance(node, ast.Assign):
                continue
            value = node.value.value if isinstance(node.value, ast.Subscript) else node.value  # `split(k)[0]`
            if not isinstance(value, ast.Call):
                continue
            if api.public(names.qualname(value.func, names.scope_of(method))) not in _ADVANCING:
                continue
            drawn = _self_attribute(api.key_argument(value), method)
            if drawn is not None and any(_stores_into(target, drawn, method) for target in node.targets):
                advances.setdefault(drawn, []).append(node)
    return stores, advances


def _targets(statement: ast.stmt) -> list[ast.AST]:
    if isinstance(statement, (ast.Assign, ast.Delete)):
        return list(statement.targets)
    if isinstance(statement, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        return [statement.target]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in statement.items if item.optional_vars is not None]
    return []


def _stores_into(target: ast.AST, attr: str, method: FunctionNode) -> bool:
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_stores_into(element, attr, method) for element in target.elts)
    if isinstance(target, ast.Starred):
        return _stores_into(target.value, attr, method)
    return _self_attribute(target, method) == attr


def _self_attribute(node: ast.AST | None, method: FunctionNode) -> str | None:
    """`attr` for `self.attr`, `self` being the method's first parameter."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
        return None
    me = first_param(method)
    return node.attr if me is not None and node.value.id == me else None
