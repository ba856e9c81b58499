"""Loop variance on the shared solver: which values change from one iteration of a loop to the next."""

from __future__ import annotations

import ast
import importlib.util
import textwrap

import pytest

from jaxlint.analysis.module import ModuleFacts
from jaxlint.source import Source

needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")


def facts(code: str) -> ModuleFacts:
    return ModuleFacts(Source.parse(textwrap.dedent(code)))


def call_arguments(module: ModuleFacts, callee: str) -> list[ast.expr]:
    return [
        call.args[0]
        for call in ast.walk(module.tree)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == callee
    ]


def loops(module: ModuleFacts) -> list[ast.AST]:
    found = [n for n in ast.walk(module.tree) if isinstance(n, (ast.For, ast.While))]
    return sorted(found, key=lambda n: n.lineno)


def varying(code: str, loop_index: int = -1) -> list[bool]:
    """For each `use(...)` call, in order: does its argument change between iterations of the loop?"""
    module = facts(code)
    loop = loops(module)[loop_index]
    uses = sorted(call_arguments(module, "use"), key=lambda a: a.lineno)
    return [module.varies_in_loop(arg, loop) for arg in uses]


def test_a_loop_target_and_what_is_computed_from_it_change():
    assert varying("""
    def f(xs, n):
        for t in xs:
            u = t * 2
            use(t); use(u); use(n)
    """) == [True, True, False]


def test_a_value_set_afresh_each_iteration_does_not_change_after_it_is_set():
    assert varying("""
    def f(x, ts):
        cut = 0.0
        for t in ts:
            use(cut)  # 0.0 on the first iteration, 0.5 on the others
            cut = 0.5
            use(cut)
            size = cut * 4
            use(size)
    """) == [True, False, False]


def test_a_value_carried_from_the_previous_iteration_changes():
    assert varying("""
    def f(x):
        n = 0
        while n < 10:
            n = n + 1
            use(n)
            a, b = b, n
            use(a)
    """) == [True, True]


def test_values_rotated_through_the_loop_change_once_the_rotation_reaches_them():
    # `a` takes `c`'s value two iterations later: only a fixed point at the loop head sees it.
    assert varying("""
    def f(x, ts):
        a = b = c = 0
        for t in ts:
            use(a)
            a, b, c = b, c, t
    """) == [True]


def test_a_call_may_answer_differently_on_every_iteration():
    assert varying("""
    def f(it, rng):
        for _ in range(3):
            batch = next(it)
            noise = rng.normal()
            use(batch); use(noise)
    """) == [True, True]


def test_a_container_changed_in_place_changes():
    assert varying("""
    def f(cfg, xs):
        seen = []
        for t in xs:
            seen.append(t)
            cfg.lr = t
            use(seen); use(cfg)
    """) == [True, True]


def test_what_an_inner_loop_changes_changes_for_the_outer_loop():
    code = """
    def f(xs, n):
        for epoch in range(n):
            total = 0
            for x in xs:
                total = total + x
            use(total)
    """
    assert varying(code, loop_index=0) == [True]


def test_a_comprehension_changes_only_what_its_generators_bind():
    module = facts("""
    def f(xs, n):
        return [use(x + n) for x in xs]
    """)
    comprehension = next(n for n in ast.walk(module.tree) if isinstance(n, ast.ListComp))
    (arg,) = call_arguments(module, "use")
    assert module.varies_in_loop(arg, comprehension)
    assert not module.varies_in_loop(arg.right, comprehension)


def test_definitions_are_those_that_reach_the_point_asked_about():
    module = facts("""
    def f(data, ts):
        x = data
        for t in ts:
            x = data[t:]
            x = x[1:]
            use(x)
    """)
    loop = loops(module)[0]
    (arg,) = call_arguments(module, "use")
    found = module.loops.definitions("x", loop, arg)
    assert [(d.kind, ast.unparse(d.value)) for d in found] == [("assign", "x[1:]")]
    trim = found[0].value  # where `x` is read by `x[1:]`, the fresh slice of this iteration
    earlier = module.loops.definitions("x", loop, trim.value)
    assert [ast.unparse(d.value) for d in earlier] == ["data[t:]"]


def test_the_solve_reaches_a_fixed_point_on_deep_nests():
    lines = ["def f(xs):", "    a = 0"]
    for depth in range(40):
        lines.append("    " * (depth + 1) + f"for i{depth} in xs:")
    lines.append("    " * 41 + "a = a + 1")
    lines.append("    " * 41 + "use(a)")
    module = facts("\n".join(lines) + "\n")
    (arg,) = call_arguments(module, "use")
    assert all(module.varies_in_loop(arg, loop) for loop in loops(module))
    assert all(solved.converged for solved in module.loops._solved.values())


