"""The control-flow graphs, the fixed-point solver and the value analysis run on them."""

from __future__ import annotations

import ast
import textwrap

import pytest

from jaxlint.analysis.engine import cfg
from jaxlint.analysis.engine.dataflow import Domain, solve
from jaxlint.analysis.module import ModuleFacts
from jaxlint.source import Source


def graph_of(code: str) -> cfg.Graph:
    fn = ast.parse(textwrap.dedent(code)).body[0]
    return cfg.build(fn)


class Assigned(Domain):
    """Test domain: the set of names assigned on some path (join: union)."""

    def copy(self, state):
        return set(state)

    def join(self, a, b):
        return a | b

    def transfer(self, step, state):
        if step.kind == cfg.STMT and isinstance(step.node, ast.Assign):
            state.update(t.id for t in step.node.targets if isinstance(t, ast.Name))
        return state


class Chain(Domain):
    """Test domain whose states never stop growing: `x = x + 1` around a loop counts up."""

    def copy(self, state):
        return state

    def join(self, a, b):
        return max(a, b)

    def transfer(self, step, state):
        return state + 1 if step.kind == cfg.STMT else state


def exit_state(graph: cfg.Graph, domain: Domain, initial):
    solution = solve(graph, domain, initial)
    returns = [b for b in graph.blocks if b.steps and isinstance(b.steps[-1].node, ast.Return)]
    out = set()
    for block in returns:
        state = domain.copy(solution.entry_states[block.index])
        for step in block.steps:
            state = domain.transfer(step, state)
        out |= state
    return out


def test_branches_join_and_loops_reach_the_back_edge():
    graph = graph_of("""
    def f(n):
        if n:
            a = 1
        else:
            b = 2
        for i in range(n):
            if i:
                break
            c = 3
        else:
            d = 4
        while n:
            e = 5
            continue
        return 0
    """)
    assert exit_state(graph, Assigned(), set()) == {"a", "b", "c", "d", "e"}


def test_code_after_return_and_pruned_branches_are_unreachable():
    graph = graph_of("""
    def f(n):
        return 0
        a = 1
    """)
    reachable = {block.index for block in graph.order()}
    dead = [b for b in graph.blocks if any(isinstance(s.node, ast.Assign) for s in b.steps)]
    assert dead and all(b.index not in reachable for b in dead)


def test_try_handlers_see_what_the_body_assigned_before_raising():
    graph = graph_of("""
    def f(n):
        try:
            a = 1
            g(a)
            b = 2
        except ValueError as err:
            return 0
        finally:
            c = 3
        return 1
    """)
    assert exit_state(graph, Assigned(), set()) >= {"a", "b"}


def test_a_domain_that_never_settles_is_cut_short_and_says_so():
    graph = graph_of("""
    def f(x):
        while x:
            x = x + 1
        return x
    """)
    solution = solve(graph, Chain(), 0, max_visits=10)
    assert not solution.converged


@pytest.mark.parametrize("depth", [5, 10, 20, 50])
def test_nested_loops_cost_linear_solver_visits(depth):
    """Each loop of a nest is revisited a bounded number of times, not 2**depth."""
    lines = ["def f(x):", "    y = 0"]
    indent = "    "
    for i in range(depth):
        lines.append(f"{indent}for i{i} in range(2):")
        indent += "    "
    lines.append(f"{indent}y = y + x")
    lines.append("    return y")
    graph = graph_of("\n".join(lines))
    solution = solve(graph, Assigned(), set())
    assert solution.converged
    assert solution.visits <= 4 * len(graph.blocks)


def test_the_builder_takes_a_500_branch_elif_chain_without_recursing():
    lines = ["def f(n):", "    if n == 0:", "        y = 0"]
    for i in range(1, 500):
        lines += [f"    elif n == {i}:", f"        y = {i}"]
    lines.append("    return y")
    graph = graph_of("\n".join(lines))
    assert solve(graph, Assigned(), set()).converged


def module_facts(code: str) -> ModuleFacts:
    return ModuleFacts(Source.parse(textwrap.dedent(code)))


def test_values_rotated_through_a_loop_reach_their_fixed_point():
    m = module_facts("""
    import jax

    @jax.jit
    def f(x):
        a = b = c = 0.0
        for _ in range(3):
            a, b, c = b, c, x
        if a > 0:
            x = -x
        return x
    """)
    test = next(n for n in ast.walk(m.tree) if isinstance(n, ast.If)).test
    assert m.is_abstract(test)


