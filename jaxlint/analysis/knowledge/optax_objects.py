"""Optax objects the module builds: transformations made by Optax's public factories and the
states their `init` returns.

A transformation (`optax.adam(1e-3)`, `optax.contrib.muon(...)`, `optax.chain(...)`) is a
NamedTuple of fresh closures: equal only to itself. Its `init(params)` returns the optimizer
state, a pytree of arrays (moments, counts) that cannot be hashed.
"""

from __future__ import annotations

import ast


def optax_factory(name: str | None) -> bool:
    """`optax.adam`, `optax.contrib.muon`: a public factory of transformations (not a private
    helper, nor the `GradientTransformation` classes a user builds one with)."""
    if not name or not name.startswith("optax."):
        return False
    parts = name.split(".")
    return not any(p.startswith("_") for p in parts) and parts[-1][:1].islower()


def optax_transformation(module, receiver: ast.AST) -> bool:
    """A name every assignment of which calls an Optax factory (`tx = optax.adam(1e-3)`)."""
    if not isinstance(receiver, ast.Name):
        return False
    values = module.names.assignments(receiver)
    return bool(values) and all(isinstance(v, ast.Call) and optax_factory(module.qualname(v.func)) for v in values)


def optax_state(module, expr: ast.AST) -> bool:
    """`tx.init(params)` of such a transformation: an optimizer state, a pytree of arrays."""
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr == "init"
        and optax_transformation(module, expr.func.value)
    )
