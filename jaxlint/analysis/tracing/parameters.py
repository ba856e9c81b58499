"""Parameter values of an analysed call: arguments bound to a function's parameters as Python binds them."""

from __future__ import annotations

import ast
from typing import Callable

from jaxlint.analysis.engine.arguments import NAMED, POSITIONAL, STAR, bind_kinds
from jaxlint.analysis.engine.lattice import (
    STATIC,
    TRACED,
    TRACED_ARRAY,
    TRACED_BOOL,
    UNKNOWN,
    FunctionValue,
    Trace,
    Value,
    arrays_traced,
    constant,
    join_all,
)
from jaxlint.analysis.engine.named_tuples import builds_named_tuple
from jaxlint.analysis.engine.names import FunctionNode, Names
from jaxlint.analysis.knowledge import array_api, jax_api
from jaxlint.analysis.tracing.traced_functions import ANY_KEYWORD, NOTHING_BOUND, Bound
from jaxlint.analysis.tracing.tracing import positional_params


def body_parameters(
    fn: FunctionNode,
    call: ast.Call,
    callee: str,
    bound: Bound = NOTHING_BOUND,
    fixed: FunctionValue | None = None,
    carry: Value | None = None,
    sliced: Value | None = None,
    operands: list[Value] | None = None,
    index: Value | None = None,
) -> dict[str, Value]:
    """Parameter values of a control-flow body: the operands the primitive passes are traced
    (a fori_loop's `index`, when given, is what its first parameter holds).

    Arguments `functools.partial` fixed keep their values: what the analysis knows of them
    (`fixed`, in traced code), else a constant's value or STATIC (eager code holds no tracers).
    """
    arity = jax_api.CONTROL_FLOW[callee].arity
    given = [STATIC] * bound.given_functions
    params = positional_params(fn)[bound.positional + len(given):]
    if arity == jax_api.EVERY_PARAMETER:
        values = bind_arguments(fn, [STATIC] * bound.positional + [TRACED_ARRAY] * len(params), _bound_keywords(fn, bound))
        if fn.args.vararg is not None:
            values[fn.args.vararg.arg] = Value(Trace.TRACED, element=TRACED_ARRAY)
        return values
    if arity == jax_api.OPERANDS and operands is not None:  # a cond's operands, as each branch receives them
        passed = list(operands)
    else:
        if arity == jax_api.OPERANDS:  # cond/switch: every operand after the branches
            arity = max(len(call.args) - (3 if callee == "jax.lax.cond" else 2), 0)
        passed = [TRACED] * arity
    if carry is not None:
        passed[_CARRIES[callee][1]] = carry
    if index is not None:
        passed[0] = index
    if callee == "jax.lax.scan" and len(params) >= 2 and _scan_without_xs(call):
        passed[1] = STATIC
    elif sliced is not None and (sliced.items is not None or sliced.array):
        passed[_SLICES[callee][1]] = sliced  # slices of arrays are arrays, of a tuple a tuple
    if fn.args.vararg is None:
        passed = passed[: len(params)]
    spread = any(isinstance(a, ast.Starred) for a in call.args)  # `lax.cond(p, f, g, *operands)`
    if fixed is not None:
        return bind_arguments(fn, [*fixed.bound, *given, *passed], dict(fixed.keywords), fixed.method_self, spread=spread)
    return bind_arguments(fn, [STATIC] * bound.positional + given + passed, _bound_keywords(fn, bound), spread=spread)


def with_residuals(
    bwd: FunctionNode, params: dict[str, Value], leading: frozenset[str], returned: Value | None,
) -> dict[str, Value]:
    """A custom_vjp's backward rule receives the residuals its forward rule returned, the second
    item of `(out, residuals)`, as they were built: the arrays in them traced, the Python values
    (shapes, callables, None) as they are. `leading`: the `nondiff_argnums` before them."""
    if returned is None or returned.items is None or len(returned.items) != 2 or isinstance(bwd, ast.Lambda):
        return params
    positional = [p.arg for p in positional_params(bwd) if p.arg not in leading]
    if not positional:
        return params
    return {**params, positional[0]: arrays_traced(returned.items[1])}


def kernel_parameters(fn: FunctionNode, bound: Bound, ref: Value) -> dict[str, Value]:
    """Parameter values of a Pallas kernel: every positional parameter `functools.partial` did
    not fix is a reference, `ref` (`*refs` a sequence of them); what `partial` fixed is a Python value."""
    refs = len(positional_params(fn)) - bound.positional
    params = bind_arguments(fn, [STATIC] * bound.positional + [ref] * refs, _bound_keywords(fn, bound))
    if fn.args.vararg is not None:
        params[fn.args.vararg.arg] = Value(Trace.UNKNOWN, element=ref)
    return params


