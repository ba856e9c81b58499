"""Code under `with jax.ensure_compile_time_eval():`, where JAX evaluates operations on
concrete inputs eagerly, even while tracing: their results are traced only when an input is."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.call_index import calls_through
from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.engine.walk import nodes_of_classes

COMPILE_TIME_EVAL = "jax.ensure_compile_time_eval"
_LAST = COMPILE_TIME_EVAL.rsplit(".", 1)[1]


_OPERATIONS = (ast.Call, ast.BinOp, ast.AugAssign, ast.Compare, ast.UnaryOp)


def compile_time_operations(names: Names) -> frozenset[int]:
    """The ids of the calls and operators inside `with jax.ensure_compile_time_eval():` blocks of the module."""
    # Only scopes that spell the name are searched: most modules have none.
    spelled = {id(scope.node): scope for _, scope in calls_through(names, (_LAST,))}
    found: set[int] = set()
    for scope in spelled.values():
        for block in nodes_of_classes([scope.node], frozenset({ast.With}), frozenset()):
            if any(
                isinstance(item.context_expr, ast.Call)
                and names.qualname(item.context_expr.func, scope) == COMPILE_TIME_EVAL
                for item in block.items
            ):
                found.update(id(n) for stmt in block.body for n in ast.walk(stmt) if isinstance(n, _OPERATIONS))
    return frozenset(found)
