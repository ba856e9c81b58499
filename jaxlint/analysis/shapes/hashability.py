"""Static arguments that cannot be hashed: what JAX302 reports, read from the code around a jit.

JAX hashes a jit's static arguments to key its cache, so an array, a list, a dict, a set or an
instance of a class that cannot be hashed raises `ValueError` there. The evidence is what the
jitted function declares and does with the parameter, and what its calls in the module pass.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jaxlint.analysis.engine.call_index import may_resolve_to
from jaxlint.analysis.engine.named_tuples import is_named_tuple, named_tuple_factory
from jaxlint.analysis.engine.names import annotation_name
from jaxlint.analysis.engine.walk import own_nodes, spans
from jaxlint.analysis.knowledge import array_api, jax_api
from jaxlint.analysis.knowledge.decorators import plain
from jaxlint.analysis.knowledge.optax_objects import optax_state
from jaxlint.analysis.knowledge.spellings import attribute_spellings
from jaxlint.analysis.shapes import field_hashes, jit_signature
from jaxlint.analysis.shapes.concrete_arguments import concrete_arguments
from jaxlint.analysis.shapes.single_bindings import single_binding
from jaxlint.analysis.tracing.array_annotations import declares_array
from jaxlint.analysis.tracing.callees import module_callees

_VMAP = attribute_spellings({"jax.vmap"})

_CONTAINER_ANNOTATIONS = {
    "builtins.list": "a list", "typing.List": "a list", "builtins.dict": "a dict", "typing.Dict": "a dict",
    "builtins.set": "a set", "typing.Set": "a set",
}
# Attributes and methods only arrays have (a tuple, a string, a frozen config or a
# `ShapeDtypeStruct` has none of them; `shape`, `dtype` and `real` are not among them).
_ARRAY_ATTRIBUTES = frozenset({
    "T", "mT", "at", "astype", "reshape", "ravel", "flatten", "squeeze", "swapaxes", "block_until_ready",
})
# The array methods that take an `axis` (`labels.max(axis=1)`): called so, the value is an
# array (NumPy's, JAX's, or a data frame, none of them hashable).
_AXIS_METHODS = frozenset(
    "all any argmax argmin argsort cumprod cumsum max mean min prod ptp repeat sort std sum take var".split()
)
# `jax.numpy` functions that add the axis they are given: a Python number is a fine first operand.
_AXIS_ADDING = frozenset("jax.numpy." + name for name in ("expand_dims", "linspace", "logspace", "geomspace"))
_NUMPY_ARRAYS = frozenset(
    "numpy." + name
    for name in (
        "array asarray zeros ones empty full arange linspace eye identity stack concatenate "
        "zeros_like ones_like full_like empty_like"
    ).split()
)
_LITERALS = {
    ast.List: "a list", ast.ListComp: "a list", ast.Dict: "a dict", ast.DictComp: "a dict",
    ast.Set: "a set", ast.SetComp: "a set",
}
_BUILTIN_CONTAINERS = {"builtins.list": "a list", "builtins.dict": "a dict", "builtins.set": "a set"}


@dataclass(frozen=True)
class UnhashableStatic:
    node: ast.AST  # where the jit names the static argument
    name: str
    why: str  # what makes it unhashable, as a message says it


def unhashable_statics(module) -> list[UnhashableStatic]:
    """The static arguments of the module's jitted functions that are, or are passed, unhashable
    values: an array or container annotation, a use only an array allows, an unhashable `self`,
    an unhashable value at a call site (also through a plain forwarding function), a batched
    tracer from `jax.vmap` (see JAX302's page)."""
    found: list[UnhashableStatic] = []
    sites = vmaps = None
    for root in jit_signature.innermost_jits(module):
        static = jit_signature.designated(root, "static")
        if not static:
            continue
        # Under an outer transformation (`custom_jvp`, `vmap`) calls reach the jit through
        # it: only what the function itself declares and does is judged.
        plain = len(root.transforms) == 1
        if plain and sites is None:
            sites = module.call_sites
            vmaps = _vmap_calls(module)
        params = {p.arg: p for p in (*root.node.args.posonlyargs, *root.node.args.args, *root.node.args.kwonlyargs)}
        for name, entry in static.items():
            param = params.get(name)
            if param is None:
                continue
            why = None if plain and _hashable_everywhere(root, name, sites, module) else _annotated(param, root.node, module)
            why = why or _used_as_array(root.node, name, module)
            if plain:
                why = (
                    _self_unhashable(root, param, module)
                    or why
                    or _passed_unhashable(root, name, sites, module)
                    or _mapped_by_vmap(root, name, vmaps, module)
                )
            if why:
                found.append(UnhashableStatic(entry.node, name, why))
    return found


def _hashable_everywhere(root, name: str, sites, module) -> bool:
    """A private function (`_solve`) whose every call in this module passes a value shown to be
    hashable for `name`: its callers are all in view, so what they pass decides, not a stale
    annotation."""
    fn = getattr(root.node, "name", "")
    if not fn.startswith("_") or fn.endswith("__"):
        return False
    args = [
        site.argument(name)
        for site in sites
        if site.target is root
    ]
    return bool(args) and all(arg is not None and _hashable(arg, module) for arg in args)


def _hashable(expr: ast.AST, module, depth: int = 0) -> bool:
    """A literal, a tuple of hashable values, `tuple(...)`/`frozenset(...)`, or a name bound only to one."""
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Tuple):
        return all(_hashable(e, module, depth) for e in expr.elts)
    if isinstance(expr, ast.Call):
        return module.qualname(expr.func) in _HASHABLE_BUILDERS
    if isinstance(expr, ast.Name) and depth < 4:
        scope = module.names.read_scope.get(id(expr))
        owner = module.names.lookup(expr.id, scope) if scope is not None else None
        if owner is None or expr.id in owner.params or expr.id in owner.other:
            return False
        values = module.names.assignments(expr, scope)
        return bool(values) and all(_hashable(v, module, depth + 1) for v in values)
    return False


