"""Call sites of transformed callables, and the loops around them.

`step = jax.jit(train_step)` then `step(params, batch)` in a loop; a `@jax.jit` function
called from `main`; `jax.jit(f)(x)` inline; `self.predict(x)` for a jitted method, and for
`self.predict = jax.jit(f)` stored by one of the class's methods; `step = make_update()` for
a function that returns the jitted function it defines (`return update` of a jitted def, or
`return jax.jit(update)`), the factory found by the module's resolver.  The
jit-argument and recompilation rules ask where such a call sits (which loops enclose it);
whether an argument changes from one iteration to the next is `loop_variance.py`'s answer.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property

from jaxlint.analysis.engine.arguments import Binding, Receiver, bind, implicit_count, receiver
from jaxlint.analysis.engine.call_index import calls_through, calls_through_any
from jaxlint.analysis.engine.names import FUNCTION_TYPES, FunctionNode, Names, Scope
from jaxlint.analysis.engine.walk import children, contains, own_statements, returned_name
from jaxlint.analysis.tracing.callees import module_callees
from jaxlint.analysis.tracing.static_arguments import positional_params
from jaxlint.analysis.tracing.traced_functions import Discovery, TracedFunction

Loop = ast.AST  # ast.For | ast.AsyncFor | ast.While | a comprehension expression


@dataclass
class CallSite:
    """One call of a transformed callable."""

    call: ast.Call
    target: TracedFunction
    function: FunctionNode | None  # the enclosing function, None at module level
    loops: list[Loop] = field(default_factory=list)  # enclosing loops in that function, outermost first
    # Leading parameters of the target's function the call binds without an argument: those a
    # `partial` or a bound method fixed, and `self` (or a class method's class) of a jitted
    # method called through an instance or its class.
    implicit: int = 0

    @cached_property
    def binding(self) -> Binding:
        """What the call binds to each parameter of the target's function, past the implicit ones."""
        return bind(self.target.node, self.call, self.implicit)

    def argument(self, param: str) -> ast.expr | None:
        """The expression the call passes for a parameter, when it passes one visibly."""
        return self.binding.argument(param)

    @property
    def positional(self) -> list[str]:
        """The parameters the call's positional arguments fill, in order."""
        return [p.arg for p in positional_params(self.target.node)][self.implicit:]


