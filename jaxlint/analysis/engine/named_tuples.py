"""The module's `typing.NamedTuple` classes, and the expressions that always build one of them.

A NamedTuple instance is a tuple whose fields are its items: traced code reads its fields
by name or by position, and it keeps its class through `_replace` and the loops that
return their carry as they got it.
"""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.names import Names, Scope

NAMED_TUPLE_BASES = frozenset({"typing.NamedTuple", "typing_extensions.NamedTuple"})
# Calls that make a NamedTuple class: `collections.namedtuple("State", ["values", "idx"])`.
NAMED_TUPLE_FACTORIES = frozenset({"collections.namedtuple", *NAMED_TUPLE_BASES})
# Loops that return their carry as they received it: a NamedTuple in, a NamedTuple out.
_CARRY_RETURNING = {"jax.lax.while_loop": 2, "jax.lax.fori_loop": 3}


def is_named_tuple(func: ast.expr, names: Names, scope: Scope | None = None) -> bool:
    """Whether `func` names a class defined in this module that subclasses `typing.NamedTuple`."""
    cls = names.definition(func, scope)
    if not isinstance(cls, ast.ClassDef) or id(cls) not in names.scopes:
        return False
    return named_tuple_class(cls, names)


def named_tuple_factory(expr: ast.expr, names: Names, scope: Scope | None = None) -> bool:
    """Whether `expr` is a name bound once to a NamedTuple class made by a call
    (`State = collections.namedtuple("State", ["values", "idx"])`, `typing.NamedTuple("T", ...)`)."""
    if not isinstance(expr, ast.Name):
        return False
    values = names.assignments(expr, scope)
    return len(values) == 1 and isinstance(values[0], ast.Call) and names.qualname(values[0].func) in NAMED_TUPLE_FACTORIES


def named_tuple_class(cls: ast.ClassDef, names: Names) -> bool:
    """Whether a class of the module `names` indexes subclasses `typing.NamedTuple`."""
    outer = names.enclosing_scope(cls)
    return any(names.qualname(base, outer) in NAMED_TUPLE_BASES for base in cls.bases)


def builds_named_tuple(expr: ast.expr, names: Names, seen: frozenset[int] = frozenset()) -> bool:
    """Whether `expr` always evaluates to an instance of a NamedTuple defined in this module:
    its constructor, a `_replace` of one, a loop returning one as its carry, or a name every
    assignment of which is one of these."""
    if isinstance(expr, ast.Name):
        if id(expr) in seen:
            return True  # the name again, through its own loop: decided by its other assignments
        assigned = names.assignments(expr)
        return bool(assigned) and all(builds_named_tuple(v, names, seen | {id(expr)}) for v in assigned)
    if not isinstance(expr, ast.Call):
        return False
    if is_named_tuple(expr.func, names):
        return True
    if isinstance(expr.func, ast.Attribute) and expr.func.attr == "_replace":
        return builds_named_tuple(expr.func.value, names, seen)
    position = _CARRY_RETURNING.get(names.qualname(expr.func) or "")
    if position is not None and len(expr.args) > position:
        return builds_named_tuple(expr.args[position], names, seen)
    return False
