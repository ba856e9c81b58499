"""Pytree classes of the modelled libraries that traced code receives, declared as their libraries
declare their fields: read as a class of the project is (which fields are traced leaves, which
static), without reading the library. Flax's `TrainState` is a `struct.PyTreeNode`: `step`, an
int or an int array, is a leaf, so under a transformation it is a traced scalar
(`if state.step % 100 == 0:` fails); `apply_fn` and `tx` are static. A static field annotated
with a callable the analysis knows (`jax_api.MODULE_APPLIES`) holds that callable."""

from __future__ import annotations

import ast
from typing import Optional, Tuple

from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.knowledge.spellings import SPELLING

# By qualified name: the class's field declarations, as a module of their own.
_DECLARED = {
    "flax.training.train_state.TrainState": """
import typing
import flax.linen
import flax.struct
import jax


@flax.struct.dataclass
class TrainState:
    step: jax.Array  # an int or an int array: a leaf, traced as a scalar array
    # Static; it holds the model's `apply` (`TrainState.create(apply_fn=model.apply, ...)`).
    apply_fn: flax.linen.Module.apply = flax.struct.field(pytree_node=False)
    params: typing.Any = flax.struct.field(pytree_node=True)
    tx: typing.Any = flax.struct.field(pytree_node=False)
    opt_state: typing.Any = flax.struct.field(pytree_node=True)
""",
}

_READ: dict[str, Tuple[Names, ast.ClassDef]] = {}  # kept for the run: analyses key nodes by id


def library_class(qualname: str | None) -> Optional[Tuple[Names, ast.ClassDef]]:
    """The names and class statement that declare the library class `qualname`, if it is one."""
    declared = _DECLARED.get(qualname) if qualname is not None else None
    if declared is None:
        return None
    if qualname not in _READ:
        tree = ast.parse(declared)
        names = Names(tree, None, SPELLING)
        _READ[qualname] = (names, next(s for s in tree.body if isinstance(s, ast.ClassDef)))
    return _READ[qualname]
