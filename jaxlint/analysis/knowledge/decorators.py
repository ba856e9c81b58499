"""Decorators that leave a function's calls as they were: they return the function, or a wrapper
that calls it with the same arguments and returns its result (runtime type checkers, typing
markers). A function so decorated is followed as if it had no decorator."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.names import Names, Scope

TRANSPARENT_DECORATORS = frozenset({
    "typing.override", "typing_extensions.override", "typing.final", "typing_extensions.final",
    "typing.no_type_check",
    "builtins.staticmethod",  # read through its class or an instance, the function itself
    "typeguard.typechecked", "beartype.beartype", "jaxtyping.jaxtyped",
    "kauldron.typing.typechecked", "kauldron.ktyping.typechecked",
})


def transparent(decorator: ast.expr, names: Names, scope: Scope | None) -> bool:
    """`@typechecked`, or a call configuring one (`@jaxtyped(typechecker=beartype)`)."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return names.qualname(target, scope) in TRANSPARENT_DECORATORS


def runs_as_written(function: ast.AST, names: Names) -> bool:
    """Whether calling a def runs its body as written, binding as its signature says: each of its
    decorators leaves calls as they were (`transparent`) or is `classmethod` (which binds the
    class, as a method's receiver is bound)."""
    return _decorated_only_by(function, names, with_binding="builtins.classmethod")


def plain(function: ast.AST, names: Names) -> bool:
    """Whether a def is called as written and bound as an undecorated def is: none of its
    decorators changes what a call does or binds (`transparent` ones, `staticmethod` aside)."""
    return _decorated_only_by(function, names, without="builtins.staticmethod")


def _decorated_only_by(function: ast.AST, names: Names, with_binding: str = "", without: str = "") -> bool:
    """Every decorator of the def is `transparent` (but `without`), or is `with_binding`."""
    decorators = getattr(function, "decorator_list", ())
    if not decorators:
        return True
    scope = names.enclosing_scope(function)
    for decorator in decorators:
        qualname = names.qualname(decorator.func if isinstance(decorator, ast.Call) else decorator, scope)
        if qualname == with_binding or qualname in TRANSPARENT_DECORATORS and qualname != without:
            continue
        return False
    return True
