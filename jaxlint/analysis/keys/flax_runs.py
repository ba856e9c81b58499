"""Calls that run a Flax Linen module with a PRNG key, and which module they run.

Flax never draws from the key it is given (`m.init(key, x)`, `m.apply(v, x, rngs={"dropout":
key})`): every `make_rng` folds a SHA-1 hash of the calling module's path and a per-call
counter into it (`flax.core.scope.LazyRng`). So one key handed to two runs draws the same
numbers only where the same layer, at the same path, draws in both: two runs of one module.
Runs of different modules, and the key's own draws, splits and `fold_in`s, stay independent.
Two `init`s of one module with one key build the same parameters twice: a copy, which is how a
target network starts.

Which paths a module's `init` draws its parameters at is known for a class of the project: Flax
names a submodule made without `name=` `{Class}_{n}`, counting per class in the order they are
made (`Dense_0`, `Dense_1`, `MLP_0`), and one set up in `setup` after its attribute. Two `init`s of
different modules with one key draw the same numbers where both make a parameter-drawing
submodule at the same path (an actor and a critic that each start with an `MLP`).

Evidence that a call runs a Flax Linen module: the `rngs=` keyword (Linen's; Haiku takes its
key positionally), or `init` / `init_with_output` of a module the same function runs with
`rngs=`, of a name declared as a `flax.linen.Module` (a parameter's annotation), or of one bound
to an instance of a class of this module deriving from one.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from typing import Callable, Optional, Tuple

from jaxlint.analysis.engine.arguments import named_parameter
from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.engine.walk import walk
from jaxlint.analysis.knowledge.random_api import FLAX_DRAWING_LAYERS, MODULE_INITS, MODULE_RUNS
from jaxlint.analysis.tracing.linen_classes import LINEN_MODULE, linen_class

_DEPTH = 4  # how many module classes a base chain is followed through


@dataclass(frozen=True)
class FlaxRun:
    """One call running a Flax Linen module."""

    module: str  # the module expression as written (`critic_def`, `self.model`)
    init: bool  # `init` / `init_with_output`: builds parameters
    keys: tuple[ast.expr, ...]  # the argument expressions that carry its keys


def flax_run(call: ast.Call, names: Names, linen: frozenset[str] = frozenset()) -> FlaxRun | None:
    """The Flax run a call makes, if the syntax shows one; `linen`: the modules (as written) that
    the function runs with `rngs=` elsewhere (`linen_receivers`)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in MODULE_RUNS:
        return None
    init = func.attr in MODULE_INITS
    module = ast.unparse(func.value)
    for keyword in call.keywords:
        if keyword.arg == "rngs":
            return FlaxRun(module, init, (keyword.value,))
    if not init or not call.args or not (module in linen or _linen_module(func.value, names)):
        return None
    first = call.args[0]
    return FlaxRun(module, init, (first.value if isinstance(first, ast.Starred) else first,))


def linen_receivers(fn: ast.AST) -> frozenset[str]:
    """The modules (as written) a function runs with the `rngs=` keyword: Flax Linen modules,
    whose `init` is Flax's too."""
    return frozenset(
        ast.unparse(node.func.value)
        for node in walk(fn)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MODULE_RUNS
        and any(k.arg == "rngs" for k in node.keywords)
    )


def _linen_module(expr: ast.expr, names: Names) -> bool:
    """Whether an expression makes a Flax Linen module (`nn.Dense(3)`, `Model(...)` of a class of
    this module deriving from one), or is a name declared as, or bound only to, such a module."""
    if isinstance(expr, ast.Call):
        return _makes_linen(expr, names, names.read_scope.get(id(expr), names.module))
    if not isinstance(expr, ast.Name):
        return False
    scope = names.read_scope.get(id(expr), names.module)
    owner = names.lookup(expr.id, scope)
    if owner is None:
        return False
    if expr.id in owner.params:
        param = named_parameter(owner.node, expr.id) if hasattr(owner.node, "args") else None
        return param is not None and param.annotation is not None and names.qualname(param.annotation, owner) in LINEN_MODULE
    values = owner.assigned.get(expr.id, [])
    return bool(values) and all(isinstance(v, ast.Call) and _makes_linen(v, names, owner) for v in values)


def _makes_linen(call: ast.Call, names: Names, scope) -> bool:
    qualname = names.qualname(call.func, scope) or ""
    if qualname.startswith("flax.linen.") and qualname.rsplit(".", 1)[-1][:1].isupper():
        return True
    return linen_class(names.definition(call.func, scope), names)



# Where a class named in a module is defined: its module's names and statement (another module's too).
ClassOf = Callable[[ast.expr, Names], Optional[Tuple[Names, ast.ClassDef]]]


