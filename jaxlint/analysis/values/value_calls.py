"""How the value analysis evaluates calls into libraries and transformations.

A part of `_FunctionRun` (see `values.py`), kept apart because it is the analysis's table of
library behaviour: `functools.partial`, tree maps, `reduce`, JAX's staged namespaces, NumPy,
model sites; transformations (`jax.jit(f)` is a callable whose call analyses `f` in the
combined context) and control-flow primitives (their bodies are analysed staged).
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from jaxlint.analysis.engine.lattice import (
    REF,
    REF_TREE,
    STATIC,
    TRACED,
    TRACED_ARRAY,
    TRACED_BOOL,
    UNKNOWN,
    FunctionValue,
    Trace,
    Value,
    arrays_traced,
    as_traced,
    constant,
    element_of,
    join,
    join_all,
    named,
    named_of,
    record_value,
    strip,
)
from jaxlint.analysis.knowledge import jax_api
from jaxlint.analysis.knowledge.array_api import KIND_KEEPING_FUNCTIONS, NUMPY_ARRAY_CONSTRUCTORS, asks_boolean
from jaxlint.analysis.knowledge.call_results import BOOLEAN_FUNCTIONS, builtin_result, model_site_result
from jaxlint.analysis.knowledge.entry_points import KERNEL_CALLS, REF_TREE_CALLS
from jaxlint.analysis.tracing import type_tests
from jaxlint.analysis.tracing.array_annotations import declares_jax_array, declares_jax_arrays
from jaxlint.analysis.tracing.carry_returns import with_returned_arrays
from jaxlint.analysis.tracing.parameters import (
    bind_arguments,
    body_parameters,
    carry_operand,
    default_of,
    default_value,
    fixed_argument,
    kernel_parameters,
    sliced_operand,
    spread_arguments,
)
from jaxlint.analysis.tracing.static_arguments import as_given_positions, positional_params, static_parameters
from jaxlint.analysis.tracing.traced_functions import STAGED, Bound, Context, context_of
from jaxlint.analysis.tracing.tracing import control_flow_bodies
from jaxlint.analysis.tracing.transforms import PARTIAL

if TYPE_CHECKING:
    from jaxlint.analysis.engine.names import FunctionNode
    from jaxlint.analysis.values.value_env import Env

_COLLECTIVE_SUMS = frozenset({"jax.lax.psum"})


class CallEvaluation:
    """Calls whose callee is a library function, a transformation or a control-flow primitive."""

    def _library_call(self, node: ast.Call, callee: str, args: list[Value], kwargs: dict[str, Value], env: Env) -> Value:
        if callee in KERNEL_CALLS:
            self._kernel(callee, args, kwargs, env)
        if callee in jax_api.STATIC_QUERIES:
            if callee == "builtins.isinstance" and args:
                # Decided for a traced array as on a branch's edge, so `and`/`or` after the test
                # runs only as its outcome lets it.
                outcome = type_tests.traced_array_outcome(node, self.names, self.scope, lambda _: args[0])
                if outcome is not None:
                    return constant(outcome)
            counted = self._collected_count(node, args) if callee == "builtins.len" else None
            return STATIC if counted is None else constant(counted)
        if callee in PARTIAL:
            fn = args[0].function if args else None
            if fn is None:
                # `partial(jnp.var, keepdims=True)` is still a JAX operation.
                return self._jax_operation(node.args[0]) if node.args else UNKNOWN
            # Arguments fixed inside a transformation are its closure constants; fixed outside
            # one, they enter it as any argument does.
            kwargs = {
                k.arg: fixed_argument(fn.node, k.arg, k.value, kwargs[k.arg]) for k in node.keywords if k.arg in kwargs
            }
            fixed, keywords = _entering(fn, args[1:], kwargs, self.ctx.staged) if fn.transforms else (args[1:], kwargs)
            return Value(Trace.STATIC, function=replace(
                fn, bound=(*fn.bound, *fixed), keywords=(*fn.keywords, *keywords.items())
            ))
        if callee in _COLLECTIVE_SUMS and args and args[0].trace is Trace.STATIC and not args[0].array:
            # A sum over devices of a Python number is the axis size times it: a concrete value.
            return STATIC
        if callee in jax_api.TREE_MAPS:
            trees = args[1:]
            # The function gets one leaf of each tree: a leaf of a traced tree is a tracer, an
            # array (unless `is_leaf` stops the flattening at subtrees of its choosing).
            whole = "is_leaf" in kwargs
            leaves = [Value(t.trace, array=t.traced and not whole) for t in trees]
            result = Value(join_all(trees).trace) if trees else UNKNOWN
            if node.args:
                # The result holds what the function returns for each leaf, in the trees' structure.
                fn = self.eval(node.args[0], env)
                if fn.function is not None:
                    paths = [STATIC] if callee.endswith("_with_path") else []
                    result = self._call_function(fn.function, node, [*paths, *leaves], {}, env)
                    if trees and not whole:
                        return _mapped(trees[0], result)
                elif self.names.qualname(node.args[0], self.scope) in jax_api.STATIC_QUERIES:
                    result = STATIC  # `tree_map(jnp.iscomplexobj, tree)`: a tree of Python values
            return strip(result)
        if callee in jax_api.TREE_PASSTHROUGH:
            if not args:
                return STATIC
            first = args[0]
            if callee == "jax.tree_util.tree_flatten":
                return Value(first.trace, items=(Value(first.trace, element=element_of(first)), STATIC))
            if callee == "jax.tree_util.tree_leaves":
                return Value(first.trace, element=Value(first.trace, array=first.traced))
            return first.but(array=False, boolean=False, function=None, record=None)
        if callee in KIND_KEEPING_FUNCTIONS and node.args and not spreads(node):
            # An array of the first operand's kind: traced for a traced array, a NumPy array for
            # a NumPy one.
            first = args[0]
            return Value(first.trace, array=True, not_none=True) if first.traced else UNKNOWN
        if callee in jax_api.STRUCTURE_PRESERVING_FUNCTIONS:
            # A traced tree in gives a tree of the same kind out (a traced array an array);
            # what they make of a Python value depends on the value: not known here.
            first = args[0] if args else UNKNOWN
            return first.but(boolean=False, function=None, record=None) if first.traced else UNKNOWN
        if callee == "functools.reduce" and len(args) >= 2:
            return self._reduce(node, args, env)
        if callee == "dataclasses.replace" and args and args[0].traced and not args[0].array:
            return TRACED  # a copy of a traced pytree dataclass
        if callee.startswith("builtins."):
            return builtin_result(callee[9:], args)
        if callee in jax_api.INTEGER_HELPERS:
            return strip(join_all(args))
        if _staged(callee):
            if id(node) in self.analysis.compile_time_operations:
                # Under `jax.ensure_compile_time_eval()`, JAX computes on concrete inputs eagerly:
                # the result is traced only when an input is.
                inputs = join_all((*args, *kwargs.values()))
                boolean = inputs.traced and callee in BOOLEAN_FUNCTIONS
                return Value(inputs.trace, array=True, boolean=boolean, not_none=True)
            boolean = callee in BOOLEAN_FUNCTIONS or asks_boolean(node, callee, lambda e: self.names.qualname(e, self.scope))
            return TRACED_BOOL if boolean else TRACED_ARRAY
        if callee in jax_api.FRAMEWORK_ARRAYS:
            return TRACED_ARRAY
        if callee in jax_api.MODULE_APPLIES:
            return module_applied(args, kwargs)
        site = model_site_result(callee, args, kwargs)
        if site is not None:
            return site
        if callee in NUMPY_ARRAY_CONSTRUCTORS:
            # NumPy makes its array from concrete values, or raises on a tracer (where JAX107
            # reports it): what it returns is a NumPy array, never traced.
            return Value(Trace.STATIC, not_none=True)
        if callee.startswith(("numpy.", "math.")):
            joined = join_all(args)
            return Value(joined.trace, array=joined.traced)
        if self.analysis.imported is not None:
            return self.analysis.imported(callee, args, kwargs, self.ctx, self.depth, spreads(node), False)
        return UNKNOWN

    def _collected_count(self, node: ast.Call, args: list[Value]) -> int | None:
        """`len(args)` of the function's own `*args`, never rebound: the tuple holds the positional
        arguments the call passed beyond the named parameters, so its length is known where the
        call passed no `*iterable` (a tuple cannot grow; a list bound elsewhere could)."""
        vararg = self.fn.args.vararg
        if vararg is None or len(node.args) != 1 or not args or args[0].items is None:
            return None
        arg = node.args[0]
        if not isinstance(arg, ast.Name) or arg.id != vararg.arg:
            return None
        if arg.id in self.scope.assigned or arg.id in self.scope.other:
            return None
        return len(args[0].items)

    def _reduce(self, node: ast.Call, args: list[Value], env: Env) -> Value:
        """`functools.reduce(f, items[, initial])`: what `f` returns, given two items (or the initial value)."""
        element = join_all([element_of(args[1]), *args[2:3]])
        reducer = self.names.qualname(node.args[0], self.scope)
        if reducer is not None and _staged(reducer):
            return TRACED_BOOL if reducer in BOOLEAN_FUNCTIONS else TRACED_ARRAY
        if reducer is not None and reducer.startswith("operator."):
            return Value(element.trace, array=element.traced)
        if args[0].function is not None:
            return join(element, self._call_function(args[0].function, node, [element, element], {}, env))
        return UNKNOWN

    def _kernel(self, callee: str, args: list[Value], kwargs: dict[str, Value], env: Env) -> None:
        """A Pallas kernel given a `functools.partial` that fixes values of this trace
        (`pallas_call(partial(kernel, scale=scale), ...)` in a jitted function): the kernel is
        traced with them, its other parameters references."""
        (index, keyword), = KERNEL_CALLS[callee]
        given = args[index] if index < len(args) else kwargs.get(keyword)
        fn = given.function if given is not None else None
        if fn is None or not any(v.traced for v in (*fn.bound, *(v for _, v in fn.keywords))):
            return  # fixed in eager code: the kernel is a root of its own (`kernel_parameters`)
        bound = Bound(len(fn.bound), frozenset(name for name, _ in fn.keywords))
        params = kernel_parameters(fn.node, bound, REF_TREE if callee in REF_TREE_CALLS else REF)
        params.update(zip((p.arg for p in positional_params(fn.node)), fn.bound))
        params.update((name, value) for name, value in fn.keywords if name in params)
        self.analysis.analyze(fn.node, params, STAGED, self.closure(fn.node, env), self.depth + 1)

    def _call_function(
        self, fn: FunctionValue, node: ast.Call, args: list[Value], kwargs: dict[str, Value], env: Env
    ) -> Value:
        ctx = self.ctx
        for name in reversed(fn.transforms):
            ctx = context_of(name).inside(ctx)
        # `f(x, *xs)`: the items of a `*` argument whose length is known are arguments of their
        # own; past one whose length is not, where each argument lands is not known.
        spread = spreads(node)
        if spread:
            known = spread_arguments(node.args, args)
            spread = known is None
            args = known if known is not None else args[: next(i for i, a in enumerate(node.args) if isinstance(a, ast.Starred))]
        given_args, given_kwargs = args, kwargs
        if fn.transforms:
            args, kwargs = _entering(fn, args, kwargs, self.ctx.staged)
        params = bind_arguments(
            fn.node, [*fn.bound, *args], {**dict(fn.keywords), **kwargs}, fn.method_self, self.default_value,
            spread=spread,
        )
        if fn.static_params:
            # A static argument is the caller's Python value itself: what is known of it stays.
            given = bind_arguments(fn.node, [*fn.bound, *given_args], {**dict(fn.keywords), **given_kwargs}, fn.method_self)
            for name in fn.static_params:
                if name in params:
                    params[name] = _static(given[name])
        params = self.analysis.called(fn.node, params)
        result = self.analysis.analyze(fn.node, params, ctx, self.closure(fn.node, env), self.depth + 1)
        result = self._declared_result(fn.node, result, ctx, given_args, given_kwargs)
        if fn.transforms and result.trace is not Trace.STATIC:
            if all(t in jax_api.OUTPUT_PRESERVING_TRANSFORMS for t in fn.transforms):
                return as_traced(result)
            return TRACED
        return result

    def _declared_result(
        self, fn: FunctionNode, result: Value, ctx: Context, args: list[Value], kwargs: dict[str, Value]
    ) -> Value:
        """What a function declared to return JAX arrays (`-> jax.Array`, `-> list[jax.Array]`)
        returns where its body does not show it (a call into code the analysis cannot see),
        called in a trace with a traced argument: arrays computed from a tracer, traced."""
        if not ctx.abstract or isinstance(fn, ast.Lambda) or result.trace is Trace.STATIC:
            return result
        if result.function is not None or result.record is not None or result.fields:
            return result
        if not any(v.traced for v in (*args, *kwargs.values())):
            return result
        if result.items is None and result.element is None and not result.array:
            return TRACED_ARRAY if declares_jax_array(fn.returns, self.names) else result
        element = result.element
        if result.items is None and element is not None and not element.array and declares_jax_arrays(fn.returns, self.names):
            return Value(Trace.TRACED, element=TRACED_ARRAY, not_none=True)
        return result

    def default_value(self, fn: FunctionNode, param: ast.arg) -> Value:
        """A parameter's default where the call leaves it: a literal, or the module (or member of
        one) it names (`xnp=np`), so that `xnp.stack(...)` is NumPy's; else a Python value."""
        default = default_of(fn, param)
        if isinstance(default, (ast.Name, ast.Attribute)):
            root = default
            while isinstance(root, ast.Attribute):
                root = root.value
            scope = self.names.enclosing_scope(fn)
            owner = self.names.lookup(root.id, scope) if isinstance(root, ast.Name) else None
            qualname = self.names.qualname(default, scope) if owner is not None and root.id in owner.imports else None
            if qualname is not None:
                return named(qualname)
        return default_value(fn, param)

    def _transform(self, node: ast.Call, callee: str, env: Env) -> Value:
        """`jax.grad(f)` evaluates to a callable; calling it analyses `f` in the combined context."""
        for arg in node.args[1:]:
            self.eval(arg, env)
        for k in node.keywords:
            self.eval(k.value, env)
        if not node.args:
            return UNKNOWN
        inner = self.eval(node.args[0], env)
        if inner.function is None:
            # `jax.vmap(jnp.var)` maps a JAX operation: called, it stages one, as the operation does.
            return self._jax_operation(node.args[0]) if callee in jax_api.OUTPUT_PRESERVING_TRANSFORMS else UNKNOWN
        if callee in jax_api.IDENTITY_TRANSFORMS:
            return inner
        static = inner.function.static_params
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        if callee in jax_api.STATIC_ARG_TRANSFORMS:
            static = static_parameters(inner.function.node, keywords, len(inner.function.bound), callee)
        count = len(positional_params(inner.function.node)) - len(inner.function.bound) - (
            inner.function.method_self is not None
        )
        as_given = as_given_positions(callee, node, keywords, count)
        if inner.function.transforms:
            as_given &= inner.function.as_given
        return Value(Trace.STATIC, function=replace(
            inner.function, transforms=(callee, *inner.function.transforms), static_params=static,
            as_given=as_given,
        ))

    def _differentiated(self, node: ast.Call, callee: str, env: Env) -> None:
        """`jax.vjp(f, *primals)`, `jax.linearize(f, *primals)`, `jax.jvp(f, primals, tangents)`
        call `f` at once on the primals, inside the trace around the call: `f` is analysed as that
        call runs it (a differentiation inside a jitted function traces it abstractly)."""
        func = self.eval(node.args[0], env) if node.args else UNKNOWN
        if func.function is None:
            return
        if callee == "jax.jvp":
            primals = node.args[1] if len(node.args) > 1 else None
            if not isinstance(primals, (ast.Tuple, ast.List)):
                return
            given = primals.elts
        else:
            given = node.args[1:]
        if any(isinstance(a, ast.Starred) for a in given):
            return
        function = replace(func.function, transforms=(callee, *func.function.transforms))
        self._call_function(function, node, [self.eval(a, env) for a in given], {}, env)

    def _jax_operation(self, func: ast.expr) -> Value:
        """A callable standing for the JAX operation `func` names (or one already held so), whose
        call is evaluated as the operation's; UNKNOWN where `func` is no JAX operation."""
        value = self.analysis.values.get(id(func))
        qualname = self.names.qualname(func, self.scope) or named_of(value)
        return named(qualname) if qualname is not None and _staged(qualname) else UNKNOWN

    def _control_flow(self, node: ast.Call, callee: str, env: Env) -> Value:
        operands = [self.eval(arg, env) for arg in node.args]
        keywords = {k.arg: self.eval(k.value, env) for k in node.keywords}
        init = carry_operand(node, callee, operands, keywords)
        xs = sliced_operand(node, callee, operands, keywords)
        ctx = STAGED.inside(self.ctx)
        index = None
        if callee == "jax.lax.fori_loop" and id(node) in self.analysis.eager and _python_bounds(node, operands):
            # Under `with jax.disable_jit():` a fori_loop with Python bounds is a Python loop,
            # even while tracing: its body runs in the trace around it, its index a Python int.
            ctx, index = self.ctx, STATIC
        branch_operands = None
        spread = spread_arguments(node.args, operands)
        if callee in jax_api.BRANCH_OPERANDS and spread is not None:
            # An operand whose pytree children are known keeps its structure in the branches.
            branch_operands = [
                as_traced(v) if v.fields or v.record and v.record.leaves_known else TRACED
                for v in spread[jax_api.BRANCH_OPERANDS[callee]:]
            ]
        carry = with_returned_arrays(None if init is None else as_traced(init), node, callee, self.names)
        returned = []
        for fn_node, bound, passed in control_flow_bodies(node, callee, self.names, self.scope):
            value = self.analysis.values.get(id(passed))
            fixed = value.function if value is not None and value.function is not None else None
            fixed = fixed if fixed and fixed.node is fn_node else None
            values = body_parameters(
                fn_node, node, callee, bound, fixed, carry, None if xs is None else as_traced(xs), branch_operands, index,
            )
            returned.append(self.analysis.analyze(fn_node, values, ctx, self.closure(fn_node, env), self.depth + 1))
        return _control_flow_result(callee, carry, returned)


