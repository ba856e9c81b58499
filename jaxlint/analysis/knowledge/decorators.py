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
