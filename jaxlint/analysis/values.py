"""Value analysis: which expressions inside traced code are TRACED, STATIC or UNKNOWN.

A small abstract interpreter runs over each traced function's body with an environment
of parameter values (traced arguments, static arguments, closure constants), records the
value of every expression it evaluates, and follows calls into module-local helpers,
nested functions and control-flow bodies in their calling context.  Branches merge;
loops run to a fixed point (two passes suffice for this lattice).  Calls into code the
analysis cannot see are UNKNOWN, never TRACED; rules report only on TRACED.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from enum import IntEnum
from typing import Callable, Iterable

from jaxlint.analysis import jax_api
from jaxlint.analysis.names import FUNCTION_TYPES, FunctionNode, Names, Scope
from jaxlint.analysis.tracing import (
    STAGED,
    Context,
    context_of,
    control_flow_bodies,
    positional_params,
    static_parameters,
    transform_of,
)
from jaxlint.analysis.walk import children


class Trace(IntEnum):
    """Ordered so that the join of two paths is their maximum."""

    STATIC = 0
    UNKNOWN = 1
    TRACED = 2


@dataclass(frozen=True)
class Value:
    trace: Trace
    array: bool = False  # known to be a JAX array (not a Python container or pytree)
    boolean: bool = False  # known to have a boolean dtype
    items: tuple["Value", ...] | None = None  # a tuple/list of known length
    element: "Value | None" = None  # what iterating it yields, when known
    function: "FunctionValue | None" = None

    @property
    def traced(self) -> bool:
        return self.trace is Trace.TRACED


@dataclass(frozen=True)
class FunctionValue:
    """A callable the analysis can follow: a def or lambda, possibly transformed or partially applied."""

    node: FunctionNode
    transforms: tuple[str, ...] = ()
    static_params: frozenset[str] = frozenset()
    bound: tuple[Value, ...] = ()
    method_self: Value | None = None


STATIC = Value(Trace.STATIC)
UNKNOWN = Value(Trace.UNKNOWN)
TRACED = Value(Trace.TRACED)
TRACED_ARRAY = Value(Trace.TRACED, array=True)
TRACED_BOOL = Value(Trace.TRACED, array=True, boolean=True)


def join(a: Value, b: Value) -> Value:
    if a == b:
        return a
    items = None
    if a.items is not None and b.items is not None and len(a.items) == len(b.items):
        items = tuple(join(x, y) for x, y in zip(a.items, b.items))
    element = None
    if a.element is not None and b.element is not None:
        element = join(a.element, b.element)
    return Value(
        max(a.trace, b.trace),
        array=a.array and b.array,
        boolean=a.boolean and b.boolean,
        items=items,
        element=element,
        function=a.function if a.function == b.function else None,
    )


def join_all(values: Iterable[Value], empty: Value = STATIC) -> Value:
    result = None
    for v in values:
        result = v if result is None else join(result, v)
    return empty if result is None else result


def element_of(value: Value) -> Value:
    """What iterating over a value binds."""
    if value.element is not None:
        return value.element
    if value.items is not None:
        return join_all(value.items)
    if value.traced:
        return TRACED_ARRAY if value.array else UNKNOWN
    return value if value.trace is Trace.STATIC else UNKNOWN


def strip(value: Value) -> Value:
    """The same trace, without structure (for results derived from a value)."""
    return Value(value.trace)


_ARRAY_VIEW_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "at", "H", "flat"})
_BOOLEAN_FUNCTIONS = frozenset({
    "jax.numpy.isnan", "jax.numpy.isinf", "jax.numpy.isfinite", "jax.numpy.isneginf",
    "jax.numpy.isposinf", "jax.numpy.logical_and", "jax.numpy.logical_or",
    "jax.numpy.logical_not", "jax.numpy.logical_xor", "jax.numpy.greater",
    "jax.numpy.greater_equal", "jax.numpy.less", "jax.numpy.less_equal", "jax.numpy.equal",
    "jax.numpy.not_equal", "jax.numpy.isclose", "jax.numpy.signbit", "jax.numpy.isin",
    "jax.random.bernoulli", "jax.numpy.tril", "jax.lax.lt", "jax.lax.gt", "jax.lax.le",
    "jax.lax.ge", "jax.lax.eq", "jax.lax.ne",
})
_STRING_METHODS = frozenset({"format", "join", "replace", "split", "strip", "lower", "upper", "startswith", "endswith"})
_PYTHON_RESULT_METHODS = frozenset({"item", "tolist", "__bool__", "__int__", "__float__", "__index__"})
_MAX_ANALYSES_PER_ENTRY = 400  # bounds the work one traced entry point can cause
_MAX_DEPTH = 6


# (qualified callee, positional values, keyword values, calling context, depth) -> return value
ImportedCall = Callable[[str, "list[Value]", "dict[str, Value]", Context, int], "Value"]


class Env:
    """Local bindings of one function analysis, with the enclosing analyses' bindings behind it."""

    __slots__ = ("vars", "outer")

    def __init__(self, vars: dict[str, Value], outer: "Env | None"):
        self.vars = vars
        self.outer = outer

    def get(self, name: str) -> Value | None:
        env: Env | None = self
        while env is not None:
            value = env.vars.get(name)
            if value is not None:
                return value
            env = env.outer
        return None

    def copy(self) -> "Env":
        return Env(dict(self.vars), self.outer)

    def merge(self, other: "Env") -> None:
        for name, value in other.vars.items():
            mine = self.vars.get(name)
            self.vars[name] = value if mine is None else join(mine, value)


