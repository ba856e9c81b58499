"""One module's traced code and its values: the facts every domain reads.

`TracedModule` indexes the module's names, finds which functions JAX traces (`tracing`),
runs the value analysis over them (`values`) and, linked to the project, over the calls
into it from other modules (`project.py`). Each is built lazily, on first use.
"""

from __future__ import annotations

import ast
import functools
from functools import cached_property
from typing import Any, Callable, Iterable, Iterator

from jaxlint.analysis.engine.call_index import calls_through, spellings
from jaxlint.analysis.engine.conditions import single_value
from jaxlint.analysis.engine.lattice import STATIC, TRACED_ARRAY, UNKNOWN, named_of
from jaxlint.analysis.engine.loop_variance import LoopFacts
from jaxlint.analysis.engine.names import FUNCTION_TYPES, FunctionNode, Names
from jaxlint.analysis.engine.walk import own_nodes
from jaxlint.analysis.knowledge import array_api, jax_api
from jaxlint.analysis.knowledge.spellings import SPELLING
from jaxlint.analysis.knowledge.testing_code import test_file, test_functions, test_pattern
from jaxlint.analysis.project.inherited_calls import inherited_calls
from jaxlint.analysis.project.project import IncomingCall, ModuleLink, opaque, portable
from jaxlint.analysis.project.project_instance_calls import untraced_parameters
from jaxlint.analysis.tracing.array_annotations import declares_array
from jaxlint.analysis.tracing.callsites import CallSite, CallSites
from jaxlint.analysis.tracing.carry_returns import with_returned_arrays
from jaxlint.analysis.tracing.guards import guarded_nodes
from jaxlint.analysis.tracing.parameters import (
    bind_arguments, body_parameters, carry_structure, default_of, with_residuals,
)
from jaxlint.analysis.tracing.root_parameters import root_parameters
from jaxlint.analysis.tracing.static_arguments import as_given_positions, positional_params, static_parameters
from jaxlint.analysis.tracing.traced_functions import (
    ANY_KEYWORD, NOTHING_BOUND, STAGED, Bound, Context, Discovery, TracedFunction, context_of,
)
from jaxlint.analysis.tracing.tracing import discover, wrapped_elsewhere
from jaxlint.analysis.values.closure_nullness import closed_not_none
from jaxlint.analysis.values.values import Trace, Value, ValueAnalysis
from jaxlint.source import Source
from jaxlint.timings import timed


