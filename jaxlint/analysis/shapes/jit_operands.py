"""Arguments a call hands a jitted function's traced parameters that JAX cannot make an array of.

`jax.jit` (and `jax.pmap`) turn every argument that is not static into an abstract array, leaf
by leaf; a string, bytes or a function is no valid JAX type, so the call raises `TypeError`
before anything is traced. The evidence is the calling code itself: a literal, or a name the
caller's scope binds only to literals.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jaxlint.analysis.shapes import jit_signature


@dataclass(frozen=True)
class NonArrayArgument:
    node: ast.expr  # the argument, where the call passes it
    param: str
    what: str  # "a string", as a message says it
    function: str  # the jitted function, as a message names it


def non_array_arguments(module) -> list[NonArrayArgument]:
    """Arguments of visible calls of plain jits (the jit right around the function, its static
    options literal) that no array can be made of, passed to a parameter that is not static."""
    plain = {id(root) for root in jit_signature.plain_jits(module) if not root.filtering}
    found: list[NonArrayArgument] = []
    for site in module.call_sites:
        root = site.target
        if id(root) not in plain or not _literal_options(root) or not _plain_receiver(site.call):
            continue
        static = jit_signature.designated(root, "static")
        sig = jit_signature.signature(root)
        for param in (*sig.positional, *sig.keyword_only):
            if param in static:
                continue
            arg = site.argument(param)
            what = _not_an_array(arg, module) if arg is not None else None
            if what:
                found.append(NonArrayArgument(arg, param, what, jit_signature.function_label(root.node)))
    return found


def _literal_options(root) -> bool:
    return all(
        jit_signature.option_is_literal(root, option)
        for option in ("static_argnums", "static_argnames", "static_broadcasted_argnums")
    )


def _plain_receiver(call: ast.Call) -> bool:
    """A call through a name, a jit applied in place, or a method of `self`: what the call
    reaches is the jitted function itself, not a same-named method of another object."""
    func = call.func
    return not isinstance(func, ast.Attribute) or (isinstance(func.value, ast.Name) and func.value.id == "self")


def _not_an_array(arg: ast.expr, module, depth: int = 0) -> str | None:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return "a string"
    if isinstance(arg, ast.Constant) and isinstance(arg.value, bytes):
        return "bytes"
    if isinstance(arg, ast.JoinedStr):
        return "a string"
    if isinstance(arg, ast.Lambda):
        return "a function"
    if isinstance(arg, ast.Name) and depth < 3:
        scope = module.names.read_scope.get(id(arg))
        owner = module.names.lookup(arg.id, scope) if scope is not None else None
        if owner is None or arg.id in owner.params or arg.id in owner.other or arg.id in owner.defs:
            return None
        values = module.names.assignments(arg, scope)
        kinds = [_not_an_array(value, module, depth + 1) for value in values]
        if kinds and all(kind == kinds[0] for kind in kinds):
            return kinds[0]
    return None