MASKED = """\
import jax
import jax.numpy as jnp


@jax.jit
def energy(x):
    return (x ** 2).sum()


def sweep(x, thresholds):
    for t in thresholds:
        cut = 0.5
        print(t, energy(x[x > cut]))


def carried(x, steps):
    cut = 0.0
    for t in steps:
        print(t, energy(x[x > cut]))
        cut = 0.5
"""


def test_cli_a_mask_set_afresh_each_iteration_is_one_shape(cli, make_files):
    make_files({"m.py": MASKED})
    found = cli("check", "--no-cache", "--output-format", "json", "--select", "JAX501", "m.py").json
    assert [(f["code"], f["location"]["row"]) for f in found] == [("JAX501", 19)]


@needs_jax
def test_jax_compiles_a_mask_set_afresh_each_iteration_once():
    import jax.numpy as jnp

    namespace: dict = {}
    exec(MASKED, namespace)
    energy = namespace["energy"]
    x = jnp.linspace(0.0, 1.0, 10)
    namespace["sweep"](x, range(4))
    assert energy._cache_size() == 1
    namespace["carried"](x, range(4))
    assert energy._cache_size() == 2  # the first iteration's mask (`x > 0.0`) is a new shape'


RESTARTED = """\
import jax
import jax.numpy as jnp


@jax.jit
def score(tokens):
    return tokens.sum()


def restarted(prompt, steps):
    for t in steps:
        tokens = prompt
        tokens = jnp.concatenate([tokens, jnp.array([t])])
        score(tokens)
        window = prompt
        window = window[1:]
        score(window)
        seen = []
        seen.append(prompt)
        score(jnp.stack(seen))


def growing(prompt, steps):
    tokens, window, seen = prompt, prompt, []
    for t in steps:
        tokens = jnp.concatenate([tokens, jnp.array([t])])
        score(tokens)
        window = window[1:]
        score(window)
        seen.append(prompt)
        score(jnp.stack(seen))
"""


def test_cli_growth_counts_only_what_the_previous_iteration_left(cli, make_files):
    """`tokens = prompt` then one more token: the same length on every iteration."""
    make_files({"m.py": RESTARTED})
    found = cli("check", "--no-cache", "--output-format", "json", "--select", "JAX501", "m.py").json
    assert [(f["location"]["row"], f["message"].split(", which ")[1].split(":")[0]) for f in found] == [
        (27, "grows every iteration"),
        (29, "shrinks every iteration"),
        (31, "is built from `seen`, a list that grows every iteration"),
    ]


@needs_jax
def test_jax_compiles_a_value_restarted_each_iteration_once():
    import jax.numpy as jnp

    namespace: dict = {}
    exec(RESTARTED, namespace)
    score = namespace["score"]
    namespace["restarted"](jnp.arange(5.0), range(3))
    assert score._cache_size() == 3  # one shape per call site, whatever the iteration
    namespace["growing"](jnp.arange(5.0), range(3))
    assert score._cache_size() == 3 + 3 * 2  # at each site, every iteration after the first is a new shape


RATES = """\
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=1)
def scale(x, factor):
    return x * factor


def restarted(x):
    for epoch in range(4):
        lr = 0.1
        lr = lr * 2
        x = scale(x, lr)
    return x


def decayed(x):
    lr = 0.1
    for epoch in range(4):
        lr = lr * 0.5
        x = scale(x, lr)
    return x
"""


def test_cli_a_static_argument_recomputed_from_a_fresh_start_is_one_value(cli, make_files):
    make_files({"m.py": RATES})
    found = cli("check", "--no-cache", "--output-format", "json", "--select", "JAX303", "m.py").json
    assert [f["location"]["row"] for f in found] == [24]


@needs_jax
def test_jax_compiles_a_static_argument_recomputed_from_a_fresh_start_once():
    import jax.numpy as jnp

    namespace: dict = {}
    exec(RATES, namespace)
    scale = namespace["scale"]
    namespace["restarted"](jnp.ones(2))
    assert scale._cache_size() == 1
    namespace["decayed"](jnp.ones(2))
    assert scale._cache_size() == 5


def test_the_loops_around_a_loop_stop_at_its_function():
    module = facts("""
    def f(xs):
        for a in xs:
            while a:
                def g(ys):
                    for b in ys:
                        for c in b:
                            pass
                a = a - 1
        else:
            for d in xs:
                pass
    """)
    by_target = {getattr(loop, "target", None) and loop.target.id: loop for loop in loops(module)}
    names = lambda loop: [getattr(o, "target", None) and o.target.id for o in module.loops.enclosing(loop)]
    assert names(by_target["c"]) == ["b"]
    assert names(by_target["b"]) == []
    assert names(by_target["d"]) == []  # the `else` of a loop runs once, after it
    assert names(by_target[None]) == ["a"]
