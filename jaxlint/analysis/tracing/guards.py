"""Code that handles a tracer's failure itself: a `try` whose handler catches the error.

Concretizing a tracer (`int(x)`, `if x:`, `np.asarray(x)`) raises one of JAX's tracer errors,
all of them `TypeError`s. A `try:` whose `except` names `TypeError` or one of those errors is
the code probing for concreteness on purpose (`try: n = int(x) except TypeError: n = None`):
under a transformation its handler runs, by design. `contextlib.suppress(TypeError)` does the
same. A handler for `Exception` or a bare `except:` is not taken for such a probe: it is as
likely a fallback that would hide the bug. When every handler of the probe that catches the
tracer's error leaves (`return`, `raise`, `continue`, `break`), the statements after the `try`
in its block run only when the probe succeeded, on concrete values (`try: v = np.asarray(x)
except TypeError: return` then `if np.any(v): ...`): they are guarded too.
"""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.names import Names, Scope
from jaxlint.analysis.engine.reachability import never_completes, push_blocks
from jaxlint.analysis.engine.walk import nodes_run_with

# The errors a tracer raises where a concrete value is needed (jax.errors), and their base.
TRACER_ERRORS = frozenset({
    "builtins.TypeError",
    "jax.errors.ConcretizationTypeError",
    "jax.errors.TracerBoolConversionError",
    "jax.errors.TracerIntegerConversionError",
    "jax.errors.TracerArrayConversionError",
    "jax.core.ConcretizationTypeError",
})


_TRIES = (ast.Try, getattr(ast, "TryStar", ast.Try))  # `try ... except*` from Python 3.11
_WITHS = (ast.With, ast.AsyncWith)
_PROBES = frozenset({*_TRIES, *_WITHS})  # `ast.parse` builds these exact classes: a set test is exact


def guarded_nodes(own: list[ast.AST], names: Names, scope: Scope) -> set[int]:
    """id() of the nodes among a function's own nodes that run inside such a probe."""
    guarded: set[int] = set()
    leaving: set[int] = set()  # probes whose handlers leave: what follows them is guarded
    for node in own:
        if node.__class__ not in _PROBES:
            continue
        if isinstance(node, _TRIES):
            catching = [h for h in node.handlers if _catches(h.type, names, scope)]
            if catching:
                guarded.update(id(n) for n in nodes_run_with(node.body))
                if all(any(never_completes(s) for s in h.body) for h in catching):
                    leaving.add(id(node))
        elif isinstance(node, _WITHS):
            for item in node.items:
                call = item.context_expr
                if (
                    isinstance(call, ast.Call)
                    and names.qualname(call.func, scope) == "contextlib.suppress"
                    and any(_catches(a, names, scope) for a in call.args)
                ):
                    guarded.update(id(n) for n in nodes_run_with(node.body))
    if leaving:
        guarded.update(_after_probes(scope.node, leaving))
    return guarded


def _after_probes(fn: ast.AST, probes: set[int]) -> set[int]:
    """id() of the nodes of the statements that follow a probe in its block."""
    found: set[int] = set()
    body = getattr(fn, "body", None)
    blocks = [body] if isinstance(body, list) else []
    while blocks:
        block = blocks.pop()
        for index, statement in enumerate(block):
            if id(statement) in probes:
                found.update(id(n) for n in nodes_run_with(block[index + 1:]))
            if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                push_blocks(statement, blocks)
    return found


def _catches(handler: ast.expr | None, names: Names, scope: Scope) -> bool:
    if handler is None:
        return False
    if isinstance(handler, ast.Tuple):
        return any(_catches(e, names, scope) for e in handler.elts)
    return names.qualname(handler, scope) in TRACER_ERRORS