class _Return(Exception):
    pass


class ValueAnalysis:
    """Runs the interpreter over traced functions and keeps what it learnt, per node."""

    def __init__(self, names: Names, imported: "ImportedCall | None" = None):
        self.names = names
        # Answers calls of names imported from the project's own modules (see `project.py`).
        self.imported = imported
        self.values: dict[int, Value] = {}  # id(expr) -> joined value over all analyses
        self.abstract: set[int] = set()  # id(expr) traced in an abstract context
        self.contexts: dict[int, Context] = {}  # id(function) -> joined context
        self.functions: dict[int, FunctionNode] = {}
        self.closures: dict[int, Env] = {}  # id(nested function) -> env at its definition
        self._memo: dict[tuple, Value] = {}
        self._active: set[int] = set()
        self._count = 0

    # ---- public ---------------------------------------------------------------
    def analyze(self, fn: FunctionNode, params: dict[str, Value], ctx: Context, outer: Env | None = None, depth: int = 0) -> Value:
        """Analyse `fn` with these parameter values in context `ctx`; return its return value."""
        key = (id(fn), tuple(sorted(params.items(), key=lambda kv: kv[0])), ctx)
        cached = self._memo.get(key)
        if cached is not None:
            return cached
        if depth == 0:
            self._count = 0
        if id(fn) in self._active or self._count >= _MAX_ANALYSES_PER_ENTRY or depth > _MAX_DEPTH:
            return UNKNOWN
        self._count += 1
        self._active.add(id(fn))
        previous = self.contexts.get(id(fn))
        self.contexts[id(fn)] = ctx if previous is None else Context(
            ctx.abstract or previous.abstract, ctx.staged or previous.staged
        )
        self.functions[id(fn)] = fn
        if outer is None:
            outer = self.closures.get(id(fn))
        run = _FunctionRun(self, fn, Env(dict(params), outer), ctx, depth)
        try:
            result = run.execute()
        finally:
            self._active.discard(id(fn))
        self._memo[key] = result
        return result

    def value(self, node: ast.AST) -> Value | None:
        return self.values.get(id(node))

    def record(self, node: ast.AST, value: Value, ctx: Context) -> Value:
        key = id(node)
        old = self.values.get(key)
        self.values[key] = value if old is None else join(old, value)
        if ctx.abstract and value.trace is Trace.TRACED:
            self.abstract.add(key)
        return value


