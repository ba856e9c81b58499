"""Functions of the module that transform what their callers pass them: `def compile(f):
return jax.jit(f, donate_argnums=0)` makes `compile(step)` a jit of `step`.

A plain function that hands one of its own parameters, unchanged, to a transformation or a
kernel call is a wrapper of it. At every call of the wrapper in the module, what the call
passes for that parameter is transformed, with the transformation's keywords as written in the
wrapper plus those the call passes through its `**kwargs`. Where arguments reach the
transformation through `*args`, or keywords come from elsewhere, what it is given is not known
and the call is left alone.
"""

from __future__ import annotations

import ast
from typing import Iterator

from jaxlint.analysis.engine.names import Names, Scope
from jaxlint.analysis.tracing.static_arguments import positional_params


def own_parameter(passed: ast.AST, scope: Scope | None) -> int | str | None:
    """For a plain function handing its own parameter to a transformation: the parameter's
    position (its name, for a keyword-only one)."""
    fn = scope.node if scope is not None else None
    if not isinstance(passed, ast.Name) or not isinstance(fn, ast.FunctionDef) or fn.decorator_list:
        return None
    if passed.id not in scope.params or passed.id in scope.assigned or passed.id in scope.other:
        return None  # rebound: no longer what the caller passed
    positional = [p.arg for p in positional_params(fn)]
    return positional.index(passed.id) if passed.id in positional else passed.id


def wrapper_calls(names: Names, wrappers: dict) -> Iterator[tuple]:
    """(call of a wrapper, its scope, what it passes, the transformation's name, the wrapper's
    call of it, its keywords) for every call of a wrapper of the module."""
    for call, scope in names.calls:
        if not isinstance(call.func, ast.Name):
            continue
        wrapper = names.definition(call.func, scope)
        entries = wrappers.get(id(wrapper), ()) if wrapper is not None else ()
        if not entries or names.unreached(call, scope):
            continue
        for parameter, callee, inner in entries:
            if isinstance(parameter, int):
                passed = call.args[parameter] if parameter < len(call.args) else None
                if any(isinstance(a, ast.Starred) for a in call.args[: parameter + 1]):
                    passed = None
                name = positional_params(wrapper)[parameter].arg
            else:
                passed, name = None, parameter
            passed = next((k.value for k in call.keywords if k.arg == name), passed)
            keywords = _forwarded_keywords(wrapper, inner, call)
            if passed is not None and keywords is not None:
                yield call, scope, passed, callee, inner, keywords


def _forwarded_keywords(wrapper: ast.FunctionDef, inner: ast.Call, call: ast.Call) -> dict[str, ast.expr] | None:
    """The keywords the wrapper's transformation gets at this call: its own, and those of the
    call that `**kwargs` forwards (`def maybe_jit(fn, **kwargs): return jax.jit(fn, **kwargs)`,
    called with `static_argnums=...`); None when what reaches it is not known."""
    own = {k.arg: k.value for k in inner.keywords if k.arg}
    spread = [k.value for k in inner.keywords if k.arg is None]
    kwarg = wrapper.args.kwarg.arg if wrapper.args.kwarg is not None else None
    if any(isinstance(a, ast.Starred) for a in inner.args[1:]) and len(call.args) > len(positional_params(wrapper)):
        return None
    if not spread:
        return own
    if len(spread) != 1 or not (isinstance(spread[0], ast.Name) and spread[0].id == kwarg):
        return None
    named = {p.arg for p in (*positional_params(wrapper), *wrapper.args.kwonlyargs)}
    return {**own, **{k.arg: k.value for k in call.keywords if k.arg and k.arg not in named}}