_HASHABLE_BUILDERS = frozenset({"builtins.tuple", "builtins.frozenset", "builtins.int", "builtins.str", "builtins.float"})


def _annotated(param: ast.arg, fn, module) -> str | None:
    annotation, name = annotation_name(param.annotation, module.names)
    if name is None and not isinstance(annotation, (ast.BinOp, ast.Name)):
        return None  # a Name here is the module's alias of a type (`Array = Union[...]`)
    if declares_array(annotation, module.names):
        if _given_where_python_is_needed(fn, param.arg, module):
            return None  # the annotation is stale: an array there would fail whether static or not
        return f"is annotated as an array (`{ast.unparse(annotation)}`)"
    if name in _CONTAINER_ANNOTATIONS:
        return f"is annotated as {_CONTAINER_ANNOTATIONS[name]}"
    return _annotated_class(annotation, module)


def _annotated_class(annotation: ast.expr | None, module) -> str | None:
    """A class of the project named by the annotation whose instances hash their fields and that
    declares one that cannot be hashed (`batch: ArrayBatch`, a frozen dataclass of arrays), or
    whose instances cannot be hashed at all (a dataclass that is not frozen)."""
    if not isinstance(annotation, (ast.Name, ast.Attribute)):
        return None
    classes = module.project.class_of if module.project is not None else None
    found = field_hashes.class_of(annotation, module.names, module.names.read_scope.get(id(annotation)), classes)
    if found is None:
        return None
    names, cls = found
    if field_hashes.hashes_fields(cls, names):
        held = field_hashes.unhashable_field(cls, names, arrays=True)
        return f"is annotated as `{cls.name}`, hashed by its fields, which holds {held}" if held else None
    why = _class_unhashable(cls, module) if names is module.names else None
    return f"is annotated as `{cls.name}`, {why}" if why else None


