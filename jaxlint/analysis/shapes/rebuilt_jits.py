"""Jitted callables built anew each time they are used, so that JAX's compilation cache never hits."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, NamedTuple

from jaxlint.analysis.engine.call_index import calls_through
from jaxlint.analysis.engine.loop_variance import ASSIGN, UNPACK
from jaxlint.analysis.engine.names import FunctionNode
from jaxlint.analysis.engine.source_text import short_source
from jaxlint.analysis.engine.walk import spans, walk
from jaxlint.analysis.knowledge import jax_api, shape_api
from jaxlint.analysis.shapes.jit_variants import JitVariants
from jaxlint.analysis.engine.names import function_in
from jaxlint.analysis.shapes.repeated_calls import RepeatedCalls
from jaxlint.analysis.knowledge.decorators import plain

if TYPE_CHECKING:
    from jaxlint.analysis.effects.effects import Effects
    from jaxlint.analysis.project.traced_module import TracedModule


class Rebuild(NamedTuple):
    """A jitted callable (or a `lax` loop's body run outside a trace) built anew again and again."""

    node: ast.AST  # the build: the wrapping call or the decorator
    transform: str  # `jax.jit`, `jax.lax.scan`, ...
    what: str  # what is wrapped, as the message says it
    why: str  # why it is built again and again
    builder: FunctionNode | None  # the function each of whose calls builds it (None: a loop does)


class RebuiltJits:
    def __init__(self, module: TracedModule, effects: Effects, repeated: RepeatedCalls):
        self.module = module
        self.effects = effects
        self.names = module.names
        self.repeated = repeated
        self.variants = JitVariants(module, effects, repeated)
        self._assumed: FunctionNode | None = None  # see `per_call_of`
        self._per_call: dict[int, list[Rebuild]] = {}

    def per_call_of(self, function: FunctionNode) -> list[Rebuild]:
        """The builds `function` makes anew on each of its calls and does not keep: what a caller
        that calls it again and again (in another module) compiles again each time. Memoised."""
        found = self._per_call.get(id(function))
        if found is None:
            self._assumed = function
            try:
                found = [r for r in self.find() if r.builder is function]
            finally:
                self._assumed = None
            self._per_call[id(function)] = found
        return found

    def find(self) -> list[Rebuild]:
        """Jitted callables created anew each time they are used.

        `jax.jit(lambda x: ...)(x)` in a loop; `@jax.jit` on a closure defined in a function that
        is called in a loop and calls it; `step = jax.jit(partial(f, c))` then `step(x)` in such
        a function; `lax.scan` run outside a trace over a body such a function defines.  A
        module-level function re-wrapped with `jax.jit(f)` hits JAX's cache and is not reported;
        nor is a jitted callable that escapes (returned, stored: a factory).
        """
        found: list[Rebuild] = []
        names = self.names
        wanted = self.effects.module_short_names(shape_api.CACHING_TRANSFORMS)
        for call, scope in calls_through(names, wanted, curried=True):
            function = function_in(scope)
            if isinstance(call.func, ast.Call):
                inner = call.func
                transform = self.module.qualname(inner.func)
                if transform in shape_api.CACHING_TRANSFORMS and inner.args:
                    why = self._repeated(inner, inner.args[0], function, transform)
                    if why is not None:
                        found.append(Rebuild(inner, transform, _describe(inner.args[0]), *why))
                continue
            transform = self.module.qualname(call.func)
            if transform not in shape_api.CACHING_TRANSFORMS or not call.args or function is None:
                continue
            bound = names.call_targets.get(id(call))
            if bound is None:
                stored = self._rebuilt_per_instance(call, function)
                if stored is not None:
                    found.append(Rebuild(call, transform, _describe(call.args[0]), stored, None))
                continue
            why = self._repeated(call, call.args[0], function, transform)
            if why is not None and self._used_once(bound, function, call, per_call=why[1] is not None):
                found.append(Rebuild(call, transform, _describe(call.args[0]), *why))
        for root in self.module.traced_roots:
            fn = root.node
            if isinstance(fn, ast.Lambda) or root.site is None or root.site not in fn.decorator_list:
                continue
            transform = next((t.name for t in root.transforms if t.name in shape_api.CACHING_TRANSFORMS), None)
            if transform is None:
                continue
            function = names.parent_function.get(id(fn))
            if function is None or self.repeated.may_be_traced(function):
                continue
            if self.repeated.in_loop(fn, function) is not None and not self.variants.per_iteration(fn, fn, function):
                why: tuple[str, FunctionNode | None] = ("it is defined inside a loop", None)
            elif self._rebuilt_per_call(fn, function):
                why = (f"`{_name(function)}` defines it anew on every call", function)
            else:
                continue
            if self._used_once(fn.name, function, fn, per_call=why[1] is not None):
                found.append(Rebuild(root.site, transform, f"`{fn.name}`", *why))
        flow = shape_api.EAGER_COMPILED_LOOPS
        for call, scope in calls_through(names, self.effects.module_short_names(flow)):
            primitive = self.module.qualname(call.func)
            function = function_in(scope)
            if primitive not in flow or function is None:
                continue
            for body in _functions_given(call, *flow[primitive]):
                why = self._repeated(call, body, function, primitive)
                if why is not None:
                    found.append(Rebuild(call, primitive, _describe(body), *why))
                    break
        return found

    def _rebuilt_per_instance(self, jit_call: ast.Call, function: FunctionNode) -> str | None:
        """`self.step = jax.jit(<new function>)` in `__init__` of a class this module instantiates
        again and again (in a loop, or in a function called in one), and `.step(...)` is called:
        every instance starts with an empty cache.  Why, or None."""
        if not isinstance(function, ast.FunctionDef) or function.name != "__init__":
            return None
        cls = self.names.parent_class.get(id(function))
        self_name = function.args.args[0].arg if function.args.args else None
        if cls is None or self_name is None or self._fresh(jit_call.args[0], function, None) is None:
            return None
        attr = None
        for stmt in walk(function):
            if isinstance(stmt, ast.Assign) and stmt.value is jit_call and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == self_name:
                    attr = target.attr
        if attr is None or not any(
            isinstance(call.func, ast.Attribute) and call.func.attr == attr for call, _ in self.names.calls
        ):
            return None
        for call, scope in self.names.calls:
            if not (isinstance(call.func, ast.Name) and call.func.id == cls.name):
                continue
            if self.names.definition(call.func, scope) is not cls:
                continue
            caller = self.repeated.function_of(call)
            if self.repeated.in_loop(call, caller) is not None or self.repeated.in_comprehension(call, caller):
                return f"every iteration makes a new `{cls.name}` (line {call.lineno}), which jits it in `__init__`"
            if caller is not None and not self._memoized(caller) and self.repeated.called_repeatedly(caller) is not None:
                return f"`{_name(caller)}` makes a new `{cls.name}` on every call (line {call.lineno}), which jits it in `__init__`"
        return None

    def _repeated(
        self, jit_call: ast.Call, wrapped: ast.AST, function: FunctionNode | None, transform: str
    ) -> tuple[str, FunctionNode | None] | None:
        """Why wrapping `wrapped` at `jit_call` builds a new cache again and again, and the
        function each of whose calls does (None: a loop does), or None."""
        if self.repeated.may_be_traced(function):
            return None  # the enclosing function's body runs once per trace, not per call
        loop = self.repeated.in_loop(jit_call, function)
        in_comprehension = self.repeated.in_comprehension(jit_call, function)
        if transform in shape_api.NEW_CACHE_PER_APPLICATION:
            fresh: str | None = "loop" if loop is not None or in_comprehension else "call"
        else:
            fresh = self._fresh(wrapped, function, loop if loop is not None or not in_comprehension else jit_call)
        if fresh is None:
            return None
        if (loop is not None or in_comprehension) and fresh == "loop":
            if not self.variants.per_iteration(wrapped, jit_call, function):
                return "it is built inside a loop", None
        if function is not None and self._rebuilt_per_call(wrapped, function):
            return f"`{_name(function)}` builds it anew on every call", function
        return None

    def _rebuilt_per_call(self, built: ast.AST, function: FunctionNode) -> bool:
        """`function` is called again and again, and builds the same function on each call.
        (Asked for one function's builds, `per_call_of`: whether `function` is that one.)"""
        if self._memoized(function) or self._once_per_pass(built, function):
            return False
        if self._assumed is not None:
            return function is self._assumed
        if self.repeated.called_repeatedly(function) is not None:
            return not self.variants.per_call(built, function)
        return self._repeated_elsewhere(function)  # what those calls pass, their module judged

    def _repeated_elsewhere(self, function: FunctionNode) -> bool:
        """Whether another module of the project calls `function` again and again outside any trace
        (`IncomingCall.repeats`, found there by `repeated_builders`)."""
        incoming = self.module.incoming
        if not incoming or isinstance(function, ast.Lambda):
            return False
        cls = self.names.parent_class.get(id(function))
        name = function.name if cls is None else f"{cls.name}.{function.name}"
        return any(call.repeats and call.function == name for call in incoming)

    def _once_per_pass(self, built: ast.AST, function: FunctionNode) -> bool:
        """`function` builds it outside its own loops, and on each call also runs a pass: a loop of
        its own that calls a jitted function of this module or a function its caller hands in (an
        evaluation over a dataset). Called once per build, it compiles once per pass, one
        compilation next to the pass's many steps, as a jit built per call and then called in a
        loop does (`_used_once`)."""
        repeated = self.repeated
        if repeated.in_loop(built, function) is not None or repeated.in_comprehension(built, function):
            return False
        scope = self.names.scopes.get(id(function))
        params = set(scope.params) if scope is not None else set()
        jitted = {
            id(site.call) for site in self.module.call_sites
            if site.function is function and site.target.node is not built
            and (site.target.site is None or not _inside(built, site.target.site))
        }
        for call, _ in self.names.calls:
            if repeated.function_of(call) is not function or _inside(call, built):
                continue
            if not (id(call) in jitted or isinstance(call.func, ast.Name) and call.func.id in params):
                continue
            if repeated.in_loop(call, function) is not None or repeated.in_comprehension(call, function):
                return True
        return False

    def _fresh(self, wrapped: ast.AST, function: FunctionNode | None, loop: ast.AST | None) -> str | None:
        """"loop" if `wrapped` is a new object on every loop iteration, "call" if on every call
        of `function`, None if it is the same object every time (a module-level function)."""
        if isinstance(wrapped, (ast.Lambda, ast.Call)):
            return "loop" if loop is not None else "call"
        if isinstance(wrapped, ast.Attribute):
            if self.module.qualname(wrapped) is not None:
                return None  # `module.f`: one object
            if isinstance(wrapped.value, ast.Name) and wrapped.value.id in ("self", "cls") and self._is_method(wrapped):
                return "loop" if loop is not None else "call"  # a bound method is new on every access
            if self._instance_method(wrapped):
                return "loop" if loop is not None else "call"
            return None
        if isinstance(wrapped, ast.Name) and function is not None:
            scope = self.names.read_scope.get(id(wrapped))
            owner = self.names.lookup(wrapped.id, scope) if scope is not None else None
            if owner is None or owner.node is not function or wrapped.id in owner.params:
                return None
            if isinstance(loop, (ast.For, ast.AsyncFor, ast.While)) and self._bound_in(wrapped, loop):
                return "loop"
            definition = owner.defs.get(wrapped.id)
            values = owner.assigned.get(wrapped.id, [])
            if definition is not None or any(isinstance(v, (ast.Lambda, ast.Call)) for v in values):
                return "call"
        return None

    def _bound_in(self, name: ast.Name, loop: ast.AST) -> bool:
        """What `name` holds where it is read was bound inside the loop, by an assignment or a `def`."""
        return any(
            d.kind in (ASSIGN, UNPACK) or isinstance(d.node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for d in self.module.loops.definitions(name.id, loop, name)
        )

    def _instance_method(self, attribute: ast.Attribute) -> bool:
        """`model.apply` where `model` is bound only to instances of a class of this module that
        defines `apply` as a plain method: a new bound method on every access."""
        base = attribute.value
        if not isinstance(base, ast.Name):
            return False
        scope = self.names.read_scope.get(id(base))
        owner = self.names.lookup(base.id, scope) if scope is not None else None
        if owner is None or any(base.id in bound for bound in (owner.params, owner.defs, owner.imports, owner.other)):
            return False
        values = owner.assigned.get(base.id, [])
        if not values:
            return False
        for value in values:
            if not isinstance(value, ast.Call):
                return False
            cls = self.names.definition(value.func, owner)
            if not isinstance(cls, ast.ClassDef):
                return False
            method = next(
                (s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == attribute.attr),
                None,
            )
            if method is None or not plain(method, self.names):
                return False  # a staticmethod, a property or an inherited attribute: not known
        return True

    def _is_method(self, attribute: ast.Attribute) -> bool:
        scope = self.names.read_scope.get(id(attribute.value))
        while scope is not None and scope.kind != "class":
            scope = scope.parent
        return scope is not None and isinstance(scope.defs.get(attribute.attr), (ast.FunctionDef, ast.AsyncFunctionDef))

    def _used_once(self, name: str, function: FunctionNode, built: ast.AST, per_call: bool = False) -> bool:
        """Inside `function`, `name` is only ever called (never returned, stored or passed on,
        nor read by a function that `function` hands out: a thread's target, a returned
        closure), and, for a build in a loop, not again and again per build (in a loop the
        build is not in; a loop nested in the build's loop still meets a new build on each of
        its iterations). A build made on every call of a function called again and again
        (`per_call`) may be called in that function's loops: each call compiles it again, once
        for its loop. What the build itself reads (`step = jax.jit(step)`) is the function
        before it."""
        called = set()
        loads = []
        for node in walk(function):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                called.add(id(node.func))
            elif isinstance(node, ast.Call) and self._transformed_and_called(node):
                called.add(id(node.func.args[0]))  # `jax.grad(step)(x)`: called, through a transformation
            elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                if not _inside(node, built):
                    loads.append(node)
        if not loads or not all(id(n) in called for n in loads):
            return False
        if any(self._handed_out(load, function) for load in loads):
            return False  # kept: built once per call of a factory, reused by what it hands out
        if per_call:
            return True
        build_loop = self.repeated.in_loop(built, function)
        for load in loads:
            loop = self.repeated.in_loop(load, function)
            if loop is not None and loop is not build_loop and not _inside(load, build_loop):
                return False
            if self.repeated.in_comprehension(load, function) and not self.repeated.in_comprehension(built, function):
                return False
        return True

    def _handed_out(self, load: ast.Name, function: FunctionNode) -> bool:
        """`load` is read inside a function nested in `function` that outlives the call that made
        it: returned, stored or passed on (a thread's target, a callback), not only called there."""
        inner = function_in(self.names.read_scope.get(id(load)))
        while inner is not None and inner is not function:
            outer = self.names.parent_function.get(id(inner))
            if self._escapes(inner, outer):
                return True
            inner = outer
        return False

    def _escapes(self, inner: FunctionNode, outer: FunctionNode | None) -> bool:
        """A nested function is used otherwise than by calling it in the function that defines it."""
        parents = self.names.parents
        if isinstance(inner, ast.Lambda):
            parent = parents.get(id(inner))
            return not (isinstance(parent, ast.Call) and parent.func is inner)
        if inner.decorator_list or outer is None:
            return True
        for node in walk(outer):
            if isinstance(node, ast.Name) and node.id == inner.name and isinstance(node.ctx, ast.Load):
                parent = parents.get(id(node))
                if not (isinstance(parent, ast.Call) and parent.func is node):
                    return True
        return False

    def _transformed_and_called(self, call: ast.Call) -> bool:
        """`transform(name)(...)`: a JAX transformation of a name, applied and called at once,
        which keeps nothing of it."""
        inner = call.func
        return (
            isinstance(inner, ast.Call) and len(inner.args) >= 1 and isinstance(inner.args[0], ast.Name)
            and self.module.qualname(inner.func) in jax_api.TRANSFORMS
        )

    def _memoized(self, function: FunctionNode) -> bool:
        if isinstance(function, ast.Lambda):
            return False
        for decorator in function.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if self.module.qualname(target) in shape_api.MEMOIZING_DECORATORS:
                return True
        return False


def _functions_given(call: ast.Call, positions: tuple[int, ...], keywords: tuple[str, ...]) -> list[ast.expr]:
    """The function arguments of a control-flow call, by position or keyword."""
    given = [call.args[i] for i in positions if i < len(call.args)]
    return given + [k.value for k in call.keywords if k.arg in keywords]


def _inside(node: ast.AST, loop: ast.AST | None) -> bool:
    """`node` lies within `loop`'s statement (nodes nest as their source ranges do)."""
    return loop is not None and spans(loop, node)


def _name(function: FunctionNode) -> str:
    return getattr(function, "name", "the enclosing function")


def _describe(wrapped: ast.AST) -> str:
    if isinstance(wrapped, ast.Lambda):
        return "a `lambda`"
    return f"`{short_source(wrapped)}`"

