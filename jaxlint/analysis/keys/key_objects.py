"""Values with a key's name that are not JAX keys: objects that keep a generator's state.

A JAX key is an immutable array: a traced one takes no attribute, and no draw reads one a
concrete one was given.  A value that has an attribute assigned (`rng._state = s`) or read that
no JAX array has (`rng._state`, `rng.normal(...)`, `rng.integers(...)`) is some other object,
whatever its name: a generator that advances its own state on every draw (a GalSim-style
deviate, a NumPy `Generator`, a Haiku `PRNGSequence`).  Handing such an object on twice draws
different numbers.
"""

from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.analysis.engine.names import Names

# The public attributes of a JAX array, a typed key (`jax.random.key`) and a raw key
# (`jax.random.PRNGKey`), as JAX 0.10.2 lists them (`dir`) on the CPU builds for Python 3.11 and
# 3.13; tests/test_keys.py checks that the installed JAX has none beyond them.
ARRAY_ATTRIBUTES = frozenset({
    "T", "addressable_data", "addressable_shards", "all", "any", "argmax", "argmin", "argpartition",
    "argsort", "astype", "at", "aval", "block_until_ready", "byteswap", "choose", "clip", "clone",
    "committed", "compress", "conj", "conjugate", "copy", "copy_to_host_async", "cumprod", "cumsum",
    "delete", "device", "device_buffer", "device_buffers", "devices", "diagonal", "dot", "dtype",
    "flat", "flatten", "format", "global_shards", "imag", "is_deleted", "is_fully_addressable",
    "is_fully_replicated", "is_ready", "item", "itemsize", "mT", "max", "mean", "min", "nbytes",
    "ndim", "nonzero", "on_device_size_in_bytes", "platform", "pprint", "prod", "ptp", "ravel",
    "real", "repeat", "reshape", "round", "searchsorted", "shape", "sharding", "size", "sort",
    "squeeze", "std", "sum", "swapaxes", "take", "to_device", "tobytes", "tolist", "trace",
    "traceback", "transpose", "unsafe_buffer_pointer", "unsafe_raw_buffer", "var", "view", "weak_type",
})


def object_uses(attributes: Iterable[ast.AST]) -> set[str]:
    """The names among these attribute nodes' bases that are used as objects no JAX array is:
    assigned an attribute (`rng._state = s`, `del rng.x`) or read one no array has."""
    found = set()
    for node in attributes:
        value = node.value  # type: ignore[attr-defined]
        if value.__class__ is not ast.Name:
            continue
        attr = node.attr  # type: ignore[attr-defined]
        if node.ctx.__class__ is not ast.Load or (  # type: ignore[attr-defined]
            attr not in ARRAY_ATTRIBUTES and not (attr.startswith("__") and attr.endswith("__"))
        ):
            found.add(value.id)
    return found


def constructor(func: ast.AST, names: Names) -> ast.FunctionDef | None:
    """The `__init__` a call of a class of this module runs (`Deviate(rng)`), when the class writes one."""
    cls = names.definition(func)
    if not isinstance(cls, ast.ClassDef):
        return None
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__":
            return stmt
    return None