def _given_where_python_is_needed(fn, name: str, module) -> bool:
    """Whether the function passes the parameter itself, not rebound, where JAX needs a Python
    value while tracing (`lax.dynamic_slice_in_dim(x, i, size)`, `jnp.zeros(n)`): it is
    declared static because it is one, whatever its annotation says."""
    scope = module.names.scope_of(fn)
    if name in scope.assigned or name in scope.other:
        return False
    return any(
        isinstance(node, ast.Call) and any(_is(arg, name) for arg, _, _ in concrete_arguments(module, node))
        for node in module.body(fn)
    )


def _used_as_array(fn, name: str, module) -> str | None:
    scope = module.names.scope_of(fn)
    if name in scope.assigned or name in scope.other:
        return None  # rebound inside: the use may be of another value
    for node in module.body(fn):
        if isinstance(node, ast.Subscript) and _is(node.value, name) and _array_index(node.slice):
            return f"is indexed like an array (`{ast.unparse(node)}`, line {node.lineno})"
        if isinstance(node, ast.Attribute) and _is(node.value, name) and node.attr in _ARRAY_ATTRIBUTES:
            return f"is used as an array (`{ast.unparse(node)}`, line {node.lineno})"
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and (_is(node.left, name) or _is(node.right, name)):
            return f"is used as an array (`{ast.unparse(node)}`, line {node.lineno})"
        if (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is(node.func.value, name)
            and node.func.attr in _AXIS_METHODS and any(k.arg == "axis" for k in node.keywords)
        ):
            return f"is used as an array (`{ast.unparse(node)}`, line {node.lineno})"
        if isinstance(node, ast.Call) and node.args and _is(node.args[0], name) and _along_an_axis(node, module):
            return f"is used as an array (`{ast.unparse(node)}`, line {node.lineno})"
    for call, _ in module.names.calls:
        # In the function or one nested in it, reading the parameter (a closure keeps the value).
        if isinstance(call.func, ast.Call) and spans(fn, call) and _vmapped(call, name, scope, module):
            return f"is mapped by the `jax.vmap` it is passed to (`{ast.unparse(call)}`, line {call.lineno})"
    return None


def _along_an_axis(call: ast.Call, module) -> bool:
    """`jnp.split(obs, n, axis=1)`: the first operand of a `jax.numpy` function given an axis (a
    number or a tuple of numbers) is an array. JAX's NumPy rejects a list or tuple there, and a
    Python number has no axis; `expand_dims` and `linspace` add the axis they are given, and
    `stack`, `concatenate` and the like take a sequence of arrays."""
    callee = module.qualname(call.func) or ""
    if not callee.startswith("jax.numpy.") or callee in array_api.SEQUENCE_FIRST_ARGUMENT or callee in _AXIS_ADDING:
        return False
    axis = next((k.value for k in call.keywords if k.arg == "axis"), None)
    items = axis.elts if isinstance(axis, ast.Tuple) else [axis]
    return axis is not None and bool(items) and all(
        isinstance(i, ast.Constant) and type(i.value) is int
        or isinstance(i, ast.UnaryOp) and isinstance(i.op, ast.USub) and isinstance(i.operand, ast.Constant)
        for i in items
    )


def _vmapped(call: ast.Call, name: str, scope, module) -> bool:
    """`jax.vmap(f, in_axes)(..., name, ...)` mapping the parameter `name` of `scope` along an
    axis: every leaf of a mapped argument must be an array (a Python number has no axis to
    map), and a pytree of arrays hashes no more than an array does."""
    if module.qualname(call.func.func) != "jax.vmap":
        return False
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return False  # the positions after it are not known
        if _is(arg, name) and module.names.lookup(name, module.names.read_scope.get(id(arg))) is scope:
            return _maps(call.func, index)
    return False


