"""Finding traced code: which functions run under a JAX transformation, how, and with which static parameters.

Recognised, through any import alias and `functools.partial`: transformation decorators,
call-site wrapping (`step = jax.jit(train_step, static_argnames=...)`, `jax.grad(f)(x)`),
nested transformations (`jax.jit(jax.grad(f))`), bodies handed to control-flow primitives
(lambdas included), and framework module methods (Flax, Equinox, Haiku).
"""

from __future__ import annotations

import ast
from dataclasses import replace

from jaxlint.analysis.engine.call_index import calls_through, spellings
from jaxlint.analysis.engine.names import FUNCTION_TYPES, FunctionNode, Names, Scope
from jaxlint.analysis.engine.walk import own_statements
from jaxlint.analysis.knowledge import jax_api
from jaxlint.analysis.knowledge.entry_points import (
    CLOSES_OVER_ARGUMENTS,
    ENTRY_POINTS,
    KERNEL_CALLS,
    LEADING,
    MODEL_ARGUMENTS_JITTED,
    REF_TREE_CALLS,
    RULE_REGISTRATIONS,
    SCHEDULE_KEYWORDS,
    entry_functions,
)
from jaxlint.analysis.knowledge.spellings import attribute_spellings
from jaxlint.analysis.tracing.callees import module_callees
from jaxlint.analysis.tracing.eager_blocks import DISABLE_JIT, EagerCalls, eager_calls
from jaxlint.analysis.tracing.static_arguments import (
    as_given_positions,
    positional_params,
    static_parameters,
    str_values,
)
from jaxlint.analysis.tracing.traced_functions import (
    ABSTRACT,
    ANY_KEYWORD,
    NOTHING_BOUND,
    STAGED,
    Bound,
    Context,
    Discovery,
    TracedFunction,
    Transform,
    context_of,
)
from jaxlint.analysis.tracing.transforms import PARTIAL, transform_of
from jaxlint.analysis.tracing.transforms import keywords as call_keywords
from jaxlint.analysis.tracing.wrapper_calls import own_parameter, wrapper_calls
from jaxlint.analysis.knowledge.decorators import plain

# Partial application: JAX's `Partial` is `functools.partial` registered as a pytree.
_REGISTERING_METHODS = frozenset(m for methods in RULE_REGISTRATIONS.values() for m in methods)
SCHEDULE_PREFIXES = tuple(SCHEDULE_KEYWORDS)
_SCHEDULE_NAMES = frozenset(name for names in SCHEDULE_KEYWORDS.values() for name in names)
# Calls that take the function they transform (or differentiate at once) first.
_FUNCTION_FIRST = jax_api.TRANSFORMS | jax_api.CALLING_DIFFERENTIATIONS
# What a method call must be named to matter to `discover`: most calls (`x.reshape(...)`,
# `self.layer(...)`) are not looked up at all.
_DISCOVERED_ATTRIBUTES = attribute_spellings(
    [*_FUNCTION_FIRST, *jax_api.CONTROL_FLOW, *KERNEL_CALLS, *ENTRY_POINTS, DISABLE_JIT]
) | _REGISTERING_METHODS


