"""Value analysis: which expressions inside traced code are TRACED, STATIC or UNKNOWN.

An abstract interpreter runs over each traced function with its parameters' values
(traced arguments, static arguments, closure constants), records the value of every
expression it evaluates, and follows calls into module-local helpers, nested functions,
instances' `__call__` and control-flow bodies in their calling context.  This module
evaluates expressions and calls; the statement level is a dataflow domain
(`value_flow.py`) solved to a fixed point over the function's control-flow graph.
Calls into code the analysis cannot see are UNKNOWN, never TRACED; rules report only on
TRACED.
"""

from __future__ import annotations

import ast
from functools import cached_property
from typing import Callable, Collection

from jaxlint.analysis.engine import cfg
from jaxlint.analysis.engine.bindings import Bindings
from jaxlint.analysis.engine.dataflow import solve
from jaxlint.analysis.engine.lattice import (
    MADE_SELF, STATIC, TRACED, TRACED_ARRAY, TRACED_BOOL, UNKNOWN, FunctionValue, Trace, Value, constant, element_of,
    join, join_all, named, named_of, strip
)
from jaxlint.analysis.engine.named_tuples import is_named_tuple
from jaxlint.analysis.engine.names import FunctionNode, Names, Scope, annotation_name
from jaxlint.analysis.engine.submodules import attribute_class
from jaxlint.analysis.engine.walk import children
from jaxlint.analysis.knowledge import jax_api
from jaxlint.analysis.knowledge.call_results import made_callable_result, method_result, unpacked_function_result
from jaxlint.analysis.knowledge.decorators import transparent
from jaxlint.analysis.knowledge.entry_points import RUN_AT_DEFINITION
from jaxlint.analysis.tracing import type_tests
from jaxlint.analysis.tracing.array_annotations import (
    calls_declared_array_maker, jax_array_parameters, traced_where_declared
)
from jaxlint.analysis.tracing.compile_time import compile_time_operations
from jaxlint.analysis.tracing.static_arguments import as_given_positions, static_parameters
from jaxlint.analysis.tracing.traced_functions import STAGED, Context, Transform
from jaxlint.analysis.tracing.callees import module_callees
from jaxlint.analysis.tracing.linen_classes import variables_dict
from jaxlint.analysis.tracing.tracing import (
    class_call_method,
    constructed_call_method,
    plain_class,
    positional_params,
    receiver,
)
from jaxlint.analysis.tracing.transforms import keywords, transform_of
from jaxlint.analysis.values.comparisons import comparison
from jaxlint.analysis.values.module_constants import ModuleConstants
from jaxlint.analysis.values.nullness import not_none_parameters
from jaxlint.analysis.values.pytree_fields import ProjectClasses, one_array
from jaxlint.analysis.values.records import RecordClasses, copied
from jaxlint.analysis.values.string_parameters import string_parameters
from jaxlint.analysis.values.value_calls import CallEvaluation, computes_array, module_applied, spreads
from jaxlint.analysis.values.value_env import Env, frozen
from jaxlint.analysis.values.value_flow import ValueFlow
from jaxlint.analysis.values.value_members import KEYED_LEAF, MemberEvaluation

_STATIC_TRACE, _TRACED_TRACE = Trace.STATIC, Trace.TRACED  # an enum class's attributes are slow to read
_MAX_ANALYSES_PER_ENTRY = 400  # bounds the work one traced entry point can cause
# Helpers called from helpers are followed this deep; deeper chains (and expressions nested
# past Python's recursion limit) leave that one call UNKNOWN, never the file unanalysed.
_MAX_DEPTH = 24
_MADE_OBJECT = Value(Trace.UNKNOWN, not_none=True, made_here=True)  # a plain instance the traced code makes
# A JAX array eager code computed (`t = jnp.asarray(t)`) that traced code closes over: a Python
# constant to the trace, until an operation in staged code makes a tracer of it.
_CONCRETE_ARRAY = Value(Trace.STATIC, array=True, not_none=True)
_ORDERINGS = frozenset({ast.Lt, ast.LtE, ast.Gt, ast.GtE})
_NO_KEY = object()  # a dict key that is not a constant string or int
_DICT_READS = frozenset({"get", "keys", "values", "items", "copy", "__getitem__", "__contains__"})
# Qualified names that are no class of the project: JAX's and the frameworks', Python's, NumPy's.
_LIBRARIES = tuple(f"{package}." for package in (*jax_api.MODELLED_PACKAGES, "builtins", "numpy", "math"))


# (qualified callee, positional values, keyword values, calling context, depth, whether the
# call unpacks an iterable into its positional arguments, whether it calls an instance of the
# class the name stands for) -> return value
ImportedCall = Callable[[str, "list[Value]", "dict[str, Value]", Context, int, bool, bool], "Value"]


