"""Which function of the module a call runs, and how the call binds its parameters.

One resolver for every analysis that follows calls inside a module:

- a name bound to a def (`step(x)`), to a lambda once (`noise = lambda k: ...`), once to
  transformations that keep the function callable as written and `functools.partial`s that fix
  keywords only, around a def (`step = jax.jit(train_step)`, `p_step =
  jax.pmap(partial(train_step, model=m))`), or once to a call of a factory of the module that
  returns the def it defines (`step = make_step()`);
- `self.method(x)` in a method: the class's own def or one inherited from a base of the
  module; `self.layer(x)` where the attribute holds an instance of a class of the module: its
  `__call__`; `self.model.step(x)`: that class's `step` (`submodules.attribute_class` says
  which class an attribute holds);
- `Cls.method(x)` for a class of the module: a static method binds nothing, a class method the
  class, and a plain function the instance passed first (`Base.step(self, x)`);
- through a function that only forwards its arguments (`def f(*args, **kwargs): return
  _f_impl(*args, **kwargs)`), to the function it forwards to.

A def decorated with anything but `staticmethod`, `classmethod` or a transformation that keeps
the function callable as written (`jax.jit`, `partial(jax.jit, ...)`) is not followed: what
the decorator returns is not seen. `property` is not followed either (the call runs what the
property returns). Each answer is a `Target`: the function and how many of its leading
parameters the call binds implicitly, which `engine.arguments.bind` needs.
"""

from __future__ import annotations

import ast
import weakref
from functools import cached_property
from typing import NamedTuple

from jaxlint.analysis.engine.arguments import Binding, Receiver, bind, decorated_as, forwarded_call, implicit_count
from jaxlint.analysis.engine.call_index import calls_through
from jaxlint.analysis.engine.names import FunctionNode, Names, Scope
from jaxlint.analysis.engine.submodules import attribute_class, call_method, self_attributes
from jaxlint.analysis.engine.walk import returned_name
from jaxlint.analysis.knowledge.decorators import transparent
from jaxlint.analysis.knowledge.jax_api import TRANSFORMS
from jaxlint.analysis.knowledge.random_api import PRESERVING_TRANSFORMS
from jaxlint.analysis.tracing.transforms import PARTIAL, transform_of

_FORWARDS = 4  # forwarding functions followed in a row at most


class Target(NamedTuple):
    function: FunctionNode
    implicit: int  # leading parameters the call binds without an argument (`self`, `cls`)
    forwarder: FunctionNode | None = None  # the function the call names, when it forwards to `function`

    def bind(self, call: ast.Call) -> Binding:
        return bind(self.function, call, self.implicit)


class Callees:
    """The functions of one module that its calls run."""

    def __init__(self, names: Names, preserving: frozenset[str]):
        # Held weakly, so that reference counting alone frees the module's names, and with them
        # this resolver's entry in `module_callees`, once the module is linted.
        self._names = weakref.ref(names)
        self._preserving = preserving  # transformations a def is followed through
        self._attributes: dict[int, dict] = {}
        self._cache: dict[int, Target | None] = {}
        self._calls: dict[int, list[tuple[ast.Call, Scope, Target]]] = {}  # `calls_of`
        self._names_of: dict[int, set[str]] | None = None  # `_other_names`
        self._handed: dict[int, list[tuple[ast.Call, Scope]]] | None = None  # `handed_calls`

    @property
    def names(self) -> Names:
        names = self._names()
        assert names is not None, "a module's resolver outlived its names"
        return names

    def target(self, func: ast.AST, scope: Scope | None = None) -> Target | None:
        """What calling `func` (a call's `func`) runs, when it is a def or lambda of this module."""
        key = id(func)
        if scope is None and key in self._cache:
            return self._cache[key]
        found = self._direct(func, scope)
        if found is not None:
            found = self.through_forwarders(found)
        if scope is None:
            self._cache[key] = found
        return found

    @cached_property
    def def_names(self) -> frozenset[str]:
        """The names of the module's defs: `x.<attr>` can denote one only where `attr` is one."""
        return frozenset(fn.name for fn in self.names.functions if not isinstance(fn, ast.Lambda))

    def body_run(self, func: ast.AST) -> FunctionNode | None:
        """The def or lambda of this module whose body a call of `func` runs, however JAX
        transforms it: as `target` answers, or through a transformation applied in place
        (`jax.value_and_grad(loss_fn)(p)`) or bound once to a name (`grad_fn =
        jax.grad(loss_fn)`, then `grad_fn(p)`), whose result differs from the body's."""
        if isinstance(func, ast.Name) and self.target(func) is None:
            values = self.names.assignments(func)
            if len(values) == 1 and isinstance(values[0], ast.Call):
                func = values[0]  # `grad_fn = jax.grad(loss_fn)`: as the transformation applied in place
        if isinstance(func, ast.Call):
            if not (func.args and self.names.qualname(func.func) in TRANSFORMS):
                return None
            func = func.args[0]
        target = self.target(func)
        return target.function if target is not None else None

    def denoted(self, func: ast.AST, scope: Scope | None = None) -> Target | None:
        """The def or lambda of this module an expression names, however it is decorated (its
        decorators are the asker's to read: a transformation changes what a call of it does,
        not which def it is), and how reading it through that expression binds it."""
        return self._named(func, scope)

    def _direct(self, func: ast.AST, scope: Scope | None) -> Target | None:
        found = self._named(func, scope)
        return found if found is not None and self._runs_as_written(found.function) else None

    def calls_of(self, function: FunctionNode) -> list[tuple[ast.Call, Scope, Target]]:
        """The calls of the module that run `function` (as `target` answers), each with the scope
        it is made in and its target: by the function's own name, through a method of `self` or
        a class, through a forwarder to it, or through a name bound once to it (`step =
        jax.jit(f)`, `step = make_step()`)."""
        if isinstance(function, ast.Lambda):
            return []
        found = self._calls.get(id(function))
        if found is not None:
            return found
        spelled = {function.name} | self._other_names().get(id(function), set())
        found = self._calls[id(function)] = []
        for call, scope in calls_through(self.names, spelled):
            target = self.target(call.func)
            if target is not None and (target.function is function or target.forwarder is function):
                found.append((call, scope, target))
        return found

    def handed_calls(self, function: FunctionNode) -> list[tuple[ast.Call, Scope]]:
        """The calls that run `function` through a parameter it is handed to: `train(env,
        eval_fn=evaluate)`, where `train` (a function of the module the resolver follows) calls
        `eval_fn(...)` and never rebinds it. One call that hands it on is enough: what this
        answers is that the function may run there, not that nothing else runs there."""
        if self._handed is None:
            self._handed = {}
            for call, scope in self.names.calls:
                passed = [a for a in (*call.args, *(k.value for k in call.keywords)) if isinstance(a, ast.Name)]
                if not passed:
                    continue
                target = None
                for arg in passed:
                    handed = self.names.definition(arg, scope)
                    if not isinstance(handed, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        continue
                    target = target or self.target(call.func, scope)
                    if target is None:
                        break
                    param = next((p for a, p in target.bind(call).pairs() if a is arg), None)
                    if param is not None:
                        self._handed.setdefault(id(handed), []).extend(self._calls_of_parameter(target.function, param))
        return self._handed.get(id(function), [])

    def _calls_of_parameter(self, function: FunctionNode, param: str) -> list[tuple[ast.Call, Scope]]:
        """The calls `function`'s body makes of its parameter `param`, where nothing rebinds it."""
        inner = self.names.scopes.get(id(function))
        if inner is None or param in inner.assigned or param in inner.other:
            return []
        return [
            (call, scope) for call, scope in calls_through(self.names, (param,))
            if isinstance(call.func, ast.Name) and call.func.id == param and self.names.lookup(param, scope) is inner
        ]

    def _other_names(self) -> dict[int, set[str]]:
        """For each function of the module, the other names a call may run it through: those of
        the functions forwarding to it, and names bound once to a call that yields it."""
        if self._names_of is None:
            self._names_of = {}
            for fn in self.names.functions:
                forwarded = forwarded_call(fn) if not isinstance(fn, ast.Lambda) else None
                if forwarded is not None:
                    target = self.through_forwarders(Target(fn, forwarded[1]))
                    if target.function is not fn:
                        self._names_of.setdefault(id(target.function), set()).add(fn.name)
            for scope in self.names.scopes.values():
                for name, values in scope.assigned.items():
                    if len(values) == 1 and isinstance(values[0], ast.Call) and name not in scope.defs:
                        target = self._direct(ast.Name(id=name, ctx=ast.Load()), scope)
                        if target is not None:
                            self._names_of.setdefault(id(target.function), set()).add(name)
        return self._names_of

    def through_forwarders(self, target: Target) -> Target:
        """The function a call of `target` ends up binding its arguments to: `target` itself, or
        the function it forwards them to as received, followed a few steps."""
        named = target.function
        for _ in range(_FORWARDS):
            forwarded = forwarded_call(target.function)
            if forwarded is None or forwarded[1] != target.implicit:
                break
            inner = self._direct(forwarded[0].func, self.names.scopes.get(id(target.function)))
            if inner is None:
                break
            target = inner._replace(forwarder=named)
        return target

    def _named(self, func: ast.AST, scope: Scope | None) -> Target | None:
        names = self.names
        if isinstance(func, ast.Lambda):
            return Target(func, 0)
        if isinstance(func, ast.Name):
            definition = names.definition(func, scope)
            if definition is None:
                values = names.assignments(func, scope)
                if len(values) != 1:
                    return None
                value = values[0]
                if isinstance(value, ast.Lambda):
                    return Target(value, 0)
                wrapped = self._wrapped(value, scope)
                if wrapped is not None:
                    definition = names.definition(wrapped, scope)
                if definition is None and isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
                    definition = self._made_by(names.definition(value.func, scope))
            return self._function(definition, Receiver.FUNCTION)
        if not isinstance(func, ast.Attribute):
            return None
        receiver = func.value
        if isinstance(receiver, ast.Call):  # `Model(...).step`
            return self._instance_method(receiver, func.attr, scope)
        if isinstance(receiver, ast.Attribute):  # `self.model.step`: the instance an attribute holds
            if func.attr not in self.def_names:
                return None  # no class of the module has the method
            named = attribute_class(names, receiver, self.attributes_of)
            held = names.definition(named) if named is not None else None
            if not isinstance(held, ast.ClassDef) or id(held) not in names.scopes:
                return None
            return self._function(self.method(held, func.attr), Receiver.INSTANCE)
        if not isinstance(receiver, ast.Name):
            return None
        cls = names.definition(receiver, scope)
        if isinstance(cls, ast.ClassDef):
            return self._function(self.method(cls, func.attr), Receiver.CLASS)
        read = names.read_scope.get(id(receiver)) if scope is None else scope
        method_scope = None
        while read is not None and read.kind != "class":
            method_scope = read
            read = read.parent
        if read is None or method_scope is None or receiver.id != instance_parameter(method_scope.node):
            # `model.step` where `model = Model(...)` is this scope's only binding of the name.
            values = names.assignments(receiver, scope)
            if len(values) == 1 and isinstance(values[0], ast.Call):
                return self._instance_method(values[0], func.attr, scope)
            return None
        method = self.method(read.node, func.attr)
        if method is None:
            if "__call__" not in self.def_names:
                return None  # no class of the module can be called
            named = attribute_class(names, func, self.attributes_of)
            held = names.definition(named) if named is not None else None
            method = call_method(held) if isinstance(held, ast.ClassDef) else None
            return Target(method, 1) if method is not None else None
        return self._function(method, Receiver.INSTANCE)

    def _wrapped(self, value: ast.AST, scope: Scope | None) -> ast.Name | None:
        """The name of the function a value wraps in transformations that keep it callable as
        written and in `functools.partial`s that fix keywords only (`jax.pmap(partial(train_step,
        model=m))`): a call of it binds its arguments as a call of the function does. (A partial
        that fixes positional arguments shifts them: not followed.)"""
        for _ in range(_FORWARDS):
            if not isinstance(value, ast.Call) or not value.args:
                return None
            callee = self.names.qualname(value.func, scope)
            if callee in PARTIAL:
                if len(value.args) != 1 or any(k.arg is None for k in value.keywords):
                    return None
            elif callee not in self._preserving:
                return None
            value = value.args[0]
            if isinstance(value, ast.Name):
                return value
        return None

    def _instance_method(self, construction: ast.Call, attr: str, scope: Scope | None) -> Target | None:
        """The method `attr` of the object `construction` makes, a class of this module."""
        cls = self.names.definition(construction.func, scope)
        if not isinstance(cls, ast.ClassDef) or id(cls) not in self.names.scopes:
            return None
        return self._function(self.method(cls, attr), Receiver.INSTANCE)

    def _made_by(self, factory: ast.AST | None) -> ast.AST | None:
        """The def a factory of the module returns on every `return` (`def make(): def step(...):
        ...; return step`): what the name bound to a call of it runs."""
        if not isinstance(factory, (ast.FunctionDef, ast.AsyncFunctionDef)) or factory.decorator_list:
            return None
        name = returned_name(factory)
        made = self.names.scopes[id(factory)].defs.get(name) if name is not None else None
        if made is None or name in self.names.scopes[id(factory)].assigned:
            return None
        return made

    def method(self, cls: ast.ClassDef, attr: str) -> ast.AST | None:
        """The def `cls.<attr>` finds in the class or, depth first, its bases of this module."""
        found = self.names.scopes[id(cls)].defs.get(attr)
        if found is not None:
            return found
        found = inherited(self.names, cls, attr)
        return found if isinstance(found, ast.AST) else None

    def _function(self, definition: ast.AST | None, receiver: Receiver) -> Target | None:
        if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        if receiver is not Receiver.FUNCTION and decorated_as(definition, "property"):
            return None  # reading `obj.prop` gives what the property returns, not the def
        return Target(definition, implicit_count(definition, receiver))

    def _runs_as_written(self, function: FunctionNode) -> bool:
        """Whether calling the def runs its body as written: no decorator but those that leave
        calls as they were (`staticmethod`, a runtime type checker, `override`), `classmethod`,
        and transformations that keep the function callable as written."""
        if isinstance(function, ast.Lambda):
            return True
        scope = self.names.enclosing_scope(function)
        for decorator in function.decorator_list:
            if isinstance(decorator, ast.Name) and decorator.id in ("staticmethod", "classmethod"):
                continue
            transform = transform_of(decorator, self.names, scope)
            if transform is None and transparent(decorator, self.names, scope):
                continue
            if transform is None or transform.name not in self._preserving:
                return False
        return True

    def attributes_of(self, cls: ast.ClassDef) -> dict:
        """`submodules.self_attributes` of a class, read once."""
        table = self._attributes.get(id(cls))
        if table is None:
            table = self._attributes[id(cls)] = self_attributes(cls)
        return table


def instance_parameter(function: ast.AST) -> str | None:
    """The name a method calls its instance by (`self`, whatever it is spelled); a static method has none."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or decorated_as(function, "staticmethod"):
        return None
    positional = [*function.args.posonlyargs, *function.args.args]
    return positional[0].arg if positional else None


_MODULE_CALLEES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def module_callees(names: Names) -> Callees:
    """The module's one resolver, shared by every analysis of it: decorators followed are the
    transformations that keep a function callable as written (`jax.jit`, `jax.checkpoint`)."""
    callees = _MODULE_CALLEES.get(names)
    if callees is None:
        callees = _MODULE_CALLEES[names] = Callees(names, PRESERVING_TRANSFORMS)
    return callees


def inherited(names: Names, cls: ast.ClassDef, attr: str, seen: set[int] | None = None) -> ast.AST | str | None:
    """What `cls.<attr>` finds in the bases of a class that does not define it: the statement a
    base of the same module defines it by, or the qualified name of the first base defined
    elsewhere (whose module answers). Bases are searched depth first, left to right, as Python's
    method resolution does for a single chain of bases."""
    seen = set() if seen is None else seen
    scope = names.scopes[id(cls)].parent or names.module
    for base in cls.bases:
        if isinstance(base, ast.Subscript):
            base = base.value  # a generic base, `Environment[State, Params]`
        definition = names.definition(base, scope)
        if isinstance(definition, ast.ClassDef):
            if id(definition) in seen:
                continue
            seen.add(id(definition))
            found = names.scopes[id(definition)].defs.get(attr) or inherited(names, definition, attr, seen)
        else:
            found = names.qualname(base, scope)
        if found is not None:
            return found
    return None