def _bound_keywords(fn: FunctionNode, bound: Bound) -> dict[str, Value]:
    """Keyword arguments fixed by `functools.partial` in eager code: Python values."""
    keywords = {name: STATIC for name in bound.keywords if name != ANY_KEYWORD}
    keywords.update((name, fixed_argument(fn, name, e, STATIC)) for name, e in bound.values)
    return keywords


def fixed_argument(fn: FunctionNode, name: str, expr: ast.expr, value: Value) -> Value:
    """The value of a keyword argument `functools.partial` fixes (`value`, what else is known of it).

    A literal is its value.  Fixing a parameter whose default is None only makes sense with
    a value, so one read from an object or computed (`nbrs.capacity`, `sizes[0]`, `n + 1`) is
    taken not to be None; a name may forward an optional argument's None, and a call or a
    conditional expression may produce one: those stay undecided."""
    if isinstance(expr, ast.Constant):
        return constant(expr.value)
    if value.none is None and isinstance(expr, _COMPUTED) and _defaults_to_none(fn, name):
        return value.but(not_none=True)
    return value


_COMPUTED = (ast.Attribute, ast.Subscript, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Tuple, ast.List, ast.Dict)


def _defaults_to_none(fn: FunctionNode, name: str) -> bool:
    a = fn.args
    for param in (*positional_params(fn), *a.kwonlyargs):
        if param.arg == name:
            default = default_of(fn, param)
            return isinstance(default, ast.Constant) and default.value is None
    return False


_MAX_NAME_HOPS = 4  # names bound to names, followed to what they hold

# Loops whose body receives a carry: the position of its initial value among the call's
# arguments (and its keyword), and the carry's position among the body's parameters.
_CARRIES = {
    "jax.lax.while_loop": ((2, "init_val"), 0),
    "jax.lax.fori_loop": ((3, "init_val"), 1),
    "jax.lax.scan": ((1, "init"), 0),
}
# Loops whose body receives slices of a pytree of arrays: where the pytree is passed, and
# the slice's position among the body's parameters.
_SLICES = {
    "jax.lax.scan": ((2, "xs"), 1),
    "jax.lax.map": ((1, "xs"), 0),
}


def carry_operand(call: ast.Call, callee: str, args: list[Value], keywords: dict[str, Value]) -> Value | None:
    """The value of a loop's initial carry, when the primitive has one and it is passed."""
    return _operand(_CARRIES, call, callee, args, keywords)


def sliced_operand(call: ast.Call, callee: str, args: list[Value], keywords: dict[str, Value]) -> Value | None:
    """The pytree a loop slices for its body (`xs` of scan and map), when passed."""
    return _operand(_SLICES, call, callee, args, keywords)


def carry_structure(call: ast.Call, callee: str, names: Names) -> Value | None:
    """What a body called from eager code knows of its carry from the call's syntax alone: a
    NamedTuple's fields are all pytree children, so each is traced; a tuple or list literal
    keeps its items, each a traced array where it is written as a number or a call that makes
    one JAX array (`(jnp.zeros(n, bool), x, 0)`); a tuple repeated (`(0,) * len(grid)`) holds
    copies of its items; a name bound once, by a plain assignment, holds what was assigned."""
    spec = _CARRIES.get(callee)
    if spec is None:
        return None
    (index, keyword), _ = spec
    init = call.args[index] if index < len(call.args) else None
    init = init or next((k.value for k in call.keywords if k.arg == keyword), None)
    if init is None or isinstance(init, ast.Starred):
        return None
    return _leaves_traced(init, names)


def _leaves_traced(init: ast.expr, names: Names, depth: int = 0) -> Value | None:
    if isinstance(init, ast.Name) and depth < _MAX_NAME_HOPS:
        # A name bound once, by a plain assignment, holds what was assigned (a list may have
        # been changed in place since).
        owner = names.lookup(init.id, names.read_scope.get(id(init), names.module))
        values = owner.assigned.get(init.id, []) if owner is not None else []
        once = len(values) == 1 and init.id not in owner.other and init.id not in owner.params
        held = _leaves_traced(values[0], names, depth + 1) if once and not isinstance(values[0], ast.List) else None
        if held is not None:
            return held
    if isinstance(init, ast.BinOp) and isinstance(init.op, ast.Mult):
        # `(0,) * len(grid)`: a tuple of that many copies of its items.
        display = next((side for side in (init.left, init.right) if isinstance(side, ast.Tuple)), None)
        if display is None or not display.elts or any(isinstance(e, ast.Starred) for e in display.elts):
            return None
        leaves = [_leaves_traced(e, names, depth) for e in display.elts]
        if any(leaf is None for leaf in leaves):
            return None
        return Value(Trace.TRACED, element=join_all(leaves), not_none=True)
    if builds_named_tuple(init, names):
        return Value(Trace.TRACED, fields=True)
    if isinstance(init, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in init.elts):
        items = tuple(_leaves_traced(e, names, depth) or TRACED for e in init.elts)
        return Value(Trace.TRACED, items=items, not_none=True)
    if isinstance(init, ast.Constant) and type(init.value) in (int, float, bool, complex):
        return Value(Trace.TRACED, array=True, boolean=isinstance(init.value, bool), not_none=True)
    if isinstance(init, ast.Constant) and init.value is None:
        return constant(None)  # an empty pytree: it stays None
    if isinstance(init, ast.Call):
        callee = names.qualname(init.func)
        if array_api.array_function(callee):
            return TRACED_BOOL if array_api.asks_boolean(init, callee, names.qualname) else TRACED_ARRAY
    return None


def _operand(table: dict, call: ast.Call, callee: str, args: list[Value], keywords: dict[str, Value]) -> Value | None:
    spec = table.get(callee)
    if spec is None:
        return None
    (index, keyword), _ = spec
    if index < len(args) and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return args[index]
    return keywords.get(keyword)


def spread_arguments(args: list[ast.expr], values: list[Value]) -> list[Value] | None:
    """The positional arguments' values as the callee receives them: a `*` argument of a tuple or
    list whose length is known (`*(state, params)`) spreads into its items. None when a `*`
    argument's length is not known: which parameter each later argument reaches is not either."""
    spread: list[Value] = []
    for arg, value in zip(args, values):
        if not isinstance(arg, ast.Starred):
            spread.append(value)
        elif value.items is not None:
            spread.extend(value.items)
        else:
            return None
    return spread


def _scan_without_xs(call: ast.Call) -> bool:
    xs = call.args[2] if len(call.args) > 2 else next((k.value for k in call.keywords if k.arg == "xs"), None)
    return xs is None or (isinstance(xs, ast.Constant) and xs.value is None)


def bind_arguments(
    fn: FunctionNode, args: list[Value], kwargs: dict[str, Value], method_self: Value | None = None,
    default: Callable[[FunctionNode, ast.arg], Value] | None = None, spread: bool = False,
) -> dict[str, Value]:
    """Parameter values for a call, bound as `engine.arguments` binds (the one binder): positional,
    keyword, what `*args` and `**kwargs` collect, then defaults (STATIC, or what `default` makes of
    one) or UNKNOWN. `method_self` is the instance a method is called through, which a static
    method is not given. `spread`: more positional arguments follow `args` from an iterable whose
    length is not known (`f(x, *xs)`): the parameters they may fill are UNKNOWN, and of what
    `*args` collects only the values are known, not how many."""
    a = fn.args
    positional = positional_params(fn)
    implicit = 1 if method_self is not None and positional and not _static_method(fn) else 0
    kinds = [(POSITIONAL, None)] * len(args) + [(NAMED, name) for name in kwargs]
    if spread:
        kinds.append((STAR, None))
    found = bind_kinds(fn, kinds, implicit)
    actuals = [*args, *kwargs.values()]
    params: dict[str, Value] = {positional[0].arg: method_self} if implicit else {}
    params.update((param, actuals[i]) for param, i in found.given.items())
    if a.vararg is not None:
        extra = [actuals[i] for i in found.collected]
        params[a.vararg.arg] = Value(
            join_all(extra).trace, items=None if spread else tuple(extra), element=join_all(extra, STATIC)
        )
    if a.kwarg is not None:
        # What `**kwargs` collects is a dict whose keys are known: forwarded on
        # (`g(**kwargs)`), each keyword reaches its parameter with its own value.
        rest = {name: actuals[i] for name, i in found.collected_names.items()}
        params[a.kwarg.arg] = Value(join_all(list(rest.values()), STATIC).trace, not_none=True, entries=tuple(rest.items()))
    for param in (*positional, *a.kwonlyargs):
        if param.arg not in params:
            params[param.arg] = UNKNOWN if param.arg in found.spread else (default or default_value)(fn, param)
    return params


def _static_method(fn: FunctionNode) -> bool:
    return not isinstance(fn, ast.Lambda) and any(
        isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list
    )


def default_value(fn: FunctionNode, param: ast.arg) -> Value:
    default = default_of(fn, param)
    if default is None:
        return UNKNOWN
    return constant(default.value) if isinstance(default, ast.Constant) else STATIC


def default_of(fn: FunctionNode, param: ast.arg) -> ast.expr | None:
    """The default value expression of a parameter, if it has one."""
    a = fn.args
    positional = positional_params(fn)
    if param in positional:
        index = positional.index(param) - (len(positional) - len(a.defaults))
        return a.defaults[index] if index >= 0 else None
    if param in a.kwonlyargs:
        return a.kw_defaults[a.kwonlyargs.index(param)]
    return None


def has_default(fn: FunctionNode, param: ast.arg) -> bool:
    return default_of(fn, param) is not None