def _is(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _array_index(index: ast.AST) -> bool:
    """`None`, `...`, or a tuple index holding a slice/`None`/`...`: only arrays take those."""
    def special(item):
        return isinstance(item, ast.Slice) or (isinstance(item, ast.Constant) and (item.value is None or item.value is Ellipsis))

    if isinstance(index, ast.Tuple):
        return any(special(item) for item in index.elts)
    return isinstance(index, ast.Constant) and (index.value is None or index.value is Ellipsis)


def _passed_unhashable(root, name: str, sites, module) -> str | None:
    for site in sites:
        if site.target is not root:
            continue
        arg = site.argument(name)
        if arg is None:
            continue
        kind = _unhashable_argument(arg, module)
        if kind:
            return f"is passed {kind} on line {site.call.lineno}"
        if isinstance(arg, ast.Name) and site.loops:
            # In a loop, the value from before it reaches the first call, whatever the loop rebinds.
            for definition in module.loops.reaching(arg.id, site.loops[-1], site.call):
                if definition.kind == "assign":
                    kind = _unhashable_argument(definition.value, module, 1)
                elif definition.kind == "unpack":  # `logits, cache = step(...)`: a part of the value
                    kind = _compiled_output(definition.node.value, module)
                else:
                    kind = None
                if kind:
                    return f"is passed {kind} (assigned on line {definition.node.lineno}) on line {site.call.lineno}"
        for call, passed, helper in jit_signature.forwarded(module, site, name):
            kind = _unhashable_argument(passed, module)
            if kind:
                return f"is passed {kind} on line {call.lineno}, through `{helper.name}`"
    return None


def _unhashable_argument(arg: ast.expr, module, depth: int = 0) -> str | None:
    """What makes the value a call passes unhashable, as the calling code shows it (through a
    few names bound once: `rng = jax.random.key(0)`, `metric = rng`)."""
    kind = (
        _unhashable_value(arg, module) or _unhashable_instance(arg, module) or _compiled_output(arg, module)
        or _partition_half(arg, module)
    )
    if kind is None and depth == 0 and module.is_abstract(arg):
        kind = "a traced value (a tracer)"
    if kind is None and depth == 0 and module.arrays.is_array(arg):
        kind = "a JAX array"  # what the array facts show of it where it is passed (`mask = g < 4.0`)
    if kind is None and isinstance(arg, ast.Name):
        binding = single_binding(arg, module.names)
        if binding is not None and binding.unpacked:
            kind = _compiled_output(binding.value, module)  # `carry, ys = lax.scan(...)`: a part of it
            if kind is None and binding.index is not None and depth < 3:
                kind = _returned_item(binding.value, binding.index, module, depth)
    if kind is None and isinstance(arg, ast.Name) and depth < 3:
        # A name every assignment of which is unhashable, whichever reaches the call.
        values = module.names.assignments(arg)
        kinds = [_unhashable_argument(value, module, depth + 1) for value in values]
        if kinds and all(kinds):
            kind = kinds[0]
    return kind


def _returned_item(value: ast.AST, index: int, module, depth: int) -> str | None:
    """Item `index` of what a plain function of the module returns, where every `return` of it
    is a tuple whose item there is unhashable (`state, feats, labels = collect(...)` with
    `return state, np.concatenate(feats), labels`)."""
    if not isinstance(value, ast.Call):
        return None
    target = module_callees(module.names).target(value.func)
    fn = target.function if target is not None else None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not plain(fn, module.names):
        return None
    nodes = own_nodes(fn)
    returns = [n for n in nodes if isinstance(n, ast.Return)]
    if not returns or any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in nodes):
        return None
    kinds = [
        _unhashable_argument(node.value.elts[index], module, depth + 1)
        if isinstance(node.value, ast.Tuple) and len(node.value.elts) > index else None
        for node in returns
    ]
    return f"{kinds[0]} (what `{ast.unparse(value.func)}` returns)" if all(kinds) else None


def _compiled_output(value: ast.AST, module) -> str | None:
    """A call of a `jax.jit`- or `jax.pmap`-compiled function, or of a `lax` loop or branch: what
    it returns (and every part of it) is a pytree of JAX arrays, which cannot be hashed."""
    if not isinstance(value, ast.Call):
        return None
    callee = module.qualname(value.func)
    if callee in _LAX_OUTPUTS:
        return f"the output of `{ast.unparse(value.func)}` (JAX arrays)"
    for site in module.call_sites:
        if site.call is value and site.target.transforms and site.target.transforms[0].name in _COMPILING:
            return "the output of a compiled function (JAX arrays)"
    return None


