"""Side effects and stores: what code writes, where the written object lives, what runs at trace time.

One cheap walk over the module's statements (expressions are not walked) collects every
store to an item or an attribute, every bare call statement, and the names that tests
assert on.  On top of that the module answers the questions the purity rules ask:
- is the object a store or a mutating call writes to bound outside the traced code
  (a module global, a closure variable of an eager function, the Python `self` of a
  jitted method)? (`outer_objects.py`)
- which functions run under a transformation, in which context (the one answer the value
  analysis gives every rule, `__call__` of instances handed to `lax.scan` included)?
- does printing or logging an expression show a traced value?
- is a call a logging call, a clock or file read?
- which module globals read by jitted code does the module reassign afterwards?

Why a walk and not a domain of the solver: what it collects is where a store or a bare call
stands in the code, which no path through a function changes; what flows (is the stored
value traced? is the object an array?) is read from the value analysis and the array facts
at the few places a rule asks. Solved per function instead, the same facts would cost a
graph and a fixed point in every function of every module, where the walk is one pass over
the statements (about 2% of a run over a large corpus).
"""

from __future__ import annotations

import ast
from bisect import bisect_left
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Iterator

from jaxlint.analysis.effects import module_calls
from jaxlint.analysis.effects.at_text import at_call_lines, mentions_at
from jaxlint.analysis.effects.outer_objects import OuterObjects
from jaxlint.analysis.effects.update_liveness import dead_updates
from jaxlint.analysis.engine.call_index import calls_through, spellings
from jaxlint.analysis.engine.names import FunctionNode, Scope
from jaxlint.analysis.engine.walk import own_statements, target_names, walk
from jaxlint.analysis.knowledge import array_api, jax_api
from jaxlint.analysis.knowledge.testing_code import test_functions, test_pattern
from jaxlint.analysis.tracing.callees import module_callees
from jaxlint.analysis.tracing.traced_functions import Context, TracedFunction

if TYPE_CHECKING:
    from jaxlint.analysis.project.traced_module import TracedModule


@dataclass(frozen=True)
class Store:
    """One store: `target = value` (kind "assign"/"annotated"), `target op= value` ("augmented"),
    or a target inside a tuple unpacking ("unpacked", value is the whole right-hand side)."""

    stmt: ast.stmt
    target: ast.expr
    value: ast.expr | None
    kind: str
    function: FunctionNode | None


@dataclass(frozen=True)
class TracedNodes:
    calls: list[ast.Call]
    reads: list[ast.Name]
    loops: list[ast.stmt]




# Simple statements the walk records nothing of.
_NOTHING_RECORDED = frozenset({
    ast.Return, ast.Pass, ast.Import, ast.ImportFrom, ast.Raise, ast.Delete, ast.Continue, ast.Break,
})


class _Resume:
    """Where the walk resumes once a def's or class's body is done: the function and level around it."""

    __slots__ = ("function", "top")

    def __init__(self, function: FunctionNode | None, top: bool):
        self.function = function
        self.top = top