# What the primitives return, by the structure JAX requires: a loop's final carry has the
# structure of its initial carry, a scan's stacked outputs (and a map's) that of what its body
# returns beside the carry, a branch's result that of what each branch returns; every leaf a
# traced array.
_CARRY_RESULTS = frozenset({"jax.lax.while_loop", "jax.lax.fori_loop", "equinox.internal.while_loop"})
_BODY_RESULTS = frozenset({"jax.lax.map", "jax.lax.cond", "jax.lax.switch"})


def _control_flow_result(callee: str, carry: Value | None, returned: list[Value]) -> Value:
    if callee in _CARRY_RESULTS:
        return TRACED if carry is None else as_traced(carry)
    if callee in _BODY_RESULTS and returned:
        return as_traced(join_all(returned))
    if callee == "jax.lax.scan":
        body = join_all(returned, UNKNOWN)
        stacked = as_traced(body.items[1]) if body.items is not None and len(body.items) == 2 else TRACED
        return Value(Trace.TRACED, items=(TRACED if carry is None else as_traced(carry), stacked), not_none=True)
    return TRACED


def _mapped(tree: Value, leaf: Value) -> Value:
    """What a tree map returns for a tree whose structure is known, the function returning `leaf`
    for a traced array leaf: the same structure (a record's fields, a tuple's items), each array
    leaf `leaf`, None staying None, any other part a tree of what the function returns."""
    record = tree.record
    if record is not None and record.leaves_known:
        return record_value(record.with_values(tuple(
            v if name in record.static else _mapped(v, leaf) for name, v in zip(record.names, record.values)
        )))
    if tree.items is not None:
        items = tuple(_mapped(item, leaf) for item in tree.items)
        return Value(join_all(items).trace, items=items, not_none=True)
    if tree.array:
        return leaf
    return tree if tree.none else strip(leaf)


