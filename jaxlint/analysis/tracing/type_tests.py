"""What a branch's `isinstance` test shows: the names that are not JAX arrays along one of its edges.

Code written for NumPy and JAX arrays alike picks its path by type: `if isinstance(x, np.ndarray):
x[i] = v` writes in place into a NumPy array only, and `if isinstance(x, jax.Array): return
x.at[i].set(v)` leaves the rest of the function to everything else. A JAX array is an instance
of `jax.Array` (`jnp.ndarray`) and of no NumPy or builtin type (`isinstance(jnp.zeros(3),
np.ndarray)` is False), so the true edge of `isinstance(x, T)` with every `T` a NumPy or builtin
type other than `object`, and the false edge of `isinstance(x, T)` with some `T` a JAX array
type, show that `x` is not one; through `not`, `and` (its true edge) and `or` (its false edge).
A type the analysis does not know (a class of the project, a protocol) shows nothing. Code in
the `else` of `if isinstance(x, jax.Array):`, or after such an `if` whose body always leaves,
never sees `x` as a JAX array (`excluded_by_test`).

No tracer, nor a list, tuple or dict of them, is an instance of a NumPy type or of a Python
scalar type (`int`, `float`, `bool`, `complex`, `str`, `bytes`) either, nor of a SciPy sparse
matrix or array class (`scipy.sparse.csr_matrix`), which holds a NumPy buffer. So the true edge
of `isinstance(x, T)` with every `T` one of these shows that `x` holds a value known at trace
time (`concrete`), and that it is no JAX array.

The other way round, code that tests `isinstance(x, jax.core.Tracer)` (itself, or through a
function of the module that only returns that test of its parameter, `def _is_tracer(v): return
isinstance(v, jax.core.Tracer)`) says that `x` may be a tracer: along an edge where the test may
have held (the true edge, through `not`, `and` and `or`: `if _is_tracer(topk) or topk:`), `x`
is taken for traced where nothing else is known of it (`may_be_tracers`). And a JAX array the
traced code holds is a tracer: `isinstance(x, jax.core.Tracer)` holds for it, so the edge where
the test failed (`if not isinstance(jnp.atleast_1d(spin), jax.core.Tracer): assert ...`, a check
meant for concrete calls) is never taken there (`tracer_tested`); nor is the edge where
`isinstance(x[0], np.ndarray)` held, for a traced array `x[0]` (`concrete_tested`).
"""

from __future__ import annotations

import ast
from typing import Callable, Iterator

from jaxlint.analysis.engine.lattice import Value
from jaxlint.analysis.engine.names import Names, Scope
from jaxlint.analysis.engine.reachability import never_completes, push_blocks
from jaxlint.analysis.engine.walk import spans
from jaxlint.analysis.knowledge import jax_api

_SCALARS = frozenset({
    "builtins.int", "builtins.float", "builtins.bool", "builtins.complex", "builtins.str", "builtins.bytes",
})
_SPARSE = "scipy.sparse."  # its classes hold NumPy buffers, never a tracer


def not_jax_arrays(test: ast.expr, outcome: bool, names: Names, scope: Scope) -> Iterator[str]:
    """The names the edge of `test` taken when it is `outcome` shows not to hold a JAX array."""
    return _shown(test, outcome, names, scope, _never_jax_arrays, _some_jax_array)


def concrete(test: ast.expr, outcome: bool, names: Names, scope: Scope) -> Iterator[str]:
    """The names the edge of `test` taken when it is `outcome` shows to hold no tracer."""
    return _shown(test, outcome, names, scope, _never_traced, None)