def test_a_static_none_test_prunes_the_branch_not_taken():
    m = module_facts("""
    import jax

    def g(x, m=None):
        if m is None:
            m = int(x)
        else:
            m = m + 1
        return x

    @jax.jit
    def f(x):
        return g(x, 3)
    """)
    calls = [n for n in ast.walk(m.tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "int"]
    assert m.value(calls[0]) is None  # never evaluated: m is 3 here
    plus = next(n for n in ast.walk(m.tree) if isinstance(n, ast.BinOp))
    assert m.value(plus) is not None


# ---- through the command line ----------------------------------------------------------------
ENGINE_CASE = """
import jax

@jax.jit
def f(x):
    a = b = c = 0.0
    for _ in range(3):
        a, b, c = b, c, x   # a is traced from the third iteration on
    if a > 0:
        x = -x
    return x
"""


def findings(cli, make_files, files):
    make_files(files)
    result = cli("check", "--no-cache", "--output-format", "json", ".")
    return sorted((f["code"], f["location"]["row"]) for f in result.json)


def test_cli_reports_a_value_traced_only_after_several_iterations(cli, make_files):
    assert findings(cli, make_files, {"m.py": ENGINE_CASE}) == [("JAX101", 9)]


def _nest(depth: int) -> str:
    lines = ["import jax", "", "@jax.jit", "def f(x):", "    y = 0"]
    indent = "    "
    for i in range(depth):
        lines.append(f"{indent}for i{i} in range(2):")
        indent += "    "
    lines.append(f"{indent}y = y + x")
    lines += ["    if y > 0:", "        y = 1", "    return y", ""]
    return "\n".join(lines)


def test_cli_analyses_a_nest_of_50_loops(cli, make_files):
    codes = findings(cli, make_files, {"m.py": _nest(50)})
    assert ("JAX101", 57) in codes


def test_cli_analyses_constructs_past_old_depth_limits(cli, make_files):
    elif_chain = ["import jax", "", "@jax.jit", "def g(x, n):", "    if n == 0:", "        y = 0"]
    for i in range(1, 500):
        elif_chain += [f"    elif n == {i}:", f"        y = {i}"]
    elif_chain += ["    if x > 0:", "        y = 1", "    return y", ""]
    long_sum = "import jax\n\n@jax.jit\ndef g(x):\n    y = " + " + ".join(["x"] * 500) + "\n    if y > 0:\n        y = 1\n    return y\n"
    helpers = ["import jax", "", "def h8(x):", "    if x > 0:", "        return x", "    return -x", ""]
    for i in range(7, 0, -1):
        helpers += [f"def h{i}(x):", f"    return h{i + 1}(x) + 1", ""]
    helpers += ["@jax.jit", "def f(x):", "    return h1(x)", ""]
    result = findings(cli, make_files, {
        "elif_chain.py": "\n".join(elif_chain), "long_sum.py": long_sum, "helpers.py": "\n".join(helpers),
    })
    assert ("JAX001", 1) not in result
    assert ("JAX101", 1005) in result  # elif_chain.py: the traced `if x > 0` after the chain
    assert ("JAX101", 6) in result  # long_sum.py
    assert ("JAX101", 4) in result  # helpers.py: eight calls down


CALLABLE_INSTANCE = """
import jax
from jax import lax

class Cell:
    def __init__(self, w):
        self.w = w

    def __call__(self, h, x):
        if h > 0:
            h = -h
        print("carry", h)
        return h * self.w + x, h

cell = Cell(2.0)

def run(h0, xs):
    return lax.scan(cell, h0, xs)

class Step:
    def __call__(self, x):
        if x > 1:
            return x
        return -x

@jax.jit
def g(x):
    s = Step()
    return s(x)
"""


def test_cli_one_answer_for_an_instance_whose_call_is_traced(cli, make_files):
    """The value facts (JAX101) and the purity facts (the print) agree that `__call__` is traced."""
    result = findings(cli, make_files, {"m.py": CALLABLE_INSTANCE})
    assert ("JAX101", 10) in result and ("JAX101", 22) in result
    assert any(code.startswith("JAX4") and row == 12 for code, row in result)


def test_cli_a_method_receiver_is_its_first_parameter_whatever_its_name(cli, make_files):
    """Naming the instance `this` instead of `self` changes nothing."""
    code = """
    from jax import lax

    class Model:
        def step(this, c, x):
            if c > 0:
                c = -c
            return c, x

        def run(this, xs):
            return lax.scan(this.step, 0.0, xs)
    """
    plain = findings(cli, make_files, {"m.py": textwrap.dedent(code).replace("this", "self")})
    assert plain == findings(cli, make_files, {"m.py": textwrap.dedent(code)}) == [("JAX101", 6)]


def test_bindings_share_a_base_and_join_by_their_changes():
    from jaxlint.analysis.engine.bindings import Bindings
    from jaxlint.analysis.engine.lattice import STATIC, TRACED, UNKNOWN

    start = Bindings({"a": STATIC, "b": STATIC, "gone": STATIC})
    left, right = start.copy(), start.copy()
    left["a"] = TRACED
    right["c"] = UNKNOWN
    right.pop("gone")
    joined = left.join(right)
    assert joined.base is start.base
    assert dict(joined.items()) == {"a": TRACED, "b": STATIC, "c": UNKNOWN, "gone": STATIC}
    assert joined == Bindings(dict(joined.items()))
    assert right.get("gone") is None and "gone" not in dict(right.items())
    many = start.copy()
    for i in range(200):
        many[f"v{i}"] = STATIC
    folded = many.copy()  # past the threshold: the changes become the new, shared base
    assert folded.base is many.base and not many.own and folded.get("v199") is STATIC


def test_cli_a_long_function_with_many_branches_keeps_every_finding(cli, make_files):
    lines = ["import jax", "", "@jax.jit", "def f(x):"]
    for i in range(3000):
        if i % 10 == 9:
            lines += [f"    if a{i - 1} > 0:", "        x = x + 1"]
        else:
            lines.append(f"    a{i} = x + {i}")
    lines.append("    return x")
    result = findings(cli, make_files, {"m.py": "\n".join(lines) + "\n"})
    assert len(result) == 300 and {code for code, _ in result} == {"JAX101"}


def test_structure_that_grows_around_a_loop_is_widened_to_a_fixed_point():
    m = module_facts("""
    import jax

    @jax.jit
    def f(x):
        acc = ()
        for i in range(10):
            acc = (acc, x)
            while acc:
                acc = (acc,)
        return acc
    """)
    assert m.analysis.unconverged == [] and m.analysis.functions


# ---- what the graph records for domains that follow loops ----------------------------------------
def test_blocks_know_their_loop_the_loop_they_head_and_where_paths_meet():
    graph = graph_of("""
    def f(xs, c):
        for x in xs:
            while c:
                c = c - 1
            if x:
                y = 1
            else:
                y = 2
        return y
    """)
    fn_for = next(b.steps[0].node for b in graph.blocks if b.steps and b.steps[0].kind == cfg.TARGET)
    fn_while = fn_for.body[0]
    heads = {b.heads for b in graph.blocks if b.heads is not None}
    assert heads == {fn_for, fn_while}
    body_of_while = next(b for b in graph.blocks if b.steps and b.steps[0].node is fn_while.body[0])
    assert body_of_while.loop is fn_while
    ret = next(b for b in graph.blocks if b.steps and isinstance(b.steps[-1].node, ast.Return))
    assert ret.loop is None
    assert any(isinstance(b.meets, ast.If) and b.loop is fn_for for b in graph.blocks)


class Iterations(Domain):
    """Test domain: how many times the path went round the loop (capped), counted on back edges."""

    def copy(self, state):
        return set(state)

    def join(self, a, b):
        return a | b

    def transfer(self, step, state):
        return state

    def follow(self, source, edge, state):
        if edge.target.heads is not None and source.loop is edge.target.heads:
            return {min(n + 1, 3) for n in state}
        return state

    def join_at(self, block, a, b):
        self.meets.append(block.meets)
        return a | b

    meets: list = []


def test_a_domain_refines_edges_and_joins_where_paths_meet():
    graph = graph_of("""
    def f(xs):
        for x in xs:
            y = x
        return y
    """)
    domain = Iterations()
    domain.meets = []
    solution = solve(graph, domain, {0})
    ret = next(b for b in graph.blocks if b.steps and isinstance(b.steps[-1].node, ast.Return))
    assert solution.entry_states[ret.index] == {0, 1, 2, 3}
    assert domain.meets  # the loop head joined the entry with the back edge


def test_values_differing_in_any_one_field_are_unequal():
    """Value's hand-written equality must compare every field the dataclass declares."""
    import dataclasses

    from jaxlint.analysis.engine.lattice import STATIC, TRACED_ARRAY, FunctionValue, Record, Trace, Value

    base = Value(Trace.STATIC)
    other = {
        "trace": Trace.TRACED, "array": True, "boolean": True, "items": (STATIC,), "element": STATIC,
        "function": FunctionValue(ast.parse("lambda: 0").body[0].value), "known": (1,), "fields": True,
        "ref": True, "not_none": True, "record": Record(ast.parse("class C: pass").body[0], ("a",), (TRACED_ARRAY,)),
        "made_here": True, "entries": (("k", STATIC),), "unless_none": TRACED_ARRAY,
    }
    assert {f.name for f in dataclasses.fields(Value)} == set(other)
    for name, value in other.items():
        changed = dataclasses.replace(base, **{name: value})
        assert changed != base and base != changed, name
        assert changed == dataclasses.replace(base, **{name: value}) and hash(changed) == hash(changed.but())
