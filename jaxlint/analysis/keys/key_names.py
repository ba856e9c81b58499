"""Which names a function uses as PRNG keys, and which function of the module a call runs.

A name is a key when the function makes it with a key call, passes it where `jax.random`
takes a key, passes it to a function of the module that uses that parameter as a key,
aliases one of those, or is a parameter whose name says it is a key (`key`, `rng`,
`dropout_rng`) and that the function does not use as a dictionary key or a string.

Every guess but the first two yields to evidence that the value is data: an annotation of
an array of numbers (`Float[Array, "b t h d"]`), an operand of arithmetic (`key @ w`,
`key * scale`), or an argument of array math (`jnp.einsum`, `jax.nn.dot_product_attention`).
JAX's keys support none of these, so a value used so is an attention key tensor, a seed or
some other number, whatever its name.  So does a parameter that every call in the module
passes data (`forward(q, jax.random.normal(k, shape), v)`), and a name the function passes to
a function of the module that uses the parameter receiving it as data (`apply_spe(key, spe)`).

They yield as well to evidence of an object that keeps a generator's state (`key_objects`): an
attribute stored on the value or read that no JAX array has, there or in a function of the
module it is handed to.  A parameter name the module shows to be such an object, and never
draws from nor makes a key under, is an object in every function of the module (`object_names`).
"""

from __future__ import annotations

import ast
import re
from functools import cached_property
from typing import TYPE_CHECKING

from jaxlint.analysis.engine.call_index import calls_through
from jaxlint.analysis.engine.names import FUNCTION_TYPES, FunctionNode, Names
from jaxlint.analysis.engine.submodules import attribute_class
from jaxlint.analysis.engine.walk import attribute_path, body_nodes, returned_name
from jaxlint.analysis.keys.key_objects import constructor, object_uses
from jaxlint.analysis.keys.key_syntax import base_name, bind, names_in, target_names
from jaxlint.analysis.knowledge import jax_api
from jaxlint.analysis.knowledge import random_api as api
from jaxlint.analysis.knowledge.random_api import key_named
from jaxlint.analysis.tracing.parameters import default_of
from jaxlint.analysis.tracing.callees import Target, module_callees

if TYPE_CHECKING:
    from jaxlint.analysis.project.project import ModuleLink


# Words without which a module makes, draws from or declares no key (`jax.random`, an annotation
# `chex.PRNGKey` on a key only handed to other objects' samplers: `dist.sample(seed=key)`), nor
# hands one to an interface (`_abstract_keys`), to code outside `jax.random` that draws from it
# (`key_consumers`) or to a function of another module that does (`_handing_on`).
KEY_WORDS = (
    "random", "PRNGKey", "KeyArray", "Key[", "NotImplementedError", "abstractmethod",
    "key=", "seed=", "Rngs", ".init(", "initializers",  # code outside `jax.random` drawing from a key
    "key", "rng",  # a key-named parameter handed to a function of another module that draws from it
)