class Effects(OuterObjects):
    def __init__(self, module: TracedModule):
        self.module = module
        self.names = module.names
        self.subscript_stores: list[Store] = []
        self.attribute_stores: dict[str, list[Store]] = {}
        self._name_stores: dict[int, list[Store]] = {}
        self.stores_in: dict[int, list[Store]] = {}  # id(function) -> stores in its own body
        self.expression_calls: list[tuple[ast.Expr, ast.Call, FunctionNode | None]] = []
        self.calls_in: dict[int, list[ast.Call]] = {}  # id(function) -> bare call statements
        self.loops: list[tuple[ast.stmt, FunctionNode | None]] = []
        self.module_stores: dict[str, list[ast.stmt]] = {}  # module-level statements binding a name
        self.global_writers: dict[str, list[FunctionNode]] = {}  # name -> functions assigning it via `global`
        self.declared: dict[int, dict[str, bool]] = {}  # id(function) -> {name: True if global, False if nonlocal}
        self.assertions: list[ast.AST] = []
        self.raising_blocks: list[ast.stmt] = []  # `with pytest.raises(...)`, try bodies: nodes to skip
        self.validity_checks: set[int] = set()  # expression statements of a `try` whose handlers all raise
        self._walk()

    # ---- the walk ---------------------------------------------------------------------------
    def _walk(self) -> None:
        # Statements in order, depth first. A def's or class's body is pushed above a `_Resume`
        # holding the function and level around it, so the stack holds bare statements.
        stack: list = list(reversed(self.module.tree.body))
        function: FunctionNode | None = None
        top = True
        pop, push, extend = stack.pop, stack.append, stack.extend
        module_stores = self.module_stores
        while stack:
            stmt = pop()
            kind = stmt.__class__
            if kind is ast.If:
                extend(reversed(stmt.body))
                if stmt.orelse:
                    extend(reversed(stmt.orelse))
                continue
            if kind is ast.Assign:
                value = stmt.value
                for target in stmt.targets:
                    if target.__class__ is ast.Name:
                        if top:
                            module_stores.setdefault(target.id, []).append(stmt)
                    else:
                        self._store(stmt, target, value, "assign", function, top)
                continue
            if kind is ast.Expr:
                value = stmt.value
                if value.__class__ is ast.Call:
                    self.expression_calls.append((stmt, value, function))
                    self.calls_in.setdefault(id(function), []).append(value)
                    if _assertion_call(value):
                        self.assertions.append(value)
                continue
            if kind in _NOTHING_RECORDED:
                continue
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                push(_Resume(function, top))
                extend(reversed(stmt.body))
                function, top = stmt, False
                continue
            if kind is _Resume:
                function, top = stmt.function, stmt.top
                continue
            if kind is ast.AugAssign:
                target = stmt.target
                if target.__class__ is ast.Name:
                    if top:
                        module_stores.setdefault(target.id, []).append(stmt)
                else:
                    self._store(stmt, target, None, "augmented", function, top)
                continue
            if kind is ast.AnnAssign:
                if stmt.value is not None:
                    self._store(stmt, stmt.target, stmt.value, "annotated", function, top)
                continue
            if kind is ast.Assert:
                self.assertions.append(stmt)
                continue
            if kind is ast.ClassDef:
                push(_Resume(function, top))
                extend(reversed(stmt.body))
                top = False
                continue
            if kind is ast.Global or kind is ast.Nonlocal:
                if function is not None:
                    declared = self.declared.setdefault(id(function), {})
                    for name in stmt.names:
                        declared[name] = kind is ast.Global
                        if kind is ast.Global:
                            self.global_writers.setdefault(name, []).append(function)
                continue
            if kind is ast.For or kind is ast.AsyncFor or kind is ast.While:
                self.loops.append((stmt, function))
                if top and kind is not ast.While:
                    for name in target_names(stmt.target):
                        module_stores.setdefault(name, []).append(stmt)
            elif kind is ast.With or kind is ast.AsyncWith:
                if any(_raising_context(i.context_expr) for i in stmt.items):
                    self.raising_blocks.append(stmt)
            elif kind is ast.Try and stmt.handlers and all(
                any(isinstance(s, ast.Raise) for s in h.body) for h in stmt.handlers
            ):
                # `try: jnp.asarray(value) except ...: raise TypeError(...)`: what the body
                # computes and drops only checks that it can be computed.
                self.validity_checks.update(id(s) for s in stmt.body if isinstance(s, ast.Expr))
            # compound statements: module-level `if`/`for`/`with`/`try` blocks stay at the top level
            body = getattr(stmt, "body", None)
            if body:
                extend(reversed(body))
            orelse = getattr(stmt, "orelse", None)
            if orelse:
                extend(reversed(orelse))
            final = getattr(stmt, "finalbody", None)
            if final:
                extend(reversed(final))
            for handler in getattr(stmt, "handlers", ()) or ():
                extend(reversed(handler.body))
            for case in getattr(stmt, "cases", ()) or ():
                extend(reversed(case.body))

    def _store(self, stmt, target, value, kind, function, top) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._store(stmt, elt.value if isinstance(elt, ast.Starred) else elt, value, "unpacked", function, top)
            return
        if isinstance(target, ast.Subscript):
            store = Store(stmt, target, value, kind, function)
            self.subscript_stores.append(store)
        elif isinstance(target, ast.Attribute):
            store = Store(stmt, target, value, kind, function)
            self.attribute_stores.setdefault(target.attr, []).append(store)
        else:
            if top and isinstance(target, ast.Name):
                self.module_stores.setdefault(target.id, []).append(stmt)
            return
        self.stores_in.setdefault(id(function), []).append(store)

    def name_stores(self, function: FunctionNode | None) -> list[Store]:
        """Stores to plain names in a function's own body (or the module's, for None)."""
        key = id(function)
        cached = self._name_stores.get(key)
        if cached is not None:
            return cached
        out: list[Store] = []
        body = self.module.tree.body if function is None else ([] if isinstance(function, ast.Lambda) else function.body)
        for stmt in own_statements(body):
            kind = type(stmt)
            if kind is ast.Assign:
                for target in stmt.targets:
                    for name in _name_targets(target):
                        out.append(Store(stmt, name, stmt.value if name is target else None,
                                         "assign" if name is target else "unpacked", function))
            elif kind is ast.AugAssign or kind is ast.AnnAssign:
                if type(stmt.target) is ast.Name and (kind is ast.AugAssign or stmt.value is not None):
                    out.append(Store(stmt, stmt.target, stmt.value if kind is ast.AnnAssign else None,
                                     "augmented" if kind is ast.AugAssign else "annotated", function))
        self._name_stores[key] = out
        return out

    # ---- traced functions -------------------------------------------------------------------
    @cached_property
    def contexts(self) -> dict[int, Context]:
        """id(function) -> the context it runs in, for every function known to run traced."""
        return {id(fn): ctx for fn, ctx in self.module.traced_functions()}

    @cached_property
    def functions(self) -> dict[int, FunctionNode]:
        return {id(fn): fn for fn, _ in self.module.traced_functions()}

    def body(self, fn: FunctionNode) -> list[ast.AST]:
        """The nodes of a function's own body (nested function bodies excluded), shared by all rules."""
        return self.module.body(fn)

    @cached_property
    def traced_nodes(self) -> dict[int, "TracedNodes"]:
        """id(function) -> the calls, name reads and `for` loops of a traced function's own body."""
        out = {}
        module = self.module
        for key, fn in self.functions.items():
            loops = module.nodes_of(fn, ast.For)
            if module.nodes_of(fn, ast.AsyncFor):  # both kinds, in the body's order
                loops = [n for n in self.body(fn) if n.__class__ is ast.For or n.__class__ is ast.AsyncFor]
            reads = [n for n in module.nodes_of(fn, ast.Name) if n.ctx.__class__ is ast.Load]
            out[key] = TracedNodes(module.nodes_of(fn, ast.Call), reads, loops)
        return out

    def traced(self) -> Iterator[tuple[FunctionNode, Context]]:
        for key, fn in self.functions.items():
            yield fn, self.contexts[key]

    def staged_calls(self) -> Iterator[ast.Call]:
        """Every call in the own body of a function whose body is staged (runs once per trace)."""
        return self._calls_where(lambda ctx: ctx.staged)

    def batched_calls(self) -> Iterator[ast.Call]:
        """Every call in the own body of a function that runs on every call with abstract
        arguments, not staged (under `jax.vmap` without `jit`)."""
        return self._calls_where(lambda ctx: ctx.abstract and not ctx.staged)

    def _calls_where(self, runs: Callable[[Context], bool]) -> Iterator[ast.Call]:
        for fn, ctx in self.traced():
            if runs(ctx):
                for node in self.traced_nodes[id(fn)].calls:
                    if isinstance(node, ast.Call):
                        yield node

    @cached_property
    def roots(self) -> dict[int, TracedFunction]:
        return {id(root.node): root for root in self.module.traced_roots}

    def module_short_names(self, qualified) -> frozenset[str]:
        """`call_index.spellings` of these qualified names in this module."""
        return spellings(self.names, qualified)

    # ---- classes ----------------------------------------------------------------------------
    def is_framework_class(self, cls: ast.ClassDef, _depth: int = 0) -> bool:
        """A Flax/Equinox/Haiku module or a registered pytree: its state is managed by the framework."""
        if _depth > 5:
            return True
        scope = self._scope_around(cls)
        for base in cls.bases:
            if self.names.qualname(base, scope) in jax_api.MODULE_BASES:
                return True
            local = self.names.definition(base, scope)
            if isinstance(local, ast.ClassDef) and self.is_framework_class(local, _depth + 1):
                return True
        for decorator in cls.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if self.names.qualname(target, scope) in array_api.PYTREE_CLASS_DECORATORS:
                return True
        return cls.name in self.registered_pytrees

    def _scope_around(self, cls: ast.ClassDef) -> Scope:
        for scope in self.names.scopes.values():
            if cls in scope.defs.values():
                return scope
        return self.names.module

    @cached_property
    def registered_pytrees(self) -> set[str]:
        out = set()
        for call, scope in self.names.calls:
            if call.args and isinstance(call.args[0], ast.Name):
                if self.names.qualname(call.func, scope) in array_api.PYTREE_REGISTRATIONS:
                    out.add(call.args[0].id)
        return out

    @cached_property
    def hijax_variables(self) -> bool:
        """The module makes Flax NNX variables hijax (`nnx.var_defaults(hijax=True)`, as a call,
        a `with` or a decorator; `flax.config.update("flax_hijax_variable", True)`): `jax.jit`
        then hands a function the caller's own NNX objects, and a write to them reaches the
        caller (or Flax refuses it loudly, where it wants `ref=True`): no silent copy."""
        for call, scope in calls_through(self.names, self.module_short_names(jax_api.HIJAX_SWITCHES)):
            callee = self.names.qualname(call.func, scope)
            if callee in jax_api.HIJAX_DEFAULTS and any(
                k.arg == "hijax" and isinstance(k.value, ast.Constant) and k.value.value is True for k in call.keywords
            ):
                return True
            if callee in jax_api.FLAX_CONFIG_UPDATES and [
                a.value for a in call.args if isinstance(a, ast.Constant)
            ] == ["flax_hijax_variable", True]:
                return True
        return False

    def sanctioned(self, function: FunctionNode) -> bool:
        """Mutation of module state is how the framework works here (Flax NNX transformations)."""
        root = self.roots.get(id(function))
        return root is not None and any(t.name.startswith("flax.nnx.") for t in root.transforms)

    @cached_property
    def asserted_names(self) -> frozenset[str]:
        """Names read in assertions, directly or through names computed from them
        (`n = len(witness); assertEqual(n, 1)`): a test counting traces on purpose."""
        out = set()
        for node in self.assertions:
            for sub in walk(node):
                if isinstance(sub, ast.Name):
                    out.add(sub.id)
        if not out:
            return frozenset()
        stores = [s for fn in {id(f): f for f in self._assertion_functions()}.values() for s in self.name_stores(fn)]
        for _ in range(2):
            for store in stores:
                if store.target.id in out and store.value is not None:
                    out.update(sub.id for sub in walk(store.value) if isinstance(sub, ast.Name))
        return frozenset(out)

    def _assertion_functions(self) -> list[FunctionNode | None]:
        """The functions whose bodies hold assertions (where values flow into them)."""
        spans = [(a.lineno, a.end_lineno or a.lineno) for a in self.assertions]
        found: list[FunctionNode | None] = [None]
        for fn in self.names.functions:
            if isinstance(fn, ast.Lambda):
                continue
            end = fn.end_lineno or fn.lineno
            if any(fn.lineno <= a and b <= end for a, b in spans):
                found.append(fn)
        return found

    @cached_property
    def _raising_spans(self) -> list[tuple[int, int]]:
        return [(b.lineno, b.end_lineno or b.lineno) for b in self.raising_blocks]

    @cached_property
    def unread_updates(self) -> list[Store]:
        """`x = <array>.at[i].set(v)` (or `.add`, ...) that no path reads before `x` is bound
        again or the function returns, except to compute its own next update
        (`update_liveness.py`): nothing ever sees the new array.  Names starting with `_`
        (discarded on purpose), globals and functions that call `locals()`/`vars()`/`eval`
        are left out."""
        found: list[Store] = []
        if not mentions_at(self.module.source.text):
            return found  # no `.at[...]` anywhere: nothing to look for, in most modules
        names = self.names
        spans = at_call_lines(self.module.source.text)
        lasts = [last for _, last in spans]
        for scope in names.scopes.values():
            fn = scope.node
            if scope.kind != "function" or isinstance(fn, ast.Lambda):
                continue
            at = bisect_left(lasts, fn.lineno)
            if at == len(spans) or spans[at][0] > (fn.end_lineno or fn.lineno):
                continue  # no `.at[` on the function's lines: no update in it
            updates: dict[int, list[Store]] = {}
            for store in self.name_stores(fn):
                name = store.target.id
                if (
                    store.kind in ("assign", "annotated")
                    and _at_update(store.value)
                    and not name.startswith("_")
                    and name not in scope.globals
                    and name not in scope.nonlocals
                ):
                    updates.setdefault(id(store.stmt), []).append(store)
            if not updates:
                continue

            def outer(node: ast.Name, scope=scope) -> bool:
                return names.lookup(node.id, names.read_scope.get(id(node))) is scope

            bound = {key: frozenset(s.target.id for s in stores) for key, stores in updates.items()}
            for key in dead_updates(fn, bound, outer):
                found.extend(updates[key])
        found.sort(key=lambda store: (store.stmt.lineno, store.stmt.col_offset))
        return found

    def in_test(self, function: FunctionNode | None) -> bool:
        """Inside test code, as the `test-functions` option names it (`testing_code.test_functions`:
        `def test_...`, a method of a test class, a function nested in one)."""
        return function is not None and id(function) in self._tests

    @cached_property
    def _tests(self) -> set[int]:
        return test_functions(self.names, test_pattern(self.module.options))

    def expects_error(self, node: ast.AST) -> bool:
        """Inside `with pytest.raises(...)` / `self.assertRaises(...)`: the code is meant to fail."""
        row = node.lineno
        return any(a <= row <= b for a, b in self._raising_spans)

    # ---- what a call is -----------------------------------------------------------------------
    def shows_traced(self, expr: ast.AST) -> bool:
        """Whether printing or formatting `expr` shows a traced value (not just its shape or dtype)."""
        module = self.module
        if isinstance(expr, ast.JoinedStr):
            return any(self.shows_traced(v.value) for v in expr.values if isinstance(v, ast.FormattedValue))
        if isinstance(expr, (ast.Tuple, ast.List)):
            return any(self.shows_traced(e) for e in expr.elts)
        if isinstance(expr, ast.Starred):
            return self.shows_traced(expr.value)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod) and isinstance(expr.left, ast.Constant):
            return self.shows_traced(expr.right)
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr == "format" and isinstance(func.value, ast.Constant):
                return any(self.shows_traced(a) for a in expr.args) or any(
                    self.shows_traced(k.value) for k in expr.keywords
                )
            if module.qualname(func) in ("builtins.str", "builtins.repr") and expr.args:
                return self.shows_traced(expr.args[0])
        return module.is_traced(expr)

    def is_logging_call(self, call: ast.Call) -> bool:
        func = call.func
        name = self.module.qualname(func)
        if name is not None:
            return name in array_api.LOGGING_FUNCTIONS
        if not isinstance(func, ast.Attribute) or func.attr not in array_api.LOGGER_METHODS:
            return False
        receiver = func.value
        if isinstance(receiver, ast.Call):
            return self.module.qualname(receiver.func) in array_api.LOGGER_FACTORIES
        if isinstance(receiver, ast.Name):
            values = self.names.assignments(receiver)
            return bool(values) and all(
                isinstance(v, ast.Call) and self.module.qualname(v.func) in array_api.LOGGER_FACTORIES for v in values
            )
        return False

    def host_read(self, call: ast.Call) -> str | None:
        """The clock or file read a call performs, if any."""
        name = self.module.qualname(call.func)
        return name if name in array_api.HOST_READS else None

    # ---- globals reassigned after tracing -----------------------------------------------------
    def _module_call_between(self, first: ast.stmt, second: ast.stmt) -> bool:
        """A module-level statement between two bindings calls one of the module's functions."""
        module = self.names.module
        return any(
            first.lineno < statement.lineno < second.lineno and _calls_module_function(statement, module)
            for statement in module.node.body
        )

    @cached_property
    def _traced_at_once(self) -> frozenset[int]:
        """Lambdas a transformation wraps and the code calls at once (`jax.jit(lambda: w.sum())()`):
        each run of the expression makes a new function, traced then with the globals' values of
        that moment, and nothing keeps it to be called again with them."""
        return frozenset(
            id(call.func.args[0])
            for call, _ in self.names.calls
            if isinstance(call.func, ast.Call) and call.func.args and isinstance(call.func.args[0], ast.Lambda)
            and self.names.qualname(call.func.func) in jax_api.TRANSFORMS
        )

    def _running_calls(self, function: FunctionNode) -> list[ast.Call] | None:
        """The module-level calls that run `function` (`module_calls.py`); None where the module
        names it nowhere a call can reach it by (a method, a nested function, a helper)."""
        named = isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and self.names.module.defs.get(function.name) is function
        if not named and not any(r.node is function and r.bound_name for r in self.module.traced_roots):
            return None
        return module_calls.running_calls(function, self._runners)

    @cached_property
    def _runners(self) -> module_calls.Runners:
        return module_calls.runners(module_callees(self.names))

    def reassignment(self, name: ast.Name, function: FunctionNode) -> ast.AST | None:
        """Where the module rebinds a global that jitted `function` reads (its value is frozen at trace time)."""
        names = self.names
        scope = names.read_scope.get(id(name))
        if scope is None or names.lookup(name.id, scope) is not names.module:
            return None
        module_scope = names.module
        if name.id in module_scope.imports or name.id in module_scope.defs:
            return None
        if id(function) in self._traced_at_once:
            return None
        stores = self.module_stores.get(name.id, [])
        defined_at = _definition_line(function)
        if len(stores) >= 2:
            later = [s for s in stores if s.lineno > defined_at]
            calls = self._running_calls(function)
            if calls is not None:
                # Stale where a call traced it before the rebinding and another runs it after.
                return next((s for s in later if module_calls.called_around(s, calls, defined_at, names)), None)
            if later and any(s.lineno < defined_at for s in stores):
                return later[0]
            # Bound only after the def: stale once a call between two bindings has traced it.
            for first, second in zip(later, later[1:]):
                if self._module_call_between(first, second):
                    return second
        for writer in self.global_writers.get(name.id, []):
            if id(writer) in self.contexts or _scoped_switch(writer, name.id):
                continue
            for store in self.name_stores(writer):
                if store.target.id == name.id and not _lazy_init(store, writer, name.id):
                    return store.stmt
        return None


