"""The arguments of a call that JAX needs concrete while tracing (a shape, a static slice's start,
an axis, a diagonal's offset, a loop's length, a flag or a filter), each with its kind, read
against `shape_api.CONCRETE_ARGUMENTS`. An array method counts when the value analysis knows
its receiver is a traced array.

`module` is the module's facts: qualified names and the values of traced code.
"""

from __future__ import annotations

import ast

from jaxlint.analysis.arrays.arrays import is_at_index
from jaxlint.analysis.knowledge import shape_api


def concrete_arguments(module, call: ast.Call):
    """The arguments of a call that JAX needs concrete, each with its kind and the parameter it binds."""
    name = module.qualname(call.func)
    args = call.args
    if name is None and isinstance(call.func, ast.Attribute) and not is_at_index(call.func.value):
        # (`x.at[i].min(v)` is an update taking values, not a method of the array.)
        receiver = module.value(call.func.value)
        if call.func.attr in shape_api.SHAPE_METHODS and receiver is not None and receiver.traced:
            # `x.reshape(n, -1)`: every positional argument is a dimension.
            for arg in args:
                yield arg, shape_api.SHAPE, "shape"
            return
        if receiver is not None and receiver.traced and receiver.array:
            name, args = "jax.Array." + call.func.attr, [call.func.value, *args]
    if name not in shape_api.CONCRETE_ARGUMENTS:
        return
    keywords = {k.arg: k.value for k in call.keywords}
    if name in shape_api.SIZED_BY and shape_api.SIZED_BY[name] in keywords:
        return
    # Past a `*args`, positions are unknown.
    starred = [i for i, arg in enumerate(args) if isinstance(arg, ast.Starred)]
    known = args[: starred[0]] if starred else args
    for index, keyword, kind in shape_api.CONCRETE_ARGUMENTS[name]:
        if index is not None and index < len(known):
            yield known[index], kind, keyword
        elif keyword in keywords:
            yield keywords[keyword], kind, keyword
