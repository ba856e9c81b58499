"""Calls of one jitted function whose signature differs where nothing else does.

A jit's cache is keyed, besides the arguments' shapes, by how they are passed and by their
exact types: a parameter given by keyword in one call and by position in another is two
signatures (two compilations of the same computation), and so are a Python number and an
array (a Python scalar is weakly typed). Two ways the code shows it:

- a `functools.partial` / `jax.tree_util.Partial` of a jitted function that binds a parameter
  by keyword where calls pass it by position, or the other way round (`Partial(step,
  scale=1.0)` called where `step(x, 1.0)` is called too): the partial hides the difference
  (calls that show both forms are a visible choice, and are left alone);
- a loop carry that starts as a Python number and comes back from the jitted call as an array
  (`total = 0.0`, then `total = accumulate(total, x)` in a loop): the first iteration compiles
  for the Python scalar, the next ones again for the array.

Only calls made outside staged code count: inside a trace, a call is inlined into the caller's
program, whatever its signature.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, NamedTuple

from jaxlint.analysis.engine.call_index import calls_through, spellings
from jaxlint.analysis.engine.walk import spans, walk
from jaxlint.analysis.tracing.callees import module_callees
from jaxlint.analysis.knowledge import shape_api
from jaxlint.analysis.shapes import jit_signature
from jaxlint.analysis.shapes.static_leaves import call_assignments
from jaxlint.analysis.tracing.traced_functions import TracedFunction

if TYPE_CHECKING:
    from jaxlint.analysis.project.traced_module import TracedModule

_PARTIALS = frozenset({"functools.partial", "jax.tree_util.Partial"})


class SignatureChange(NamedTuple):
    node: ast.AST  # where the second signature is made
    function: str  # the jitted function
    why: str


class _Use(NamedTuple):
    node: ast.AST  # the call, or the partial that binds by keyword
    positional: frozenset[str]
    keyword: frozenset[str]
    bound: frozenset[str] = frozenset()  # what a partial bound, out of sight of the call


def signature_changes(module: TracedModule) -> list[SignatureChange]:
    return _mixed_passing(module) + _scalar_carries(module)


def _caching(root: TracedFunction) -> bool:
    return any(t.name in shape_api.CACHING_TRANSFORMS for t in root.transforms)


def _mixed_passing(module: TracedModule) -> list[SignatureChange]:
    uses: dict[int, list[_Use]] = {}
    roots: dict[int, TracedFunction] = {}
    for site in module.call_sites:
        root = site.target
        if not _caching(root) or module.runs_staged(site.function) or not isinstance(root.node, ast.FunctionDef):
            continue
        use = _passing(site.call, root, module, frozenset(), frozenset(), site.call)
        if use is not None:
            uses.setdefault(id(root), []).append(use)
            roots[id(root)] = root
    for partial, bound, calls in _partials(module):
        positional = partial.args[1:]
        if any(isinstance(a, ast.Starred) for a in positional) or any(k.arg is None for k in partial.keywords):
            continue
        params = _positional_params(bound, module, partial)
        given_positional = frozenset(params[: len(positional)])
        given_keyword = frozenset(k.arg for k in partial.keywords)
        for call in calls:
            use = _passing(call, bound, module, given_positional, given_keyword, partial if given_keyword else call,
                           skip=len(positional))
            if use is not None:
                use = use._replace(bound=given_positional | given_keyword)
                uses.setdefault(id(bound), []).append(use)
                roots[id(bound)] = bound
    found = []
    for key, group in uses.items():
        group.sort(key=lambda u: (u.node.lineno, u.node.col_offset))
        for i, later in enumerate(group):
            earlier = next((u for u in group[:i] if _hidden_conflict(u, later)), None)
            if earlier is None:
                continue
            param = sorted(_hidden_conflict(earlier, later))[0]
            how = "by keyword" if param in later.keyword else "by position"
            other = "by position" if param in later.keyword else "by keyword"
            name = roots[key].node.name
            found.append(SignatureChange(
                later.node, name,
                f"`{name}` gets `{param}` {how} here and {other} on line {earlier.node.lineno}: JAX keys its "
                "cache by how each argument is passed, so the same computation compiles twice; pass it "
                "the same way everywhere",
            ))
            break
    return found


def _hidden_conflict(one: _Use, other: _Use) -> frozenset[str]:
    """The parameters one use passes by position and the other by keyword, where a partial made
    the difference (bound one of them): calls that show both forms are a visible choice."""
    mixed = (one.positional & other.keyword) | (one.keyword & other.positional)
    return mixed & (one.bound | other.bound)


def _positional_params(root: TracedFunction, module: TracedModule, call: ast.Call) -> list[str]:
    sig = jit_signature.signature(root)
    return list(sig.positional[1:] if jit_signature.is_method_call(call, root, module) else sig.positional)


def _passing(call, root, module, positional0, keyword0, node, skip: int = 0) -> _Use | None:
    """How a call passes each parameter (with what a partial bound, `positional0`/`keyword0`,
    and the `skip` leading parameters the partial binds), recorded at `node`."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    params = _positional_params(root, module, call)[skip:]
    positional = frozenset(params[: len(call.args)]) | positional0
    keyword = frozenset(k.arg for k in call.keywords) | keyword0
    return _Use(node, positional, keyword)