class CallSites:
    def __init__(self, names: Names, discovery: Discovery):
        self.names = names
        self.sites: list[CallSite] = []
        self._loops: dict[int, dict[int, list[Loop]]] = {}
        self._on_self: dict[tuple[int, str], TracedFunction] = {}
        self._scopes: dict[int, Scope] | None = None  # id(call) -> the scope it is made in, for `loops_around`
        self._find(discovery)

    def _find(self, discovery: Discovery) -> None:
        by_binding: dict[tuple[int, str], TracedFunction] = {}
        by_site: dict[int, TracedFunction] = {}
        returned: dict[int, TracedFunction] = {}  # id(factory) -> the transformed callable it returns
        methods: dict[str, TracedFunction] = {}
        on_self: dict[tuple[int, str], TracedFunction] = {}  # (id(class), attr) -> root
        call_scope: dict[int, Scope] | None = None
        for root in discovery.roots:
            if root.site is None or not root.transforms:
                continue
            if any(root.site is d for d in getattr(root.node, "decorator_list", ())):
                owner = self.names.enclosing_scope(root.node)
                if owner.kind == "class":
                    methods[root.node.name] = root
                else:
                    by_binding[(id(owner), root.node.name)] = root
                continue
            by_site[id(root.site)] = root  # jax.jit(f)(x)
            if root.bound_name is not None:  # step = jax.jit(f); step(x)
                if call_scope is None:
                    call_scope = {id(c): s for c, s in self.names.calls}
                owner = call_scope.get(id(root.site))
                if owner is not None:
                    by_binding[(id(owner), root.bound_name)] = root
            elif isinstance(root.site, ast.Call):  # self.step = jax.jit(f); self.step(x)
                if call_scope is None:
                    call_scope = {id(c): s for c, s in self.names.calls}
                stored = self._stored_jit(root.site, call_scope.get(id(root.site)))
                if stored is not None:
                    on_self[stored] = root
                factory = _returning(root.site, call_scope.get(id(root.site)))
                if factory is not None:  # `return jax.jit(step, static_argnums=1)`
                    returned[id(factory)] = root
        self._on_self = on_self
        self._made_by_factories(by_binding, returned)
        if not (by_binding or by_site or methods or on_self):
            return
        bound = {name for _, name in by_binding} | {attr for _, attr in on_self}
        sites = [root.site for root in by_site.values()]
        # Only these can have a target: a call through a bound name or a method's, or of a site.
        for call, scope in calls_through_any(self.names, bound | set(methods), sites):
            target = self._target(call, scope, by_binding, by_site, methods)
            if target is not None:
                function = scope.node if isinstance(scope.node, FUNCTION_TYPES) else None
                implicit = target.bound_positional
                if isinstance(call.func, ast.Attribute) and methods.get(call.func.attr) is target:
                    implicit += implicit_count(target.node, receiver(call.func, target.node, self.names))
                self.sites.append(CallSite(call, target, function, self._enclosing_loops(scope, call), implicit))

    def _made_by_factories(
        self, by_binding: dict[tuple[int, str], TracedFunction], returned: dict[int, TracedFunction]
    ) -> None:
        """`step = make_update()` where the function `make_update` returns, on every `return`, the
        jitted function it defines (`@jax.jit def update(...)`, or `return jax.jit(update,
        static_argnums=1)`): calls of `step` call that jitted function (the name bound once, to
        that call of the factory, as the module's resolver finds the factory)."""
        names = self.names
        made: dict[int, TracedFunction] = dict(returned)  # id(factory) -> the jitted function it returns
        for (owner_id, name), root in list(by_binding.items()):
            factory = names.parent_function.get(id(root.node))
            if not isinstance(factory, (ast.FunctionDef, ast.AsyncFunctionDef)) or id(names.scope_of(factory)) != owner_id:
                continue
            if returned_name(factory) == name:
                made[id(factory)] = root
        if not made:
            return
        callees = module_callees(names)
        factories = {fn.name for fn in names.functions if id(fn) in made}
        for call, scope in calls_through(names, factories):
            target = names.call_targets.get(id(call))
            found = callees.denoted(call.func, scope)
            definition = found.function if found is not None else None
            if target is None or definition is None or id(definition) not in made:
                continue
            owner = names.lookup(target, scope)
            if owner is not None and len(owner.assigned.get(target, ())) == 1 and target not in owner.other:
                by_binding.setdefault((id(owner), target), made[id(definition)])

    def _target(self, call, scope, by_binding, by_site, methods) -> TracedFunction | None:
        func = call.func
        if isinstance(func, ast.Name):
            owner = self.names.lookup(func.id, scope)
            if owner is not None:
                return by_binding.get((id(owner), func.id))
            return None
        if isinstance(func, ast.Call):
            return by_site.get(id(func))
        if isinstance(func, ast.Attribute) and self._on_self:
            root = self._on_self.get((id(scope.parent.node), func.attr)) if scope.parent is not None else None
            method = scope.node
            if root is not None and isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.args.args:
                if _self_attribute(func, method.args.args[0].arg) is not None:
                    return root
        if isinstance(func, ast.Attribute) and func.attr in methods:
            root = methods[func.attr]
            return root if self._may_be_instance(func, root.node, scope) else None
        return None

    def _stored_jit(self, site: ast.Call, scope: Scope | None) -> tuple[int, str] | None:
        """`(id(class), attr)` when a method stores the transformed callable built at `site` on
        `self` (`self.step = jax.jit(f)`) and the class assigns that attribute nothing else."""
        method = scope.node if scope is not None else None
        cls = scope.parent.node if scope is not None and scope.parent is not None else None
        if not isinstance(cls, ast.ClassDef) or not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        for attr, values in self._stored(cls).items():
            if values is not None and len(values) == 1 and values[0] is site:
                return id(cls), attr
        return None

    def _may_be_instance(self, func: ast.Attribute, method: FunctionNode, scope: Scope) -> bool:
        """Whether `receiver.step(...)` may call `method`, the jitted `step` of a class `cls`: the
        receiver may be an instance of `cls` (not when it is shown to be something else), or is
        `cls` itself and the method binds alike through both (a static or class method)."""
        names, receiver = self.names, func.value
        cls = names.parent_class.get(id(method))
        if isinstance(receiver, ast.Name):
            owner = names.lookup(receiver.id, scope)
            if owner is None or receiver.id in owner.imports:
                return False  # an unknown module-level name or a module, not an instance
            # `Ops.step(x)` calls a static or class method of the class (or of a subclass);
            # `Base.step(self, x)` is a class's own function, called with `self` passed explicitly.
            through = names.definition(receiver, scope)
            if isinstance(through, ast.ClassDef):
                return through is cls and implicit_count(method, Receiver.CLASS) == implicit_count(method, Receiver.INSTANCE)
            return True
        if isinstance(receiver, ast.Call):
            # `factory().step(x)`: an instance of the method's class only if built right there
            built = names.definition(receiver.func, scope) if isinstance(receiver.func, ast.Name) else None
            return cls is not None and built is cls
        held = _held_on_self(receiver, scope)
        if held is None:
            return True
        # An object kept on `self` (`self.parts[i].step(x)`) is another object unless the class
        # stores an instance of `cls` there; a method that calls its own name on such an object
        # delegates to it (a composite), it does not call itself.
        stored = self._stored_on_self(scope, held)
        if cls is not None and cls in stored:
            return True
        if getattr(scope.node, "name", None) == func.attr:
            return False
        return not stored or _UNKNOWN in stored

    def _stored_on_self(self, scope: Scope, attr: str) -> list:
        """What the methods of the class around `scope` store in `self.<attr>`: the class of this
        module each value constructs, `_OTHER` for anything else built (an imported class, a
        list of instances), `_UNKNOWN` for a value of unknown kind (a parameter)."""
        cls = scope.parent.node if scope.parent is not None else None
        if not isinstance(cls, ast.ClassDef):
            return []
        values = self._stored(cls).get(attr, [])
        return [_UNKNOWN] if values is None else [self._built(v) for v in values]

    def _stored(self, cls: ast.ClassDef) -> dict:
        return module_callees(self.names).attributes_of(cls)

    def _built(self, value: ast.expr):
        if isinstance(value, (ast.List, ast.Tuple)) and value.elts:
            kinds = {self._built(e) for e in value.elts}
            return kinds.pop() if len(kinds) == 1 else _UNKNOWN
        if isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)):
            if isinstance(value.func, ast.Name):
                definition = self.names.definition(value.func)
                if isinstance(definition, ast.ClassDef):
                    return definition
            if self.names.qualname(value.func) is not None:
                return _OTHER  # built by an imported callable: not a class of this module
        return _UNKNOWN

    # ---- loops -------------------------------------------------------------------
    def loops_around(self, call: ast.Call) -> list[Loop]:
        """The loops around any call of the module, in the function (or module body) it is
        made in, outermost first."""
        if self._scopes is None:
            self._scopes = {id(c): scope for c, scope in self.names.calls}
        scope = self._scopes.get(id(call))
        return self._enclosing_loops(scope, call) if scope is not None else []

    def _enclosing_loops(self, scope: Scope, call: ast.Call) -> list[Loop]:
        body_owner = scope.node
        table = self._loops.get(id(body_owner))
        if table is None:
            table = self._loops[id(body_owner)] = _loops_of_calls(body_owner) if _has_loops(body_owner) else {}
        return table.get(id(call), [])