def may_be_tracers(test: ast.expr, outcome: bool, names: Names, scope: Scope) -> Iterator[str]:
    """The names a tracer test may have shown to hold a tracer along the edge where `test` is
    `outcome`: every operand of `and`/`or` may be the one that decided it."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from may_be_tracers(test.operand, not outcome, names, scope)
    elif isinstance(test, ast.BoolOp):
        for value in test.values:
            yield from may_be_tracers(value, outcome, names, scope)
    elif outcome:
        operand = tracer_tested(test, names, scope)
        if isinstance(operand, ast.Name):
            yield operand.id


def tracer_tested(test: ast.expr, names: Names, scope: Scope) -> ast.expr | None:
    """The operand of `test` when it is `isinstance(operand, jax.core.Tracer)` (or a function of
    the module that only returns that test of its parameter)."""
    if not isinstance(test, ast.Call) or not test.args or isinstance(test.args[0], ast.Starred):
        return None
    if _tests_tracer(test, names, scope):
        return test.args[0]
    one_argument = len(test.args) == 1 and not test.keywords
    if one_argument and _returns_tracer_test(names.definition(test.func, scope), names):
        return test.args[0]
    return None


def concrete_tested(test: ast.expr, names: Names, scope: Scope) -> ast.expr | None:
    """The operand of `test` when it is `isinstance(operand, T)` with every `T` a type no tracer
    belongs to (`np.ndarray`, `int`): where the operand is a traced array, the test fails."""
    if not (
        isinstance(test, ast.Call) and len(test.args) == 2 and not test.keywords
        and not isinstance(test.args[0], ast.Starred) and names.qualname(test.func, scope) == "builtins.isinstance"
    ):
        return None
    types = test.args[1]
    kinds = [names.qualname(item, scope) for item in (types.elts if isinstance(types, ast.Tuple) else [types])]
    return test.args[0] if kinds and _never_traced(kinds) else None


def traced_array_outcome(test: ast.expr, names: Names, scope: Scope, value_of: Callable[[ast.expr], Value]) -> bool | None:
    """The outcome of a type test of a traced array (a tracer): `isinstance(x, Tracer)` (or a
    one-line helper of it) holds, `isinstance(x, np.ndarray)` fails. None where the test is
    neither, or `value_of` its operand is no traced array (a container or pytree is no tracer)."""
    operand, holds = tracer_tested(test, names, scope), True
    if operand is None:
        operand, holds = concrete_tested(test, names, scope), False
    if operand is None:
        return None
    value = value_of(operand)
    return holds if value.traced and value.array else None


def _tests_tracer(call: ast.Call, names: Names, scope: Scope) -> bool:
    """`isinstance(x, jax.core.Tracer)` (or a tuple of types that holds it)."""
    if len(call.args) != 2 or call.keywords or names.qualname(call.func, scope) != "builtins.isinstance":
        return False
    types = call.args[1]
    items = types.elts if isinstance(types, ast.Tuple) else [types]
    return any(names.qualname(item, scope) in jax_api.TRACER_TYPES for item in items)


def _returns_tracer_test(fn: ast.AST | None, names: Names) -> bool:
    """A def of one parameter whose body (a docstring aside) is `return isinstance(p, Tracer)`."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.decorator_list:
        return False
    params = [*fn.args.posonlyargs, *fn.args.args]
    body = fn.body[1:] if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(
        fn.body[0].value, ast.Constant
    ) else fn.body
    if len(params) != 1 or len(body) != 1 or not isinstance(body[0], ast.Return):
        return False
    returned = body[0].value
    if not isinstance(returned, ast.Call) or not returned.args or not isinstance(returned.args[0], ast.Name):
        return False
    return returned.args[0].id == params[0].arg and _tests_tracer(returned, names, names.scope_of(fn))


def _shown(test, outcome, names, scope, held, failed) -> Iterator[str]:
    """The names tested by an `isinstance` on the edge: with types all of which `held` accepts
    where the test held, or some of which `failed` accepts where it failed."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _shown(test.operand, not outcome, names, scope, held, failed)
    elif isinstance(test, ast.BoolOp):
        # Every operand of an `and` that held is true; every operand of an `or` that failed is false.
        if outcome == isinstance(test.op, ast.And):
            for value in test.values:
                yield from _shown(value, outcome, names, scope, held, failed)
    elif (
        isinstance(test, ast.Call)
        and len(test.args) == 2
        and not test.keywords
        and isinstance(test.args[0], ast.Name)
        and names.qualname(test.func, scope) == "builtins.isinstance"
    ):
        types = test.args[1]
        items = types.elts if isinstance(types, ast.Tuple) else [types]
        kinds = [names.qualname(item, scope) for item in items]
        if outcome and kinds and held(kinds):
            yield test.args[0].id
        elif not outcome and failed is not None and failed(kinds):
            yield test.args[0].id


def _never_jax_arrays(kinds: list) -> bool:
    return all(_numpy_or_builtin(kind) or _sparse(kind) for kind in kinds)


def _some_jax_array(kinds: list) -> bool:
    return any(kind in jax_api.ARRAY_ANNOTATIONS for kind in kinds)


def _never_traced(kinds: list) -> bool:
    return all(
        kind in _SCALARS or (_numpy_or_builtin(kind) and kind.startswith("numpy.")) or _sparse(kind)
        for kind in kinds
    )


def _sparse(kind: str | None) -> bool:
    return kind is not None and kind.startswith(_SPARSE)


def _numpy_or_builtin(kind: str | None) -> bool:
    if kind is None or kind == "builtins.object" or kind.startswith("numpy.typing."):
        return False  # `np.typing.ArrayLike` admits anything with `__array__`
    return kind.startswith("numpy.") or kind.startswith("builtins.")


def excluded_by_test(fn: ast.AST, node: ast.AST, name: str, names: Names, scope: Scope) -> bool:
    """Whether `node`, in `fn`'s own body, runs only where an `isinstance` test showed `name` not
    to be a JAX array (nor a tracer, which is one): in the `else` of `if isinstance(name,
    jax.Array):`, or after such an `if` whose body never completes (`return x.at[i].set(v)`)."""
    body = getattr(fn, "body", None)
    blocks = [body] if isinstance(body, list) else []
    while blocks:
        block = blocks.pop()
        for index, statement in enumerate(block):
            if isinstance(statement, ast.If) and name in not_jax_arrays(statement.test, False, names, scope):
                if any(spans(s, node) for s in statement.orelse):
                    return True
                if any(never_completes(s) for s in statement.body) and any(spans(s, node) for s in block[index + 1:]):
                    return True
            if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                push_blocks(statement, blocks)
    return False

