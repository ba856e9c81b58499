"""What a comparison gives in traced code: a traced boolean array, or a Python bool.

Comparing arrays compares element by element, so a comparison with a traced operand is a traced
boolean array. Python answers some comparisons itself: `is`/`is not` test identity, and a JAX
array returns NotImplemented for `==`/`!=` with None, a string, bytes, `...` or a slice, so
Python falls back to identity there too. A value compared with a tuple or list display
(`parts == ()`) is a pytree compared with a Python sequence, and `in` asks the container.
"""

from __future__ import annotations

import ast
import operator
from typing import Callable, Optional, Tuple

from jaxlint.analysis.engine.conditions import single_value
from jaxlint.analysis.engine.lattice import STATIC, Trace, Value, constant, join_all
from jaxlint.analysis.engine.names import Names, Scope

# An expression's class, with the names of the module defining it (`RecordClasses.class_of`).
ClassOf = Callable[[ast.expr, Scope], Optional[Tuple[Names, ast.ClassDef]]]


def comparison(
    node: ast.Compare, operands: list[Value], names: Names, scope: Scope, class_of: ClassOf | None = None
) -> Value:
    """The value of `node` given its operands' values (left first); `class_of` finds the class an
    expression names in this module or another of the project (`RecordClasses.class_of`)."""
    decided = _between_numbers(node.ops, operands)
    if decided is not None:
        return constant(decided)
    if all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
        return _identity_test(node, operands)
    if len(operands) == 2 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
        compared = _compared_with_none(node, operands)
        if compared is not None:
            return compared
        if _no_array_compares(node.left, names, scope, class_of) or _no_array_compares(
            node.comparators[0], names, scope, class_of
        ):
            return STATIC
    joined = join_all(operands)
    if any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
        return Value(min(joined.trace, Trace.UNKNOWN))
    displays = any(isinstance(e, (ast.Tuple, ast.List)) for e in (node.left, *node.comparators))
    if displays and not any(v.array for v in operands):
        return Value(min(joined.trace, Trace.UNKNOWN))
    return Value(joined.trace, array=joined.traced, boolean=True, not_none=joined.traced)


_ORDERINGS = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
    ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
}


def _between_numbers(ops: list[ast.cmpop], operands: list[Value]) -> bool | None:
    """A comparison of Python numbers the analysis knows (`len(args) == 1` where the call passed
    two): Python's answer, computed here as Python does, chained comparisons included."""
    numbers = []
    for value in operands:
        if not value.known or type(value.known[0]) not in (int, float, bool):
            return None
        numbers.append(value.known[0])
    answer = True
    for op, left, right in zip(ops, numbers, numbers[1:]):
        compare = _ORDERINGS.get(op.__class__)
        if compare is None:
            return None
        answer = answer and compare(left, right)
    return answer


def elementwise(
    op: ast.cmpop, left: ast.expr, right: ast.expr, names: Names, scope: Scope, class_of: ClassOf | None = None
) -> bool:
    """Whether an array answers `left op right` element by element (with an array of booleans):
    an ordering, or `==`/`!=` with anything Python does not answer itself (None, a string,
    bytes, `...`, a slice); never `is` or `in`."""
    if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
        return True
    if isinstance(op, (ast.Eq, ast.NotEq)):
        return not any(
            isinstance(side, ast.Constant) and side.value is None or _no_array_compares(side, names, scope, class_of)
            for side in (left, right)
        )
    return False


def _no_array_compares(expr: ast.expr, names: Names, scope: Scope, class_of: ClassOf | None = None) -> bool:
    """A string, bytes, `...` or `slice(...)`: `==` between a JAX array and one is a Python bool.
    So is a name this module, or another of the project, binds once to a string (`model_mode ==
    MODEL_MODE_PREFILL`), and a member of an enum class that is no number (`enum.Enum`, not
    `IntEnum`): a JAX array answers `==` with an object it does not know by identity too."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (str, bytes)) or expr.value is Ellipsis
    if isinstance(expr, ast.Attribute) and _enum_member(expr, names, scope, class_of):
        return True
    if isinstance(expr, (ast.Name, ast.Attribute)):
        return _bound_string(expr, names, scope)
    return isinstance(expr, ast.Call) and names.qualname(expr.func, scope) == "builtins.slice"


def _enum_member(expr: ast.Attribute, names: Names, scope: Scope, class_of: ClassOf | None) -> bool:
    """`Kind.ATTENTION`, a member of an enum class of this module or another of the project that
    derives from no number type."""
    if class_of is not None:
        found = class_of(expr.value, scope)
    else:
        cls = names.definition(expr.value, scope)
        found = (names, cls) if isinstance(cls, ast.ClassDef) and id(cls) in names.scopes else None
    if found is None:
        return False
    there, cls = found
    members = {t.id for s in cls.body if isinstance(s, ast.Assign) for t in s.targets if isinstance(t, ast.Name)}
    return expr.attr in members and _plain_enum(cls, there, _ENUM_DEPTH)


def _plain_enum(cls: ast.ClassDef, names: Names, depth: int) -> bool:
    """Whether a class derives from `enum.Enum` (or `Flag`, `StrEnum`) and from no number type."""
    if depth <= 0 or id(cls) not in names.scopes:
        return False
    scope = names.scopes[id(cls)].parent or names.module
    found = False
    for base in cls.bases:
        qualname = names.qualname(base, scope)
        if qualname in _NUMBER_BASES:
            return False
        local = names.definition(base, scope)
        found = found or qualname in _ENUM_BASES or isinstance(local, ast.ClassDef) and _plain_enum(local, names, depth - 1)
    return found


_ENUM_BASES = frozenset({"enum.Enum", "enum.Flag", "enum.StrEnum"})
_NUMBER_BASES = frozenset({"enum.IntEnum", "enum.IntFlag", "builtins.int", "builtins.float", "builtins.complex", "builtins.bool"})
_ENUM_DEPTH = 4


def _bound_string(expr: ast.Name | ast.Attribute, names: Names, scope: Scope) -> bool:
    if isinstance(expr, ast.Name):
        single = single_value(names, expr.id, names.read_scope.get(id(expr), scope))
        if single is not None:
            value = single[1]
            return isinstance(value, ast.Constant) and isinstance(value.value, (str, bytes))
    qualname = names.qualname(expr, scope)
    return qualname is not None and "." in qualname and names.constant_of(qualname) is not None


def _compared_with_none(node: ast.Compare, operands: list[Value]) -> Value | None:
    """`x == None` / `x != None`: a JAX array returns NotImplemented for None and Python falls back
    to identity, so it is `x is None` / `x is not None`, a Python bool (None when no side is None)."""
    left, right = node.left, node.comparators[0]
    if isinstance(right, ast.Constant) and right.value is None:
        other = operands[0]
    elif isinstance(left, ast.Constant) and left.value is None:
        other = operands[1]
    else:
        return None
    if other.none is not None:
        return constant(other.none == isinstance(node.ops[0], ast.Eq))
    return STATIC


def _identity_test(node: ast.Compare, operands: list[Value]) -> Value:
    """`x is None` / `x is not None`: decided when whether x is None is known, static in any case."""
    if len(operands) == 2 and isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None:
        none = operands[0].none
        if none is not None:
            return constant(none == isinstance(node.ops[0], ast.Is))
    return STATIC
