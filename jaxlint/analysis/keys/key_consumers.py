"""Calls outside `jax.random` known to draw from a key they are handed (`random_api`'s tables):
an Equinox layer's `key=`, Flax NNX's `Rngs(key)`, a distribution's `sample(seed=key)`, an
initialiser called with `(key, shape)`, a module's `init(key, inputs)`. Handing a key-named value
to one is evidence, in a module that never calls `jax.random`, that the value is a PRNG key."""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.knowledge import random_api as api


def handed_keys(call: ast.Call, names: Names) -> list[ast.expr]:
    """The arguments a call of a known key consumer takes as keys."""
    func = call.func
    qualname = api.public(names.qualname(func)) or ""
    found: list[ast.expr] = []
    if qualname.startswith(api.KEY_TAKING_PACKAGES) or (
        isinstance(func, ast.Attribute) and func.attr in api.SAMPLE_METHODS
    ):
        found.extend(k.value for k in call.keywords if k.arg in api.KEY_KEYWORDS)
    if call.args and (
        qualname in api.KEY_HOLDERS
        or isinstance(func, ast.Attribute) and func.attr in api.MODULE_INITS
        or isinstance(func, ast.Call) and (api.public(names.qualname(func.func)) or "").startswith(api.INITIALIZER_PACKAGES)
    ):
        found.append(call.args[0])
    if isinstance(func, ast.Attribute) and func.attr in api.MODULE_RUNS:
        for keyword in call.keywords:  # a Flax run draws from the keys its `rngs=` names
            if keyword.arg == "rngs":
                value = keyword.value
                found.extend(value.values if isinstance(value, ast.Dict) else [value])
    return found