class ValueAnalysis:
    """Runs the interpreter over traced functions and keeps what it learnt, per node."""

    def __init__(
        self, names: Names, imported: "ImportedCall | None" = None, eager: Collection[int] = (),
        classes: ProjectClasses | None = None,
    ):
        self.names = names
        # Answer calls of names imported from the project's own modules, and find the classes
        # they define (see `project.py`).
        self.imported = imported
        self.classes = classes
        # The ids of the control-flow calls under `with jax.disable_jit():` (`eager_blocks.py`).
        self.eager = eager
        self.values: dict[int, Value] = {}  # id(expr) -> joined value over all analyses
        self.abstract: set[int] = set()  # id(expr) traced in an abstract context
        self.contexts: dict[int, Context] = {}  # id(function) -> joined context
        self.functions: dict[int, FunctionNode] = {}
        self.closures: dict[int, Env] = {}  # id(nested function) -> env at its definition (see `closure`)
        self.unconverged: list[FunctionNode] = []  # functions whose fixed point was cut short
        self.skipped: list[FunctionNode] = []  # functions nested too deeply to analyse
        self._graphs: dict[int, cfg.Graph] = {}
        self._not_none: dict[int, frozenset[str]] = {}  # id(function) -> parameters typed not None
        self._jax_arrays: dict[int, frozenset[str]] = {}  # id(function) -> parameters declared JAX arrays
        self._strings: dict[int, frozenset[str]] = {}  # id(function) -> parameters typed as strings
        self._declared: dict[int, dict[str, ast.expr | None]] = {}  # id(function) -> `_declared_types`
        self._instances: dict[int, Value | None] = {}  # id(annotation) -> `_traced_instance`
        self._closed_over: dict[int, tuple[str, ...]] = {}  # id(function) -> names it reads from around it
        self._memo: dict[tuple, Value] = {}
        self._active: set[int] = set()
        self._count = 0
        self._unpacked: dict[int, dict[str, tuple[ast.Call, int]]] = {}  # `unpacked_from`, per scope

    @cached_property
    def constants(self) -> ModuleConstants:
        return ModuleConstants(self.names)

    @cached_property
    def compile_time_operations(self) -> frozenset[int]:
        return compile_time_operations(self.names)

    @cached_property
    def records(self) -> RecordClasses:
        return RecordClasses(self.names, self.classes)

    def unpacked_from(self, name: ast.Name, scope: Scope) -> tuple[ast.Call, int] | None:
        """The call a name is bound from by unpacking, and its position there, where that is the
        name's one binding in the scope that binds it (`opt_init, opt_update, get_params =
        optimizers.adam(1e-3)`)."""
        owner = self.names.lookup(name.id, scope)
        if owner is None or any(name.id in bound for bound in (owner.defs, owner.assigned, owner.params, owner.imports)):
            return None
        table = self._unpacked.get(id(owner))
        if table is None:
            table = self._unpacked[id(owner)] = {}
            counts: dict[str, int] = {}
            body = owner.node.body if isinstance(owner.node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)) else []
            for stmt in body:
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], (ast.Tuple, ast.List)):
                    if isinstance(stmt.value, ast.Call):
                        for position, element in enumerate(stmt.targets[0].elts):
                            if isinstance(element, ast.Name):
                                table[element.id] = (stmt.value, position)
                stack = [stmt]
                while stack:  # the scope's own bindings: nested defs, lambdas and classes bind elsewhere
                    node = stack.pop()
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                        counts[node.id] = counts.get(node.id, 0) + 1
                    elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                        stack.extend(children(node))
            for bound, count in counts.items():
                if count != 1:
                    table.pop(bound, None)  # bound more than once: not this call's alone
        return table.get(name.id)

    # ---- public ---------------------------------------------------------------
    def analyze(
        self, fn: FunctionNode, params: dict[str, Value], ctx: Context, outer: Env | None = None, depth: int = 0,
        closed_not_none: frozenset[str] = frozenset(),
    ) -> Value:
        """Analyse `fn` with these parameter values in context `ctx`; return its return value.
        `outer`: the bindings it closes over (by default, those saved where it was defined);
        `closed_not_none`: names it closes over that are not None wherever it is traced."""
        params = self._annotated(fn, params)
        if outer is None:
            outer = self.closures.get(id(fn))
        if closed_not_none:
            shown = {name: ((outer and outer.get(name)) or STATIC).but(not_none=True) for name in closed_not_none}
            outer = Env(shown, outer, self.names.parent_function.get(id(fn)))
        key = (id(fn), tuple(sorted(params.items())), ctx, self._closed_values(fn, outer))
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
        run = _FunctionRun(self, fn, Env(dict(params), outer, fn), ctx, depth)
        try:
            result = run.execute()
        except RecursionError:
            self.skipped.append(fn)
            result = UNKNOWN
        finally:
            self._active.discard(id(fn))
        self._memo[key] = result
        return result

    def value(self, node: ast.AST) -> Value | None:
        return self.values.get(id(node))

    def _closed_values(self, fn: FunctionNode, outer: Env | None) -> tuple:
        """What `fn` sees of the names it reads from the functions around it: part of what an
        analysis of it depends on, as its parameters are."""
        if outer is None:
            return ()
        names = self._closed_over.get(id(fn))
        if names is None:
            names = self._closed_over[id(fn)] = self.names.closed_over(fn)
        return tuple(outer.get(name) for name in names)

    def _annotated(self, fn: FunctionNode, params: dict[str, Value]) -> dict[str, Value]:
        """The parameters with what their annotations add: a type that excludes None rules None
        out, unless the argument is a None literal (the caller's value wins over the annotation);
        a string type rules tracing out (`string_parameters`)."""
        typed = self._not_none.get(id(fn))
        if typed is None:
            typed = self._not_none[id(fn)] = not_none_parameters(fn, self.names)
        strings = self._strings.get(id(fn))
        if strings is None:
            strings = self._strings[id(fn)] = string_parameters(fn, self.names)
        declared = self._declared.get(id(fn))
        if declared is None:
            declared = self._declared[id(fn)] = self._declared_types(fn)
        if not typed and not strings and not declared:
            return params
        out = dict(params)
        for name, annotation in declared.items():
            value = out.get(name)
            if value is None or not value.traced or value.record is not None or value.array:
                continue
            if annotation is None:
                out[name] = value.but(array=True, not_none=True, items=None, element=None, fields=False)
            elif value.items is None:
                instance = self._traced_instance(fn, annotation)
                if instance is not None:
                    out[name] = instance.but(not_none=value.not_none)
        for name in typed:
            value = out.get(name)
            if value is not None and value.none is None:
                out[name] = value.but(not_none=True)
        for name in strings:
            value = out.get(name)
            if value is not None and value.trace is not _STATIC_TRACE:
                out[name] = STATIC
        return out

    def _declared_types(self, fn: FunctionNode) -> dict[str, ast.expr | None]:
        """The parameters of `fn` a traced argument makes an array or a record instance of known
        fields: declared an array (None: not a sequence of them, `x: jax.Array`, `mask:
        chex.Array`), or declared a name that may be a pytree record class of any module of the
        project (its annotation: `batch: Transition`, read by `_traced_instance`)."""
        if isinstance(fn, ast.Lambda):
            return {}
        declared: dict[str, ast.expr | None] = {}
        for param in (*positional_params(fn), *fn.args.kwonlyargs):
            annotation, _ = annotation_name(param.annotation, self.names)
            if annotation is None:
                continue
            if one_array(annotation, self.names):
                declared[param.arg] = None
            elif isinstance(annotation, (ast.Name, ast.Attribute)):
                declared[param.arg] = annotation
        return declared

    def _traced_instance(self, fn: FunctionNode, annotation: ast.expr) -> Value | None:
        """A traced instance of the record class an annotation of `fn` names (read once), if it is one."""
        key = id(annotation)
        if key not in self._instances:
            self._instances[key] = self.records.traced_instance(annotation, self.names.enclosing_scope(fn))
        return self._instances[key]

    def called(self, fn: FunctionNode, params: dict[str, Value]) -> dict[str, Value]:
        """The values traced code gives a function it calls: a parameter declared a JAX array
        that gets a value the analysis cannot see is a tracer (`array_annotations.py`)."""
        declared = self._jax_arrays.get(id(fn))
        if declared is None:
            declared = self._jax_arrays[id(fn)] = jax_array_parameters(fn, self.names)
        return traced_where_declared(params, declared) if declared else params

    def graph(self, fn: FunctionNode) -> cfg.Graph:
        """The control-flow graph of a def, built once."""
        graph = self._graphs.get(id(fn))
        if graph is None:
            graph = self._graphs[id(fn)] = cfg.build(fn)
        return graph

    def record(self, node: ast.AST, value: Value, ctx: Context) -> Value:
        key = id(node)
        old = self.values.get(key)
        if old is not value:
            self.values[key] = value if old is None else join(old, value)
        if ctx.abstract and value.trace is _TRACED_TRACE:
            self.abstract.add(key)
        return value


