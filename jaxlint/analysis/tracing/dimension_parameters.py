"""The parameters a function uses as dimensions: passed as received, alone or as an entry of a
tuple or list written out, where an array is given its shape (`jnp.zeros((n, d))`,
`jnp.tile(x, [num_samples, 1])`, `np.zeros(shape=(b, features))`, `range(n)`). JAX needs a
Python value there while tracing, so code that runs is given one: the parameter is evidence
of a Python number, whatever the framework that calls the function traces."""

from __future__ import annotations

import ast
from weakref import WeakKeyDictionary

from jaxlint.analysis.engine.names import FunctionNode, Names
from jaxlint.analysis.engine.walk import own_nodes
from jaxlint.analysis.knowledge.shape_api import CONCRETE_ARGUMENTS, SHAPE

_FOUND: "WeakKeyDictionary[Names, dict[int, frozenset[str]]]" = WeakKeyDictionary()


def dimension_parameters(fn: FunctionNode, names: Names) -> frozenset[str]:
    """The parameters of `fn`, never rebound in it, that it uses as dimensions (computed once per function)."""
    table = _FOUND.setdefault(names, {})
    found = table.get(id(fn))
    if found is None:
        found = table[id(fn)] = _dimensions(fn, names)
    return found


def _dimensions(fn: FunctionNode, names: Names) -> frozenset[str]:
    scope = names.scopes.get(id(fn))
    if scope is None:
        return frozenset()
    params = scope.params - set(scope.assigned) - scope.other
    if not params:
        return frozenset()
    found: set[str] = set()
    for node in own_nodes(fn):
        if node.__class__ is not ast.Call:
            continue
        for arg in _shape_arguments(node, names):
            entries = arg.elts if isinstance(arg, (ast.Tuple, ast.List)) else [arg]
            found.update(e.id for e in entries if isinstance(e, ast.Name) and e.id in params)
    return frozenset(found)


def _shape_arguments(call: ast.Call, names: Names) -> list[ast.expr]:
    """The arguments of a call that give an array its shape (or `range` its bounds)."""
    qualname = names.qualname(call.func)
    if qualname == "builtins.range":
        return list(call.args)
    if qualname is not None and qualname.startswith("numpy."):
        qualname = "jax." + qualname  # NumPy's constructors take their shapes where jax.numpy's do
    spec = CONCRETE_ARGUMENTS.get(qualname or "")
    if spec is None or any(isinstance(a, ast.Starred) for a in call.args):
        return []
    keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
    out = []
    for index, keyword, kind in spec:
        if kind != SHAPE:
            continue
        if index is not None and index < len(call.args):
            out.append(call.args[index])
        elif keyword in keywords:
            out.append(keywords[keyword])
    return out