_COMPILING = frozenset({"jax.jit", "jax.pmap"})
# `lax` control flow returns what its body returns, every leaf of it a JAX array (a Python
# number carried in comes back as one), even run eagerly.
_LAX_OUTPUTS = frozenset({
    "jax.lax.scan", "jax.lax.fori_loop", "jax.lax.while_loop", "jax.lax.cond", "jax.lax.switch", "jax.lax.map",
    "jax.lax.associative_scan",
})


def _vmap_calls(module) -> list:
    """`jax.vmap(name, ...)` calls of the module, with their scopes (found once per module)."""
    return [
        (call, scope)
        for call, scope in module.names.calls
        if call.args and isinstance(call.args[0], ast.Name) and may_resolve_to(module.names, call.func, _VMAP)
        and module.qualname(call.func) == "jax.vmap"
    ]


def _mapped_by_vmap(root, name: str, vmaps: list, module) -> str | None:
    """`jax.vmap(f)(...)` with `in_axes` mapping the static parameter: vmap hands it a batched tracer."""
    positional = [p.arg for p in (*root.node.args.posonlyargs, *root.node.args.args)]
    if name not in positional or isinstance(root.node, ast.Lambda):
        return None
    index = positional.index(name)
    for call, scope in vmaps:
        wrapped = call.args[0]
        if module.names.definition(wrapped, scope) is not root.node or not any(
            root.site is d for d in root.node.decorator_list
        ):
            continue
        if _maps(call, index):
            return f"is mapped by `jax.vmap` on line {call.lineno} (it receives a batched tracer)"
    return None


def _maps(vmap: ast.Call, index: int) -> bool:
    """Whether `jax.vmap(f, in_axes)` maps its argument at `index` along an axis: no `in_axes`,
    an int, or an entry for it that is a constant other than `None`."""
    in_axes = next((k.value for k in vmap.keywords if k.arg == "in_axes"), vmap.args[1] if len(vmap.args) > 1 else None)
    if in_axes is None:
        return True
    if isinstance(in_axes, ast.Constant):
        return isinstance(in_axes.value, int)
    if isinstance(in_axes, (ast.Tuple, ast.List)) and index < len(in_axes.elts):
        entry = in_axes.elts[index]
        return isinstance(entry, ast.Constant) and entry.value is not None
    return False


def _unhashable_value(expr: ast.AST, module) -> str | None:
    for kind, label in _LITERALS.items():
        if isinstance(expr, kind):
            return label
    if isinstance(expr, ast.Tuple):
        for element in expr.elts:
            inner = _unhashable_value(element, module)
            if inner:
                return f"a tuple holding {inner}"
        return None
    if isinstance(expr, ast.Call):
        if optax_state(module, expr):
            return "an Optax optimizer state (a pytree of arrays)"
        callee = module.qualname(expr.func)
        if callee is None:
            return None
        if callee in _BUILTIN_CONTAINERS:
            return _BUILTIN_CONTAINERS[callee]
        if callee in _NUMPY_ARRAYS:
            return "a NumPy array"
        if callee.startswith("jax.numpy.") and callee not in jax_api.STATIC_QUERIES and not callee.startswith("jax.numpy.dtype"):
            return "a JAX array"
        if callee in ("jax.random.key", "jax.random.PRNGKey"):
            return "a PRNG key (a JAX array)"
        if callee.startswith("jax.random."):
            return "a JAX array"
    return None