class TracedModule:
    """`project` links the module to the project's other modules (None: linted alone);
    `incoming` are traced calls into it from them, analysed as entry points of their own."""

    def __init__(
        self,
        source: Source,
        options: dict[str, Any] | None = None,
        project: ModuleLink | None = None,
        incoming: Iterable[IncomingCall] = (),
        names: Names | None = None,
        path: str = "",
        search_callers: bool = True,
        reported: bool = True,
        elsewhere: bool = True,
    ):
        if names is not None:
            self.names = names  # already built for this tree (see `Project.loaded`)
        self.source = source
        self.path = path  # the file's path, where options name files (`test-files`)
        self.tree = source.tree
        self.options = options or {}
        self.project = project
        # Whether a framework module's `__call__` parameters are decided by the project's calls
        # (`project_instance_calls`); off, a search that would have been made is only noted.
        self.search_callers = search_callers
        # Whether the module's own findings are reported: a module the project reads only to
        # follow calls into it answers questions, and what no question needs is not computed.
        self.reported = reported
        # Whether the methods a base class of another module traces are analysed (off: what the
        # module reports without the traces other modules make, as without `incoming`).
        self.elsewhere = elsewhere
        self.callers_asked = False
        # Abstract contexts first: the entry point a finding names is one under which it fails.
        self.incoming = sorted(
            incoming, key=lambda c: (not c.context.abstract, c.entry, c.function, repr(c.params), repr(c.context))
        )
        # id(function) -> the entry point in another module that traces it (and not this module)
        self.traced_via: dict[int, str] = {}
        self._bodies: dict[int, list[ast.AST]] = {}
        self._unguarded: dict[int, list[ast.AST]] = {}
        self._unguarded_kinds: dict[int, dict[type, list[ast.AST]]] = {}
        self._body_kinds: dict[int, dict[type, list[ast.AST]]] = {}

    @cached_property
    @timed("names")
    def names(self) -> Names:
        names = Names(self.tree, self.project.package if self.project is not None else None, SPELLING)
        for scope, module in names.star_imports if self.project is not None else ():
            bound = self.project.star_names(module)
            if bound:
                names.bind_star(scope, bound)
        if self.project is not None:
            # A function of the link alone: the names outlive this module's facts (`release`).
            names.alias_of = functools.partial(_alias_of, self.project, {})
            names.constant_of = functools.partial(_constant_of, self.project, {})
        return names

    @cached_property
    @timed("tracing")
    def discovery(self) -> Discovery:
        return discover(self.names)

    @property
    def traced_roots(self) -> list[TracedFunction]:
        """Functions transformed by a decorator, a wrapping call, or a framework base class."""
        return self.discovery.roots

    @cached_property
    @timed("values")
    def analysis(self) -> ValueAnalysis:
        link = self.project
        analysis = ValueAnalysis(
            self.names, link.follow if link is not None else None, self.discovery.eager,
            link.class_of if link is not None else None,
        )
        entries: list[tuple[FunctionNode, dict[str, Value], Context, bool, TracedFunction | None]] = []
        for root in self.discovery.roots:
            params = root_parameters(
                root, self.names, self.discovery.roots, self._passed_defaults(root), self._callers(root),
                (lambda qualname: link.class_of(qualname) is not None) if link is not None else None,
            )
            entries.append((root.node, params, root.context, False, root))
        calls: dict[int, list[ast.Call]] = {}
        for fn, call, callee in self.discovery.bodies:
            if id(call) in self.discovery.eager:
                continue  # run eagerly, or from traced code, where the value analysis finds it
            bound = self.discovery.body_bound.get((id(fn), id(call)), NOTHING_BOUND)
            carry = with_returned_arrays(carry_structure(call, callee, self.names), call, callee, self.names)
            calls.setdefault(id(fn), []).append(call)
            entries.append((fn, body_parameters(fn, call, callee, bound, carry=carry), STAGED, True, None))
        if len(entries) > 1:  # outermost first, so nested functions are analysed with the values they close over
            depth = self._depths()
            entries.sort(key=lambda e: depth.get(id(e[0]), 0))
        closed: dict[int, frozenset[str]] = {}
        returned: dict[int, Value] = {}
        for fn, params, ctx, handed_over, root in entries:
            seen = analysis.contexts.get(id(fn))
            if seen is not None and self.names.parent_function.get(id(fn)) is not None and (
                (seen.abstract or not ctx.abstract) and (seen.staged or not ctx.staged)
            ):
                continue  # already analysed from its enclosing traced function, as traced as this entry
            if link is not None:
                link.entry = self.entry_name(fn)
            shown = frozenset()
            if handed_over and not isinstance(fn, ast.Lambda):  # traced where eager code hands it over
                shown = closed.get(id(fn))
                if shown is None:
                    shown = closed[id(fn)] = closed_not_none(fn, analysis.graph, calls[id(fn)], self.names, self.body)
            if root is not None and root.residuals_from is not None:
                params = with_residuals(fn, params, root.static_params, returned.get(id(root.residuals_from)))
            returned[id(fn)] = analysis.analyze(fn, params, ctx, closed_not_none=shown)
        if link is not None:
            self._trace_imported(link, analysis)
            self._analyze_incoming(analysis, link)
        self._analyze_inherited(analysis, link)
        self._analyze_derivative_rules(analysis, returned, link)
        return analysis

    def _trace_imported(self, link: ModuleLink, analysis: ValueAnalysis) -> None:
        """`jax.jit(helpers.step)`, `step = jax.vmap(train_step)` with the function imported from
        another module of the project: JAX traces it there, every argument it is given a tracer
        but those the transformation declares static. Its module is analysed in that context, as
        for a call from traced code, and its findings say which function of this module traces it.
        The call of what the transformation returns is not followed, so an argument a
        differentiation passes as given is what traced code passes on where the transformation
        is made in staged code (a tracer, as a rule), and unknown elsewhere."""
        names = self.names
        if test_file(self.path, self.options):
            # A test transforms the functions it tests in ways it shows they survive (it passes,
            # or it already fails on the bug): what they do traced is their own modules' to say.
            return
        tests = test_functions(names, test_pattern(self.options))  # ... and so does a test function
        # A function `follow` never enters (a modelled library's) is not looked up, which would
        # read its module for nothing.
        for call, scope in calls_through(names, spellings(names, jax_api.TRANSFORMS)):
            transform = names.qualname(call.func, scope)
            if transform not in jax_api.TRANSFORMS or not call.args or _in(scope, tests):
                continue
            for leaf, fixed in wrapped_elsewhere(call.args[0], names, scope):
                self._trace_one(link, analysis, call, scope, transform, leaf, fixed)

    def _trace_one(
        self, link: ModuleLink, analysis: ValueAnalysis, call: ast.Call, scope, transform: str, leaf: ast.expr,
        fixed: Bound,
    ) -> None:
        """`_trace_imported` for one function of another module that `call` transforms, `fixed`
        the arguments a `functools.partial` around it fixes: the caller's values, not known."""
        names = self.names
        wrapped = names.qualname(leaf, scope)
        if wrapped is None or opaque(wrapped):
            return
        found = link.target(wrapped)  # a function, or a def read through its class
        if found is None:
            return
        target, implicit = found
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        implicit += fixed.positional
        static = static_parameters(target.node, keywords, implicit, transform) if transform in jax_api.STATIC_ARG_TRANSFORMS else frozenset()
        fn = target.node
        positional = positional_params(fn)
        as_given = as_given_positions(transform, call, keywords, len(positional) - implicit)
        around = scope.node if isinstance(scope.node, FUNCTION_TYPES) else None
        if transform in jax_api.CONCRETE_TRANSFORMS and around is not None:
            made_in = analysis.contexts.get(id(around))
            if made_in is not None and made_in.staged:
                as_given = frozenset()

        # A parameter with a default may be left to it, and one the transformation passes as
        # given (a vmap's `in_axes=None`, `as_given_positions`): what either holds is not known.
        def value(param: ast.arg, position: int | None) -> Value:
            if param.arg in static:
                return STATIC
            if position in as_given or default_of(fn, param) is not None or param.arg in fixed.keywords:
                return UNKNOWN
            return UNKNOWN if ANY_KEYWORD in fixed.keywords else TRACED_ARRAY

        # The partial's fixed positional arguments come first, as the call binds them.
        args = [UNKNOWN] * fixed.positional + [value(p, i) for i, p in enumerate(positional[implicit:])]
        kwargs = {p.arg: value(p, None) for p in fn.args.kwonlyargs}
        # The entry point named is what a run calls to trace it: the function making the call,
        # or the module-level name the transformed function is bound to.
        bound = names.call_targets.get(id(call))
        if around is not None:
            link.entry = self.entry_name(around)
        elif bound is not None:
            link.entry = f"{link.name}.{bound}" if link.name else bound
        else:
            return
        link.follow(wrapped, args, kwargs, context_of(transform), 1)

    def _callers(self, root: TracedFunction) -> Callable[[frozenset[str]], dict[str, bool | None]] | None:
        """For a framework module's `__call__`: what the project's calls of its instances pass
        for the parameters asked about."""
        cls = self.names.parent_class.get(id(root.node))
        if not root.framework_method or cls is None or getattr(root.node, "name", None) != "__call__":
            return None
        if not self.search_callers:
            def noted(asked: frozenset[str]) -> dict[str, bool | None]:
                # Not searched: each may be passed a traced value, so this pass finds the most it
                # can, and the pass that searches (made where this one finds something) decides.
                self.callers_asked = True
                return dict.fromkeys(asked)

            return noted
        return lambda asked: untraced_parameters(self, cls, root.node, asked)

    def _passed_defaults(self, root: TracedFunction) -> frozenset[str]:
        """The parameters with a default other than None that a call of the jitted function in
        this module passes something other than None: `jax.jit` traces what is passed, whatever
        the default (a method is left out: its calls bind `self` as their own;
        a None default keeps its None path in view)."""
        fn = root.node
        if isinstance(fn, ast.Lambda) or root.kernel or id(fn) in self.names.parent_class:
            return frozenset()
        if not root.transforms or any(t.name not in _TRACING_EVERY_ARGUMENT for t in root.transforms):
            return frozenset()  # a vmap's `in_axes`, a filtering jit: what is passed may stay as it is
        a = fn.args
        if not a.defaults and not any(d is not None for d in a.kw_defaults):
            return frozenset()
        positional = [p.arg for p in (*a.posonlyargs, *a.args)][root.bound_positional:]
        passed: set[str] = set()
        for site in self.call_sites:
            call = site.call
            if site.target is not root or any(isinstance(arg, ast.Starred) for arg in call.args):
                continue
            given = list(zip(positional, call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg]
            passed.update(name for name, arg in given if not (isinstance(arg, ast.Constant) and arg.value is None))
        params = {p.arg: p for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
        return frozenset(name for name in passed if name in params and _default_not_none(fn, params[name]))

    def _depths(self) -> dict[int, int]:
        """id(function) -> how many functions it is nested in."""
        depth: dict[int, int] = {}
        for fn in self.names.functions:
            parent = self.names.parent_function.get(id(fn))
            depth[id(fn)] = depth.get(id(parent), -1) + 1 if parent is not None else 0
        return depth

    def _analyze_derivative_rules(self, analysis: ValueAnalysis, returned: dict[int, Value], link: ModuleLink | None) -> None:
        """The rules a custom_jvp/custom_vjp function registers, traced where the function itself
        runs on tracers: it is called from traced code (and differentiated there, or why give it a
        rule). Called eagerly or under a differentiation alone, it and its rules see concrete values.
        What a rule calls in other modules is traced from the function it is the rule of."""
        pending = dict(self.discovery.derivative_rules)
        primals = {id(fn): fn for fn in self.names.functions if id(fn) in pending} if link is not None else {}
        while True:
            reached = [key for key in pending if (ctx := analysis.contexts.get(key)) is not None and ctx.abstract]
            if not reached:
                return
            for key in reached:
                if key in primals:
                    link.entry = self.entry_name(primals[key])
                for root in pending.pop(key):
                    params = root_parameters(root, self.names, self.discovery.roots)
                    if root.residuals_from is not None:
                        params = with_residuals(root.node, params, root.static_params, returned.get(id(root.residuals_from)))
                    returned[id(root.node)] = analysis.analyze(root.node, params, root.context)

    def _analyze_incoming(self, analysis: ValueAnalysis, link: ModuleLink) -> None:
        """Functions traced from other modules, in each calling context; remember who traced them."""
        local = set(analysis.functions)
        for call in self.incoming:
            if call.repeats:
                continue  # not traced: what `RebuiltJits` reads
            fn = self._defined(call.function)
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            link.entry = call.entry
            analysis.analyze(fn, dict(call.params), call.context)
            for key in analysis.functions:
                if key not in local:
                    self.traced_via.setdefault(key, call.entry)

    def _analyze_inherited(self, analysis: ValueAnalysis, link: ModuleLink | None) -> None:
        """The overrides a traced method of a base class calls on `self` (`inherited_calls`), each
        in the context that method runs in and with the values its call passes there; a base of
        another module names the entry point that traces them. A base module whose values are
        being built (an import cycle) is not asked."""
        building = link.project.values_building if link is not None else set()
        if link is not None:
            building.add(link.path)
        try:
            for found in inherited_calls(self.names, link):
                base = found.base.facts
                if base is None:
                    there = analysis
                elif not self.elsewhere or base.project.path in building or not base.discovery.roots:
                    continue  # no traced code of its own there (or not known yet)
                else:
                    there = base.analysis
                ctx = there.contexts.get(id(found.caller))
                if ctx is None:
                    continue
                call = found.call

                def value(node: ast.AST, missing: Value = UNKNOWN) -> Value:
                    known = there.values.get(id(node))
                    return missing if known is None else known if base is None else portable(known)

                starred = next((i for i, a in enumerate(call.args) if isinstance(a, ast.Starred)), None)
                args = [value(a) for a in call.args[:starred]]
                kwargs = {k.arg: value(k.value) for k in call.keywords if k.arg is not None}
                params = _as_declared(found.method, bind_arguments(
                    found.method, args, kwargs, value(call.func.value, STATIC), spread=starred is not None  # type: ignore[attr-defined]
                ), self.names)
                entry = (base or self).entry_name(found.caller)
                if link is not None:
                    link.entry = entry
                before = set(analysis.functions)
                analysis.analyze(found.method, params, ctx)
                if base is not None:
                    for key in analysis.functions:
                        if key not in before:
                            self.traced_via.setdefault(key, entry)
        finally:
            if link is not None:
                building.discard(link.path)

    def _defined(self, name: str) -> ast.AST | None:
        """The module-level def `name`, or the method `Class.method`, of the module."""
        owner, _, method = name.rpartition(".")
        if not owner:
            return self.names.module.defs.get(name)
        cls = self.names.module.defs.get(owner)
        scope = self.names.scopes.get(id(cls)) if isinstance(cls, ast.ClassDef) else None
        return scope.defs.get(method) if scope is not None else None

    def entry_name(self, fn: FunctionNode) -> str:
        """`module.Class.function` of an entry point (a lambda is named by the function around it)."""
        parts = []
        node: ast.AST | None = fn
        while node is not None:
            if not isinstance(node, ast.Lambda):
                parts.append(node.name)
            cls = self.names.parent_class.get(id(node))
            if cls is not None:
                parts.append(cls.name)
            node = self.names.parent_function.get(id(node))
        parts = parts or ["<lambda>"]
        module = self.project.name if self.project is not None else ""
        return ".".join([module, *reversed(parts)] if module else reversed(parts))

    def release(self) -> None:
        """Drop every fact once the rules are done. The analyses keep the facts they read, so
        they form reference cycles that only the collector could free, walking all of them;
        without this module's references, reference counting frees them at once."""
        self.__dict__.clear()

    def traced_via_spans(self) -> list[tuple[int, int, str]]:
        """(first row, last row, entry point) of each function traced only from another module."""
        return [
            (fn.lineno, fn.end_lineno or fn.lineno, self.traced_via[key])
            for key, fn in self.analysis.functions.items()
            if key in self.traced_via
        ]

    @cached_property
    def call_sites(self) -> list[CallSite]:
        """Every call of a transformed callable, with the loops around it."""
        return self._call_sites.sites

    def loops_around(self, call: ast.Call) -> list:
        """The loops around a call of the module, outermost first (see `CallSites.loops_around`)."""
        return self._call_sites.loops_around(call)

    @cached_property
    @timed("call sites")
    def _call_sites(self) -> CallSites:
        return CallSites(self.names, self.discovery)

    @cached_property
    @timed("loop variance")
    def loops(self) -> LoopFacts:
        """Which values change from one iteration of a Python loop to the next (see `loop_variance.py`)."""
        return LoopFacts(self.tree)

    def varies_in_loop(self, expr: ast.AST, loop: ast.AST, at: ast.AST | None = None) -> bool:
        """Whether an expression, read where `at` is (default: where it is), can change from one
        iteration of `loop` to the next."""
        return self.loops.varies(expr, loop, at)

    # ---- questions rules ask ---------------------------------------------------------
    def value(self, node: ast.AST) -> Value | None:
        """The value of an expression inside traced code; None outside traced code."""
        return self.analysis.values.get(id(node))

    def is_traced(self, node: ast.AST) -> bool:
        """Traced in some context (concrete differentiation included)."""
        value = self.analysis.values.get(id(node))
        return value is not None and value.trace is Trace.TRACED

    def is_constant(self, node: ast.AST) -> bool:
        """A Python value in every context the analysis reached (a constant, a NumPy array, an
        argument passed as it is), not a tracer."""
        value = self.analysis.values.get(id(node))
        return value is not None and value.trace is Trace.STATIC

    def is_abstract(self, node: ast.AST) -> bool:
        """An abstract tracer in some context: Python control flow and concretization on it raise."""
        return id(node) in self.analysis.abstract

    def is_abstract_array(self, node: ast.AST) -> bool:
        """An abstract tracer known to be an array (a traced tuple or dict still has a Python truth value)."""
        if id(node) not in self.analysis.abstract:
            return False
        value = self.analysis.values[id(node)]
        return value.array or value.boolean

    def traced_truth(self, test: ast.AST) -> ast.AST | None:
        """What in a test Python takes the truth of that is an abstract traced array: the test
        itself, or an operand of `and`/`or` (each one evaluated is converted to bool) or of
        `not`, the first found; None when there is none."""
        if self.is_abstract_array(test):
            return test
        if isinstance(test, ast.BoolOp):
            for operand in test.values:
                found = self.traced_truth(operand)
                if found is not None:
                    return found
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self.traced_truth(test.operand)
        return None

    def runs_eagerly(self, call: ast.Call) -> bool:
        """A control-flow call made under `with jax.disable_jit():` by code that is not traced:
        it calls its bodies in Python on concrete values (a `lax.cond` only the branch taken)."""
        scope = self.discovery.eager.get(id(call))
        return scope is not None and id(scope) not in self.analysis.contexts

    def traced_functions(self) -> Iterator[tuple[FunctionNode, Context]]:
        """Every analysed function and the joined context it runs in."""
        analysis = self.analysis
        for key, fn in analysis.functions.items():
            yield fn, analysis.contexts[key]

    def runs_staged(self, fn: FunctionNode | None) -> bool:
        """Whether a function's body runs while JAX stages it (its loops unroll once per trace)."""
        ctx = self.analysis.contexts.get(id(fn)) if fn is not None else None
        return ctx is not None and ctx.staged

    def qualname(self, expr: ast.AST) -> str | None:
        """What `expr` names: through the module's names, or, inside traced code, through what
        the value analysis found a name to hold (`xnp.stack` where `xnp` defaults to `numpy`)."""
        found = self.names.qualname(expr)
        if found is None and isinstance(expr, ast.Attribute):
            found = named_of(self.analysis.value(expr))
        return found

    def cut_short(self) -> list[tuple[ast.AST, str]]:
        """The functions (or the module body) whose analysis stopped before its end, and why; only
        analyses that ran are asked."""
        unsettled = "its loops did not settle within the solver's bound"
        found: dict[int, tuple[ast.AST, str]] = {}
        if "analysis" in self.__dict__:
            found.update((id(fn), (fn, unsettled)) for fn in self.analysis.unconverged)
            found.update((id(fn), (fn, "an expression in it is nested too deeply to follow")) for fn in self.analysis.skipped)
        if "loops" in self.__dict__:
            found.update((id(owner), (owner, unsettled)) for owner in self.loops.unconverged())
        return sorted(found.values(), key=lambda item: (getattr(item[0], "lineno", 0), getattr(item[0], "col_offset", 0)))

    def body(self, fn: FunctionNode) -> list[ast.AST]:
        """The nodes of a function's own body (nested functions and lambdas excluded), computed once."""
        nodes = self._bodies.get(id(fn))
        if nodes is None:
            nodes = self._bodies[id(fn)] = own_nodes(fn)
        return nodes

    def unguarded_body(self, fn: FunctionNode) -> list[ast.AST]:
        """`body`, less the nodes inside a `try` that catches a tracer's error (`guards.py`):
        where the code handles a concretization failure itself."""
        found = self._unguarded.get(id(fn))
        if found is None:
            nodes = self.body(fn)
            guarded = guarded_nodes(nodes, self.names, self.names.scope_of(fn))
            found = self._unguarded[id(fn)] = [n for n in nodes if id(n) not in guarded] if guarded else nodes
        return found

    def unguarded(self, fn: FunctionNode, kind: type) -> list[ast.AST]:
        """The nodes of `unguarded_body` of one node class: each rule asks for the few it reads
        instead of testing every node of every traced function."""
        kinds = self._unguarded_kinds.get(id(fn))
        if kinds is None:
            nodes = self.unguarded_body(fn)
            kinds = self._unguarded_kinds[id(fn)] = self._kinds(fn) if nodes is self.body(fn) else _by_class(nodes)
        return kinds.get(kind, [])

    def nodes_of(self, fn: FunctionNode, kind: type) -> list[ast.AST]:
        """The nodes of `body` of one node class, in the body's order."""
        return self._kinds(fn).get(kind, [])

    def _kinds(self, fn: FunctionNode) -> dict[type, list[ast.AST]]:
        kinds = self._body_kinds.get(id(fn))
        if kinds is None:
            kinds = self._body_kinds[id(fn)] = _by_class(self.body(fn))
        return kinds


def _by_class(nodes: list[ast.AST]) -> dict[type, list[ast.AST]]:
    kinds: dict[type, list[ast.AST]] = {}
    for node in nodes:
        same = kinds.get(node.__class__)
        if same is None:  # not `setdefault`, which would build a list for every node
            kinds[node.__class__] = [node]
        else:
            same.append(node)
    return kinds


# Transformations that make a tracer of every argument they are passed, static ones aside.
_TRACING_EVERY_ARGUMENT = frozenset({"jax.jit", "flax.nnx.jit"})


def _as_declared(fn: FunctionNode, params: dict[str, Value], names: Names) -> dict[str, Value]:
    """An override's parameters as it declares them: a traced argument the base took for an array
    only because nothing said otherwise (`state: TEnvState`, a type variable) is the record its
    annotation names there (`state: EnvState`), as the value analysis reads annotations."""
    out = dict(params)
    for param in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs):
        value = out.get(param.arg)
        annotation = param.annotation
        if (
            value is not None and value.traced and value.array and value.record is None
            and isinstance(annotation, (ast.Name, ast.Attribute)) and not declares_array(annotation, names)
        ):
            out[param.arg] = value.but(array=False)
    return out


def _default_not_none(fn: FunctionNode, param: ast.arg) -> bool:
    default = default_of(fn, param)
    return default is not None and not (isinstance(default, ast.Constant) and default.value is None)


def _constant_of(link, known: dict[str, str | bytes | None], qualname: str) -> str | bytes | None:
    """The string (or bytes) a project module binds a module-level name to once, plainly
    (`MODEL_MODE_PREFILL = "prefill"`); `known` keeps the answers."""
    if qualname not in known:
        single = _plain_binding(link, qualname)
        value = single[1].value if single is not None and isinstance(single[1], ast.Constant) else None
        known[qualname] = value if isinstance(value, (str, bytes)) else None
    return known[qualname]


def _alias_of(link, known: dict[str, str | None], qualname: str) -> str | None:
    """What a module-level name of a project module stands for where that module binds it once,
    plainly, to another name (`GridState: TypeAlias = jax.Array`, `Dense = nn.Dense`); `known`
    keeps the answers."""
    if qualname in known:
        return known[qualname]
    known[qualname] = None  # a cycle of aliases stops here
    alias = None
    single = _plain_binding(link, qualname)
    if single is not None and isinstance(single[1], (ast.Name, ast.Attribute)):
        names, value, scope = single
        alias = names.qualname(value, scope)
    elif link.may_make_dataclasses(qualname):
        alias = _dataclass_maker(link, qualname)
    known[qualname] = alias
    return alias


def _dataclass_maker(link, qualname: str) -> str | None:
    """`flax.struct.dataclass` for a decorator of the project that makes dataclasses (PEP 681's
    `dataclass_transform`) and registers each as a pytree in its body (a copy of Flax's): what
    it makes is what Flax's makes, every field not declared static a pytree child."""
    found = link.definition(qualname)
    if found is None or not isinstance(found[1], ast.FunctionDef):
        return None
    names, fn = found
    registers = any(
        isinstance(node, ast.Call) and names.qualname(node.func) in array_api.PYTREE_NODE_REGISTRATIONS
        for node in ast.walk(fn)
    )
    return "flax.struct.dataclass" if registers else None


def _plain_binding(link, qualname: str) -> tuple | None:
    """(names, value, scope) of the module-level binding a qualified name of another project
    module stands for, where that module binds it once, plainly. The module is parsed only where
    its text may bind the name so (most names asked about are classes)."""
    found = link.module_value(qualname) if link.may_bind_plainly(qualname) else None
    return single_value(found[0], found[1], found[0].module) if found is not None else None


def _in(scope, functions: set[int]) -> bool:
    """Whether code read in `scope` lies in one of `functions` (or a function nested in one)."""
    while scope is not None and not isinstance(scope.node, FUNCTION_TYPES):
        scope = scope.parent
    return scope is not None and id(scope.node) in functions
