"""Items of a mapping or sequence declared to hold JAX arrays (`Dict[str, jax.Array]`, through a
name the module binds once to that type, `list[jax.Array]`) are JAX arrays: item assignment on
one raises (JAX401). An item replaced by something else (`tokens["mask"] = {}`) is no longer
known to be one. Each framework's code running the helper, in the same module or another one;
JAX agrees on each."""

from __future__ import annotations

from module_matrix import helper_matrix, matrix_tests

DECLARED = """
from typing import Dict

ArrayDict = Dict[str, jax.Array]


def first_zeroed(tokens: ArrayDict):
    mask = tokens["mask"]
    mask[..., 0] = 0.0  # JAX401
    return mask


def zeroed(x):
    return first_zeroed({"mask": x})
"""

REPLACED = """
from typing import Dict

ArrayDict = Dict[str, jax.Array]


def first_zeroed(tokens: ArrayDict):
    mask = tokens["mask"]
    tokens["mask"] = {}
    tokens["mask"]["first"] = mask
    return jnp.concatenate([jnp.zeros_like(mask[..., :1]), mask[..., 1:]], axis=-1)


def zeroed(x):
    return first_zeroed({"mask": x})
"""

(test_declared_containers_across_frameworks_and_modules, test_jax_refuses_item_assignment_on_their_items) = (
    matrix_tests(helper_matrix("zeroed", DECLARED, REPLACED, "TypeError"))
)