class _FunctionRun:
    """One analysis of one function body."""

    def __init__(self, analysis: ValueAnalysis, fn: FunctionNode, env: Env, ctx: Context, depth: int):
        self.analysis = analysis
        self.names = analysis.names
        self.fn = fn
        self.scope: Scope = analysis.names.scope_of(fn)
        self.env = env
        self.ctx = ctx
        self.depth = depth
        self.returns: list[Value] = []

    def execute(self) -> Value:
        if isinstance(self.fn, ast.Lambda):
            return self.eval(self.fn.body, self.env)
        self.block(self.fn.body, self.env)
        return join_all(self.returns, STATIC)

    # ---- statements ---------------------------------------------------------------
    def block(self, body: list[ast.stmt], env: Env) -> None:
        for stmt in body:
            self.stmt(stmt, env)

    def stmt(self, node: ast.stmt, env: Env) -> None:
        if isinstance(node, ast.Assign):
            value = self.eval(node.value, env)
            for target in node.targets:
                self.bind(target, value, env)
        elif isinstance(node, ast.AugAssign):
            value = self.eval(node.value, env)
            current = self.eval(node.target, env)
            self.bind(node.target, self._binop(node.op, current, value), env)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.bind(node.target, self.eval(node.value, env), env)
        elif isinstance(node, ast.Expr):
            self.eval(node.value, env)
        elif isinstance(node, ast.Return):
            self.returns.append(self.eval(node.value, env) if node.value else STATIC)
        elif isinstance(node, ast.If):
            self.eval(node.test, env)
            then, other = env.copy(), env.copy()
            self.block(node.body, then)
            self.block(node.orelse, other)
            env.vars = then.vars
            env.merge(other)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            element = element_of(self.eval(node.iter, env))
            for _ in range(2):
                body = env.copy()
                self.bind(node.target, element, body)
                self.block(node.body, body)
                env.merge(body)
            self.block(node.orelse, env)
        elif isinstance(node, ast.While):
            for _ in range(2):
                self.eval(node.test, env)
                body = env.copy()
                self.block(node.body, body)
                env.merge(body)
            self.block(node.orelse, env)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                self.eval(item.context_expr, env)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, UNKNOWN, env)
            self.block(node.body, env)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            self.block(node.body, env)
            for handler in node.handlers:
                branch = env.copy()
                if handler.name:
                    branch.vars[handler.name] = STATIC
                self.block(handler.body, branch)
                env.merge(branch)
            self.block(node.orelse, env)
            self.block(node.finalbody, env)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._define(node, env)
            value = self._decorated(node)
            env.vars[node.name] = value
        elif isinstance(node, ast.ClassDef):
            env.vars[node.name] = STATIC
        elif isinstance(node, ast.Assert):
            self.eval(node.test, env)
            if node.msg is not None:
                self.eval(node.msg, env)
        elif isinstance(node, ast.Raise):
            if node.exc is not None:
                self.eval(node.exc, env)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    env.vars.pop(target.id, None)
        elif type(node).__name__ == "Match":
            self.eval(node.subject, env)
            merged = env.copy()
            for case in node.cases:
                branch = env.copy()
                self.block(case.body, branch)
                merged.merge(branch)
            env.vars = merged.vars
        # import, global, nonlocal, pass, break, continue: nothing to evaluate

    def _define(self, node: FunctionNode, env: Env) -> None:
        """Remember the environment a nested function closes over."""
        old = self.analysis.closures.get(id(node))
        snapshot = Env(dict(env.vars), env.outer)
        if old is not None and old.outer is snapshot.outer:
            old.merge(snapshot)
        else:
            self.analysis.closures[id(node)] = snapshot

    def _decorated(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Value:
        transforms = [t for d in node.decorator_list if (t := transform_of(d, self.names, self.scope))]
        if node.decorator_list and not transforms:
            return UNKNOWN
        static: frozenset[str] = frozenset()
        for t in transforms:
            if t.name in jax_api.STATIC_ARG_TRANSFORMS:
                static = static_parameters(node, t.keywords)
        return Value(Trace.STATIC, function=FunctionValue(node, tuple(t.name for t in transforms), static))

    def bind(self, target: ast.AST, value: Value, env: Env) -> None:
        if isinstance(target, ast.Name):
            env.vars[target.id] = value
            self.analysis.record(target, value, self.ctx)
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = target.elts
            starred = [i for i, e in enumerate(elts) if isinstance(e, ast.Starred)]
            if value.items is not None and not starred and len(value.items) == len(elts):
                for elt, item in zip(elts, value.items):
                    self.bind(elt, item, env)
                return
            # Unpacking a traced pytree binds traced parts; iterating an unknown one does not.
            element = Value(Trace.TRACED) if value.traced and value.items is None else element_of(value)
            for elt in elts:
                if isinstance(elt, ast.Starred):
                    self.bind(elt.value, Value(element.trace, element=element), env)
                else:
                    self.bind(elt, element, env)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, value, env)
        elif isinstance(target, ast.Attribute):
            self.eval(target.value, env)
        elif isinstance(target, ast.Subscript):
            self.eval(target.value, env)
            self.eval(target.slice, env)

    # ---- expressions -------------------------------------------------------------------
    def eval(self, node: ast.AST, env: Env) -> Value:
        value = self._eval(node, env)
        return self.analysis.record(node, value, self.ctx)

    def _eval(self, node: ast.AST, env: Env) -> Value:
        if isinstance(node, ast.Constant):
            return STATIC
        if isinstance(node, ast.Name):
            return self._name(node, env)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, env)
        if isinstance(node, ast.Call):
            return self._call(node, env)
        if isinstance(node, ast.BinOp):
            return self._binop(node.op, self.eval(node.left, env), self.eval(node.right, env))
        if isinstance(node, ast.Compare):
            operands = [self.eval(node.left, env)] + [self.eval(c, env) for c in node.comparators]
            if all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
                return STATIC
            joined = join_all(operands)
            if any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
                return Value(min(joined.trace, Trace.UNKNOWN))
            return Value(joined.trace, array=joined.traced, boolean=True)
        if isinstance(node, ast.BoolOp):
            return strip(join_all(self.eval(v, env) for v in node.values))
        if isinstance(node, ast.UnaryOp):
            operand = self.eval(node.operand, env)
            if isinstance(node.op, ast.Not):
                # The truth of a list or tuple is its length: static even when its items are traced.
                container = not operand.array and (operand.items is not None or operand.element is not None)
                return STATIC if container else Value(operand.trace, boolean=True)
            return replace(operand, items=None, element=None, function=None)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, env)
        if isinstance(node, ast.IfExp):
            self.eval(node.test, env)
            return join(self.eval(node.body, env), self.eval(node.orelse, env))
        if isinstance(node, (ast.Tuple, ast.List)):
            items = tuple(self.eval(e, env) for e in node.elts)
            if any(isinstance(e, ast.Starred) for e in node.elts):
                return Value(join_all(items).trace)
            return Value(join_all(items).trace, items=items)
        if isinstance(node, ast.Set):
            return strip(join_all(self.eval(e, env) for e in node.elts))
        if isinstance(node, ast.Dict):
            for k in node.keys:
                if k is not None:
                    self.eval(k, env)
            return strip(join_all(self.eval(v, env) for v in node.values))
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            inner = self._comprehension(node.generators, env)
            element = self.eval(node.elt, inner)
            return Value(element.trace, element=element)
        if isinstance(node, ast.DictComp):
            inner = self._comprehension(node.generators, env)
            self.eval(node.key, inner)
            return strip(self.eval(node.value, inner))
        if isinstance(node, ast.Lambda):
            self._define(node, env)
            return Value(Trace.STATIC, function=FunctionValue(node))
        if isinstance(node, ast.Starred):
            return self.eval(node.value, env)
        if isinstance(node, ast.NamedExpr):
            value = self.eval(node.value, env)
            self.bind(node.target, value, env)
            return value
        if isinstance(node, ast.Slice):
            parts = [self.eval(p, env) for p in (node.lower, node.upper, node.step) if p is not None]
            return strip(join_all(parts))
        if isinstance(node, ast.JoinedStr):
            for v in node.values:
                self.eval(v, env)
            return STATIC
        if isinstance(node, ast.FormattedValue):
            self.eval(node.value, env)
            return STATIC
        for child in children(node):
            if isinstance(child, ast.expr):
                self.eval(child, env)
        return UNKNOWN

    def _comprehension(self, generators: list[ast.comprehension], env: Env) -> Env:
        inner = Env({}, env)
        for gen in generators:
            self.bind(gen.target, element_of(self.eval(gen.iter, inner)), inner)
            for cond in gen.ifs:
                self.eval(cond, inner)
        return inner

    def _name(self, node: ast.Name, env: Env) -> Value:
        value = env.get(node.id)
        if value is not None:
            return value
        definition = self.names.definition(node, self.scope)
        if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return self._decorated(definition)
        # Module globals, closure constants from eager code and imports: constants at trace time.
        return STATIC

    def _attribute(self, node: ast.Attribute, env: Env) -> Value:
        if self.names.qualname(node, self.scope) is not None:
            return STATIC
        base = self.eval(node.value, env)
        if node.attr in jax_api.STATIC_ATTRIBUTES:
            return STATIC
        if base.traced and node.attr in _ARRAY_VIEW_ATTRIBUTES:
            return Value(Trace.TRACED, array=True, boolean=base.boolean and node.attr != "at")
        if base.traced:
            # An array has no other data attributes: this is a pytree node, whose fields
            # may be static (dataclass metadata, equinox static fields).
            return UNKNOWN
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            # Methods of the same class stay followable.
            method = self._method(node.attr)
            if method is not None:
                return Value(Trace.STATIC, function=FunctionValue(method, method_self=base))
        if isinstance(node.value, ast.Name) and base.trace is Trace.STATIC:
            # `GATE = Gate(0.5)` then `GATE.apply(x)`: a method of a class defined here.
            method = self._instance_method(node.value, node.attr)
            if method is not None:
                return Value(Trace.STATIC, function=FunctionValue(method, method_self=STATIC))
        return Value(min(base.trace, Trace.UNKNOWN)) if base.trace is not Trace.STATIC else STATIC

    def _instance_method(self, instance: ast.Name, name: str):
        """The plain method `name` of `instance`, when its only assignment constructs a class
        defined in this module that defines the method itself."""
        values = self.names.assignments(instance, self.scope)
        if len(values) != 1 or not isinstance(values[0], ast.Call):
            return None
        cls = self.names.definition(values[0].func, self.scope)
        if not isinstance(cls, ast.ClassDef) or id(cls) not in self.names.scopes:
            return None
        method = self.names.scopes[id(cls)].defs.get(name)
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or method.decorator_list:
            return None
        return method

    def _method(self, name: str):
        scope: Scope | None = self.scope
        while scope is not None and scope.kind != "class":
            scope = scope.parent
        if scope is None:
            return None
        method = scope.defs.get(name)
        return method if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) else None

    def _subscript(self, node: ast.Subscript, env: Env) -> Value:
        base = self.eval(node.value, env)
        index = self.eval(node.slice, env)
        if base.items is not None and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
            i = node.slice.value
            if -len(base.items) <= i < len(base.items):
                return base.items[i]
        if base.traced:
            if base.array:
                return TRACED_ARRAY if not base.boolean else TRACED_BOOL
            return TRACED
        if index.traced:
            return TRACED_ARRAY
        if base.trace is Trace.STATIC and index.trace is Trace.STATIC:
            return STATIC
        return UNKNOWN

    def _binop(self, op: ast.operator, left: Value, right: Value) -> Value:
        trace = max(left.trace, right.trace)
        if trace is not Trace.TRACED:
            return Value(trace)
        boolean = isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and left.boolean and right.boolean
        return Value(trace, array=True, boolean=boolean)

    # ---- calls ------------------------------------------------------------------------
    def _call(self, node: ast.Call, env: Env) -> Value:
        callee = self.names.qualname(node.func, self.scope)
        if callee in jax_api.CONTROL_FLOW:
            return self._control_flow(node, callee, env)
        if callee in jax_api.HOST_CALLBACKS:
            for arg in node.args[1:]:
                self.eval(arg, env)
            return TRACED if callee != "jax.debug.callback" else STATIC
        if callee in jax_api.TRANSFORMS:
            return self._transform(node, callee, env)
        func = None if callee else self.eval(node.func, env)
        args = [self.eval(a, env) for a in node.args]
        kwargs = {k.arg: self.eval(k.value, env) for k in node.keywords if k.arg}
        for k in node.keywords:
            if k.arg is None:
                self.eval(k.value, env)
        if callee is not None:
            return self._library_call(node, callee, args, kwargs, env)
        assert func is not None
        if func.function is not None:
            return self._call_function(func.function, node, args, kwargs)
        if isinstance(node.func, ast.Attribute):
            return self._method_call(node.func, args)
        return UNKNOWN

    def _library_call(self, node: ast.Call, callee: str, args: list[Value], kwargs: dict[str, Value], env: Env) -> Value:
        if callee in jax_api.STATIC_QUERIES:
            return STATIC
        if callee in jax_api.TREE_MAPS:
            trees = args[1:]
            leaf = Value(join_all(trees).trace) if trees else UNKNOWN
            result = leaf
            if node.args:
                fn = self.eval(node.args[0], env)
                if fn.function is not None:
                    result = join(leaf, self._call_function(fn.function, node, [leaf] * len(trees), {}))
            return strip(result)
        if callee in jax_api.TREE_PASSTHROUGH:
            if not args:
                return STATIC
            first = args[0]
            if callee == "jax.tree_util.tree_flatten":
                return Value(first.trace, items=(Value(first.trace, element=element_of(first)), STATIC))
            if callee == "jax.tree_util.tree_leaves":
                return Value(first.trace, element=Value(first.trace, array=first.traced))
            return replace(first, array=False, boolean=False, function=None)
        if callee.startswith("builtins."):
            return self._builtin(callee[9:], node, args, env)
        if callee in jax_api.STAGED_FUNCTIONS or callee.startswith(jax_api.STAGED_NAMESPACES):
            if callee in ("jax.random.split",):
                return TRACED_ARRAY
            return TRACED_BOOL if callee in _BOOLEAN_FUNCTIONS else TRACED_ARRAY
        if callee.startswith(("numpy.", "math.")):
            joined = join_all(args)
            return Value(joined.trace, array=joined.traced)
        if self.analysis.imported is not None:
            return self.analysis.imported(callee, args, kwargs, self.ctx, self.depth)
        return UNKNOWN

    def _builtin(self, name: str, node: ast.Call, args: list[Value], env: Env) -> Value:
        if name == "range":
            return Value(join_all(args).trace if args else Trace.STATIC, element=strip(join_all(args)))
        if name == "enumerate":
            return Value(Trace.STATIC, element=Value(Trace.STATIC, items=(STATIC, element_of(args[0]) if args else UNKNOWN)))
        if name == "zip":
            elements = tuple(element_of(a) for a in args)
            return Value(Trace.STATIC, element=Value(join_all(elements).trace, items=elements))
        if name in ("int", "float", "bool", "complex", "len", "isinstance", "type", "str", "repr", "hash", "id", "callable"):
            return STATIC
        if name in ("min", "max", "abs", "round", "pow", "divmod", "sum"):
            values = [element_of(a) if len(args) == 1 and name in ("min", "max", "sum") else a for a in args]
            joined = join_all(values)
            return Value(joined.trace, array=joined.traced)
        if name == "map" and args:
            return Value(Trace.UNKNOWN)
        return UNKNOWN

    def _method_call(self, func: ast.Attribute, args: list[Value]) -> Value:
        base = self.analysis.values.get(id(func.value), UNKNOWN)
        name = func.attr
        if name in jax_api.STATIC_METHODS or name in _PYTHON_RESULT_METHODS:
            return STATIC
        if isinstance(func.value, ast.Constant):
            return STATIC
        if base.traced:
            if name == "items":
                return Value(Trace.TRACED, element=Value(Trace.TRACED, items=(STATIC, TRACED)))
            if name in ("values", "get", "pop", "copy"):
                return TRACED
            if base.array or name in ("astype", "reshape", "sum", "mean", "max", "min", "set", "add",
                                      "multiply", "divide", "apply", "power", "dot",
                                      "transpose", "squeeze", "ravel", "flatten", "clip", "std",
                                      "var", "prod", "argmax", "argmin", "any", "all", "round",
                                      "cumsum", "conj", "swapaxes", "take"):
                boolean = name in ("any", "all") or (base.boolean and name in ("reshape", "ravel", "flatten", "transpose", "squeeze", "set", "take"))
                return Value(Trace.TRACED, array=True, boolean=boolean)
            return UNKNOWN
        if name in _STRING_METHODS and base.trace is Trace.STATIC:
            return STATIC
        return UNKNOWN

    def _call_function(self, fn: FunctionValue, node: ast.Call, args: list[Value], kwargs: dict[str, Value]) -> Value:
        ctx = self.ctx
        for name in reversed(fn.transforms):
            ctx = context_of(name).inside(ctx)
        if fn.transforms:
            args = [TRACED for _ in args]
            kwargs = {k: (STATIC if k in fn.static_params else TRACED) for k in kwargs}
        params = bind_arguments(fn.node, [*fn.bound, *args], kwargs, fn.method_self)
        for name in fn.static_params:
            if name in params:
                params[name] = STATIC
        result = self.analysis.analyze(fn.node, params, ctx, None, self.depth + 1)
        if fn.transforms and result.trace is not Trace.STATIC:
            return TRACED
        return result

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
            return UNKNOWN
        static = inner.function.static_params
        if callee in jax_api.STATIC_ARG_TRANSFORMS:
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            static = static_parameters(inner.function.node, keywords, len(inner.function.bound))
        return Value(Trace.STATIC, function=replace(
            inner.function, transforms=(callee, *inner.function.transforms), static_params=static
        ))

    def _control_flow(self, node: ast.Call, callee: str, env: Env) -> Value:
        for arg in node.args:
            self.eval(arg, env)
        for k in node.keywords:
            self.eval(k.value, env)
        ctx = STAGED.inside(self.ctx)
        for fn_node in control_flow_bodies(node, callee, self.names, self.scope):
            values = body_parameters(fn_node, node, callee)
            outer = self.analysis.closures.get(id(fn_node), env)
            self.analysis.analyze(fn_node, values, ctx, outer, self.depth + 1)
        return TRACED