# Flax's transforms of a module class, whose lifted module names and splits its layers' keys its way.
_LIFTS = frozenset({"vmap", "scan", "remat", "checkpoint", "jit", "remat_scan", "map_variables", "shard_map"})
# What `draw_paths` gives for a class that makes a lifted module (`nn.vmap(Critic, ...)`): it draws
# parameters somewhere, at paths not known. Told apart by identity, never intersected.
UNPLACED = frozenset({"<lifted>"})


def draw_paths(names: Names, cls: ast.ClassDef, class_of: ClassOf, depth: int = _DEPTH) -> frozenset[str]:
    """The paths, below the module, of the submodules a Flax Linen class makes that draw parameters
    when it is initialised (`Dense_0`, `MLP_0`, `encoder` of `self.encoder = ...` in `setup`);
    `UNPLACED` where it makes a lifted module (`nn.vmap(Critic, ...)`), whose paths are not known."""
    found: set[str] = set()
    scope = names.scopes[id(cls)].parent or names.module
    for method in cls.body:
        if not isinstance(method, ast.FunctionDef):
            continue
        setup = method.name == "setup"
        if not setup and not any(_decorator(d) == "compact" for d in method.decorator_list):
            continue
        counters: dict[str, int | None] = {}
        calls = sorted((n for n in ast.walk(method) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
        for call in calls:
            if _lifted(call.func, names, scope):
                return UNPLACED
            kind = _layer(call.func, names, scope, class_of, depth)
            if kind is None:
                continue
            layer, draws = kind
            if draws is None:
                return UNPLACED
            named = next((k.value for k in call.keywords if k.arg == "name"), None)
            path = None
            if isinstance(named, ast.Constant) and isinstance(named.value, str):
                path = named.value
            elif setup:
                parent = names.parents.get(id(call))
                if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Attribute):
                    path = parent.targets[0].attr
            elif named is None:
                count = counters.get(layer, 0)
                if count is not None:
                    path = f"{layer}_{count}"
                    # Made in a loop, the later ones' numbers are not known.
                    counters[layer] = None if _in_loop(call, method, names) else count + 1
            if path is not None and draws:
                found.add(path)
    return frozenset(found)


def _lifted(func: ast.expr, names: Names, scope) -> bool:
    """Whether a call makes a module a Flax transform lifted (`nn.vmap(Critic, ...)(dims)`, or
    through a name bound to the lifted class)."""
    if isinstance(func, ast.Name):
        values = names.assignments(func)
        func = values[0] if len(values) == 1 else func
    if not isinstance(func, ast.Call):
        return False
    qualname = names.qualname(func.func, scope) or ""
    return qualname.startswith("flax.linen.") and qualname.rsplit(".", 1)[-1] in _LIFTS


def _layer(func: ast.expr, names: Names, scope, class_of: ClassOf, depth: int) -> tuple[str, bool | None] | None:
    """(class name, whether its `init` draws parameters: None where not known) of a Flax Linen
    module class a call makes."""
    qualname = names.qualname(func, scope) or ""
    if qualname.startswith("flax.linen."):
        name = qualname.rsplit(".", 1)[-1]
        return (name, name in FLAX_DRAWING_LAYERS) if name[:1].isupper() else None
    located = class_of(func, names)
    if located is None or depth <= 0:
        return None
    there, cls = located
    if not linen_class(cls, there):
        return None
    inner = draw_paths(there, cls, class_of, depth - 1)
    return cls.name, None if inner is UNPLACED else bool(inner)


def _in_loop(node: ast.AST, method: ast.AST, names: Names) -> bool:
    parent = names.parents.get(id(node))
    while parent is not None and parent is not method:
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return True
        parent = names.parents.get(id(parent))
    return False


def _decorator(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def streams_for_init(streams: ast.Dict, fn: ast.AST, names: Names) -> bool:
    """Whether a dict of streams is only ever the keys of an `init` (`m.init({"params": k,
    "dropout": k}, x)`, `jax.eval_shape(m.init, rngs, x)`, or a name bound to it once and handed
    to no other call): `init` keeps the parameters and discards the output, so what the streams
    other than `params` draw is not kept."""
    parents = names.parents
    parent = parents.get(id(streams))
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        name = parent.targets[0].id
        uses = [
            n for n in walk(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        ] if not isinstance(fn, ast.Module) else []
        return bool(uses) and all(_init_keys(use, parents) for use in uses)
    return _init_keys(streams, parents)


def _init_keys(expr: ast.expr, parents: dict) -> bool:
    """Whether `expr` is the keys argument of an `init` (not `init_with_output`, whose output is kept)."""
    call = parents.get(id(expr))
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "init":
        return bool(call.args) and call.args[0] is expr
    # `jax.eval_shape(m.init, rngs, x)` and the like: the keys follow the function
    first = call.args[0] if call.args else None
    return (
        isinstance(first, ast.Attribute) and first.attr == "init" and len(call.args) > 1 and call.args[1] is expr
    )
