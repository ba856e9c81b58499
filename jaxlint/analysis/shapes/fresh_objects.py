"""Objects made anew on every iteration of a loop, or on every call of a function called again
and again, that JAX's compilation cache compares by identity: a lambda, a nested def, a
`functools.partial`, an optax transformation (a tuple of fresh closures), an instance of a
class hashed by identity or holding a function its `__init__` makes. Passed as a static
argument (or to a jit that makes every non-array argument static), each is a new key.

`module` is the module's facts: loops, names, effects and the jits' signatures.
"""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.loop_variance import ASSIGN
from jaxlint.analysis.knowledge import jax_api
from jaxlint.analysis.knowledge.optax_objects import optax_factory
from jaxlint.analysis.shapes import jit_signature
from jaxlint.analysis.values.records import dataclass_like


def fresh_object(arg: ast.AST, loop: ast.AST, module) -> str | None:
    """Why an argument is an object made anew on every iteration and hashed by identity."""
    if isinstance(arg, ast.Name):
        made = [
            d for d in module.loops.definitions(arg.id, loop, arg)
            if d.kind == ASSIGN and isinstance(d.node, ast.Assign) or isinstance(d.node, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        if not made or not all(_made_here(d, module) for d in made):
            return None
        return f"`{arg.id}`, {_made_here(made[0], module)} made on every iteration (line {made[0].node.lineno})"
    what = identity_hashed(arg, module)
    return f"{what} made on every iteration" if what else None


def made_per_call(arg: ast.AST, site, module) -> str | None:
    """Why an argument is an object hashed by identity that the plain function making the call
    makes anew on each of its calls, when the module calls that function in a loop or more than
    once (`train()` building its optimizer, called once per run)."""
    fn = site.function
    if not isinstance(arg, ast.Name) or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    if fn.decorator_list or id(fn) in module.effects.contexts:
        return None  # a cache may hand back the same object; traced code runs once per trace
    scope = module.names.scopes.get(id(fn))
    name = arg.id
    if scope is None or name in scope.params or name in scope.other or name in scope.imports:
        return None
    made = scope.assigned.get(name, [])
    defined = scope.defs.get(name)
    if isinstance(defined, (ast.FunctionDef, ast.AsyncFunctionDef)) and not made:
        what, line = "a new function", defined.lineno
    elif made and defined is None and all(identity_hashed(value, module) for value in made):
        what, line = identity_hashed(made[0], module), made[0].lineno
    else:
        return None
    calls = jit_signature.plain_calls(module, fn)
    looped = next((c for c in calls if module.loops_around(c)), None)
    if looped is not None:
        repeated = f"called in a loop (line {looped.lineno})"
    elif len(calls) > 1:
        repeated = f"called on lines {', '.join(str(c.lineno) for c in calls)}"
    else:
        return None
    return f"`{name}`, {what} made on every call of `{fn.name}` (line {line}), which is {repeated}"


def _made_here(definition, module) -> str | None:
    if isinstance(definition.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return "a new function"
    return identity_hashed(definition.value, module)


def identity_hashed(expr: ast.AST, module) -> str | None:
    """A new lambda, partial, optax transformation or plain object: equal only to itself."""
    if isinstance(expr, ast.Lambda):
        return "a new lambda"
    if not isinstance(expr, ast.Call):
        return None
    callee = module.qualname(expr.func)
    if callee == "functools.partial":
        return "a new `functools.partial`"
    if optax_factory(callee):
        return f"a new optax transformation (`{callee[6:]}`, a tuple of fresh closures)"
    if callee == "flax.nnx.Optimizer":
        fresh = [identity_hashed(a, module) for a in (*expr.args, *(k.value for k in expr.keywords))]
        inner = next((f for f in fresh if f and f.startswith("a new optax")), None)
        if inner is not None:
            return f"a new `nnx.Optimizer` around {inner}"
        return None
    cls = module.names.definition(expr.func) if isinstance(expr.func, ast.Name) else None
    if isinstance(cls, ast.ClassDef) and jit_signature.identity_hashed(cls, module):
        return f"a new `{cls.name}` instance (hashed by identity)"
    field = _new_function_field(cls, module) if isinstance(cls, ast.ClassDef) else None
    if field is not None:
        return f"a new `{cls.name}` instance (its field `{field[0]}` is {field[1]} its `__init__` makes, equal only to itself)"
    return None


def _new_function_field(cls: ast.ClassDef, module) -> tuple[str, str] | None:
    """For a class compared field by field (an Equinox module, a dataclass): the field its
    `__init__` sets to a function made there (`self.forward = jax.jit(fn)`), and what it is.
    Every instance then differs from every other, whatever the arguments."""
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if not dataclass_like(cls, module.names) or init is None or not init.args.args:
        return None
    me = init.args.args[0].arg
    local_defs = {n.name for n in init.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for stmt in init.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target, value = stmt.targets[0], stmt.value
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me):
            continue
        if isinstance(value, ast.Lambda):
            return target.attr, "a lambda"
        if isinstance(value, ast.Name) and value.id in local_defs:
            return target.attr, f"the function `{value.id}`"
        callee = module.qualname(value.func) if isinstance(value, ast.Call) and value.args else None
        if callee in jax_api.TRANSFORMS or callee == "functools.partial":
            return target.attr, f"a new `{callee.split('.')[-1]}` function"
    return None