def discover(names: Names) -> Discovery:
    found = Discovery()
    for function in names.functions:
        if isinstance(function, ast.Lambda):
            continue
        scope = names.enclosing_scope(function)
        transforms = [t for d in function.decorator_list if (t := transform_of(d, names, scope))]
        if _traces(transforms):
            if not names.unreached(function, scope):  # a def after a `return` defines nothing
                found.roots.append(_traced(function, transforms, function.name, transforms[0].node))
        elif any(_registered_rules(d, [function], names, scope)[1] for d in function.decorator_list):
            for decorator in function.decorator_list:
                primal, registered = _registered_rules(decorator, [function], names, scope)
                for rule, static in registered:
                    found.derivative_rules.setdefault(id(primal), []).append(_framework_root(rule, NOTHING_BOUND, static))
        elif id(function) in names.parent_class and _is_framework_method(function, names):
            found.roots.append(
                TracedFunction(function, [], ABSTRACT, frozenset({first_param(function) or "self"}), framework_method=True)
            )
    aliases, Attribute, Name = names.imported_or_assigned, ast.Attribute, ast.Name
    wrappers: dict[int, list] = {}  # id(function) -> the parameters it transforms (`own_parameter`)
    disabling: dict[int, Scope] = {}  # the scopes that call `jax.disable_jit`
    # Names of the packages whose functions run a function given first (`optax.sgd(schedule)`).
    scheduling = {
        name for scope in names.scopes.values() for name, target in scope.imports.items()
        if target.startswith(SCHEDULE_PREFIXES) or target + "." in SCHEDULE_PREFIXES
    }
    for call, scope in names.calls:
        func = call.func
        if func.__class__ is Attribute:
            if func.attr not in _DISCOVERED_ATTRIBUTES and not (
                call.keywords and any(k.arg in _SCHEDULE_NAMES for k in call.keywords)
            ) and not (call.args and func.value.__class__ is Name and func.value.id in scheduling):
                continue
        elif func.__class__ is not Name or func.id not in aliases:
            continue  # a builtin, a def, a parameter or no name at all: none of them is a JAX callable
        callee = names.qualname(func, scope)
        if callee == DISABLE_JIT:
            disabling[id(scope.node)] = scope
            continue
        if callee is None:
            if (
                isinstance(call.func, ast.Attribute) and call.func.attr in _REGISTERING_METHODS
                and not names.unreached(call, scope)
            ):
                rules = [fn for arg in call.args for fn, _, _ in _wrapped_functions(arg, names, scope)]
                primal, registered = _registered_rules(call.func, rules, names, scope)
                roots = [_framework_root(rule, NOTHING_BOUND, static) for rule, static in registered]
                if call.func.attr == "defvjp" and len(roots) == 2:
                    roots[1].residuals_from = roots[0].node  # `f.defvjp(fwd, bwd)`
                if roots:
                    found.derivative_rules.setdefault(id(primal), []).extend(roots)
            continue
        if callee in _FUNCTION_FIRST:
            if not call.args:
                continue
        elif not (
            callee in jax_api.CONTROL_FLOW or callee in KERNEL_CALLS or callee in ENTRY_POINTS
            or callee.startswith(SCHEDULE_PREFIXES)
        ):
            continue
        if names.unreached(call, scope):
            continue  # a call after a `return` or `raise` is never made: it traces nothing
        if callee in _FUNCTION_FIRST or callee in KERNEL_CALLS:
            passed_on = [call.args[0]] if callee not in KERNEL_CALLS else entry_functions(
                callee, call.args, call_keywords(call), KERNEL_CALLS
            )
            for passed in passed_on:
                _apply(found, callee, call, passed, names, scope, names.call_targets.get(id(call)))
                parameter = own_parameter(passed, scope)
                if parameter is not None:
                    wrappers.setdefault(id(scope.node), []).append((parameter, callee, call))
        elif callee in jax_api.CONTROL_FLOW:
            for fn, bound, _ in control_flow_bodies(call, callee, names, scope):
                found.bodies.append((fn, call, callee))
                found.body_bound[(id(fn), id(call))] = bound
        elif callee in ENTRY_POINTS or callee.startswith(SCHEDULE_PREFIXES):
            as_given = callee in CLOSES_OVER_ARGUMENTS and not _jits_model_arguments(names)
            for passed in entry_functions(callee, call.args, call_keywords(call)):
                for fn, _, bound in _wrapped_functions(passed, names, scope):
                    root = _framework_root(fn, bound)
                    if as_given and not isinstance(fn, ast.Lambda):
                        a = fn.args
                        root.caller_params = frozenset(p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs))
                    found.roots.append(root)
    if wrappers:
        _through_wrappers(found, wrappers, names)
    if disabling:
        _run_eagerly(found, eager_calls(names, list(disabling.values())))
    return found


def _apply(
    found: Discovery, callee: str, call: ast.Call, passed: ast.AST, names: Names, scope, bound,
    keywords: dict[str, ast.expr] | None = None,
) -> None:
    """The roots of a transformation (or kernel call) `call` applied to what `passed` stands for;
    `keywords`: the transformation's, where they are not `call`'s own."""
    for fn, inner, partial_args in _wrapped_functions(passed, names, scope):
        if callee in KERNEL_CALLS:
            found.roots.append(_kernel_root(fn, partial_args, callee in REF_TREE_CALLS))
            continue
        transform = Transform(callee, call_keywords(call) if keywords is None else keywords, call)
        own = [] if isinstance(fn, ast.Lambda) else [
            t for d in fn.decorator_list if (t := transform_of(d, names, names.enclosing_scope(fn)))
        ]
        if _traces([transform, *inner, *own]):  # `jax.grad(f)` of a custom_vjp `f` traces nothing
            found.roots.append(_traced(fn, [transform, *inner], bound, call, partial_args))


