"""The class of the instance an attribute of `self` holds: a submodule whose `__call__` can be followed.

A class that builds its layers in `__init__` (`self.mix = PartialMix(dim, key=k)`) holds, in
that attribute, an instance of exactly that class; one that stores a parameter of the method
annotated with a class (`def __init__(self, model: Ensemble): self._model = model`) holds one
of that class; one that only declares its fields (`mix: PartialMix`, a dataclass-style
Equinox or Flax module) holds one of the class its annotation names.  The assignments decide
where there are any (an annotation may name a base class or a library's class the assigned
one stands in for); every assignment in the class's methods must call the same class (a
None stored aside: calling it fails), or the attribute holds something chosen at run time
and is left unknown.
"""

from __future__ import annotations

import ast
from typing import Callable

from jaxlint.analysis.engine.names import FunctionNode, Names
from jaxlint.analysis.engine.walk import walk


def attribute_class(
    names: Names, func: ast.AST, attributes: Callable[[ast.ClassDef], dict[str, list[ast.expr] | None]]
) -> ast.expr | None:
    """The expression naming the class of the instance `self.<attr>` holds, when one class is known.

    `func` is the callee of a call (`self.mix` in `self.mix(x, key=key)`) read in a method;
    `attributes` gives a class's `self_attributes`, computed once per class by the caller.
    """
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
        return None
    scope = names.read_scope.get(id(func.value))
    while scope is not None and scope.kind != "class":
        scope = scope.parent
    if scope is None or not isinstance(scope.node, ast.ClassDef) or func.attr in scope.defs:
        return None
    cls = scope.node
    assigned = attributes(cls).get(func.attr, [])
    if assigned is None:
        return None
    # None aside: calling it, or a method of it, fails.
    assigned = [v for v in assigned if not (isinstance(v, ast.Constant) and v.value is None)]
    made = [_class_named(names, value) for value in assigned]
    if None in made:
        return None  # `self.mix = make(...)`, `self.mix = m`: not a class named plainly
    if made:
        classes = {names.qualname(c) or _local_name(c) for c in made}
        return made[0] if len(classes) == 1 and None not in classes else None
    return _annotation(cls, func.attr)


def _class_named(names: Names, value: ast.expr) -> ast.expr | None:
    """The expression naming the class of what `self.<attr> = value` stores: the class a plain
    constructor call names, or the class annotating the parameter of the storing method that
    the value passes on as received (`def __init__(self, model: Ensemble): self._model =
    model`), which calls that do not pass an instance of it fail on the first use."""
    if _plain_constructor(value):
        return value.func
    if not isinstance(value, ast.Name):
        return None
    scope = names.read_scope.get(id(value))
    if scope is None or scope.kind != "function" or value.id not in scope.params:
        return None
    if value.id in scope.assigned or value.id in scope.other:
        return None  # rebound: perhaps no longer what the caller passed
    for parameter in (*scope.node.args.posonlyargs, *scope.node.args.args, *scope.node.args.kwonlyargs):
        if parameter.arg == value.id:
            annotation = parameter.annotation
            return annotation if isinstance(annotation, (ast.Name, ast.Attribute)) else None
    return None


def call_method(cls: ast.ClassDef) -> FunctionNode | None:
    """The class's own undecorated `__call__`, which calling an instance runs."""
    for statement in cls.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == "__call__":
            return None if statement.decorator_list else statement
    return None


def self_attributes(cls: ast.ClassDef) -> dict[str, list[ast.expr] | None]:
    """The attributes the class's methods assign on `self`, each with the values assigned to it;
    None for one assigned otherwise than whole, by a plain assignment (`self.a, self.b = pair`,
    `self.mix += m`, `for self.i in ...`, `setattr(self, "mix", ...)`). One walk per class."""
    found: dict[str, list[ast.expr] | None] = {}
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in walk(method):
            targets: list[ast.AST] = []
            value = None
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign):
                targets, value = [node.target], node.value
            elif isinstance(node, ast.AugAssign):
                targets = [node.target]  # `self.mix += ...`: no value of its own
            elif isinstance(node, (ast.For, ast.NamedExpr)):
                targets = [node.target]
            elif isinstance(node, ast.With):
                targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
            elif isinstance(node, ast.Call):
                for attr in _set_attributes(node):
                    found[attr] = None  # `object.__setattr__(self, "mix", ...)`, `setattr(self, ...)`
            for target in targets:
                for element in walk(target):
                    if isinstance(element, ast.Attribute) and isinstance(element.value, ast.Name) and element.value.id == "self":
                        values = found.setdefault(element.attr, [])
                        if values is None:
                            continue
                        if element is not target or value is None:
                            found[element.attr] = None
                        else:
                            values.append(value)
    return found


def _plain_constructor(value: ast.AST | None) -> bool:
    return isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute))


def _set_attributes(call: ast.Call) -> list[str]:
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
    if name not in ("setattr", "__setattr__"):
        return []
    return [arg.value for arg in call.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]


def _annotation(cls: ast.ClassDef, attr: str) -> ast.expr | None:
    for statement in cls.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.target.id == attr:
            annotation = statement.annotation
            return annotation if isinstance(annotation, (ast.Name, ast.Attribute)) else None
    return None


def _local_name(func: ast.AST) -> str | None:
    return func.id if isinstance(func, ast.Name) else None