_OTHER, _UNKNOWN = "other", "unknown"


def _held_on_self(receiver: ast.expr, scope: Scope) -> str | None:
    """`attr` when `receiver` is `self.attr` or an item of it, read in a method (`self` being
    its first parameter)."""
    while isinstance(receiver, ast.Subscript):
        receiver = receiver.value
    method = scope.node
    if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not method.args.args:
        return None
    return _self_attribute(receiver, method.args.args[0].arg)


def _self_attribute(node: ast.expr, this: str) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == this:
        return node.attr
    return None


_COMPREHENSIONS = frozenset({ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp})
_LOOPS = frozenset({ast.For, ast.AsyncFor, ast.While, *_COMPREHENSIONS})
_NOT_WALKED = frozenset({*FUNCTION_TYPES, ast.ClassDef})


def _has_loops(owner: ast.AST) -> bool:
    """Whether a function's (or the module's) own code has a loop: most have none, and then
    no call in it has one around it."""
    return contains([owner.body] if isinstance(owner, ast.Lambda) else owner.body, _LOOPS, _NOT_WALKED)


def _loops_of_calls(owner: ast.AST) -> dict[int, list[Loop]]:
    """For every call in a function (or module) body, the loops around it, outermost first."""
    table: dict[int, list[Loop]] = {}
    body = owner.body if not isinstance(owner, ast.Lambda) else [owner.body]
    stack: list[tuple[ast.AST, tuple[Loop, ...]]] = [(node, ()) for node in body]
    pop, push = stack.pop, stack.append
    while stack:
        node, loops = pop()
        cls = node.__class__
        if cls is ast.Name or cls is ast.Constant or cls in _NOT_WALKED:
            continue
        if cls is ast.Call:
            if loops:
                table[id(node)] = list(loops)
        elif cls is ast.For or cls is ast.AsyncFor:
            push((node.iter, loops))
            inner = (*loops, node)
            for child in (*node.body, node.target):
                push((child, inner))
            for child in node.orelse:
                push((child, loops))
            continue
        elif cls is ast.While:
            inner = (*loops, node)
            for child in (node.test, *node.body):
                push((child, inner))
            for child in node.orelse:
                push((child, loops))
            continue
        elif cls in _COMPREHENSIONS:
            push((node.generators[0].iter, loops))
            inner = (*loops, node)
            for child in children(node):
                if child is not node.generators[0]:
                    push((child, inner))
            first = node.generators[0]
            for child in (first.target, *first.ifs):
                push((child, inner))
            continue
        for child in children(node):
            push((child, loops))
    return table


def _returning(site: ast.Call, scope: Scope | None) -> FunctionNode | None:
    """The function (`scope`'s) every `return` of which returns `site` itself (`return jax.jit(step)`)."""
    factory = scope.node if scope is not None else None
    if not isinstance(factory, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    returns = [s for s in own_statements(factory.body) if isinstance(s, ast.Return)]
    return factory if returns and all(r.value is site for r in returns) else None