def _through_wrappers(found: Discovery, wrappers: dict, names: Names) -> None:
    """`compile(step)` where `def compile(f): return jax.jit(f, ...)`: the wrapper's
    transformation applies to what each call of it passes (`wrapper_calls.py`)."""
    for call, scope, passed, callee, inner, keywords in wrapper_calls(names, wrappers):
        _apply(found, callee, inner, passed, names, scope, names.call_targets.get(id(call)), keywords)


def _run_eagerly(found: Discovery, blocks: EagerCalls) -> None:
    """Under `with jax.disable_jit():`, `jax.jit(f)(x)` calls `f` on `x` as it is, and a `lax`
    loop or branch calls its body on the values it is given: nothing of it is traced there."""
    found.roots = [
        root for root in found.roots
        if not (id(root.site) in blocks.applied and all(t.name in jax_api.EAGER_WITHOUT_JIT for t in root.transforms))
    ]
    found.eager = {
        id(call): blocks.calls[id(call)]
        for _, call, callee in found.bodies
        if callee in jax_api.EAGER_WITHOUT_JIT and id(call) in blocks.calls
    }


def _jits_model_arguments(names: Names) -> bool:
    """Whether a call of the module asks its sampler to compile the model's arguments in
    (`MCMC(kernel, jit_model_args=True)`): then the model receives them traced."""
    for call, _ in calls_through(names, spellings(names, {"numpyro.infer.MCMC", "numpyro.infer.mcmc.MCMC"})):
        for keyword in call.keywords:
            if keyword.arg == MODEL_ARGUMENTS_JITTED and not (
                isinstance(keyword.value, ast.Constant) and not keyword.value.value
            ):
                return True
    return False


def _framework_root(fn: FunctionNode, bound: Bound, static: frozenset[str] = frozenset()) -> TracedFunction:
    """A function a framework runs traced: its array arguments are traced."""
    root = TracedFunction(fn, [], ABSTRACT, static, framework_method=True)
    if not isinstance(fn, ast.Lambda):
        root.caller_params = frozenset(p.arg for p in fn.args.kwonlyargs)
    root.bound_positional = bound.positional
    root.bound_keywords = bound.keywords
    root.bound_values = bound.values
    return root


def _kernel_root(fn: FunctionNode, bound: Bound, trees: bool) -> TracedFunction:
    """A Pallas kernel: traced once per `pallas_call` trace, its parameters references."""
    root = TracedFunction(fn, [], STAGED, kernel=True, ref_trees=trees)
    root.bound_positional = bound.positional
    root.bound_keywords = bound.keywords
    root.bound_values = bound.values
    return root


