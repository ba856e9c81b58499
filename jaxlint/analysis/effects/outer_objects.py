"""Where an object that traced code writes to lives: outside the traced code or not, and of what kind.

A part of `Effects` (see `effects.py`): the purity rules ask whether a store's object is a
module global, a closure variable of an eager function or the Python `self` of a jitted
method (also through a local name bound only to a part of one: `env = self.env`); whether the
module itself made it as a container or an instance (not a parameter,
not a library object); and whether it is a Flax NNX object.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jaxlint.analysis.engine.names import FunctionNode, Scope
from jaxlint.analysis.tracing.callees import module_callees
from jaxlint.analysis.engine.walk import own_nodes, own_statements, walk
from jaxlint.analysis.knowledge import array_api, jax_api
from jaxlint.analysis.tracing.tracing import first_param


@dataclass(frozen=True)
class OuterObject:
    """The object a write mutates, when it lives outside the traced code."""

    root: ast.Name
    where: str  # "module" | "closure" | "self"
    alias: str = ""  # the local name the write goes through, bound to a part of the object


class OuterObjects:
    """Questions about the object a write mutates."""

    # ---- where a written object lives ---------------------------------------------------------
    def outer_object(self, target: ast.expr, function: FunctionNode) -> OuterObject | None:
        """The object `target` (`a.b[c]`, `a.d`) belongs to, when it lives outside the traced code."""
        root = target
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        if not isinstance(root, ast.Name) or target is root:
            return None
        scope = self.names.read_scope.get(id(root))
        if scope is None:
            return None
        owner = self.names.lookup(root.id, scope)
        if owner is None:
            return None
        if owner.kind == "module":
            if root.id in owner.imports:
                return None  # a module attribute: configuration, not data
            return OuterObject(root, "module")
        node = owner.node
        if id(node) in self.contexts:
            # The function itself, or a traced one around it (a body it hands to `jax.vmap`).
            if self._outer_self(root, node):
                return OuterObject(root, "self")
            return self._aliased(root, owner, node)
        if owner.kind == "function":
            return OuterObject(root, "closure")
        return None

    def _aliased(self, root: ast.Name, owner: Scope, function: FunctionNode) -> OuterObject | None:
        """The outer object a local name of `function` stands for when every binding of it reads a
        part of one (`env = self.env`): a write through the name mutates that object."""
        values = owner.assigned.get(root.id, [])
        if not values or root.id in owner.params or root.id in owner.other:
            return None
        found = [
            self.outer_object(v, function)
            if isinstance(v, (ast.Attribute, ast.Subscript)) and not _reads(v, root.id) else None
            for v in values
        ]
        if not all(found):
            return None
        return OuterObject(found[0].root, found[0].where, found[0].alias or root.id)

    def restored(self, stmt: ast.stmt, target: ast.expr) -> bool:
        """The write `stmt` makes to `target` is undone when the code leaves: a `try` around it
        whose `finally` writes the same attribute (or constant key) back from a saved name
        (`old = env.sys; try: env.sys = new; ... finally: env.sys = old`); or it is that
        write back itself."""
        last = _last_part(target)
        if last is None:
            return False
        node: ast.AST = stmt
        parents = self.names.parents
        while id(node) in parents:
            parent = parents[id(node)]
            if isinstance(parent, _TRIES):
                if node in parent.finalbody:
                    saved = isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name)
                    written = saved and _writes(parent.body, last)
                else:
                    written = _writes(parent.finalbody, last, saved=True)
                if written:
                    return True
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return False
            node = parent
        return False

    def _outer_self(self, root: ast.Name, function: FunctionNode) -> bool:
        """`self` of a traced method is the Python object itself (static, bound, or the called instance)."""
        cls = self.names.parent_class.get(id(function))
        if cls is None or first_param(function) != root.id or self.is_framework_class(cls):
            return False
        value = self.module.value(root)
        if value is not None:
            return not value.traced and not value.made_here  # an object made in the trace stays there
        root_fn = self.roots.get(id(function))
        return root_fn is not None and (root_fn.bound_positional > 0 or root.id in root_fn.static_params)

    def mutable_origin(self, outer: OuterObject) -> bool:
        """The outer object is a container or an instance the module itself creates
        (`captured = []`, `cache = {}`, `stats = Stats()`), not a parameter or something
        from elsewhere (a Pallas reference, a library object with its own semantics)."""
        if outer.where == "self":
            return True
        root = outer.root
        values = self.names.assignments(root)
        if not values:
            return False
        scope = self.names.read_scope.get(id(root))
        owner = self.names.lookup(root.id, scope) if scope is not None else None
        if owner is None or root.id in owner.params:
            return False
        return all(self._created_here(v, owner) for v in values)

    def enclosing_parameter(self, outer: OuterObject, function: FunctionNode) -> bool:
        """The outer object is a parameter of the eager function that a jitted function is
        nested in (`def foo(tot): @jax.jit def f(x): tot[0] += x`): whatever the caller passed,
        a tracer stored into it outlives the trace. (A body handed to a `lax` loop is left out:
        the function around it may be a Pallas kernel writing through its references.)"""
        root = self.roots.get(id(function))
        if outer.where != "closure" or root is None or not any(
            t.name in jax_api.STAGING_TRANSFORMS for t in root.transforms
        ):
            return False
        scope = self.names.read_scope.get(id(outer.root))
        owner = self.names.lookup(outer.root.id, scope) if scope is not None else None
        return (
            owner is not None and owner.kind == "function" and outer.root.id in owner.params
            and outer.root.id not in owner.assigned and outer.root.id not in owner.other
        )

    def nnx_object(self, outer: OuterObject) -> bool:
        """The outer object is a Flax NNX object (`nnx.Optimizer(...)`, `nnx.Linear(...)`, an
        instance of this module's `nnx.Module` subclass): its state is bound to the trace level
        it was made at, so only NNX transformations may update it from traced code."""
        if outer.where == "self":
            return False
        root = outer.root
        scope = self.names.read_scope.get(id(root))
        owner = self.names.lookup(root.id, scope) if scope is not None else None
        values = self.names.assignments(root)
        if owner is None or root.id in owner.params or not values:
            return False
        return all(isinstance(v, ast.Call) and self._nnx_constructor(v.func, owner) for v in values)

    def nnx_state_call(self, call: ast.Call, function: FunctionNode) -> tuple[OuterObject, str] | None:
        """`model(x)` or `model.step(x)` on an NNX object from outside the traced code, built from a
        class of this module whose called method writes to its own state (`self.count.value += 1`):
        the object, and the method's name."""
        func = call.func
        if isinstance(func, ast.Name):
            root, method_name = func, "__call__"
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            root, method_name = func.value, func.attr
        else:
            return None
        scope = self.names.read_scope.get(id(root))
        owner = self.names.lookup(root.id, scope) if scope is not None else None
        if owner is None or root.id in owner.imports or id(owner.node) in self.contexts:
            return None
        if owner.kind not in ("module", "function"):
            return None
        outer = OuterObject(root, "module" if owner.kind == "module" else "closure")
        if not self.nnx_object(outer):
            return None
        callees = module_callees(self.names)
        for value in self.names.assignments(root):
            cls = self.names.definition(value.func, owner) if isinstance(value, ast.Call) else None
            method = callees.method(cls, method_name) if isinstance(cls, ast.ClassDef) else None
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not _writes_own_state(method):
                return None
        return outer, method_name

    def _nnx_constructor(self, func: ast.expr, scope: Scope) -> bool:
        return self._framework_class(func, scope, "flax.nnx.")

    def _framework_class(self, func: ast.expr, scope: Scope, package: str, depth: int = 0) -> bool:
        """`func` names a class of `package` (a capitalised name in it: `nnx.Linear`, `hk.nets.MLP`),
        or a class of this module deriving from one."""
        name = self.names.qualname(func, scope)
        if name is not None:
            return name.startswith(package) and name.rsplit(".", 1)[-1][:1].isupper()
        cls = self.names.definition(func, scope)
        if not isinstance(cls, ast.ClassDef) or depth > 5:
            return False
        around = self._scope_around(cls)
        return any(self._framework_class(base, around, package, depth + 1) for base in cls.bases)

    # ---- Haiku modules in a raw JAX trace -------------------------------------------------------
    def haiku_module_call(self, call: ast.Call, function: FunctionNode) -> str | None:
        """What `call` runs, as a message names it, when it is a Haiku module (`cell(x)`, `self.core(x)`,
        `hk.Linear(4)(x)`) or `hk.get_parameter` and `function` is nested in another and staged by a raw JAX
        transformation or `lax` primitive of its own (a `jax.lax.scan` body, `jax.jit(lambda ...)`).
        Haiku makes parameters in the frame of `hk.transform`, which such a trace cannot carry.
        None for any other call, and for a module the function around has called itself first:
        its parameters exist by then."""
        parent = self.names.parent_function.get(id(function))
        if parent is None or not self.module.discovery.traces_itself(function):
            return None
        func = call.func
        scope = self.names.read_scope.get(id(func)) if isinstance(func, ast.Name) else None
        if self.names.qualname(func, scope) == "haiku.get_parameter":
            return f"`{ast.unparse(func)}`"
        if isinstance(func, ast.Call):
            inner = self.names.read_scope.get(id(func.func)) if isinstance(func.func, ast.Name) else None
            return f"the Haiku module `{ast.unparse(func.func)}`" if self._haiku_constructor(func.func, inner) else None
        if isinstance(func, ast.Name) and scope is not None:
            owner = self.names.lookup(func.id, scope)
            if owner is None or owner.kind != "function" or owner.node is function or func.id in owner.params:
                return None
            values = self.names.assignments(func, owner)
            if values and all(isinstance(v, ast.Call) and self._haiku_constructor(v.func, owner) for v in values):
                return None if self._called_in(owner.node, func.id) else f"the Haiku module `{func.id}`"
            return None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            return self._haiku_attribute(func, function)
        return None

    def _haiku_constructor(self, func: ast.expr, scope: Scope | None) -> bool:
        return self._framework_class(func, scope if scope is not None else self.names.module, "haiku.")

    def _haiku_attribute(self, func: ast.Attribute, function: FunctionNode) -> str | None:
        """`self.core` in a method of a Haiku module class that assigns `self.core` only Haiku modules."""
        method = function
        while method is not None and id(method) not in self.names.parent_class:
            method = self.names.parent_function.get(id(method))
        if method is None or first_param(method) != func.value.id:
            return None
        cls = self.names.parent_class[id(method)]
        scope = self._scope_around(cls)
        if not any(self._haiku_constructor(base, scope) for base in cls.bases):
            return None
        values = module_callees(self.names).attributes_of(cls).get(func.attr)
        if not values or not all(isinstance(v, ast.Call) and self._haiku_constructor(v.func, scope) for v in values):
            return None
        this = func.value.id
        if self._called_in(method, func.attr, this):
            return None
        return f"the Haiku module `{this}.{func.attr}`"

    def _called_in(self, fn: ast.AST, name: str, this: str | None = None) -> bool:
        """`fn`'s own statements (not its nested functions) call `name(...)` (`this.name(...)`)."""
        for node in own_nodes(fn):
            if isinstance(node, ast.Call):
                f = node.func
                if this is None and isinstance(f, ast.Name) and f.id == name:
                    return True
                if this is not None and isinstance(f, ast.Attribute) and f.attr == name and isinstance(f.value, ast.Name) and f.value.id == this:
                    return True
        return False

    def _created_here(self, value: ast.expr, scope: Scope) -> bool:
        if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
            return True
        if isinstance(value, ast.Call):
            if self.names.qualname(value.func, scope) in array_api.PYTHON_CONTAINERS:
                return True
            if isinstance(value.func, ast.Name):
                cls = self.names.definition(value.func, scope)
                return isinstance(cls, ast.ClassDef) and not self.is_framework_class(cls)
        return False


_TRIES = (ast.Try, getattr(ast, "TryStar", ast.Try))  # `try ... except*` from Python 3.11


def _last_part(target: ast.expr) -> tuple | None:
    """The attribute (`.sys`) or constant key (`["sys"]`) a store target ends with."""
    if isinstance(target, ast.Attribute):
        return ("attribute", target.attr)
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
        return ("key", target.slice.value)
    return None


def _writes(block: list[ast.stmt], last: tuple, saved: bool = False) -> bool:
    """A statement of `block` assigns a target ending with `last` (with `saved`, a name's value)."""
    return any(
        isinstance(s, ast.Assign) and (not saved or isinstance(s.value, ast.Name))
        and any(_last_part(t) == last for t in s.targets)
        for s in own_statements(block)
    )


def _reads(value: ast.expr, name: str) -> bool:
    """`value` (`a.b[c]`) reads `name` anywhere: a binding of `name` from itself (`env = env.inner`)."""
    return any(isinstance(n, ast.Name) and n.id == name for n in walk(value))


def _writes_own_state(method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """The method assigns to an attribute or item of its own instance (`self.count.value += 1`)."""
    this = first_param(method)
    if this is None:
        return False
    for node in walk(method):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            root = target
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if root is not target and isinstance(root, ast.Name) and root.id == this:
                return True
    return False