def body_parameters(fn: FunctionNode, call: ast.Call, callee: str) -> dict[str, Value]:
    """Parameter values of a control-flow body: the operands the primitive passes are traced."""
    arity = jax_api.CONTROL_FLOW[callee].arity
    if arity < 0:  # cond/switch: every operand after the branches
        arity = max(len(call.args) - (3 if callee == "jax.lax.cond" else 2), 0)
    passed = [TRACED] * arity
    params = positional_params(fn)
    if callee == "jax.lax.scan" and len(params) >= 2 and _scan_without_xs(call):
        passed[1] = STATIC
    values = bind_arguments(fn, passed[: len(params)] if fn.args.vararg is None else passed, {})
    return values


def _scan_without_xs(call: ast.Call) -> bool:
    xs = call.args[2] if len(call.args) > 2 else next((k.value for k in call.keywords if k.arg == "xs"), None)
    return xs is None or (isinstance(xs, ast.Constant) and xs.value is None)


def bind_arguments(fn: FunctionNode, args: list[Value], kwargs: dict[str, Value], method_self: Value | None = None) -> dict[str, Value]:
    """Parameter values for a call: positional, keyword, then defaults (STATIC) or UNKNOWN."""
    a = fn.args
    positional = positional_params(fn)
    params: dict[str, Value] = {}
    if method_self is not None and positional:
        params[positional[0].arg] = method_self
        positional = positional[1:]
    for param, value in zip(positional, args):
        params[param.arg] = value
    if a.vararg is not None:
        extra = args[len(positional):]
        params[a.vararg.arg] = Value(join_all(extra).trace, element=join_all(extra)) if extra else STATIC
    for param in (*positional, *a.kwonlyargs):
        if param.arg in kwargs:
            params[param.arg] = kwargs[param.arg]
    if a.kwarg is not None:
        known = {p.arg for p in (*positional, *a.kwonlyargs)}
        rest = [v for k, v in kwargs.items() if k not in known]
        params[a.kwarg.arg] = strip(join_all(rest)) if rest else STATIC
    for param in (*positional, *a.kwonlyargs):
        params.setdefault(param.arg, _default_value(fn, param))
    return params


def _default_value(fn: FunctionNode, param: ast.arg) -> Value:
    return STATIC if has_default(fn, param) else UNKNOWN


def has_default(fn: FunctionNode, param: ast.arg) -> bool:
    a = fn.args
    positional = positional_params(fn)
    if param in positional:
        return positional.index(param) >= len(positional) - len(a.defaults)
    if param in a.kwonlyargs:
        return a.kw_defaults[a.kwonlyargs.index(param)] is not None
    return False


def is_function_node(node: ast.AST) -> bool:
    return isinstance(node, FUNCTION_TYPES)