def _calls_module_function(statement: ast.stmt, module: Scope) -> bool:
    """A call, in a module-level statement, of a function the module defines or binds itself
    (a def, `step = jax.jit(f)`), not of a builtin or an import."""
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        and (node.func.id in module.defs or node.func.id in module.assigned)
        for node in ast.walk(statement)
    )


def _at_update(value: ast.AST | None) -> bool:
    """`x.at[i].set(v)`, `.add(v)`, ...: a call that returns an updated copy."""
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in array_api.AT_UPDATE_METHODS
        and isinstance(value.func.value, ast.Subscript)
        and isinstance(value.func.value.value, ast.Attribute)
        and value.func.value.value.attr == "at"
    )


def _name_targets(target: ast.AST) -> list[ast.Name]:
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _name_targets(elt)]
    if isinstance(target, ast.Starred):
        return _name_targets(target.value)
    return []


def _short(func: ast.AST) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _definition_line(function: FunctionNode) -> int:
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and function.decorator_list:
        return function.decorator_list[0].lineno
    return function.lineno


def _scoped_switch(writer: FunctionNode, name: str) -> bool:
    """A context manager that sets a global for its `with` block and restores it in `finally`
    (`old = _FLAG; _FLAG = True; yield; finally: _FLAG = old`): code traced inside the block
    sees the switch by design, and code outside keeps the value it always had."""
    nodes = list(walk(writer))
    if not any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in nodes):
        return False
    return any(
        isinstance(node, ast.Try)
        and any(isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)
                for stmt in node.finalbody)
        for node in nodes
    )


def _lazy_init(store: Store, writer: FunctionNode, name: str) -> bool:
    """`if _X is None: _X = build()`: a lazily built constant, set once."""
    for node in walk(writer):
        if isinstance(node, ast.If) and store.stmt in node.body:
            test = node.test
            if (
                isinstance(test, ast.Compare)
                and isinstance(test.left, ast.Name)
                and test.left.id == name
                and isinstance(test.ops[0], ast.Is)
            ):
                return True
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                return True
    return False


def _assertion_call(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name.startswith(("assert", "expect", "check"))


def _raising_context(expr: ast.AST) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in ("raises", "assertRaises", "assertRaisesRegex", "assertRaisesWithLiteralMatch", "warns",
                    "assertWarns", "assertWarnsRegex", "assertLogs")