def spreads(node: ast.Call) -> bool:
    """Whether a call unpacks an iterable into its positional arguments (`f(*xs)`)."""
    return any(isinstance(a, ast.Starred) for a in node.args)


def _python_bounds(node: ast.Call, operands: list[Value]) -> bool:
    """Whether a fori_loop's bounds (its first two arguments) are Python values."""
    return len(operands) >= 2 and not any(isinstance(a, ast.Starred) for a in node.args[:2]) and not (
        operands[0].traced or operands[1].traced
    )


def _staged(callee: str) -> bool:
    """A JAX operation: inside traced code its result is traced whatever its inputs."""
    if callee in jax_api.PALLAS_OBJECTS:
        return False
    return callee in jax_api.STAGED_FUNCTIONS or callee.startswith(jax_api.STAGED_NAMESPACES)


# Namespaces among the staged ones whose functions make other objects than arrays (meshes,
# shardings, initialisers).
_NOT_ARRAY_MAKERS = ("jax.experimental.", "jax.nn.initializers.")


def computes_array(callee: str | None) -> bool:
    """A call of a JAX operation that computes an array (not a query of metadata, an integer
    helper, or a maker of meshes, shardings or initialisers)."""
    return (
        callee is not None and _staged(callee) and callee not in jax_api.STATIC_QUERIES
        and callee not in jax_api.INTEGER_HELPERS and not callee.startswith(_NOT_ARRAY_MAKERS)
    )


def module_applied(args: list[Value], kwargs: dict[str, Value]) -> Value:
    """What a model's `apply` returns: traced where a variable or an input is (its outputs are
    computed from them), a pair of traced values where `mutable=` is a literal other than False
    (outputs and updated state), of unknown structure where `mutable` is not known."""
    if not any(v.traced for v in (*args, *kwargs.values())):
        return UNKNOWN
    mutable = kwargs.get("mutable")
    if mutable is None or mutable.known == (False,):
        return TRACED
    return Value(Trace.TRACED, items=(TRACED, TRACED)) if mutable.known or mutable.items is not None else TRACED


def _entering(
    fn: FunctionValue, args: list[Value], kwargs: dict[str, Value], staged: bool
) -> tuple[list[Value], dict[str, Value]]:
    """Arguments as a transformed function receives them: traced, except static ones and those
    passed as given (a vmap's `in_axes=None` ones, a differentiation's outside `argnums` and its
    keyword arguments), which pass as they are. Where a differentiation made in staged code is
    given a value the analysis cannot see, it is taken as traced, as what staged code computes
    is. Equinox's filtering transformations trace arrays only: any other argument passes as it is."""
    first = len(fn.bound)
    enter = arrays_traced if all(t in jax_api.FILTERING_TRANSFORMS for t in fn.transforms) else _traced
    unseen_traced = staged and any(t in jax_api.CONCRETE_TRANSFORMS for t in fn.transforms)

    def given(value: Value) -> Value:
        return enter(value) if unseen_traced and value.trace is Trace.UNKNOWN else value

    args = [given(a) if first + i in fn.as_given else enter(a) for i, a in enumerate(args)]
    # A differentiation passes keyword arguments as given too (`argnums` counts positions).
    keywords_given = all(t in jax_api.CONCRETE_TRANSFORMS for t in fn.transforms)
    kwargs = {
        k: _static(v) if k in fn.static_params else given(v) if keywords_given else enter(v)
        for k, v in kwargs.items()
    }
    return args, kwargs


def _traced(value: Value) -> Value:
    return TRACED


def _static(value: Value) -> Value:
    """A static argument: a Python value, None or not None as the caller's value is (the
    literal itself is not kept: a function called with many would be analysed once for each)."""
    none = value.none
    return STATIC if none is None else _NONE if none else _NOT_NONE


_NONE = constant(None)
_NOT_NONE = Value(Trace.STATIC, not_none=True)