class KeyNames:
    """The key names of each function of one module, and the module's own call targets."""

    def __init__(self, names: Names, project: ModuleLink | None = None):
        self.names = names
        self.project = project  # the module's place in the project: calls into other modules are followed
        self.makes_keys: set[int] = set()  # functions that call a key constructor
        self._cache: dict[int, frozenset[str]] = {}
        self._nodes: dict[int, list[ast.AST]] = {}
        self._kinds: dict[tuple[int, tuple[type, ...]], list[ast.AST]] = {}
        self._parameters: dict[int, set[str]] = {}
        self._unpacked: dict[int, set[str]] = {}
        self._data: dict[int, frozenset[str]] = {}
        self._data_pending: set[int] = set()  # functions whose data names are being found
        self._objects: dict[int, frozenset[str]] = {}
        self._object_names: frozenset[str] | None = None
        self.callees = module_callees(names)
        self._passed_in: dict[int, frozenset[str]] = {}  # `keys_passed_in`
        self._made: dict[int, frozenset[str]] = {}  # `made_or_drawn`
        self._random: dict[int, ast.AST] | None = None  # `_random_scopes`
        self._enclosing: dict[int, frozenset[str]] = {}  # `enclosing_keys`

    def handed_elsewhere(self, call: ast.Call, flax: bool = False) -> list[ast.expr]:
        """The arguments of a call of a function of another project module, analysed there for
        keys, that reach a parameter it consumes as a key (`flax`: or hands to a Flax run). A
        function its module does not analyse for keys is taken to consume nothing here: only a
        draw seen there makes the name a key."""
        if self.project is None:
            return []
        qualname = self.names.qualname(call.func)
        if qualname is None or qualname.split(".", 1)[0] in jax_api.MODELLED_PACKAGES or self.resolve(call.func) is not None:
            return []
        if self.project.defined_without(qualname, KEY_WORDS):
            return []  # a module without those words analyses no function for keys: not read for it
        target = self.project.callee(qualname)
        if target is None or target.path in self.project.project.key_flows_building:
            return []
        keys = target.facts.keys
        if not keys.analysed(target.node):
            return []
        # A parameter its module shows to be a key (drawn from, split, made one, named as one):
        # one that only reaches code not seen is no evidence of a key.
        shown = keys.keynames.of(target.node)
        bound = bind(target.node, call, 0)
        if not flax and all(param not in shown for _, param in bound):
            return []  # what the function does with its parameters need not be asked
        summary = keys.exported(target.node)
        return [
            arg for arg, param in bound
            if param in shown and summary.consumes(param) or (flax and param in summary.flax)
        ]

    @cached_property
    def inits(self) -> bool:
        """Whether the module calls a module's `init` or binds a name to one (`init_fn =
        hk.transform(f).init`): where a draw may serve as its example inputs (`key_draws`)."""
        return bool(calls_through(self.names, api.MODULE_INITS)) or any(
            isinstance(v, ast.Attribute) and v.attr in api.MODULE_INITS
            for scope in self.names.scopes.values() for values in scope.assigned.values() for v in values
        )

    def nodes(self, fn: ast.AST) -> list[ast.AST]:
        """`walk.body_nodes(fn)`, walked once per function."""
        nodes = self._nodes.get(id(fn))
        if nodes is None:
            nodes = self._nodes[id(fn)] = body_nodes(fn)
        return nodes

    def nodes_of(self, fn: ast.AST, kinds: tuple[type, ...]) -> list[ast.AST]:
        """The nodes of `nodes(fn)` of these classes, in the order of the walk."""
        key = (id(fn), kinds)
        found = self._kinds.get(key)
        if found is None:
            found = self._kinds[key] = [n for n in self.nodes(fn) if n.__class__ in kinds]
        return found

    def qualname(self, func: ast.AST) -> str | None:
        return api.public(self.names.qualname(func))

    def of(self, fn: ast.AST) -> frozenset[str]:
        """Names the function uses as keys: made by key calls, at key positions, passed as keys."""
        cached = self._cache.get(id(fn))
        if cached is not None:
            return cached
        self._cache[id(fn)] = frozenset()  # recursion guard
        drawn = self.made_or_drawn(fn)  # used as a key by `jax.random` itself: no evidence outweighs that
        found: set[str] = set(drawn)
        aliases: list[tuple[list[ast.AST], ast.AST]] = []
        for node in self.nodes_of(fn, _CALLS_AND_ASSIGNMENTS):
            if node.__class__ is ast.Call:
                qualname = self.qualname(node.func)
                if qualname in api.KEY_CONSTRUCTORS:
                    self.makes_keys.add(id(fn))
                elif qualname is None:
                    target = self.target(node.func)
                    if target is not None:
                        params = self.of(target.function)
                        for arg, param in target.bind(node).pairs():
                            if param in params and (isinstance(arg, ast.Name) or attribute_path(arg)):
                                found.add(arg.id if isinstance(arg, ast.Name) else attribute_path(arg))
                elif (
                    self.project is not None and qualname.split(".", 1)[0] not in jax_api.MODELLED_PACKAGES
                    and any(isinstance(a, ast.Name) for a in (*node.args, *(k.value for k in node.keywords)))
                ):
                    # A function of another module of the project that uses the parameter a name
                    # is handed to as a key: the name is a key here too, as for one of this module.
                    found.update(a.id for a in self.handed_elsewhere(node) if isinstance(a, ast.Name))
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                if not (isinstance(node.value, ast.Call) and self.qualname(node.value.func) in api.KEY_MAKERS):
                    aliases.append((node.targets if isinstance(node, ast.Assign) else [node.target], node.value))
        for _ in range(2):
            for targets, value in aliases:
                base = base_name(value)
                if base in found and isinstance(value, (ast.Name, ast.Subscript)):
                    for target in targets:
                        found.update(target_names(target))
        # A key held on an object is followed on `self` and on a parameter the function never
        # rebinds (the state record its caller passed in): a module's or a local object may be a
        # generator whose attribute is a property handing out a fresh key on every read.
        if any("." in name for name in found):
            scope = self.names.scope_of(fn)
            holders = {"self"} | {p for p in scope.params if p not in scope.assigned and p not in scope.other}
            found = {name for name in found if "." not in name or name.split(".", 1)[0] in holders}
        if isinstance(fn, FUNCTION_TYPES):
            found.update(self.key_parameters(fn))
            found.update(self.keys_passed_in(fn))
            found.update(self.enclosing_keys(fn))
        found.update(self.unpacked_keys(fn))
        if found - drawn:
            found -= (self.data_names(fn) | self.objects(fn)) - drawn
        result = frozenset(found)
        self._cache[id(fn)] = result
        return result

    def keys_passed_in(self, fn: FunctionNode) -> frozenset[str]:
        """The parameters that a call of `fn` in the module passes a key the caller made or drew
        from itself (`key = jax.random.PRNGKey(0)`, `k1, k2 = jax.random.split(key)`, a key
        handed to `jax.random`), or its own key-named parameter: whatever their names, they are
        keys (`def step(x, k): return model.apply(..., k)`)."""
        found = self._passed_in.get(id(fn))
        if found is not None:
            return found
        found = set()
        if not isinstance(fn, ast.Lambda):
            for call, scope in calls_through(self.names, (fn.name,)):
                passed = {a.id for a in (*call.args, *(k.value for k in call.keywords)) if isinstance(a, ast.Name)}
                caller = scope.node
                known = self._made_here(caller) & passed  # only a name can hold the caller's key
                if isinstance(caller, FUNCTION_TYPES) and any(key_named(name) for name in passed - known):
                    known = known | (self.key_parameters(caller) & passed)
                target = self.target(call.func) if known else None
                if target is None or target.function is not fn:
                    continue
                for arg, param in target.bind(call).pairs():
                    if isinstance(arg, ast.Name) and arg.id in known:
                        found.add(param)
        result = self._passed_in[id(fn)] = frozenset(found)
        return result

    def enclosing_keys(self, fn: FunctionNode) -> frozenset[str]:
        """The keys of the function `fn` is nested in that `fn` reads without binding them (a
        `loss_fn` that hands the step's `dropout_key` to `apply`): calling `fn` uses them. Known
        there without following calls (made, drawn from, passed in, key-named, or the keys of
        the function around that one), so that no answer waits on another."""
        found = self._enclosing.get(id(fn))
        if found is not None:
            return found
        parent = self.names.parent_function.get(id(fn))
        result: frozenset[str] = frozenset()
        if parent is not None:
            known = self._made_here(parent) | self.keys_passed_in(parent) | self.enclosing_keys(parent)
            if isinstance(parent, FUNCTION_TYPES):
                known = known | self.key_parameters(parent)
            if known:
                scope = self.names.scope_of(fn)
                outer = self.names.scope_of(parent)
                result = frozenset(
                    n.id for n in self.nodes_of(fn, (ast.Name,))
                    if n.id in known and n.ctx.__class__ is ast.Load and not scope.binds(n.id)
                    and self.names.lookup(n.id, scope) is outer
                )
        self._enclosing[id(fn)] = result
        return result

    def _made_here(self, fn: ast.AST) -> frozenset[str]:
        """`made_or_drawn`, asked of the many callers and enclosing functions the inferences above
        visit: only a scope that calls by a `jax.random` name is read (an alias of one is not)."""
        return self.made_or_drawn(fn) if id(fn) in self._random_scopes() else frozenset()

    def _random_scopes(self) -> dict[int, ast.AST]:
        """The functions (and the module) that call by a `jax.random` name, by id."""
        if self._random is None:
            self._random = {id(scope.node): scope.node for _, scope in calls_through(self.names, api.RANDOM_NAMES)}
        return self._random

    def made_or_drawn(self, fn: ast.AST) -> frozenset[str]:
        """The names a function (or the module) binds to a new key or hands to `jax.random` as one."""
        found = self._made.get(id(fn))
        if found is not None:
            return found
        names: set[str] = set()
        for node in self.nodes_of(fn, _CALLS_AND_ASSIGNMENTS):
            if node.__class__ is ast.Call:
                if self.qualname(node.func) in api.KEY_POSITION:
                    arg = api.key_argument(node)
                    base = base_name(arg) if arg is not None else None
                    if base:
                        names.add(base)
            elif node.value is not None and isinstance(node.value, ast.Call):
                if self.qualname(node.value.func) in api.KEY_MAKERS:
                    for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                        names.update(target_names(target))
        result = self._made[id(fn)] = frozenset(names)
        return result

    def target(self, func: ast.AST) -> Target | None:
        """The def (or lambda) of this module a call runs as written, and how it binds (`Callees`)."""
        return self.callees.target(func)

    def resolve(self, func: ast.AST) -> FunctionNode | None:
        """The def (or lambda) of this module a call runs as written."""
        target = self.callees.target(func)
        return target.function if target is not None else None

    def returned_module_key(self, call: ast.Call, module_keys: set[str]) -> str | None:
        """The module-level key the function a call runs returns, when every `return` of it
        returns that one name and the function never rebinds it (`def get_key(): return _KEY`):
        the call reads the module's key as the name would."""
        fn = self.resolve(call.func)
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        name = returned_name(fn)
        scope = self.names.scope_of(fn)
        if name is None or name not in module_keys or self.names.lookup(name, scope) is not self.names.module or name in scope.globals:
            return None
        if any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in self.nodes(fn)):
            return None
        return name

    def function_of(self, expr: ast.AST) -> FunctionNode | None:
        """The def or lambda of this module an expression names: a lambda, a def's name, or a
        name bound once to a lambda (`noise = lambda g: ...`)."""
        if isinstance(expr, ast.Lambda):
            return expr
        if not isinstance(expr, ast.Name):
            return None
        definition = self.names.definition(expr)
        if isinstance(definition, FUNCTION_TYPES):
            return definition
        values = self.names.assignments(expr)
        return values[0] if len(values) == 1 and isinstance(values[0], ast.Lambda) else None

    def reads_module_key(self, fn: ast.AST, module_keys: set[str]) -> bool:
        """Whether `fn` calls a function that returns a module-level key (`get_key()`)."""
        return bool(module_keys) and any(
            node.__class__ is ast.Call and self.returned_module_key(node, module_keys) is not None
            for node in self.nodes(fn)
        )

    def submodule_class(self, func: ast.AST) -> ast.expr | None:
        """`submodules.attribute_class`, each class's attributes read once."""
        return attribute_class(self.names, func, self.callees.attributes_of)

    def key_parameters(self, fn: FunctionNode) -> set[str]:
        """Parameters whose names say they are PRNG keys (`key`, `rng`, `dropout_rng`).

        Not one that the function itself treats as a dictionary key or a string: used as an
        index (`d[key]`), compared (other than with `is None`), formatted, looked up (`getattr(obj, key)`, `d.get(key)`), or
        annotated as something other than a key or an array.
        """
        found = self._parameters.get(id(fn))
        if found is None:
            found = self._not_used_as_strings(fn, _key_parameter_names(fn))
            if found:
                found = found - self.data_names(fn) - self.objects(fn) - self.object_names() - self._seeds(fn, found)
            if found:
                found = found - self._given_data(fn, found)
            self._parameters[id(fn)] = found
        return found

    def _seeds(self, fn: FunctionNode, params: set[str]) -> set[str]:
        """The parameters whose default is a number or a string (`key=0`): an integer seed, which
        `jax.random` rejects as a key, unless the function passes it to `jax.random` itself."""
        a = fn.args
        seeds = set()
        for param in (*a.posonlyargs, *a.args, *a.kwonlyargs):
            default = default_of(fn, param) if param.arg in params else None
            if isinstance(default, ast.Constant) and default.value is not None:
                seeds.add(param.arg)
        if seeds:
            for call in self.nodes_of(fn, (ast.Call,)):
                if self.qualname(call.func) in api.KEY_POSITION:
                    arg = api.key_argument(call)
                    seeds.discard(base_name(arg) if arg is not None else None)
        return seeds

    def _given_data(self, fn: FunctionNode, params: set[str]) -> set[str]:
        """The parameters that every call of the function in this module passes data: a
        sampler's draws (`jax.random.normal(...)`), a new array (`jnp.ones(...)`), arithmetic,
        or a name bound to one of those.  Without a call here, none."""
        if isinstance(fn, ast.Lambda):
            return set()
        given: dict[str, bool] = {}
        for call, _ in calls_through(self.names, (fn.name,)):
            target = self.target(call.func)
            if target is None or target.function is not fn:
                continue
            bound = target.bind(call).arguments
            for param in params:
                arg = bound.get(param)
                given[param] = given.get(param, True) and arg is not None and self._data_value(arg, 0)
        return {param for param, data in given.items() if data}

    def _data_value(self, expr: ast.AST, depth: int) -> bool:
        if isinstance(expr, ast.BinOp):
            return expr.op.__class__ in _ARITHMETIC
        if isinstance(expr, ast.Call):
            qualname = self.qualname(expr.func) or ""
            return qualname in api.SAMPLERS or qualname in _NEW_ARRAYS
        if isinstance(expr, ast.Name) and depth < 3:
            values = self.names.assignments(expr)
            return len(values) == 1 and self._data_value(values[0], depth + 1)
        return False

    def data_names(self, fn: ast.AST) -> frozenset[str]:
        """Names the function shows to be data, not keys: annotated as an array of numbers
        (`Float[Array, "b d"]`, on the parameter or where it is bound), an operand of
        arithmetic (`key @ w`, `key.T * s`, `x -= key`), passed to array math (`jnp.einsum`,
        `jax.nn.dot_product_attention`) or to a parameter that a function of the module uses
        so.  A key supports none of these."""
        found = self._data.get(id(fn))
        if found is not None:
            return found
        data: set[str] = set()
        if isinstance(fn, FUNCTION_TYPES) and not isinstance(fn, ast.Lambda):
            a = fn.args
            for param in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                if param.annotation is not None and self._numbers(param.annotation):
                    data.add(param.arg)
        for node in self.nodes_of(fn, _DATA_USES):
            cls = node.__class__
            if cls is ast.BinOp:
                if node.op.__class__ in _ARITHMETIC:
                    data.update(_operand_names(node.left, node.right))
            elif cls is ast.AugAssign:
                if node.op.__class__ in _ARITHMETIC:
                    data.update(_operand_names(node.target, node.value))
            elif cls is ast.AnnAssign:
                if isinstance(node.target, ast.Name) and self._numbers(node.annotation):
                    data.add(node.target.id)
            elif self.qualname(node.func) in _ARRAY_MATH:
                data.update(_operand_names(*node.args, *(k.value for k in node.keywords)))
            elif isinstance(node.func, ast.Name):
                data.update(self._passed_as_data(node, fn))
        found = self._data[id(fn)] = frozenset(data)
        return found

    def _passed_as_data(self, call: ast.Call, caller: ast.AST) -> set[str]:
        """Names passed to a function of the module that uses the parameter receiving them as
        data (`apply_spe(key, spe)` with `def apply_spe(keys, spe): return spe * keys[..., None]`)."""
        target = self.target(call.func)
        callee = target.function if target is not None else None
        if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)) or callee is caller:
            return set()
        if id(callee) in self._data_pending or any(isinstance(a, ast.Starred) for a in call.args):
            return set()  # a cycle of calls, or arguments that may land anywhere
        self._data_pending.add(id(callee))
        try:
            used_as_data = self.data_names(callee)
        finally:
            self._data_pending.discard(id(callee))
        if not used_as_data:
            return set()
        bound = target.bind(call).arguments
        return _operand_names(*(arg for param, arg in bound.items() if param in used_as_data))

    def objects(self, fn: ast.AST) -> frozenset[str]:
        """Names the function shows to be objects, not keys: assigned an attribute or read one no
        JAX array has (`key_objects.object_uses`), or handed to a function or class of the module
        at a parameter shown so (`self._count(rng)` where `_count` sets `rng._state`)."""
        found = self._objects.get(id(fn))
        if found is not None:
            return found
        self._objects[id(fn)] = frozenset()  # recursion guard
        shown = object_uses(self.nodes_of(fn, (ast.Attribute,)))
        for call in self.nodes_of(fn, (ast.Call,)):
            if not any(isinstance(arg, ast.Name) for arg in (*call.args, *(k.value for k in call.keywords))):
                continue
            target = self.target(call.func)
            if target is None:
                init = constructor(call.func, self.names)
                target = Target(init, 1) if init is not None else None
            if target is None:
                continue
            params = self.objects(target.function)
            if params:
                shown.update(arg.id for arg, param in target.bind(call).pairs()
                             if param in params and isinstance(arg, ast.Name))
        found = self._objects[id(fn)] = frozenset(shown)
        return found

    def object_names(self) -> frozenset[str]:
        """Key names (`rng`) that this module gives to objects: a parameter of that name is shown
        to be an object (`objects`) in some function, and no value of that name is made by a key
        call or passed where `jax.random` takes a key anywhere in the module.  A parameter of that
        name elsewhere in the module, known as a key by its name alone, is taken to be the same."""
        if self._object_names is not None:
            return self._object_names
        self._object_names = frozenset()  # recursion guard
        shown: set[str] = set()
        for fn in self.names.functions:
            if not isinstance(fn, ast.Lambda):
                params = _key_parameter_names(fn)
                if params:
                    shown.update(params & self.objects(fn))
        if shown:
            shown -= self._drawn_anywhere()
        self._object_names = frozenset(shown)
        return self._object_names

    def _drawn_anywhere(self) -> set[str]:
        """The names passed where `jax.random` takes a key, or bound to a new key, in the module."""
        return set().union(*(self.made_or_drawn(node) for node in self._random_scopes().values()))

    def _numbers(self, annotation: ast.AST) -> bool:
        """A jaxtyping annotation of an array of numbers: `Float[Array, "b t"]`, `Bool[...]`,
        `Int32[...]`; not `Key[...]`, nor `UInt32[...]` (a raw key's type), nor `Shaped[...]`."""
        if not isinstance(annotation, ast.Subscript):
            return False
        dims = annotation.slice
        if not (isinstance(dims, ast.Tuple) and len(dims.elts) == 2 and isinstance(dims.elts[1], ast.Constant)
                and isinstance(dims.elts[1].value, str)):
            return False  # not the `Dtype[ArrayType, "shape"]` form
        name = self.names.qualname(annotation.value) or ast.unparse(annotation.value)
        return bool(_NUMBER_DTYPES.match(name.rsplit(".", 1)[-1]))

    def unpacked_keys(self, fn: ast.AST) -> set[str]:
        """Names with a key's name taken out of a record: unpacked from a tuple (`state, key =
        carry`), or read from a field of a key's name (`rng = carry.rng`). Either is the key the
        record carries, a loop state's most often."""
        found = self._unpacked.get(id(fn))
        if found is not None:
            return found
        found = set()
        scope = self.names.scope_of(fn)
        # Unpacked names are bound "otherwise" in the scope model, fields read "assigned": without
        # one named as a key, nothing to look for.
        if any(key_named(name) for name in (*scope.other, *scope.assigned)):
            for node in self.nodes_of(fn, (ast.Assign,)):
                value = node.value
                if not isinstance(value, (ast.Name, ast.Attribute)):
                    continue
                for target in node.targets:
                    if isinstance(target, (ast.Tuple, ast.List)):
                        found.update(n for n in target_names(target) if key_named(n))
                    elif (
                        isinstance(target, ast.Name) and key_named(target.id)
                        and isinstance(value, ast.Attribute) and key_named(value.attr)
                    ):
                        found.add(target.id)
            found = self._not_used_as_strings(fn, found) - self.data_names(fn) - self.objects(fn) - self.object_names()
        self._unpacked[id(fn)] = found
        return found

    def _not_used_as_strings(self, fn: ast.AST, found: set[str]) -> set[str]:
        if not found:
            return found
        for node in self.nodes_of(fn, _STRING_USES):
            cls = node.__class__
            if cls is ast.Subscript:
                found.difference_update(names_in(node.slice))
            elif cls is ast.Compare:
                if not _none_test(node):
                    found.difference_update(names_in(node))
            elif cls is ast.FormattedValue:
                found.difference_update(names_in(node.value))
            else:
                func = node.func
                if isinstance(func, ast.Name) and func.id in ("getattr", "setattr", "hasattr", "delattr", "str"):
                    found.difference_update(n for arg in node.args for n in names_in(arg))
                elif isinstance(func, ast.Attribute) and func.attr in _NAME_METHODS:
                    found.difference_update(n for arg in node.args for n in names_in(arg))
            if not found:
                break
        return found


