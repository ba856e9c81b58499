"""Stores into traced values, and what shows the value stored into to be a JAX array: an index
only an array takes, a traced index (which no Python container takes either), a use in its
function only an array allows; or, the other way, an `isinstance` test that rules a JAX array
out where the store is. The purity rules read these for item assignment in traced code.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jaxlint.analysis.engine.walk import children
from jaxlint.analysis.knowledge import array_api
from jaxlint.analysis.tracing import type_tests

if TYPE_CHECKING:
    from jaxlint.analysis.effects.effects import Effects
    from jaxlint.analysis.project.traced_module import TracedModule


class TracedStores:
    def __init__(self, module: TracedModule, effects: Effects):
        self.module = module
        self.effects = effects  # where names are rebound
        self.names = module.names
        self._used_as_array: dict[tuple[int, str], bool] = {}
        self._parent_maps: dict[int, dict[int, ast.AST]] = {}

    def indexed_like_array(self, target: ast.Subscript) -> bool:
        """A store into a traced value with an index only an array accepts: a slice among several axes (`x[:, 0]`), an ellipsis, or a traced index array
        (a dict may have tuple keys, a list takes `x[1:3]`)."""
        module = self.module
        if not module.is_traced(target.value):
            return False
        index = target.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        return any(
            isinstance(part, ast.Slice)
            and isinstance(index, ast.Tuple)  # `x[1:3]` could be a list
            or isinstance(part, ast.Constant) and part.value is Ellipsis
            or module.is_abstract_array(part)
            for part in parts
        )

    def traced_key(self, target: ast.Subscript) -> bool:
        """A store into a traced value under an index that is itself one abstract tracer: it fails
        whatever the value is (an array is immutable, a list cannot take a tracer as an index,
        a dict cannot hash one)."""
        return self.module.is_traced(target.value) and any(
            value.items is None and value.element is None for value in self._abstract_parts(target)
        )

    def traced_mask(self, target: ast.Subscript) -> bool:
        """A store into any value under a traced boolean mask (`rewards[terminated] = 0`): it fails
        whatever the value is (a JAX array is immutable, NumPy cannot read a tracer, a list or
        dict cannot take one, and no reference takes a boolean mask)."""
        return any(value.boolean and value.items is None and value.element is None for value in self._abstract_parts(target))

    def _abstract_parts(self, target: ast.Subscript):
        """The values of the parts of a store's index that are abstract tracers."""
        module = self.module
        index = target.slice
        for part in index.elts if isinstance(index, ast.Tuple) else [index]:
            value = module.value(part)
            if value is not None and module.is_abstract(part):
                yield value

    def excluded_by_test(self, name: ast.Name) -> bool:
        """Whether `name` is read where an `isinstance` test showed it not to be a JAX array
        (`type_tests.excluded_by_test`)."""
        scope = self.names.read_scope.get(id(name))
        if scope is None or scope.kind != "function":
            return False
        return type_tests.excluded_by_test(scope.node, name, name.id, self.names, scope)

    def used_as_array(self, name: ast.Name) -> bool:
        """A traced parameter that its function also uses as only an array can be used
        (`x.shape`, `x.at[...]`, `x @ w`, `x.reshape(...)`, `jnp.sum(x)`): not a list or dict."""
        module = self.module
        if not module.is_traced(name):
            return False
        scope = self.names.read_scope.get(id(name))
        if scope is None or scope.kind != "function" or name.id not in scope.params:
            return False
        fn = scope.node
        if self._rebound(fn, name.id):
            return False
        key = (id(fn), name.id)
        known = self._used_as_array.get(key)
        if known is not None:
            return known
        parents = self._parents(fn)
        result = False
        for node in module.body(fn):
            if not (isinstance(node, ast.Name) and node.id == name.id and isinstance(node.ctx, ast.Load)):
                continue
            parent = parents.get(id(node))
            if isinstance(parent, ast.Attribute) and parent.attr in array_api.ARRAY_ONLY_ATTRIBUTES:
                result = True
            elif isinstance(parent, ast.BinOp) and not isinstance(parent.op, (ast.Add, ast.Mult, ast.Mod)):
                result = True
            elif isinstance(parent, ast.Call) and parent.args and parent.args[0] is node:
                callee = module.qualname(parent.func)
                result = array_api.array_function(callee) and callee not in array_api.SEQUENCE_FIRST_ARGUMENT
            if result:
                break
        self._used_as_array[key] = result
        return result

    def _rebound(self, fn, name: str) -> bool:
        return any(s.target.id == name for s in self.effects.name_stores(fn))

    def _parents(self, fn) -> dict[int, ast.AST]:
        cached = self._parent_maps.get(id(fn))
        if cached is None:
            cached = {}
            for node in self.module.body(fn):
                for child in children(node):
                    cached[id(child)] = node
            self._parent_maps[id(fn)] = cached
        return cached
