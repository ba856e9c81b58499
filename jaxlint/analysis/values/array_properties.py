"""Properties that compute a JAX array: what reading one from a traced instance gives.

A property every `return` of which is the result of a JAX operation that returns one array
(`return jnp.array(self.num_steps - self.timestep - 1, int)`) runs when it is read, and inside a
trace JAX stages every operation: read from a traced instance, it is a traced array, whatever
its fields hold. A property that returns anything else (a field, a shape, a Python number) says
nothing, nor does one that may fall off its end.

A NamedTuple's attributes are its fields, each a pytree child, traced in a traced instance; a
method or property its class defines is none of them. Where the class is not known, a name the
module's classes define only as methods or properties is read as one of them
(`method_by_name`): a traced array where every one computes an array, unknown otherwise.
"""

from __future__ import annotations

import ast
import weakref
from typing import Optional

from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.engine.walk import own_statements
from jaxlint.analysis.knowledge import array_api


def computes_array(stmt: ast.stmt, names: Names) -> bool:
    """Whether `stmt`, a statement of a class body, is a property every `return` of which is a JAX
    operation returning one array."""
    if not isinstance(stmt, ast.FunctionDef) or len(stmt.decorator_list) != 1:
        return False
    if names.qualname(stmt.decorator_list[0], names.enclosing_scope(stmt)) != "builtins.property":
        return False
    returns = [s for s in own_statements(stmt.body) if isinstance(s, ast.Return)]
    if not returns or not isinstance(stmt.body[-1], (ast.Return, ast.Raise)):
        return False
    inner = names.scope_of(stmt)
    return all(
        isinstance(r.value, ast.Call) and array_api.one_array_call(names.qualname(r.value.func, inner), r.value)
        for r in returns
    )


def method_by_name(attr: str, names: Names) -> Optional[bool]:
    """Whether the module's classes define `attr` only as methods or properties (none as a field or
    a class attribute), and, if so, whether every one is a property computing an array; None
    where some class declares it otherwise, or none defines it."""
    kinds = _METHOD_KINDS.get(names)
    if kinds is None:
        kinds = _METHOD_KINDS[names] = _method_kinds(names)
    return kinds.get(attr)


# Per module: each attribute name its classes define as a def -> whether every definition is a
# property computing an array; None for a name some class also declares otherwise.
_METHOD_KINDS: "weakref.WeakKeyDictionary[Names, dict[str, Optional[bool]]]" = weakref.WeakKeyDictionary()


def _method_kinds(names: Names) -> dict[str, Optional[bool]]:
    kinds: dict[str, Optional[bool]] = {}
    declared: set[str] = set()
    for scope in names.scopes.values():
        if scope.kind != "class" or not isinstance(scope.node, ast.ClassDef):
            continue
        for stmt in scope.node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                kinds[stmt.name] = kinds.get(stmt.name, True) is not False and computes_array(stmt, names)
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                declared.add(stmt.target.id)
            elif isinstance(stmt, ast.Assign):
                declared.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    for name in declared:
        kinds[name] = None
    return kinds
