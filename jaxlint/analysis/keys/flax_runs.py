"""Calls that run a Flax Linen module with a PRNG key, and which module they run.

Flax never draws from the key it is given (`m.init(key, x)`, `m.apply(v, x, rngs={"dropout":
key})`): every `make_rng` folds a SHA-1 hash of the calling module's path and a per-call
counter into it (`flax.core.scope.LazyRng`). So one key handed to two runs draws the same
numbers only where the same layer, at the same path, draws in both: two runs of one module.
Runs of different modules, and the key's own draws, splits and `fold_in`s, stay independent.
Two `init`s of one module with one key build the same parameters twice: a copy, which is how a
target network starts.

Evidence that a call runs a Flax Linen module: the `rngs=` keyword (Linen's; Haiku takes its
key positionally), or `init` / `init_with_output` of a module the same function runs with
`rngs=`, of a name declared as a `flax.linen.Module` (a parameter's annotation), or of one bound
to an instance of a class of this module deriving from one.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.knowledge.random_api import MODULE_INITS

_RUNS = MODULE_INITS | {"apply"}
_LINEN_MODULE = frozenset({"flax.linen.Module", "flax.linen.module.Module"})
_DEPTH = 4  # how many module classes a base chain is followed through


@dataclass(frozen=True)
class FlaxRun:
    """One call running a Flax Linen module."""

    module: str  # the module expression as written (`critic_def`, `self.model`)
    init: bool  # `init` / `init_with_output`: builds parameters
    keys: tuple[ast.expr, ...]  # the argument expressions that carry its keys


def flax_run(call: ast.Call, names: Names, linen: frozenset[str] = frozenset()) -> FlaxRun | None:
    """The Flax run a call makes, if the syntax shows one; `linen`: the modules (as written) that
    the function runs with `rngs=` elsewhere (`linen_receivers`)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in _RUNS:
        return None
    init = func.attr in MODULE_INITS
    module = ast.unparse(func.value)
    for keyword in call.keywords:
        if keyword.arg == "rngs":
            return FlaxRun(module, init, (keyword.value,))
    if not init or not call.args or not (module in linen or _linen_module(func.value, names)):
        return None
    first = call.args[0]
    return FlaxRun(module, init, (first.value if isinstance(first, ast.Starred) else first,))


def linen_receivers(fn: ast.AST) -> frozenset[str]:
    """The modules (as written) a function runs with the `rngs=` keyword: Flax Linen modules,
    whose `init` is Flax's too."""
    return frozenset(
        ast.unparse(node.func.value)
        for node in ast.walk(fn)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _RUNS
        and any(k.arg == "rngs" for k in node.keywords)
    )


def _linen_module(expr: ast.expr, names: Names) -> bool:
    """Whether a name is declared as, or bound only to instances of, a Flax Linen module."""
    if not isinstance(expr, ast.Name):
        return False
    scope = names.read_scope.get(id(expr), names.module)
    owner = names.lookup(expr.id, scope)
    if owner is None:
        return False
    if expr.id in owner.params:
        args = getattr(owner.node, "args", None)
        declared = [a.annotation for a in _all_args(args) if a.arg == expr.id] if args is not None else []
        return any(a is not None and names.qualname(a, owner) in _LINEN_MODULE for a in declared)
    values = owner.assigned.get(expr.id, [])
    return bool(values) and all(
        isinstance(v, ast.Call) and _linen_class(names.definition(v.func, owner), names, _DEPTH) for v in values
    )


def _linen_class(cls: ast.AST | None, names: Names, depth: int) -> bool:
    if not isinstance(cls, ast.ClassDef) or depth <= 0:
        return False
    scope = names.scopes[id(cls)].parent or names.module
    return any(
        names.qualname(base, scope) in _LINEN_MODULE or _linen_class(names.definition(base, scope), names, depth - 1)
        for base in cls.bases
    )


def _all_args(args: ast.arguments) -> list[ast.arg]:
    return [*args.posonlyargs, *args.args, *args.kwonlyargs]
