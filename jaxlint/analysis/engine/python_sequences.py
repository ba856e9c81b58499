"""Python lists and tuples as the code shows them: a literal, or a name every binding of which
in its scope assigns one (`TABLE = [1.0, 2.0]`). Such a sequence takes a Python int as an index
(`__index__`), whatever it holds."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.names import Names

_LITERALS = (ast.List, ast.Tuple, ast.ListComp)


def python_sequence(expr: ast.AST, names: Names) -> bool:
    if isinstance(expr, _LITERALS):
        return True
    if not isinstance(expr, ast.Name):
        return False
    owner = names.lookup(expr.id, names.read_scope.get(id(expr), names.module))
    if owner is None or any(
        expr.id in bound for bound in (owner.params, owner.other, owner.imports, owner.defs, owner.globals)
    ):
        return False  # bound otherwise too (a parameter, a loop, an import, `global`): anything
    values = owner.assigned.get(expr.id, [])
    return bool(values) and all(isinstance(value, _LITERALS) for value in values)
