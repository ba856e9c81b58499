"""Code under `with jax.disable_jit():`, where JAX runs what it would trace in Python, on the
values it is given: `jax.jit(f)(x)` calls `f(x)`, `lax.scan` is a Python loop, `lax.cond`
calls the branch taken (`jax_api.EAGER_WITHOUT_JIT`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jaxlint.analysis.engine.names import FUNCTION_TYPES, Names, Scope
from jaxlint.analysis.engine.walk import nodes_of_classes, nodes_run_with

DISABLE_JIT = "jax.disable_jit"
_WITH = frozenset({ast.With})
_FUNCTIONS = frozenset(FUNCTION_TYPES)


@dataclass(frozen=True)
class EagerCalls:
    """calls: the ids of the calls a `with jax.disable_jit():` block makes as it runs (not those
    of functions defined there, which may run anywhere), each with the node of the scope the
    block is in. applied: of those, the ids of the calls whose result the block calls at once
    (`jax.jit(f)` of `jax.jit(f)(x)`)."""

    calls: dict[int, ast.AST]
    applied: frozenset[int]


def eager_calls(names: Names, scopes: list[Scope]) -> EagerCalls:
    """The calls of the `with jax.disable_jit():` blocks in `scopes` (those that call `disable_jit`)."""
    calls: dict[int, ast.AST] = {}
    applied: set[int] = set()
    for scope in scopes:
        body = getattr(scope.node, "body", None)  # a lambda's is an expression: no `with` there
        for block in nodes_of_classes(body if isinstance(body, list) else [], _WITH, _FUNCTIONS):
            if not any(_disables_jit(item.context_expr, names, scope) for item in block.items):
                continue
            for node in nodes_run_with(block.body):
                if isinstance(node, ast.Call):
                    calls[id(node)] = scope.node
                    if isinstance(node.func, ast.Call):
                        applied.add(id(node.func))
    return EagerCalls(calls, frozenset(applied))


def _disables_jit(expr: ast.expr, names: Names, scope: Scope) -> bool:
    """`jax.disable_jit()`, or given a literal True: `disable_jit(False)` leaves jit on."""
    if not isinstance(expr, ast.Call) or names.qualname(expr.func, scope) != DISABLE_JIT:
        return False
    given = [*expr.args, *(k.value for k in expr.keywords if k.arg == "disable")]
    return all(isinstance(arg, ast.Constant) and arg.value is True for arg in given)
