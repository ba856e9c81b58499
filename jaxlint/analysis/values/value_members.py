"""How the value analysis evaluates attributes and subscripts: members of values it knows
(a record's fields, a tuple's items, a module a name holds), the views an array offers, a
reference's loads, and the methods of the module's own classes reached through an instance.

A part of `_FunctionRun` (see `values.py`), as `value_calls.CallEvaluation` is.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from jaxlint.analysis.engine.arguments import named_parameter
from jaxlint.analysis.engine.lattice import (
    MADE_SELF, REF, STATIC, TRACED, TRACED_ARRAY, TRACED_BOOL, TRACED_OR_NONE, UNKNOWN, Trace, Value, named,
    named_of
)
from jaxlint.analysis.knowledge import jax_api
from jaxlint.analysis.knowledge.spellings import canonical
from jaxlint.analysis.tracing.callees import module_callees
from jaxlint.analysis.tracing.linen_classes import LINEN_MODULE, linen_class
from jaxlint.analysis.tracing.tracing import receiver
from jaxlint.analysis.values.array_properties import method_by_name
from jaxlint.analysis.values.pytree_fields import ARRAY_OR_NONE, array_field, array_field_by_name
from jaxlint.analysis.values.records import member_of
from jaxlint.analysis.knowledge.decorators import plain

if TYPE_CHECKING:
    from jaxlint.analysis.values.value_env import Env

_STATIC_TRACE, _TRACED_TRACE = Trace.STATIC, Trace.TRACED  # an enum class's attributes are slow to read
_ARRAY_VIEW_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "at", "H", "flat"})
# What a string key of a traced pytree holds: an array leaf, or a dict whose keys a loop binds.
KEYED_LEAF = Value(Trace.TRACED, array=True, not_none=True, element=UNKNOWN)
_MODULE_APPLY = named("flax.linen.Module.apply")



class MemberEvaluation:
    def _attribute(self, node: ast.Attribute, env: Env) -> Value:
        if self.names.qualname(node, self.scope) is not None:
            return STATIC
        base = self.eval(node.value, env)
        member = member_of(base, node.attr, self.names)
        if member is not None:
            if member.trace is _TRACED_TRACE and member.record is None and not member.array and member.items is None:
                # A traced field whose value shows no structure: what its class declares it.
                return self.analysis.records.declared_field(base.record, node.attr) or member
            return member
        through = named_of(base)
        if through is not None:
            return named(canonical(f"{through}.{node.attr}"))  # `xnp.stack`, `xnp` holding `numpy`
        if node.attr in jax_api.STATIC_ATTRIBUTES:
            return STATIC
        if base.ref and node.attr == "at":
            return REF  # `ref.at[...]` is a view of the same reference, not a load
        if base.traced and node.attr in _ARRAY_VIEW_ATTRIBUTES:
            return Value(Trace.TRACED, array=True, boolean=base.boolean and node.attr != "at", not_none=True)
        if base.traced and base.fields and base.record is None and not node.attr.startswith("_"):
            method = method_by_name(node.attr, self.names)  # not a field: a method or property
            if method is not None:
                return TRACED_ARRAY if method else UNKNOWN
            return TRACED_ARRAY if array_field_by_name(node.attr, self.names) else TRACED
        if base.traced and not self._method_of_self(node):
            # An array has no other data attributes: this is a pytree node, whose fields
            # may be static (dataclass metadata, equinox static fields), unless its class
            # is one of the module's and declares the field an array.
            known = array_field(self.fn, node, self.names, self.analysis.classes)
            if known is None:  # no annotation says the class: the field's name may
                known = array_field_by_name(node.attr, self.names)
            if known is ARRAY_OR_NONE:
                return TRACED_OR_NONE
            return TRACED_ARRAY if known else UNKNOWN
        if isinstance(node.value, (ast.Name, ast.Call, ast.Attribute)):
            # `self.step` (the class's def or a base's), `GATE.apply` after `GATE = Gate(0.5)` (also
            # where the traced code makes the instance), `Ops.step`, `Model(...).step`,
            # `self.model.step`: the def the module's resolver finds, as its decorators make it.
            callees = module_callees(self.names)
            target = callees.denoted(node, self.scope) if node.attr in callees.def_names else None
            if target is not None and getattr(target.function, "name", None) == node.attr:
                by_name = isinstance(node.value, ast.Name)
                through_class = by_name and isinstance(self.names.definition(node.value, self.scope), ast.ClassDef)
                if through_class and target.implicit:
                    return STATIC  # a class method, which binds its class: not followed
                value = self.decorated(target.function)
                if value.function is None or through_class:
                    return value  # through the class, nothing is bound that the call does not pass
                if isinstance(node.value, ast.Attribute):
                    # What an object made in the trace holds was stored there by its own methods,
                    # in the trace too; else what is known of it.
                    holder = self.analysis.values.get(id(node.value.value))
                    instance = MADE_SELF if holder is not None and holder.made_here else base
                elif by_name and node.value.id == receiver(self.names, self.scope):
                    instance = base  # `self`
                else:
                    instance = MADE_SELF if base.made_here else STATIC
                return value.but(function=replace(value.function, method_self=instance))
            if isinstance(node.value, ast.Name) and node.attr == "apply" and self._linen_instance(node.value):
                return _MODULE_APPLY  # `network.apply(params, obs)` runs the model
        return Value(min(base.trace, Trace.UNKNOWN)) if base.trace is not _STATIC_TRACE else STATIC

    def _method_of_self(self, node: ast.Attribute) -> bool:
        """`self.loss(...)` where the class of the method read in, or a base of the module, defines
        `loss`: a method of the instance, not a field, also where the instance is traced (a
        `flax.struct.PyTreeNode` whose jitted method receives it as a pytree)."""
        callees = module_callees(self.names)
        if node.attr not in callees.def_names or node.value.__class__ is not ast.Name:
            return False  # the cheap tests first: this is asked of every field of a traced value
        if node.value.id != receiver(self.names, self.scope):  # type: ignore[attr-defined]
            return False
        target = callees.denoted(node, self.scope)
        return target is not None and getattr(target.function, "name", None) == node.attr

    def _linen_instance(self, name: ast.Name) -> bool:
        """Whether a name is bound once, to an instance of a Flax Linen module class of the module
        or of the project (`network = ActorCritic(n_actions)`, in the scope or one around it), or
        is a parameter declared one (`model: nn.Module`, `model: ActorCritic`)."""
        owner = self.names.lookup(name.id, self.scope)
        if owner is None:
            return False
        if name.id in owner.params:
            rebound = name.id in owner.assigned or name.id in owner.other
            param = named_parameter(owner.node, name.id) if hasattr(owner.node, "args") else None
            return not rebound and param is not None and self._linen_type(param.annotation, owner)
        values = owner.assigned.get(name.id, [])
        if len(values) != 1 or not isinstance(values[0], ast.Call) or name.id in owner.other:
            return False
        return self._linen_type(values[0].func, self.scope, named_class=False)

    def _linen_type(self, expr: ast.expr | None, scope, named_class: bool = True) -> bool:
        """Whether `expr` names a Linen module class (`nn.Module` itself where `named_class`: an
        annotation, not a call that makes an instance of the base)."""
        if not isinstance(expr, (ast.Name, ast.Attribute)):
            return False
        if named_class and self.names.qualname(expr, scope) in LINEN_MODULE:
            return True
        found = self.analysis.records.class_of(expr, scope)  # of this module or of the project
        return found is not None and linen_class(found[1], found[0])

    def _own_method(self, func: ast.expr, name: str):
        """The plain method `name` that the class `func` names (a class of this module) defines itself."""
        cls = self.names.definition(func, self.scope)
        if not isinstance(cls, ast.ClassDef) or id(cls) not in self.names.scopes:
            return None
        method = self.names.scopes[id(cls)].defs.get(name)
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not plain(method, self.names):
            return None
        return method

    def _subscript(self, node: ast.Subscript, env: Env) -> Value:
        base = self.eval(node.value, env)
        index = self.eval(node.slice, env)
        if base.items is not None and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
            i = node.slice.value
            if -len(base.items) <= i < len(base.items):
                return base.items[i]
        if base.entries is not None and isinstance(node.slice, ast.Constant):
            for key, held in base.entries:
                if key == node.slice.value and key.__class__ is node.slice.value.__class__:
                    return held
        if base.ref:  # a load, or a narrower reference through `ref.at[...]`
            view = isinstance(node.value, ast.Attribute) and node.value.attr == "at"
            # A reference takes integers, slices and arrays; a string key picks from a dict of them.
            key = isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)
            return REF if view or key else TRACED_ARRAY
        if base.element is not None and base.element.ref and not isinstance(node.slice, ast.Slice):
            return base.element  # `refs[0]`: one of several references
        if base.traced:
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                # JAX does not index an array by a string: the value is a dict of a pytree. What
                # its key holds is taken for an array leaf, but iterating it binds what is not
                # known: a dict under the key gives its keys.
                return KEYED_LEAF
            if base.array:
                return TRACED_ARRAY if not base.boolean else TRACED_BOOL
            # A list, tuple or dict of a pytree cannot take a tracer as its index or key, nor a
            # multi-dimensional index (`x[:, None]`): indexed by one, the value is an array (or
            # the indexing fails anyway).
            return TRACED_ARRAY if index.traced or _array_index(node.slice) else TRACED
        if index.traced:
            return TRACED_ARRAY
        if base.trace is _STATIC_TRACE and index.trace is _STATIC_TRACE:
            return STATIC
        return UNKNOWN


def _array_index(index: ast.expr) -> bool:
    """A multi-dimensional index only arrays take: a tuple holding a slice, None or `...`."""
    return isinstance(index, ast.Tuple) and any(
        isinstance(e, ast.Slice) or isinstance(e, ast.Constant) and (e.value is None or e.value is Ellipsis)
        for e in index.elts
    )