def _registered_rules(func: ast.AST, rules: list, names: Names, scope: Scope) -> tuple[ast.AST | None, list]:
    """`f.defvjp(fwd, bwd)` or `@f.defjvp` of a `@jax.custom_vjp`/`custom_jvp` function `f`:
    `f` and the (rule, its static parameters) pairs it registers."""
    if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
        return None, []
    primal = names.definition(func.value, scope)
    if not isinstance(primal, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None, []
    outer = names.enclosing_scope(primal)
    for transform in (transform_of(d, names, outer) for d in primal.decorator_list):
        roles = RULE_REGISTRATIONS.get(transform.name, {}).get(func.attr) if transform else None
        if roles is None:
            continue
        nondiff = static_parameters(primal, {
            k: v for k, v in transform.keywords.items() if k in ("nondiff_argnums", "nondiff_argnames")
        })
        indices = [i for i, p in enumerate(positional_params(primal)) if p.arg in nondiff]
        out = []
        for rule, role in zip(rules, roles):
            params = positional_params(rule)
            chosen = range(len(indices)) if role == LEADING else indices
            out.append((rule, frozenset(params[i].arg for i in chosen if i < len(params))))
        return primal, out
    return None, []


def control_flow_bodies(call: ast.Call, callee: str, names: Names, scope: Scope | None):
    """The functions a control-flow primitive call traces (lambdas and named defs).

    Yields (function, arguments fixed by partial, the expression passed)."""
    given_function = jax_api.CONTROL_FLOW[callee].given_function
    for keyword, candidate in jax_api.passed_callables(call, callee, names.sequence_items):
        given = 1 if keyword in given_function else 0
        for fn, _, bound in _wrapped_functions(candidate, names, scope):
            yield fn, replace(bound, given_functions=given) if given else bound, candidate


def wrapped_elsewhere(expr: ast.AST, names: Names, scope: Scope | None):
    """What an expression passed to a transformation names of another module, read as
    `_wrapped_functions` reads it: `helpers.step`, `partial(step, model=m)` with `step`
    imported, a name bound once to either. Yields (the name, the arguments `partial` fixes)."""
    for leaf, inner, bound in _wrapped_functions(expr, names, scope, elsewhere=True):
        if not inner and isinstance(leaf, (ast.Name, ast.Attribute)):
            yield leaf, bound


def _wrapped_functions(expr: ast.AST, names: Names, scope: Scope | None, depth: int = 0, elsewhere: bool = False):
    """Functions an expression passed to a transformation stands for, with inner transforms.

    Yields (function node, inner transforms, arguments bound by partial); with `elsewhere`,
    also the names it reaches that no def of this module binds (the node of the name).
    """
    if depth > 4:
        return
    if isinstance(expr, ast.Lambda):
        yield expr, [], NOTHING_BOUND
        return
    if isinstance(expr, ast.Name):
        rebinding = names.rebinding(expr, scope)
        if isinstance(rebinding, ast.Call):
            yield from _wrapped_functions(rebinding, names, scope, depth + 1, elsewhere)
            return
        definition = names.definition(expr, scope)
        if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield definition, [], NOTHING_BOUND
            return
        values = names.assignments(expr, scope)
        if len(values) == 1 and isinstance(values[0], (ast.Call, ast.Lambda)):
            yield from _wrapped_functions(values[0], names, scope, depth + 1, elsewhere)
        elif values and all(isinstance(v, ast.Name) for v in values):
            # `kernel = fast_kernel` on one path, `kernel = simple_kernel` on another: either runs.
            for value in values:
                yield from _wrapped_functions(value, names, scope, depth + 1, elsewhere)
        elif elsewhere and not values and definition is None:
            yield expr, [], NOTHING_BOUND
        return
    if isinstance(expr, ast.Attribute):
        # `self.f`, `obj.f` (an instance of a class of the module), `Cls.f`: the module's
        # resolver, with what reading the def that way binds (the instance, the class, nothing).
        target = module_callees(names).denoted(expr, scope)
        if target is not None:
            yield target.function, [], Bound(target.implicit, frozenset())
        elif elsewhere:
            yield expr, [], NOTHING_BOUND
        return
    if isinstance(expr, ast.Call):
        method = constructed_call_method(expr, names, scope)
        if method is not None:  # an instance of a class defined here: its `__call__` runs
            yield method, [], Bound(1, frozenset())
            return
        # `make_step()`, `self.make_step()`, `obj.to_reference()`: the def the resolver names.
        target = module_callees(names).denoted(expr.func, scope) if isinstance(expr.func, (ast.Name, ast.Attribute)) else None
        factory = target.function if target is not None else None
        if isinstance(factory, ast.FunctionDef) and plain(factory, names):
            # A function of the module returning a function (`return partial(energy, cutoff=c)`,
            # `return step`): what it returns is what is transformed.
            inner_scope = names.scopes.get(id(factory))
            for statement in own_statements(factory.body) if inner_scope is not None else ():
                if isinstance(statement, ast.Return) and statement.value is not None:
                    yield from _wrapped_functions(statement.value, names, inner_scope, depth + 1)
            return
        callee = names.qualname(expr.func, scope)
        if callee in PARTIAL and expr.args:
            keywords = frozenset(k.arg or ANY_KEYWORD for k in expr.keywords)
            values = tuple((k.arg, k.value) for k in expr.keywords if k.arg)
            for fn, inner, bound in _wrapped_functions(expr.args[0], names, scope, depth + 1, elsewhere):
                yield fn, inner, Bound(
                    bound.positional + len(expr.args) - 1, bound.keywords | keywords, bound.values + values
                )
            return
        if callee in jax_api.TRANSFORMS and expr.args:
            transform = Transform(callee, call_keywords(expr), expr)
            for fn, inner, bound in _wrapped_functions(expr.args[0], names, scope, depth + 1):
                yield fn, [transform, *inner], bound


def constructed_call_method(call: ast.Call, names: Names, scope: Scope | None):
    """The `__call__` of the object `call` constructs, when it builds a class defined in this
    module whose own plain `__call__` runs when the object is called (framework modules aside:
    their methods are traced roots of their own)."""
    return class_call_method(call.func, names, scope)


def class_call_method(cls_expr: ast.expr, names: Names, scope: Scope | None):
    """The plain `__call__` that calling an instance of the class `cls_expr` names runs, as
    `constructed_call_method` answers for a call that constructs one."""
    cls = names.definition(cls_expr, scope)
    if not isinstance(cls, ast.ClassDef) or id(cls) not in names.scopes:
        return None
    method = names.scopes[id(cls)].defs.get("__call__")
    if not isinstance(method, ast.FunctionDef) or not plain(method, names) or _is_framework_method(method, names):
        return None
    return method


def plain_class(func: ast.expr, names: Names, scope: Scope | None) -> bool:
    """`func` names a class defined in this module that is no framework module (whose instances
    the framework manages): calling it makes a plain Python object."""
    cls = names.definition(func, scope)
    if not isinstance(cls, ast.ClassDef) or id(cls) not in names.scopes:
        return False
    outer = names.enclosing_scope(cls)
    return not any(names.qualname(base, outer) in jax_api.MODULE_BASES for base in cls.bases)


def _traces(transforms: list[Transform]) -> bool:
    """Whether the transformations (outermost first) trace the function: not when each passes its
    caller's values through, nor a differentiation around a custom derivative, which calls the
    rules with the primal values instead of tracing the function."""
    custom = next((i for i, t in enumerate(transforms) if t.name in jax_api.CUSTOM_DERIVATIVES), -1)
    return any(
        t.name not in jax_api.PASS_THROUGH_TRANSFORMS and not (i < custom and t.name in jax_api.CONCRETE_TRANSFORMS)
        for i, t in enumerate(transforms)
    )


def _traced(
    function: FunctionNode,
    transforms: list[Transform],
    bound_name: str | None,
    site: ast.AST,
    bound: Bound = NOTHING_BOUND,
) -> TracedFunction:
    context: Context | None = None
    for t in reversed(transforms):  # innermost first
        context = context_of(t.name).inside(context)
    assert context is not None
    traced = TracedFunction(function, transforms, context, bound_name=bound_name, site=site)
    traced.bound_positional = bound.positional
    traced.bound_keywords = bound.keywords
    traced.bound_values = bound.values
    traced.filtering = any(t.name in jax_api.FILTERING_TRANSFORMS for t in transforms)
    jit = traced.static_transform
    if jit is not None:
        traced.static_params = static_parameters(function, jit.keywords, bound.positional, jit.name)
        if jit.name == "jax.jit" and function.args.kwarg is None:
            a = function.args
            params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
            traced.unknown_static_names = any(
                name not in params for name in str_values(jit.keywords.get("static_argnames"))
            )
    # A parameter every transformation passes as given (a vmap's `in_axes=None`, one no
    # differentiation traces) is the caller's value; one a jit traces is traced whatever else.
    positional = positional_params(function)[bound.positional:]
    given = None
    for t in transforms:
        positions = as_given_positions(t.name, t.node, t.keywords, len(positional))
        given = positions if given is None else given & positions
    if given:
        traced.caller_params |= frozenset(positional[i].arg for i in given if i < len(positional))
    if transforms and all(t.name in jax_api.CONCRETE_TRANSFORMS for t in transforms) and not isinstance(function, ast.Lambda):
        traced.caller_params |= frozenset(p.arg for p in function.args.kwonlyargs)  # keywords pass as given
    return traced


def receiver(names: Names, scope: Scope | None) -> str | None:
    """The name the enclosing method binds its instance (or class) to: its first parameter,
    whatever it is called; None outside methods and in static methods."""
    current = scope
    while current is not None and current.parent is not None and current.parent.kind != "class":
        current = current.parent
    if current is None or current.kind != "function" or isinstance(current.node, ast.Lambda):
        return None
    if any(names.qualname(d) == "builtins.staticmethod" for d in current.node.decorator_list):
        return None
    return first_param(current.node)


def first_param(function: ast.AST) -> str | None:
    """The first positional parameter (`self` of a method), if any."""
    if not isinstance(function, FUNCTION_TYPES):
        return None
    params = positional_params(function)
    return params[0].arg if params else None


def framework_class(cls: ast.ClassDef, names: Names) -> bool:
    """Whether a class of the module is a framework module (Flax, Equinox, Haiku): one of its bases is."""
    scope = names.enclosing_scope(cls) if id(cls) in names.scopes else names.module
    return any(names.qualname(base, scope) in jax_api.MODULE_BASES for base in cls.bases)


def _is_framework_method(function: ast.FunctionDef | ast.AsyncFunctionDef, names: Names) -> bool:
    cls = names.parent_class[id(function)]
    if not framework_class(cls, names):
        return False
    if function.name == "__call__":
        return True
    return any(
        names.qualname(d, names.scope_of(cls)) in jax_api.MODULE_METHOD_DECORATORS
        for d in function.decorator_list
    )


def is_function(node: ast.AST) -> bool:
    return isinstance(node, FUNCTION_TYPES)