_KEY_ANNOTATION = re.compile(r"key|rng|prng|array", re.IGNORECASE)
_NAME_METHODS = frozenset({"get", "pop", "setdefault", "startswith", "endswith", "split", "format", "join"})
_CALLS_AND_ASSIGNMENTS = (ast.Call, ast.Assign, ast.AnnAssign)
_DATA_USES = (ast.BinOp, ast.AugAssign, ast.AnnAssign, ast.Call)
# Not `%` (string formatting) nor the bitwise operators (a raw key's bits).
_ARITHMETIC = frozenset({ast.Add, ast.Sub, ast.Mult, ast.MatMult, ast.Div, ast.FloorDiv, ast.Pow})
# jaxtyping dtypes of numbers; a raw (`uint32`) key is `UInt32`, a typed one `Key`.
_NUMBER_DTYPES = re.compile(r"^(Float|BFloat|Complex|Inexact|Int|Bool)\d*$")
# Array math: contractions and attention over arrays of numbers.
_ARRAY_MATH = frozenset({
    *("jax.numpy." + name for name in ("einsum", "matmul", "dot", "tensordot", "inner", "outer", "vdot")),
    *("jax.lax." + name for name in ("dot", "dot_general", "batch_matmul")),
    "jax.nn.dot_product_attention",
})
# New arrays of numbers, never keys.
_NEW_ARRAYS = frozenset(
    "jax.numpy." + name for name in ("zeros", "ones", "full", "empty", "arange", "linspace", "eye")
)
_STRING_USES = (ast.Subscript, ast.Compare, ast.FormattedValue, ast.Call)


def _key_parameter_names(fn: FunctionNode) -> set[str]:
    args = fn.args
    return {
        a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)
        if key_named(a.arg)
        and (a.annotation is None or _KEY_ANNOTATION.search(ast.unparse(a.annotation)))
    }


def _none_test(node: ast.Compare) -> bool:
    """`x is None`, `x is not None`: what an optional key is tested with, not a string's use."""
    return all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops) and all(
        isinstance(c, ast.Constant) and c.value is None for c in node.comparators
    )


def _operand_names(*operands: ast.AST) -> set[str]:
    """The names used as values themselves (`key`, `key.T`, `key[:, 0]`), not through a call or a
    static attribute (`key.shape[0]`)."""
    found = set()
    for operand in operands:
        while isinstance(operand, ast.Subscript) or (isinstance(operand, ast.Attribute) and operand.attr in ("T", "mT")):
            operand = operand.value
        if isinstance(operand, ast.Name):
            found.add(operand.id)
    return found