def _partials(module: TracedModule):
    """`name = partial(jitted, ...)` (or `Partial`) bound once, with the jitted function and the
    calls of the name made outside staged code."""
    names = module.names
    by_node = {id(root.node): root for root in module.traced_roots if _caching(root) and isinstance(root.node, ast.FunctionDef)}
    for partial, scope in calls_through(names, spellings(names, _PARTIALS)):
        if module.qualname(partial.func) not in _PARTIALS or not partial.args:
            continue
        target = names.call_targets.get(id(partial))
        wrapped = module_callees(names).target(partial.args[0], scope)  # `step`, `Ops.step`
        fn = wrapped.function if wrapped is not None and not wrapped.implicit else names.definition(partial.args[0], scope)
        root = by_node.get(id(fn)) if fn is not None else None
        if target is None or root is None or len(scope.assigned.get(target, ())) != 1:
            continue
        calls = [
            call for call, where in calls_through(names, (target,))
            if isinstance(call.func, ast.Name) and names.lookup(target, where) is scope
            and not module.runs_staged(_function(where))
        ]
        if calls:
            yield partial, root, calls


def _function(scope):
    node = scope.node if scope is not None else None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else None


def _scalar_carries(module: TracedModule) -> list[SignatureChange]:
    """`total = 0.0` before a loop, `total = step(total, x)` in it."""
    found = []
    sites = [
        site for site in module.call_sites
        if site.loops and _caching(site.target) and not module.runs_staged(site.function)
    ]
    assigned = call_assignments(module) if sites else {}
    for site in sites:
        parent = assigned.get(id(site.call))
        if parent is None:
            continue
        target = parent.targets[0]
        carried = {target.id} if isinstance(target, ast.Name) else {
            e.id for e in getattr(target, "elts", ()) if isinstance(e, ast.Name)
        }
        static = site.target.static_params
        params = site.positional
        for i, arg in enumerate(site.call.args):
            param = params[i] if i < len(params) else None
            if not isinstance(arg, ast.Name) or arg.id not in carried or param is None or param in static:
                continue
            start = _python_number_start(arg.id, site, module)
            if start is not None:
                name = getattr(site.target.node, "name", None) or site.target.bound_name or "the jitted function"
                found.append(SignatureChange(
                    site.call, name,
                    f"`{arg.id}` starts as the Python number `{ast.unparse(start)}` (line {start.lineno}) and comes "
                    f"back from `{name}` as an array: the first iteration compiles for a Python scalar (weakly "
                    "typed) and the next one again for the array; start it as the array the function returns "
                    f"(`jnp.asarray({ast.unparse(start)}, dtype)` of its dtype)",
                ))
                break
    return found


def _python_number_start(name: str, site, module: TracedModule) -> ast.expr | None:
    """The number `name` is bound to before the loop, when every binding outside it is a Python
    number and inside it only this call's result."""
    scope = module.names.scopes.get(id(site.function)) if site.function is not None else module.names.module
    if scope is None or name in scope.other or name in scope.params:
        return None
    loop = site.loops[0]
    values = scope.assigned.get(name, [])
    outside = [v for v in values if not spans(loop, v)]
    inside = [v for v in values if spans(loop, v)]
    if not outside or any(v is not site.call for v in inside):
        return None
    if not all(isinstance(v, ast.Constant) and type(v.value) in (int, float) for v in outside):
        return None
    if any(isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id == name for n in walk(loop)):
        return None
    return outside[-1]
