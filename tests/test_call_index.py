"""The module's calls indexed by the name they are made through: same calls, same order as a scan."""

from __future__ import annotations

import ast
import textwrap

from jaxlint.analysis.engine.call_index import calls_through, calls_through_any, may_resolve_to
from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.knowledge.spellings import SPELLING

SOURCE = textwrap.dedent(
    """
    import jax

    class ns:
        tmap = jax.tree_util.tree_map

    def f(x):
        step = jax.jit(g)
        step(x)
        jax.jit(g)(x)
        obj.step(x)
        return ns.tmap(g, x), x.reshape(-1)
    """
)


def _scanned(names: Names, lasts: set[str]) -> list[ast.Call]:
    out = []
    for call, _ in names.calls:
        func = call.func.func if isinstance(call.func, ast.Call) else call.func
        if getattr(func, "attr", getattr(func, "id", None)) in lasts:
            out.append(call)
    return out


def test_calls_through_a_name_keep_the_order_of_a_scan():
    names = Names(ast.parse(SOURCE), spelling=SPELLING)
    for lasts in ({"step"}, {"jit", "step"}, {"tmap", "reshape"}, {"missing"}):
        direct = [c for c in _scanned(names, lasts) if not isinstance(c.func, ast.Call)]
        assert [c for c, _ in calls_through(names, lasts)] == direct
        assert [c for c, _ in calls_through(names, lasts, curried=True)] == _scanned(names, lasts)


def test_calls_of_a_call_are_found_by_the_inner_call():
    names = Names(ast.parse(SOURCE), spelling=SPELLING)
    site = next(c for c, _ in names.calls if isinstance(c.func, ast.Call)).func  # `jax.jit(g)` of `jax.jit(g)(x)`
    found = [c for c, _ in calls_through_any(names, {"step"}, [site])]
    assert [ast.unparse(c) for c in found] == ["step(x)", "jax.jit(g)(x)", "obj.step(x)"]


def test_an_attribute_may_resolve_through_a_class_body_alias_only():
    names = Names(ast.parse(SOURCE), spelling=SPELLING)
    calls = {ast.unparse(c.func): c.func for c, _ in names.calls}
    spellings = frozenset({"tree_map", "map"})
    assert may_resolve_to(names, calls["ns.tmap"], spellings)  # `ns` is a class of the module
    assert may_resolve_to(names, calls["step"], spellings)  # a plain name may be any alias
    assert not may_resolve_to(names, calls["x.reshape"], spellings)