class _FunctionRun(CallEvaluation, MemberEvaluation):
    """One analysis of one function body."""

    def __init__(self, analysis: ValueAnalysis, fn: FunctionNode, env: Env, ctx: Context, depth: int):
        self.analysis = analysis
        self.names = analysis.names
        self.fn = fn
        self.scope: Scope = analysis.names.scope_of(fn)
        self.env = env
        self.ctx = ctx
        self.depth = depth

    def execute(self) -> Value:
        if isinstance(self.fn, ast.Lambda):
            return self.eval(self.fn.body, self.env)
        flow = ValueFlow(self, self.env.outer)
        solution = solve(self.analysis.graph(self.fn), flow, Bindings(self.env.vars))
        if not solution.converged:
            self.analysis.unconverged.append(self.fn)
        return STATIC if flow.returned is None else flow.returned

    def define(self, node: FunctionNode, env: Env) -> None:
        """Remember the environment a nested function closes over."""
        old = self.analysis.closures.get(id(node))
        snapshot = Env(env.vars.copy(), env.outer, env.fn)  # bindings share what they do not change
        if old is not None and old.outer is snapshot.outer:
            old.merge(snapshot)
        else:
            self.analysis.closures[id(node)] = snapshot

    def closure(self, fn: FunctionNode, env: Env) -> Env | None:
        """What a function called here sees of the names of the function it is defined in.
        Python binds them late: while that function runs (it is this one, or one around this
        call), they hold their values at the call; called from anywhere else (returned, stored
        and called later), the function sees them as they were where it was defined."""
        parent = self.names.parent_function.get(id(fn))
        level: Env | None = env
        while parent is not None and level is not None:
            if level.fn is parent:
                return frozen(level)
            level = level.outer
        return self.analysis.closures.get(id(fn))

    def decorated(self, node: ast.FunctionDef | ast.AsyncFunctionDef, rebound: Transform | None = None) -> Value:
        """What a def's name holds: the function as its decorators leave it, and, where the name
        is bound again to a transformation of itself (`rebound`: `f = jax.jit(f)`), as that
        transformation leaves it."""
        transforms = [t for d in node.decorator_list if (t := transform_of(d, self.names, self.scope))]
        if not transforms and not all(transparent(d, self.names, self.scope) for d in node.decorator_list):
            return UNKNOWN
        if rebound is not None:
            transforms.insert(0, rebound)
        transforms = [t for t in transforms if t.name not in jax_api.IDENTITY_TRANSFORMS]
        static: frozenset[str] = frozenset()
        for t in transforms:
            if t.name in jax_api.STATIC_ARG_TRANSFORMS:
                static = static_parameters(node, t.keywords, transform=t.name)
        # The outermost decorator receives the call: what it passes as given (a vmap's
        # `in_axes=None` arguments, a differentiation's outside `argnums`) arrives as given.
        as_given = as_given_positions(
            transforms[0].name, None, transforms[0].keywords, len(positional_params(node))
        ) if transforms else frozenset()
        return Value(Trace.STATIC, function=FunctionValue(
            node, tuple(t.name for t in transforms), static, as_given=as_given
        ))

    def _rebound(self, node: ast.Name, definition: ast.FunctionDef | ast.AsyncFunctionDef) -> Transform | None:
        """The transformation a def's name is bound to once more, of itself, in the scope that
        defines it (`f = jax.jit(f, static_argnums=0)` after `def f`), when `node` reads the name
        after that: from a function (which runs once the scope is built) or below the binding."""
        assigned = self.names.assignments(node, self.scope)
        if len(assigned) != 1 or not isinstance(assigned[0], ast.Call):
            return None
        call = assigned[0]
        if not (len(call.args) == 1 and isinstance(call.args[0], ast.Name) and call.args[0].id == node.id):
            return None
        callee = self.names.qualname(call.func, self.scope)
        if callee not in jax_api.TRANSFORMS:
            return None
        owner = self.names.scope_of(definition).parent
        if self.names.lookup(node.id, self.scope) is not owner:
            return None
        if self.scope is owner and node.lineno <= call.lineno:
            return None
        return Transform(callee, keywords(call), call)

    def run_at_definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """A nested def whose decorator runs it where it is defined (`@pl.when(cond)`): analysed
        there, staged, with what it closes over and its parameters (a loop index) traced."""
        if not any(
            isinstance(d, ast.Call) and self.names.qualname(d.func, self.scope) in RUN_AT_DEFINITION
            for d in node.decorator_list
        ):
            return
        params = {p.arg: TRACED_ARRAY for p in positional_params(node)}
        self.analysis.analyze(node, params, STAGED.inside(self.ctx), None, self.depth + 1)

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
            # Unpacking a traced pytree binds traced parts; iterating an unknown one does not;
            # unpacking an array binds its rows, arrays (so not None). A sequence that knows
            # what it holds (`tuple(f(a) for a in args)`) binds that.
            unknown_parts = value.traced and value.items is None and value.element is None and not value.array
            element = Value(Trace.TRACED) if unknown_parts else element_of(value)
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
            base = self.eval(target.value, env)
            self.eval(target.slice, env)
            if base.entries is not None and isinstance(target.value, ast.Name):
                # a store into a dict built here: what the key holds from now on
                key = target.slice.value if isinstance(target.slice, ast.Constant) else _NO_KEY
                if key.__class__ in (str, int):
                    entries = dict(base.entries)
                    entries[key] = value
                    stored = Value(join(base, value).trace, not_none=True, entries=tuple(entries.items()))
                else:  # which key is not known: nothing is known key by key
                    stored = base.but(entries=None)
                env.vars[target.value.id] = stored

    # ---- expressions -------------------------------------------------------------------
    def eval(self, node: ast.AST, env: Env) -> Value:
        value = self._eval(node, env)
        # `record`, inlined: this runs once per expression evaluated.
        analysis = self.analysis
        key = id(node)
        old = analysis.values.get(key)
        if old is not value:
            analysis.values[key] = value if old is None else join(old, value)
        if value.trace is _TRACED_TRACE and self.ctx.abstract:
            analysis.abstract.add(key)
        return value

    def _eval(self, node: ast.AST, env: Env) -> Value:
        # The most frequent classes first, by identity: `ast.parse` builds these exact classes.
        cls = node.__class__
        if cls is ast.Name:
            return self._name(node, env)
        if cls is ast.Call:
            return self._call(node, env)
        if cls is ast.Constant:
            return constant(node.value)
        if cls is ast.Attribute:
            return self._attribute(node, env)
        if cls is ast.BinOp:
            return self._binop_chain(node, env)
        if isinstance(node, ast.Compare):
            operands = [self.eval(node.left, env)] + [self.eval(c, env) for c in node.comparators]
            if any(v.unless_none for v in operands) and all(op.__class__ in _ORDERINGS for op in node.ops):
                operands = [v.unless_none or v for v in operands]  # None has no order
            compared = comparison(node, operands, self.names, self.scope, self.analysis.records.class_of)
            if compared.trace is not _TRACED_TRACE and compared.boolean and self.staged_constant(node, *operands):
                return TRACED_BOOL
            return compared
        if isinstance(node, ast.BoolOp):
            values = self._short_circuit(node, env)
            if all(v.truth is not None for v in values[:-1]):
                return values[-1]  # the operands before it are known: `and`/`or` yields this one
            return strip(join_all(values))
        if isinstance(node, ast.UnaryOp):
            operand = self.eval(node.operand, env)
            if isinstance(node.op, ast.Not):
                if operand.items is not None:  # a tuple's truth is its length, known here
                    return constant(not operand.items)
                if operand.element is not None and not operand.array:
                    return STATIC  # a Python list or iterator: its truth is its length
                if operand.truth is not None:
                    return constant(not operand.truth)
                # An array's negation is a traced bool; a value that may be a pytree keeps its
                # Python truth (`if not train:` is read as `if train:` is).
                return Value(operand.trace, boolean=operand.array or operand.boolean)
            operand = operand.unless_none or operand  # `-x`, `~x`: None has neither
            if self.staged_constant(node, operand):
                return TRACED_ARRAY.but(boolean=operand.boolean)
            return operand.but(items=None, element=None, function=None, record=None)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, env)
        if isinstance(node, ast.IfExp):
            truth = self.eval(node.test, env).truth
            if truth is not None:  # a branch a known constant rules out is never evaluated
                return self.eval(node.body if truth else node.orelse, env)
            return join(self.eval(node.body, self._shown(node.test, True, env)),
                        self.eval(node.orelse, self._shown(node.test, False, env)))
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
            values = [self.eval(v, env) for v in node.values]
            keys = [k.value if isinstance(k, ast.Constant) and k.value.__class__ in (str, int) else _NO_KEY
                    for k in node.keys]
            if _NO_KEY in keys or len(set(keys)) != len(keys):
                return strip(join_all(values))
            return Value(join_all(values).trace, not_none=True, entries=tuple(zip(keys, values)))
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            inner = self._comprehension(node.generators, env)
            element = self.eval(node.elt, inner)
            return Value(element.trace, element=element)
        if isinstance(node, ast.DictComp):
            inner = self._comprehension(node.generators, env)
            self.eval(node.key, inner)
            return strip(self.eval(node.value, inner))
        if isinstance(node, ast.Lambda):
            self.define(node, env)
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

    def _short_circuit(self, node: ast.BoolOp, env: Env) -> list[Value]:
        """The operands `and`/`or` evaluates: it stops at a known false (`and`) or true (`or`) one."""
        stop = isinstance(node.op, ast.Or)
        values = []
        for operand in node.values:
            value = self.eval(operand, env)
            values.append(value)
            if value.truth is stop:
                break
        return values

    def _binop_chain(self, node: ast.BinOp, env: Env) -> Value:
        """`a + b + c + ...` nests to the left: evaluated along that spine without recursing on it."""
        spine = [node]
        while isinstance(spine[-1].left, ast.BinOp):
            spine.append(spine[-1].left)
        value = self.eval(spine[-1].left, env)
        for inner in reversed(spine):
            value = self.binop(inner.op, value, self.eval(inner.right, env), inner)
            if inner is not node:
                self.analysis.record(inner, value, self.ctx)
        return value

    def _comprehension(self, generators: list[ast.comprehension], env: Env) -> Env:
        inner = Env({}, env, self.fn)
        for gen in generators:
            self.bind(gen.target, element_of(self.eval(gen.iter, inner)), inner)
            for cond in gen.ifs:
                self.eval(cond, inner)
        return inner

    def _shown(self, test: ast.expr, outcome: bool, env: Env) -> Env:
        """`env`, where `test` came out `outcome`: the names an `isinstance` test shows to hold
        no tracer are Python values there (`type_tests.concrete`), as on a branch's edge."""
        names = type_tests.concrete(test, outcome, self.names, self.scope)
        shown = {name: Value(Trace.STATIC, not_none=True) for name in names}
        return Env(shown, env, env.fn) if shown else env

    def _handed_closures(self, args: list[Value], kwargs: dict[str, Value], env: Env) -> None:
        """A function nested in this traced one, handed to code not seen, not followed, or
        followed in another module (`agent.actor.apply_loss_fn(loss_fn=actor_loss_fn)`,
        `value_and_multi_grad(loss_fn, 2)(params)`), runs in this trace if it runs at all: what
        it computes with JAX is traced there, whatever it is given (not known)."""
        if self.ctx is None or not self.ctx.staged:
            return
        for value in (*args, *kwargs.values()):
            fn = value.function
            if fn is None or fn.bound or fn.keywords or fn.transforms or isinstance(fn.node, ast.Lambda):
                continue
            if self.names.parent_function.get(id(fn.node)) is not env.fn or id(fn.node) in self.analysis.contexts:
                continue
            params = {p.arg: UNKNOWN for p in (*positional_params(fn.node), *fn.node.args.kwonlyargs)}
            self.analysis.analyze(fn.node, params, self.ctx, self.closure(fn.node, env), self.depth + 1)

    def _name(self, node: ast.Name, env: Env) -> Value:
        value = env.get(node.id)
        if value is not None:
            return value
        definition = self.names.definition(node, self.scope)
        if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return self.decorated(definition, self._rebound(node, definition))
        assigned = self.names.assignments(node, self.scope)
        if len(assigned) == 1 and isinstance(assigned[0], ast.Call):
            method = constructed_call_method(assigned[0], self.names, self.scope)
            if method is not None:  # `cell = Cell(w)` at module level: calling `cell` runs `__call__`
                return Value(Trace.STATIC, function=FunctionValue(method, method_self=STATIC))
            made = module_callees(self.names).target(node, self.scope)
            if made is not None and isinstance(made.function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return self.decorated(made.function)  # `step = make_step()`: the def the factory returns
        elif len(assigned) == 1 and isinstance(assigned[0], ast.Lambda):
            made = module_callees(self.names).target(node, self.scope)
            if made is not None and made.function is assigned[0]:
                # A lambda a scope around binds once (`score = lambda h: ...` beside a loop body
                # handed to `lax.while_loop`), read where that scope's values are not followed.
                return Value(Trace.STATIC, function=FunctionValue(made.function))
        literal = self.analysis.constants.value(node, self.scope)
        if literal is not None:
            return literal
        owner = self.names.lookup(node.id, self.scope)
        imported = owner.imports.get(node.id) if owner is not None else None
        if imported:
            return named(imported)  # a module or a member of one, as a parameter default may pass it on
        # Module globals and closure constants from eager code: constants at trace time, a
        # concrete JAX array where every assignment computes one.
        if assigned and owner is not None and node.id not in owner.other and all(
            isinstance(v, ast.Call) and computes_array(self.names.qualname(v.func, owner)) for v in assigned
        ):
            return _CONCRETE_ARRAY
        return STATIC

    def binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST) -> Value:
        # None takes part in no arithmetic: an operand that is a value or None is the value here.
        left, right = left.unless_none or left, right.unless_none or right
        trace = max(left.trace, right.trace)
        if trace is not _TRACED_TRACE:
            return TRACED_ARRAY if self.staged_constant(node, left, right) else Value(trace)
        boolean = isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and left.boolean and right.boolean
        return Value(trace, array=True, boolean=boolean, not_none=True)

    def staged_constant(self, node: ast.AST, *operands: Value) -> bool:
        """An operator applied, in staged code, to a concrete JAX array (`_CONCRETE_ARRAY`): JAX
        stages it, so the result is a tracer (outside `jax.ensure_compile_time_eval()`)."""
        return (
            self.ctx.staged and any(v.array and v.trace is _STATIC_TRACE for v in operands)
            and id(node) not in self.analysis.compile_time_operations
        )

    def _foreign_method_call(self, node: ast.Call, env: Env) -> Value | None:
        """`state.tree.child(i)` where `state.tree` is an instance of a record class of another
        module of the project (`RecordClasses.foreign_method`): followed there as a call of that
        module's function is, the instance given for `self`. None where it is not one."""
        receiver_node = node.func.value  # type: ignore[attr-defined]
        if not isinstance(_root(receiver_node), ast.Name) or any(k.arg is None for k in node.keywords):
            return None  # only a name's chain is read twice where it is no such instance
        receiver = self.eval(receiver_node, env)
        method = self.analysis.records.foreign_method(receiver.record, node.func.attr) if receiver.record else None  # type: ignore[attr-defined]
        if method is None:
            return None
        args = [self.eval(a, env) for a in node.args]
        kwargs = {k.arg: self.eval(k.value, env) for k in node.keywords if k.arg}
        return self.analysis.imported(method, [receiver, *args], kwargs, self.ctx, self.depth, spreads(node), False)

    def _held_instance_call(self, node: ast.Call, args: list[Value], kwargs: dict[str, Value], env: Env) -> Value | None:
        """`self.layer(...)` in a method, where the instance `self.layer` holds is of one plain
        class of this module or of another module of the project, as the module's resolver
        says (`submodules.attribute_class`): that class's `__call__`, followed with the call's
        values (a framework module's `__call__` is a traced root of its own, decided by its
        callers)."""
        func = node.func
        if not isinstance(func.value, ast.Name) or func.value.id != receiver(self.names, self.scope):
            return None
        named = attribute_class(self.names, func, module_callees(self.names).attributes_of)
        if named is None:
            return None
        scope = self.names.read_scope.get(id(_root(named)), self.names.module)
        if isinstance(self.names.definition(named, scope), ast.ClassDef):
            method = class_call_method(named, self.names, scope)
            if method is None:
                return None
            return self._call_function(FunctionValue(method, method_self=STATIC), node, args, kwargs, env)
        qualname = self.names.qualname(named, scope)
        if qualname is None or self.analysis.imported is None:
            return None
        return self.analysis.imported(qualname, args, kwargs, self.ctx, self.depth, spreads(node), True)

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
        if callee in jax_api.CALLING_DIFFERENTIATIONS:
            self._differentiated(node, callee, env)  # then a JAX function's result, as below
        if callee is None and isinstance(node.func, ast.Attribute) and self.analysis.imported is not None:
            followed = self._foreign_method_call(node, env)
            if followed is not None:
                return followed
        func = None if callee else self.eval(node.func, env)
        if func is not None and named_of(func) is not None:
            callee = named_of(func)  # `xnp.stack(...)` with `xnp` holding `numpy`
            if callee in jax_api.CONTROL_FLOW or callee in jax_api.TRANSFORMS or callee in jax_api.HOST_CALLBACKS:
                callee = None  # their bodies are followed through the names only
        args = [self.eval(a, env) for a in node.args]
        kwargs = {k.arg: self.eval(k.value, env) for k in node.keywords if k.arg}
        for k in node.keywords:
            if k.arg is None:
                spread = self.eval(k.value, env)
                # `**kwargs` of a dict whose keys are known (collected by a `**` parameter, or a
                # literal): each key is a keyword argument with its own value.
                for key, value in spread.entries or ():
                    if isinstance(key, str):
                        kwargs.setdefault(key, value)
        receiver_value = self.analysis.values.get(id(node.func.value)) if isinstance(node.func, ast.Attribute) else None
        if (
            receiver_value is not None and receiver_value.entries is not None and isinstance(node.func.value, ast.Name)
            and node.func.attr not in _DICT_READS
        ):
            # a method that may change a dict built here (`update`, `pop`, `setdefault`): what it
            # holds is no longer known key by key
            env.vars[node.func.value.id] = strip(join_all([receiver_value, *args, *kwargs.values()]))
        copy = copied(node, callee, args, kwargs, receiver_value)
        if copy is not None:
            return copy
        if callee is not None:
            if self.analysis.classes is not None and not callee.startswith(_LIBRARIES) and any(
                v.trace is not _STATIC_TRACE for v in (*args, *kwargs.values())
            ):
                built = self.analysis.records.construct(node, args, kwargs, self.scope)
                if built is not None:
                    return built  # a record class of another module of the project
            result = self._library_call(node, callee, args, kwargs, env)
            if not callee.startswith(_LIBRARIES):
                # Code not seen, not followed, or followed in another module, whose analysis is
                # given values, not this module's functions: it cannot run them there.
                self._handed_closures(args, kwargs, env)
            return result
        assert func is not None
        method = constructed_call_method(node, self.names, self.scope)
        built = None if method is not None else self.analysis.records.construct(node, args, kwargs, self.scope)
        if built is not None:
            # Equinox validates an instance once its fields are set: `__check_init__` runs here.
            check = self._own_method(node.func, "__check_init__")
            if check is not None and len(positional_params(check)) == 1:
                self._call_function(FunctionValue(check, method_self=built), node, [], {}, env)
            return built
        if is_named_tuple(node.func, self.names, self.scope):
            return Value(Trace.UNKNOWN, fields=True)
        named_tuple_copy = isinstance(node.func, ast.Attribute) and node.func.attr == "_replace"
        if named_tuple_copy and receiver_value is not None and receiver_value.fields:
            return Value(Trace.UNKNOWN, fields=True)  # a copy of the same NamedTuple, some fields perhaps Python now
        if method is not None:
            # The instance's attributes are Python state to the analysis: its `self` is static,
            # and made here, in the trace.
            return Value(Trace.STATIC, function=FunctionValue(method, method_self=MADE_SELF), made_here=True)
        if plain_class(node.func, self.names, self.scope):
            init = self._own_method(node.func, "__init__")
            if init is not None:  # it runs here, on the arguments given
                self._call_function(FunctionValue(init, method_self=MADE_SELF), node, args, kwargs, env)
            return _MADE_OBJECT
        if func.function is not None:
            return self._call_function(func.function, node, args, kwargs, env)
        if isinstance(node.func, ast.Call):
            maker = self.names.qualname(node.func.func, self.scope)
            made = made_callable_result(maker, node.func, args, self.ctx is not None and self.ctx.abstract)
            if made is not None:
                return made
        if isinstance(node.func, ast.Name):
            unpacked = self.analysis.unpacked_from(node.func, self.scope)
            if unpacked is not None:
                maker, position = unpacked
                made = unpacked_function_result(
                    self.names.qualname(maker.func, self.scope), position, args, self.ctx is not None and self.ctx.abstract,
                )
                if made is not None:
                    return made
        if isinstance(node.func, ast.Attribute):
            held = self._held_instance_call(node, args, kwargs, env)
            if held is not None:
                return held
            if node.func.attr == "apply" and node.args and variables_dict(node.args[0], self.names, self.scope):
                return module_applied(args, kwargs)  # `model.apply({"params": p}, x)`: a Linen run
            self._handed_closures(args, kwargs, env)
            receiver_held = self.analysis.values.get(id(node.func.value), UNKNOWN)
            if node.func.attr == "pop" and _string_key(node, 1) and receiver_held.traced:
                # `batch.pop("mask")` of a traced pytree (an array has no `pop`: a dict) reads
                # what `batch["mask"]` reads, and fails alike where the key is absent.
                return KEYED_LEAF
            if node.func.attr == "get" and _string_key(node, 2) and not _is_none(node.args[1]) and receiver_held.traced:
                # `info.get("mask", jnp.ones_like(r))` of a traced pytree: what `info["mask"]`
                # reads where the key is there, the default where it is not. (Without a default,
                # or with None, it may be None: not known.)
                return join(KEYED_LEAF, args[1])
            return method_result(node.func, receiver_held, args, kwargs)
        if calls_declared_array_maker(node, self.names, self.scope):
            return TRACED_ARRAY  # a JAX array computed in the trace: a tracer
        if isinstance(node.func, ast.Name):
            # A name that holds code not seen (imported from a module that cannot be placed, as a
            # relative import of a file linted alone; a callable parameter): what it is handed
            # runs there, as what an unseen library call is handed does.
            self._handed_closures(args, kwargs, env)
        return UNKNOWN


def _string_key(call: ast.Call, count: int) -> bool:
    """A call given `count` arguments, the first a string constant, and no keyword
    (`d.pop("mask")`, `d.get("mask", ones)`)."""
    return (
        len(call.args) == count and not call.keywords and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
    )


def _is_none(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def _root(expr: ast.expr) -> ast.expr:
    """The name an attribute chain starts from (`layers` of `layers.Bias`)."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr
