"""How `jax.jit` reads `static_argnums`/`static_argnames`/`donate_argnums`/`donate_argnames` against a signature.

Shared by the JAX3xx rules: which literal entries name which parameter (resolved as JAX's
`infer_argnums_and_argnames` does), and which argument of a visible call feeds a parameter.
Only a `jax.jit` of a function whose signature JAX sees as written is resolved: a jit
around another transformation, a `functools.partial` that binds keywords, or an unknown
decorator under the jit could change the signature JAX inspects. A transformation around
the jit leaves the signature alone but stands between the jit and its callers.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator

from jaxlint.analysis.engine.arguments import bind, implicit_count, receiver
from jaxlint.analysis.engine.call_index import calls_through
from jaxlint.analysis.engine.names import FunctionNode
from jaxlint.analysis.knowledge.decorators import transparent
from jaxlint.analysis.tracing.callees import module_callees
from jaxlint.analysis.tracing.traced_functions import TracedFunction

JIT = "jax.jit"
# The compiling transformations whose options name static and donated arguments: `jax.pmap`
# hashes its `static_broadcasted_argnums` and caches its compilations as `jax.jit` does.
COMPILING = frozenset({JIT, "jax.pmap"})
_STATIC_OPTIONS = ("static_argnums", "static_broadcasted_argnums")


@dataclass(frozen=True)
class Entry:
    """One literal entry of an argnums/argnames option."""

    option: str  # "static_argnums", "static_argnames", "donate_argnums", "donate_argnames"
    node: ast.expr  # the literal, where findings about it are reported
    value: int | str


@dataclass(frozen=True)
class Signature:
    positional: list[str]  # positional-or-keyword and positional-only, after bound ones
    positional_only: frozenset[str]
    keyword_only: list[str]
    vararg: str | None
    kwarg: str | None

    def index_of(self, name: str) -> int | None:
        return self.positional.index(name) if name in self.positional else None


def plain_jits(module) -> Iterator[TracedFunction]:
    """Traced roots that are exactly `jax.jit` (or `jax.pmap`) of a function JAX inspects as written."""
    for root in innermost_jits(module):
        if len(root.transforms) == 1:
            yield root


def innermost_jits(module) -> Iterator[TracedFunction]:
    """Traced roots whose innermost transformation is `jax.jit` (or `jax.pmap`) of the function as written,
    whatever wraps the jit (`custom_jvp`, `vmap`, ...): the jit resolves its options against
    this signature, though calls reach it through the outer transformations."""
    for root in module.traced_roots:
        if not root.transforms or root.transforms[-1].name not in COMPILING or root.bound_keywords:
            continue
        fn = root.node
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and _decorated_below_jit(root, module):
            continue
        yield root


def _decorated_below_jit(root: TracedFunction, module) -> bool:
    """A decorator applied before the jit (closer to the def) that may change the signature the
    jit sees: any but the jit itself and those that leave calls as they were (`staticmethod`, a
    runtime type checker: `decorators.transparent`)."""
    decorators = root.node.decorator_list
    site = root.transforms[-1].node
    scope = module.names.enclosing_scope(root.node)
    if not any(site is d for d in decorators):
        return bool(decorators) and not all(transparent(d, module.names, scope) for d in decorators)
    index = next(i for i, d in enumerate(decorators) if d is site)
    return any(not transparent(d, module.names, scope) for d in decorators[index + 1:])


def signature(root: TracedFunction) -> Signature:
    a = root.node.args
    positional = [p.arg for p in (*a.posonlyargs, *a.args)][root.bound_positional:]
    positional_only = frozenset(p.arg for p in a.posonlyargs)
    return Signature(
        positional,
        positional_only,
        [p.arg for p in a.kwonlyargs],
        a.vararg.arg if a.vararg else None,
        a.kwarg.arg if a.kwarg else None,
    )


def entries(root: TracedFunction, option: str) -> list[Entry]:
    """The literal entries of one option of the (innermost) jit (`static_argnums=(0, 2)` -> two entries)."""
    expr = root.transforms[-1].keywords.get(option)
    if expr is None:
        return []
    items = expr.elts if isinstance(expr, (ast.Tuple, ast.List, ast.Set)) else [expr]
    found = []
    for item in items:
        value = _literal(item)
        if option.endswith("argnums") and isinstance(value, int) and not isinstance(value, bool):
            found.append(Entry(option, item, value))
        elif option.endswith("argnames") and isinstance(value, str):
            found.append(Entry(option, item, value))
    return found


def option_is_literal(root: TracedFunction, option: str) -> bool:
    """Whether every entry of the option is a literal (so that the entries are all of it)."""
    expr = root.transforms[-1].keywords.get(option)
    if expr is None:
        return True
    items = expr.elts if isinstance(expr, (ast.Tuple, ast.List, ast.Set)) else [expr]
    return all(_literal(item) is not None for item in items)


def designated(root: TracedFunction, kind: str) -> dict[str, Entry]:
    """Parameters made static (`kind="static"`) or donated (`kind="donate"`), each with the entry naming it."""
    sig = signature(root)
    found: dict[str, Entry] = {}
    numbered = [e for option in (_STATIC_OPTIONS if kind == "static" else ("donate_argnums",)) for e in entries(root, option)]
    for entry in numbered:
        index = entry.value
        if -len(sig.positional) <= index < len(sig.positional):
            found.setdefault(sig.positional[index], entry)
    for entry in entries(root, f"{kind}_argnames"):
        if entry.value in sig.positional or entry.value in sig.keyword_only:
            found.setdefault(entry.value, entry)
    return found


def is_method_call(call: ast.Call, root: TracedFunction, module) -> bool:
    """`self.step(x)` / `obj.step(x)` of a jitted method: the instance (or a class method's
    class) is bound without an argument."""
    return implicit_count(root.node, receiver(call.func, root.node, module.names)) == 1


def function_label(fn: FunctionNode) -> str:
    return f"`{fn.name}`" if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else "the lambda"


def _literal(expr: ast.expr):
    try:
        return ast.literal_eval(expr)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None



def donating_sites(module):
    """Call sites of plain jits that donate arguments, each with its donated parameters."""
    plain = {id(root): root for root in plain_jits(module)}
    donors = {key: designated(root, "donate") for key, root in plain.items()}
    if not any(donors.values()):
        return
    for site in module.call_sites:
        donated = donors.get(id(site.target))
        if donated:
            yield site, donated


@dataclass(frozen=True)
class DonatingCall:
    """A call of a plain function of the module that passes its parameter straight into a
    donated position of a jitted call: the caller's argument is donated too."""

    call: ast.Call
    argument: ast.Name
    helper: FunctionNode
    inner: ast.Call  # the donating jitted call inside the helper
    label: str  # the jitted function
    caller: FunctionNode | None  # the function the call is in, None at module level


def donating_helpers(module) -> list[DonatingCall]:
    """Calls, anywhere in the module, of functions that hand a parameter to a donating jit."""
    names = module.names
    donors: dict[int, list[tuple[str, ast.Call, str]]] = {}
    helpers: dict[int, FunctionNode] = {}
    for site, donated in donating_sites(module):
        helper = site.function
        if not isinstance(helper, (ast.FunctionDef, ast.AsyncFunctionDef)) or id(helper) in module.effects.contexts:
            continue
        params = [p.arg for p in (*helper.args.posonlyargs, *helper.args.args, *helper.args.kwonlyargs)]
        rebound = {s.target.id for s in module.effects.name_stores(helper)}
        for param in donated:
            arg = site.argument(param)
            if isinstance(arg, ast.Name) and arg.id in params and arg.id not in rebound:
                donors.setdefault(id(helper), []).append((arg.id, site.call, function_label(site.target.node)))
                helpers[id(helper)] = helper
    found: list[DonatingCall] = []
    if not donors:
        return found
    for call, scope in calls_through(names, {helper.name for helper in helpers.values()}):
        if not isinstance(call.func, ast.Name):
            continue
        helper = names.definition(call.func, scope)
        if id(helper) not in donors or helper.decorator_list:
            continue
        for param, inner, label in donors[id(helper)]:
            arg = plain_argument(call, helper, param)
            if isinstance(arg, ast.Name):
                caller = scope.node if scope is not None and scope.kind == "function" else None
                found.append(DonatingCall(call, arg, helper, inner, label, caller))
    return found


def forwarded(module, site, param: str) -> list[tuple[ast.Call, ast.expr, FunctionNode]]:
    """When a jitted call passes `param` a parameter of the plain function it sits in, which
    that function never rebinds (`def mesh_eval(f, lims): return _eval(f, lims)`): the calls of
    that function in the module, each with what it passes there, and the function."""
    helper = site.function
    if not isinstance(helper, (ast.FunctionDef, ast.AsyncFunctionDef)) or not plain_function(helper):
        return []
    if id(helper) in module.effects.contexts:
        return []  # traced itself: its callers' values reach the jit through a trace
    arg = site.argument(param)
    params = {p.arg for p in (*helper.args.posonlyargs, *helper.args.args, *helper.args.kwonlyargs)}
    if not isinstance(arg, ast.Name) or arg.id not in params:
        return []
    if arg.id in {s.target.id for s in module.effects.name_stores(helper)}:
        return []
    found = []
    for call in plain_calls(module, helper):
        passed = plain_argument(call, helper, arg.id)
        if passed is not None:
            found.append((call, passed, helper))
    return found


def plain_calls(module, function: FunctionNode) -> list[ast.Call]:
    """The calls of a module function in the module, by its own name or another one that runs
    it (`module_callees(...).calls_of`), where it is called as a plain function."""
    return [call for call, _, target in module_callees(module.names).calls_of(function) if target.implicit == 0]


def plain_function(function: FunctionNode) -> bool:
    """A def its calls run as written: undecorated, or a static method."""
    return all(isinstance(d, ast.Name) and d.id == "staticmethod" for d in getattr(function, "decorator_list", ()))


def plain_argument(call: ast.Call, function: FunctionNode, param: str) -> ast.expr | None:
    """The expression a plain call passes for `param`, when it is plain to see."""
    return bind(function, call).argument(param)


def identity_hashed(cls: ast.ClassDef, module, seen: frozenset[int] = frozenset()) -> bool:
    """A plain class hashed and compared by identity: no class decorator or keyword, no
    `__hash__`/`__eq__` of its own, and only `object` or such classes of this module as bases."""
    if id(cls) in seen or cls.decorator_list or cls.keywords:
        return False
    if any(
        isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign, ast.AnnAssign))
        and {"__hash__", "__eq__"} & _defined_names(stmt)
        for stmt in cls.body
    ):
        return False
    for base in cls.bases:
        if module.qualname(base) == "builtins.object":
            continue
        definition = module.names.definition(base) if isinstance(base, ast.Name) else None
        if not isinstance(definition, ast.ClassDef) or not identity_hashed(definition, module, seen | {id(cls)}):
            return False
    return True


def _defined_names(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {stmt.name}
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    return {t.id for t in targets if isinstance(t, ast.Name)}


_CONSTRUCTION = frozenset({"__init__", "__post_init__", "__new__"})


def reassigned_attributes(cls: ast.ClassDef, module) -> dict[str, list]:
    """Attributes of instances of `cls` assigned after construction, by attribute name: stores
    to `self.x` in the class's methods other than `__init__`/`__post_init__`/`__new__`, and to
    `obj.x` where `obj` is bound only to `cls(...)`.  Stores inside traced code are left out."""
    names = module.names
    effects = module.effects
    out: dict[str, list] = {}
    for attr, stores in effects.attribute_stores.items():
        for store in stores:
            function = store.function
            base = store.target.value if isinstance(store.target, ast.Attribute) else None
            if not isinstance(base, ast.Name) or (function is not None and id(function) in effects.contexts):
                continue
            if function is not None and names.parent_class.get(id(function)) is cls:
                positional = [*function.args.posonlyargs, *function.args.args]
                if not positional or positional[0].arg != base.id or _part_of_construction(function, cls, module):
                    continue
            else:
                scope = names.read_scope.get(id(base))
                values = names.assignments(base, scope)
                if not values or not all(
                    isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and names.definition(v.func, scope) is cls
                    for v in values
                ):
                    continue
            out.setdefault(attr, []).append(store)
    return out


def _part_of_construction(method: FunctionNode, cls: ast.ClassDef, module, depth: int = 0) -> bool:
    """`__init__` itself, or a method that only construction calls (`self._build()` in `__init__`)."""
    if method.name in _CONSTRUCTION:
        return True
    if depth > 2:
        return False
    callers = []
    for call, scope in calls_through(module.names, (method.name,)):
        func = call.func
        if isinstance(func, ast.Attribute):
            node = scope.node if scope is not None else None
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or module.names.parent_class.get(id(node)) is not cls:
                return False  # called from elsewhere: after construction, perhaps
            callers.append(node)
    return bool(callers) and all(_part_of_construction(caller, cls, module, depth + 1) for caller in callers)
