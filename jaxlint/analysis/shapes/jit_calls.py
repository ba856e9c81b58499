"""Calls of jitted callables, with the arguments whose shapes key the compilation cache.

Two kinds: calls of the module's jitted functions (`call_sites`, whose parameters are known),
and calls of a name bound once to a jit of something the analysis does not see into
(`model_apply = jax.jit(model.apply)`, `step = jax.jit(imported.step)`): JAX traces every
argument such a callable is given except those its literal `static_argnums`/`static_argnames`
name, so each is keyed by its shape all the same. A jit whose static arguments are not written
out is left alone.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator, NamedTuple

from jaxlint.analysis.engine.arguments import bind
from jaxlint.analysis.engine.call_index import calls_through
from jaxlint.analysis.engine.names import FunctionNode
from jaxlint.analysis.knowledge import shape_api
from jaxlint.analysis.shapes import jit_signature
from jaxlint.analysis.engine.names import function_in
from jaxlint.analysis.tracing.callsites import CallSite

if TYPE_CHECKING:
    from jaxlint.analysis.effects.effects import Effects
    from jaxlint.analysis.project.traced_module import TracedModule


class JitCall(NamedTuple):
    call: ast.Call
    name: str  # the jitted function, as a message names it
    function: FunctionNode | None  # the function the call is made in
    loops: list  # the loops around it in that function, outermost first
    arguments: list[tuple[str | None, ast.expr]]  # traced arguments: (parameter if known, expression)


def jit_calls(module: TracedModule, effects: Effects) -> list[JitCall]:
    found = []
    for site in module.call_sites:
        if site.target.context.staged:
            name = getattr(site.target.node, "name", None) or site.target.bound_name or "the jitted function"
            found.append(JitCall(site.call, name, site.function, site.loops, list(_site_arguments(site, module))))
    found.extend(_opaque_calls(module, effects))
    return found


def _site_arguments(site: CallSite, module: TracedModule) -> Iterator[tuple[str | None, ast.expr]]:
    """The call's arguments that reach traced (non-static) parameters: (the parameter, or None
    for what `*args`/`**kwargs` collects, and the argument)."""
    target = site.target
    bound = bind(target.node, site.call, site.implicit)
    static = set(target.static_params)
    for param, arg in bound.arguments.items():
        if param not in static:
            yield param, arg
    if bound.vararg not in static:
        yield from ((None, arg) for arg in bound.collected)
    if bound.kwarg not in static:
        yield from bound.collected_names.items()


def _opaque_calls(module: TracedModule, effects: Effects) -> Iterator[JitCall]:
    """Calls of `name = jax.jit(<something not seen into>, ...)`, the name bound only there."""
    names = module.names
    seen_into = {id(root.site) for root in module.traced_roots if root.site is not None}
    for build, scope in calls_through(names, effects.module_short_names(shape_api.CACHING_TRANSFORMS)):
        name = names.call_targets.get(id(build))
        if name is None or id(build) in seen_into or not build.args:
            continue
        if module.qualname(build.func) not in shape_api.CACHING_TRANSFORMS:
            continue
        static = _literal_static(build)
        if static is None or len(scope.assigned.get(name, ())) != 1 or name in scope.other or name in scope.defs:
            continue
        label = ast.unparse(build.args[0])
        for call, where in calls_through(names, (name,)):
            if not (isinstance(call.func, ast.Name) and names.lookup(name, where) is scope):
                continue
            if any(isinstance(a, ast.Starred) for a in call.args):
                continue
            numbers, keywords = static
            arguments: list[tuple[str | None, ast.expr]] = [
                (None, a) for i, a in enumerate(call.args) if i not in numbers
            ]
            arguments += [(k.arg, k.value) for k in call.keywords if k.arg is not None and k.arg not in keywords]
            yield JitCall(call, label, function_in(where), module.loops_around(call), arguments)


def _literal_static(build: ast.Call) -> tuple[frozenset[int], frozenset[str]] | None:
    """The positions and names a jit makes static, when written out as literals (None if not)."""
    numbers: set[int] = set()
    keywords: set[str] = set()
    for keyword in build.keywords:
        if keyword.arg not in ("static_argnums", "static_argnames"):
            continue
        value = keyword.value
        items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
        for item in items:
            if not isinstance(item, ast.Constant):
                return None
            if keyword.arg == "static_argnums" and type(item.value) is int:
                numbers.add(item.value)
            elif keyword.arg == "static_argnames" and isinstance(item.value, str):
                keywords.add(item.value)
            else:
                return None
    if len(build.args) > 1:
        return None  # a positional option: not read
    return frozenset(numbers), frozenset(keywords)


def forwarded(module: TracedModule, jit_call: JitCall, arg: ast.expr) -> list[tuple[ast.Call, ast.expr, FunctionNode]]:
    """When the argument has the shape of a parameter of the plain function the call sits in
    (`def inference(frames): frames = frames / 255; return apply(params, frames)`): the calls of
    that function in the module, each with what it passes for that parameter, and the function."""
    helper = jit_call.function
    if not isinstance(helper, (ast.FunctionDef, ast.AsyncFunctionDef)) or not jit_signature.plain_function(helper):
        return []
    if id(helper) in module.effects.contexts:
        return []  # traced itself: its callers' values reach the jit through a trace
    scope = module.names.scopes.get(id(helper))
    param = _shape_of_parameter(arg, scope, frozenset(), 0) if scope is not None else None
    if param is None:
        return []
    found = []
    for call in jit_signature.plain_calls(module, helper):
        passed = jit_signature.plain_argument(call, helper, param)
        if passed is not None:
            found.append((call, passed, helper))
    return found


def _shape_of_parameter(expr: ast.expr, scope, rebound: frozenset[str], depth: int) -> str | None:
    """The parameter of the function of `scope` whose shape `expr` has: the parameter itself, a
    name bound once to such a value (`frames = frames.astype(np.float32) / 255`), arithmetic with
    a number, a shape-keeping method or function of one."""
    if depth > 8:
        return None
    if isinstance(expr, ast.Name):
        name = expr.id
        if name in scope.other or name in scope.defs:
            return None
        values = scope.assigned.get(name, [])
        if name in scope.params and (not values or name in rebound):
            return name
        if len(values) == 1 and name not in rebound:
            return _shape_of_parameter(values[0], scope, rebound | {name}, depth + 1)
        return None
    if isinstance(expr, ast.BinOp):
        if _number(expr.right):
            return _shape_of_parameter(expr.left, scope, rebound, depth + 1)
        if _number(expr.left):
            return _shape_of_parameter(expr.right, scope, rebound, depth + 1)
        return None
    if isinstance(expr, ast.UnaryOp):
        return _shape_of_parameter(expr.operand, scope, rebound, depth + 1)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and (
        expr.func.attr in shape_api.SHAPE_PRESERVING_METHODS
    ):
        return _shape_of_parameter(expr.func.value, scope, rebound, depth + 1)
    return None


def _number(expr: ast.expr) -> bool:
    if isinstance(expr, ast.UnaryOp):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and type(expr.value) in (int, float)