def _unhashable_instance(expr: ast.AST, module) -> str | None:
    """`Config(...)` of a class of this module whose instances cannot be hashed; a NamedTuple of
    the module given an unhashable field (a tuple hashes its items); an instance of a class of
    the project hashed by its fields that declares, or is given, one (`field_hashes.py`)."""
    if not isinstance(expr, ast.Call):
        return None
    fields = _fields_unhashable(expr, module, arrays=True)
    if fields is not None or not isinstance(expr.func, ast.Name):
        return fields
    if is_named_tuple(expr.func, module.names) or named_tuple_factory(expr.func, module.names):
        # Its hash is its items' hash: one unhashable field makes the instance unhashable.
        for field in (*expr.args, *(k.value for k in expr.keywords)):
            inner = _unhashable_argument(field, module, 1)  # names bound to one followed too
            if inner:
                return f"a NamedTuple `{expr.func.id}` (hashed by its fields) holding {inner}"
        return None
    cls = module.names.definition(expr.func)
    if not isinstance(cls, ast.ClassDef) or field_hashes.hashes_fields(cls, module.names):
        return None
    why = _class_unhashable(cls, module)
    return f"an instance of `{cls.name}` ({why})" if why else None


def _fields_unhashable(call: ast.Call, module, arrays: bool) -> str | None:
    """An instance of a class hashed by its fields (a frozen dataclass, an Equinox module, a Flax
    dataclass; of this module or another of the project) built by `call` that holds an
    unhashable value: one it is given (with `arrays` false, only a container: arrays are None in
    the non-array half of `eqx.partition`), or, where its own `__init__` decides the fields, one
    it declares a list, dict or set (with `arrays`, an array)."""
    classes = module.project.class_of if module.project is not None else None
    found = field_hashes.class_of(call.func, module.names, module.names.read_scope.get(id(call.func)), classes)
    if found is None or not field_hashes.hashes_fields(found[1], found[0]):
        return None
    names, cls = found
    if field_hashes.own_constructor(cls):
        held = field_hashes.unhashable_field(cls, names, arrays)
    else:
        given = (*call.args, *(k.value for k in call.keywords))
        kinds = (_unhashable_argument(v, module, 1) if arrays else _LITERALS.get(type(v)) for v in given)
        held = next((kind for kind in kinds if kind), None)
    return f"an instance of `{cls.name}` (hashed by its fields) holding {held}" if held else None


def _partition_half(arg: ast.AST, module) -> str | None:
    """A half of `eqx.partition(tree, ...)` (or `eqx.filter`) of an instance that keeps a container
    field: both halves keep it, so neither hashes."""
    if not isinstance(arg, ast.Name):
        return None
    tree = field_hashes.partitioned(arg, module.names)
    made = tree
    if isinstance(tree, ast.Name):
        values = module.names.assignments(tree)
        made = values[0] if len(values) == 1 else None
    if not isinstance(made, ast.Call):
        return None
    held = _fields_unhashable(made, module, arrays=False)
    return f"a half of `{ast.unparse(tree)}` from `eqx.partition`, {held}" if held else None


def _self_unhashable(root, param: ast.arg, module) -> str | None:
    fn = root.node
    cls = module.names.parent_class.get(id(fn))
    positional = [*fn.args.posonlyargs, *fn.args.args]
    if cls is None or not positional or positional[0] is not param or root.bound_positional:
        return None
    why = _class_unhashable(cls, module)
    return f"(an instance of `{cls.name}`, {why}) is unhashable" if why else None


def _class_unhashable(cls: ast.ClassDef, module) -> str | None:
    """Why instances of a class cannot be hashed, when the class says so itself."""
    defines = {
        node.name for node in cls.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    } | {
        target.id for node in cls.body if isinstance(node, ast.Assign)
        for target in node.targets if isinstance(target, ast.Name)
    }
    options = field_hashes.dataclass_options(cls, module.names)
    if "__eq__" in defines and "__hash__" not in defines and not (
        options is not None and field_hashes.literal_true(options.get("unsafe_hash"), False)
    ):
        return "which defines `__eq__` without `__hash__`"  # `unsafe_hash=True` adds one
    if (
        options is None or "__hash__" in defines or field_hashes.hashes_by_fields(options)
        or not field_hashes.literal_true(options.get("eq"), True)
    ):
        return None
    return "a dataclass that is not frozen"
