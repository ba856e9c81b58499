"""A dict built in traced code from a literal with constant keys knows what each key holds: the
Python config next to the arrays (`{"w": x, "n": 3}["n"]`) is a Python int, usable as a loop
bound or a shape; the array under another key stays traced, and so does a key a store or a
method (`update`) gives a traced value. Each framework's code running the helper, the dict built
in the same module or another one; JAX agrees on each."""

from __future__ import annotations

from module_matrix import helper_matrix, matrix_tests

TRACED_ENTRY = """
def settings(x):
    return {"w": x, "n": 2, "mode": "train"}


def scaled(x):
    cfg = settings(x)
    cfg["n"] = cfg["w"].sum()
    if cfg["n"] > 0:  # JAX101
        return x * 0.5
    return x
"""

PYTHON_ENTRY = """
def settings(x):
    return {"w": x, "n": 2, "mode": "train"}


def scaled(x):
    cfg = settings(x)
    for _ in range(cfg["n"]):
        x = x * 0.5
    if cfg["mode"] == "train":
        x = x + jnp.zeros(cfg["n"] + 1).sum()
    return x + cfg["w"] * 0.0
"""

(test_dict_entries_across_frameworks_and_modules, test_jax_agrees_on_dict_entries) = matrix_tests(
    helper_matrix("scaled", TRACED_ENTRY, PYTHON_ENTRY, "TracerBoolConversionError")
)
