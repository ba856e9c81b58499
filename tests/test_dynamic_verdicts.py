"""A `--dynamic` verdict is never stronger than what was observed.

- `not-reproduced` for a key reuse only where JAX's key-reuse checker checked every key the line
  used: typed keys, used outside a trace or in a jit trace that finished and was checked; never for
  legacy uint32 keys, for `fold_in` (it does not consume its key), or in a trace that stopped;
- a finding traced from another module is probed through the entry point its message names;
- recompilation verdicts come from JAX's compile events: confirmed when the count grows with the
  calls (in probe mode too), not-reproduced only when the program's own run called the function
  often enough to show it;
- an upgrade finding's name is looked up in the installed JAX.

The last part checks the judges on made-up observations (property tests): they need no JAX.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynamic_expect import expectations
from jaxlint.dynamic.claims import api_named, traced_via
from jaxlint.dynamic.judge import CONFIRMED, INCONCLUSIVE, MIN_RECOMPILES, NOT_REPRODUCED, UNROLL, Target, \
    compile_counts, judge
from jaxlint.dynamic.locate import Source
from jaxlint.dynamic.recorder import Compile, Recorder
from jaxlint.dynamic.runs import Failure, Run

needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")


def _verdicts(out) -> dict:
    return {(f["filename"].rsplit("/", 1)[-1], f["code"], f["location"]["row"]): f["confirmation"]
            for f in json.loads(out.stdout)}


# -- a project whose helper is traced from another module -----------------------------------------

PROJECT = {
    "pyproject.toml": "[project]\nname = 'proj'\nversion = '0.1'\n",
    "src/proj/__init__.py": "",
    "src/proj/helpers.py": """
        import jax
        import jax.numpy as jnp


        def noisy(key, x):
            a = jax.random.normal(key, x.shape)
            b = jax.random.bernoulli(key, 0.5, x.shape)
            return x + a * b


        def clip(g, limit):
            n = jnp.linalg.norm(g)
            if n > limit:
                return g * limit / n
            return g
    """,
    "src/proj/step.py": """
        import jax

        from proj.helpers import clip, noisy


        @jax.jit
        def step(key, x):
            return clip(noisy(key, x), 1.0)
    """,
    "src/proj/loop.py": """
        import jax

        out = []


        def run5(x):
            for i in range(5):
                f = jax.jit(lambda y: y + 1.0)
                out.append(f(x))
            return out
    """,
    "tests/test_step.py": """
        import jax
        import jax.numpy as jnp

        from proj.step import step


        def test_step():
            step(jax.random.PRNGKey(0), jnp.ones(3))
    """,
}


@pytest.fixture
def project(make_files):
    make_files({name: textwrap.dedent(text).lstrip() for name, text in PROJECT.items()})


@needs_jax
def test_probe_mode_goes_through_the_named_entry_point_and_counts_compilations(cli, project):
    out = cli("check", "--no-cache", "--output-format", "json", "--dynamic", "src")
    found = _verdicts(out)
    clip = found[("helpers.py", "JAX101", 13)]  # "traced via `proj.step.step`": probed alone, it never traces
    assert clip["status"] == "confirmed", clip
    assert "TracerBoolConversionError at line 13" in clip["detail"] and "proj.step.step()" in clip["detail"]
    rebuilt = found[("loop.py", "JAX502", 8)]
    assert rebuilt["status"] == "confirmed", rebuilt
    assert "JAX compiled <lambda> 10 times in 10 calls from line 9" in rebuilt["detail"]
    assert found[("helpers.py", "JAX201", 7)]["status"] != "not-reproduced"


@needs_jax
def test_under_the_tests_a_reuse_in_a_trace_that_stopped_is_not_called_not_reproduced(cli, project):
    out = cli("check", "--no-cache", "--output-format", "json", "--dynamic", "--driver", "pytest", "src",
              "--", "-p", "no:cacheprovider", "tests")
    found = _verdicts(out)
    reuse = found[("helpers.py", "JAX201", 7)]  # step's trace stops at clip before JAX checks its keys
    assert reuse["status"] == "inconclusive", reuse
    assert "never checked" in reuse["detail"] and "TracerBoolConversionError at line 13" in reuse["detail"]
    assert found[("helpers.py", "JAX101", 13)]["status"] == "confirmed"
    assert found[("loop.py", "JAX502", 8)]["status"] != "not-reproduced"


# -- what JAX's key-reuse checker can see, under the tests ---------------------------------------

KEYS = '''
    import jax
    import jax.numpy as jnp


    def noisy(key, x):
        a = jax.random.normal(key, x.shape)
        b = jax.random.bernoulli(key, 0.5, x.shape)  # expect: JAX201 inconclusive legacy uint32
        return x + a * b


    @jax.jit
    def step(key, x):
        return noisy(key, x)


    def jitter(key, x):
        return x * jax.random.uniform(key) + jax.random.normal(key, x.shape)  # expect: JAX201 confirmed KeyReuseError


    step_typed = jax.jit(jitter)


    @jax.jit
    def step_fails(key, x):
        y = x * jax.random.uniform(key)
        y = y + jax.random.normal(key, x.shape)  # expect: JAX201 inconclusive never checked
        if y.sum() > 0:
            return y
        return -y


    def fresh(key, x):
        key, sub = jax.random.split(key)
        return x + jax.random.normal(sub, x.shape), key  # expect: JAX201 not-reproduced PRNGKey made typed keys


    @jax.jit
    def step_fresh(key, x):
        return fresh(key, x)


    def fold_after_split(key, x):
        sub, _ = jax.random.split(key)
        other = jax.random.fold_in(key, 1)  # expect: JAX202 inconclusive jax.random.fold_in
        return x + jax.random.normal(sub, x.shape) + jax.random.normal(other, x.shape)


    class Schedule:
        def __init__(self, key):
            self.key = key

        def advance(self):
            self.key, sub = jax.random.split(self.key)
            return sub


    def noise_from(schedule: Schedule, x):
        return x + jax.random.normal(schedule.key, x.shape)  # expect: JAX203 inconclusive first used
'''

KEY_TESTS = '''
    import jax
    import jax.numpy as jnp

    import keys_lib as lib

    X = jnp.ones(3)


    def test_a_raw_uint32_key_through_a_jitted_caller():
        lib.step(jnp.zeros(2, jnp.uint32), X)


    def test_a_typed_key_through_a_jitted_caller():
        lib.step_typed(jax.random.key(0), X)


    def test_a_trace_that_stops_before_its_check():
        lib.step_fails(jax.random.key(0), X)


    def test_a_legacy_key_made_typed_in_a_checked_trace():
        lib.step_fresh(jax.random.PRNGKey(0), X)


    def test_fold_in():
        lib.fold_after_split(jax.random.key(0), X)


    def test_a_stream_drawn_from_and_left_in_place():
        schedule = lib.Schedule(jax.random.key(0))
        lib.noise_from(schedule, X)
        schedule.advance()  # JAX's checker raises here, at the key's second use
'''


def _drive(tmp_path, name: str, text: str, tests: str):
    from jaxlint.dynamic.driver import drive, pytest_driver

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    (tmp_path / f"test_{name}").write_text(textwrap.dedent(tests).lstrip())
    expected = expectations(path)
    findings = [f for f, _, _ in expected]
    out = drive(findings, [str(path)], [pytest_driver(["-p", "no:cacheprovider", f"test_{name}"])],
                root=str(tmp_path), backend="cpu", timeout=300, show_progress=False)
    return [(e, f.confirmation) for e, f in zip(expected, out)]


@needs_jax
def test_key_verdicts_under_the_tests_say_what_the_checker_saw(tmp_path):
    for (finding, status, words), got in _drive(tmp_path, "keys_lib.py", KEYS, KEY_TESTS):
        assert got["status"] == status, (finding.start.row, got["detail"])
        for word in words:
            assert word in got["detail"], (finding.start.row, got["detail"])


# -- recompilation, one program per way users meet it ---------------------------------------------

RECOMPILES = '''
    from functools import partial

    import equinox as eqx
    import jax
    import jax.numpy as jnp
    from jax.tree_util import Partial


    def evaluate(params, x):
        f = jax.jit(lambda p, v: (p * v).sum())  # expect: JAX502 confirmed compiled <lambda>
        return f(params, x)


    def train(params, x):
        for _ in range(4):
            evaluate(params, x)


    def make_scorer():
        return jax.jit(lambda v: (v ** 2).sum())  # expect: JAX502 not-reproduced once in 5 calls


    def serve(x):
        scorer = make_scorer()
        for _ in range(5):
            scorer(x)


    @jax.jit
    def score(v):
        return (v ** 2).sum()


    def sweep_sizes():
        out = []
        for n in range(2, 8):
            out.append(score(jnp.ones(n)))  # expect: JAX501 confirmed compiled score
        return out


    def batches(x):
        out = []
        for start in range(0, 17, 8):
            out.append(score(x[start:start + 8]))  # expect: JAX501 not-reproduced 2 times in 3 calls
        return out


    @partial(jax.jit, static_argnames=("n",))
    def power(x, n):
        return x ** n


    def ladder(x):
        for n in range(1, 6):
            x = power(x, n=n)  # expect: JAX303 confirmed compiled power 5 times
        return x


    @partial(jax.jit, static_argnums=(1,))
    def rollout(x, steps):
        for _ in range(steps):  # expect: JAX503 confirmed compiled rollout 4 times in 4 calls
            x = jnp.tanh(x)
        return x


    def horizons(x):
        for steps in (1, 2, 4, 8):
            x = rollout(x, steps)
        return x


    class Model(eqx.Module):
        step: int
        w: jax.Array


    @eqx.filter_jit
    def update(model, x):
        return Model(step=model.step + 1, w=model.w * x)  # expect: JAX504 confirmed compiled update 4 times


    @eqx.filter_jit
    def refresh(model, x):
        return Model(step=model.step, w=model.w * x)  # expect: JAX504 not-reproduced once in 4 calls


    def fit(model, x):
        kept = model
        for _ in range(4):
            model = update(model, x)
            kept = refresh(kept, x)
        return model, kept


    @jax.jit
    def scaled(x, scale):
        return x * scale


    def both_ways(x):
        a = scaled(x, 2.0)
        times_two = Partial(scaled, scale=2.0)  # expect: JAX505 confirmed `scale` keyword | `scaled` gets `scale` by keyword here and by position on line 101
        return a, times_two(x)


    @jax.jit
    def accumulate(total, x):
        return total + x.sum()


    def add_up(xs):
        total = 0.0
        for x in xs:
            total = accumulate(total, x)  # expect: JAX505 confirmed weakly typed | `total` starts as the Python number `0.0` (line 112) and comes back from `accumulate` as an array
        return total


    def add_up_arrays(xs):
        total = jnp.zeros(())
        for x in xs:
            total = accumulate(total, x)  # expect: JAX505 not-reproduced came back as an array | `total` starts as the Python number `0.0` (line 119) and comes back from `accumulate` as an array
        return total


    def main():
        x = jnp.ones(3)
        train(x, x)
        serve(x)
        sweep_sizes()
        batches(jnp.ones(17))  # the last batch is smaller
        ladder(x)
        horizons(x)
        fit(Model(0, x), 2.0)
        both_ways(x)
        add_up([x, x, x])
        add_up_arrays([x, x, x])


    if __name__ == "__main__":
        main()
'''

RECOMPILE_TESTS = '''
    import jax.numpy as jnp

    import recompiles_lib as lib


    def test_program():
        lib.main()
'''


@needs_jax
def test_recompilations_are_counted_in_probe_mode(tmp_path):
    from jaxlint.dynamic import confirm

    path = tmp_path / "recompiles_lib.py"
    path.write_text(textwrap.dedent(RECOMPILES).lstrip())
    expected = expectations(path)
    out = confirm([f for f, _, _ in expected], backend="cpu", timeout=120, settings={}, show_progress=False)
    for (finding, status, words), got in zip(expected, (f.confirmation for f in out)):
        assert got["status"] == status, (finding.start.row, got["detail"])
        for word in words:
            assert word in got["detail"], (finding.start.row, got["detail"])
    confirmed = [f.confirmation["detail"] for f in out if f.confirmation["status"] == "confirmed"]
    assert any("with synthesized arguments" in d for d in confirmed)  # probes confirm, not only main()


@needs_jax
def test_recompilations_are_counted_under_the_tests(tmp_path):
    for (finding, status, words), got in _drive(tmp_path, "recompiles_lib.py", RECOMPILES, RECOMPILE_TESTS):
        assert got["status"] == status, (finding.start.row, got["detail"])
        assert "running test" in got["detail"], got["detail"]


@needs_jax
def test_a_module_that_does_not_import_names_the_missing_module(tmp_path):
    from jaxlint.dynamic import confirm

    path = tmp_path / "needs.py"
    path.write_text("import jax\nimport not_installed_anywhere\n\n\ndef run(x):\n"
                    "    f = jax.jit(lambda y: y + 1)  # expect: JAX502 inconclusive\n    return f(x)\n")
    [(finding, _, _)] = expectations(path)
    [out] = confirm([finding], backend="cpu", timeout=60, settings={}, show_progress=False)
    assert out.confirmation["status"] == "inconclusive"
    assert "No module named 'not_installed_anywhere'" in out.confirmation["detail"], out.confirmation["detail"]


# -- upgrade findings: the name, looked up in the installed JAX ----------------------------------

@needs_jax
@pytest.mark.parametrize("name, status, words", [
    ("jax.tree_map", "confirmed", "does not resolve"),  # removed in 0.6.0
    ("jax.experimental.maps.Mesh", "confirmed", "does not resolve"),  # a removed module
    ("jax.tree.map", "not-reproduced", "without a warning"),
    ("jax.numpy.zeros", "not-reproduced", "without a warning"),
])
def test_a_name_is_looked_up_in_the_installed_jax(name, status, words):
    from jaxlint.dynamic.names import resolve

    got = resolve(name)
    assert got["status"] == status and words in got["detail"], got


@needs_jax
def test_a_name_that_warns_is_confirmed():
    """Looked up in a fresh interpreter: JAX warns of a deprecated name once per process."""
    import jax

    from jaxlint.dynamic.names import _run
    from jaxlint.dynamic.runner import worker_env

    if jax.__version_info__ < (0, 8, 2):
        pytest.skip("this JAX does not deprecate pxla.thread_resources yet")
    name = "jax.interpreters.pxla.thread_resources"
    got, failure = _run([name], 120, worker_env("cpu"))
    assert failure is None and got[name]["status"] == "confirmed", (got, failure)
    assert "warns" in got[name]["detail"] or "does not resolve" in got[name]["detail"]


@needs_jax
def test_a_lookup_that_needs_a_missing_dependency_is_inconclusive():
    from jaxlint.dynamic.names import resolve

    if importlib.util.find_spec("tensorflow") is not None:
        pytest.skip("tensorflow is installed")
    got = resolve("jax.experimental.jax2tf")
    assert got["status"] == "inconclusive" and "tensorflow" in got["detail"], got


@needs_jax
def test_upgrade_findings_are_checked_with_and_without_the_probes(cli, make_files):
    make_files({"pyproject.toml": "[project]\nname = 'old'\ndependencies = ['jax>=0.4.30']\n",
                "old.py": "import jax\n\n\ndef leaves(tree):\n    return jax.tree_leaves(tree)\n",
                "test_old.py": "def test_nothing():\n    pass\n"})
    for how in (["--dynamic"], ["--dynamic", "--driver", "pytest"]):
        out = cli("check", "--no-cache", "--output-format", "json", *how, "old.py")
        (finding,) = json.loads(out.stdout)
        assert finding["code"] == "JAX601"
        assert finding["confirmation"]["status"] == "confirmed", finding["confirmation"]
        assert "`jax.tree_leaves` does not resolve in the installed JAX" in finding["confirmation"]["detail"]


# -- what findings carry, read back from the linter's own messages --------------------------------

def test_the_entry_point_and_the_api_are_read_from_the_linters_messages(cli, project, make_files):
    make_files({"src/proj/old.py": "import jax\n\n\ndef leaves(tree):\n    return jax.tree_leaves(tree)\n"})
    findings = json.loads(cli("check", "--no-cache", "--output-format", "json", "src").stdout)
    by_code = {(f["filename"].rsplit("/", 1)[-1], f["code"]): f["message"] for f in findings}
    assert traced_via(by_code[("helpers.py", "JAX101")]) == "proj.step.step"
    assert traced_via(by_code[("loop.py", "JAX502")]) is None
    assert api_named(by_code[("old.py", "JAX601")]) == "jax.tree_leaves"


# -- the judges, on made-up observations ----------------------------------------------------------

OBSERVED = '''
def step(x, key):
    for i in range(9):
        y = helper(x, key)
    return y


def helper(x, key):
    if x > 0:
        return x
    return -x
'''
LOOP, CALL, IF = 2, 3, 8  # a loop header, a call, an `if`
ROWS = (LOOP, CALL, 4, IF, 9)


class _Clean:
    """Stands in for the recorder's "no trace in progress" question (and tells whether a trace
    gives the code abstract values, which the observations below set line by line)."""

    exact = True

    def __call__(self, frame):
        return True

    def abstract(self):
        return False


@pytest.fixture(scope="module")
def observed_source(tmp_path_factory):
    path = tmp_path_factory.mktemp("observed") / "observed.py"
    path.write_text(OBSERVED)
    return Source.parse(str(path))


CODE = compile("pass", "<site>", "exec")
sites = st.sampled_from([None, *((CODE, row) for row in ROWS)])
counts = st.dictionaries(st.sampled_from(ROWS), st.integers(0, 120), max_size=4)
row_notes = st.dictionaries(st.sampled_from(ROWS), st.sampled_from(["a BatchTracer in a Env", "a Env"]), max_size=2)
# JAX's explanations of cache misses, one of each kind the judges read
REASONS = [
    None,
    "for step defined at x.py:1\n  different input types:\n  * at x, now f32[3] and before f32[2]",
    "for step defined at x.py:1\n  different input types:\n  * at t, now f32[]{weak_type=False} and before "
    "f32[]{weak_type=True}",
    "for step defined at x.py:1\n  different input pytree:\n  * at input path [1], now <class 'dict'> with 1 child "
    "and before <class 'dict'> with 0 child, with the symmetric difference of key sets: {'scale'}",
]


@st.composite
def observations(draw, source: Source):
    """A recorder as a run might leave it: lines run (some traced, in trace sessions), compilations,
    key uses; and how the run ended."""
    rec = Recorder(source.path, _Clean(), {"step", "helper", "<lambda>"})
    rec.lines.update(draw(counts))
    for row, n in draw(counts).items():
        rec.traced[row] = min(n, rec.lines[row])
    if draw(st.booleans()):
        for row, n in draw(counts).items():
            rec.abstract[row] = min(n, rec.traced[row])
    else:
        rec.abstract = None  # a JAX that does not tell
    for kind in ("io", "rng", "staged"):
        rec.effects[kind].update(draw(counts))
    rec.writes.leaked.update(draw(row_notes))
    rec.writes.outlived.update(draw(row_notes))
    rec.writes.unseen.update(draw(row_notes))
    rec.writes.inside.update(draw(counts))
    for row in draw(st.lists(st.sampled_from(ROWS), max_size=3)):
        rec.writes.channels[row].add(draw(st.sampled_from(["heard", "unheard"])))
    sessions = draw(st.integers(1, 4))
    for s in range(1, sessions + 1):
        rec.session_site[s] = draw(sites)
        rec.session_root[s] = draw(st.sampled_from([("step", 1), ("helper", 7), ("other", 20)]))
    for row in rec.traced:
        if rec.traced[row]:
            rec.sessions[row] = set(draw(st.lists(st.integers(1, sessions), min_size=1, max_size=sessions)))
    for site, n in draw(st.dictionaries(sites, st.integers(0, 12), max_size=3)).items():
        if site is not None:
            rec.code_lines[site] = n
    for _ in range(draw(st.integers(0, 12))):
        site = draw(sites)
        stack = (site,) if site else ()
        rec.compiled.append(Compile(draw(st.sampled_from(["step", "helper", "add", None])), site, stack,
                                    tuple(draw(st.lists(st.integers(1, sessions), max_size=2))),
                                    draw(st.sampled_from(REASONS))))
    for kind in ("typed", "checked", "legacy"):
        rec.key_uses[kind].update(draw(counts))
    for row in draw(st.lists(st.sampled_from(ROWS), max_size=2)):
        rec.unchecked_uses[row].add("fold_in")
    rec.routing = draw(st.booleans())
    failure = None
    if draw(st.booleans()):
        kind = draw(st.sampled_from([("TracerBoolConversionError", "ConcretizationTypeError"), ("ValueError",),
                                     ("RuntimeError",)]))
        rows = draw(st.lists(st.sampled_from(ROWS), min_size=1, max_size=3))
        failure = Failure(kind[0], (*kind, "Exception"), "it failed", "it failed",
                          [(row, sys._getframe()) for row in rows], [])
    run = Run("running it", faithful=draw(st.booleans()), rec=rec, failure=failure, backend="cpu",
              calls=draw(st.integers(0, 3)))
    return run


def _target(source: Source, code: str, row: int, signature: dict | None = None) -> Target:
    return Target.of(source, {"code": code, "row": row, "signature": signature})


def _most(counter, span) -> int:
    return max((counter.get(row, 0) for row in span), default=0)


def _judged(source: Source, data, codes: list[str]):
    """A made-up run, a finding of one of `codes` on one of the rows, and the judges' verdict."""
    run = data.draw(observations(source))
    signature = data.draw(st.sampled_from([None, {"keyword": "scale"}, {"carry_start": LOOP}]))
    t = _target(source, data.draw(st.sampled_from(codes)), data.draw(st.sampled_from(ROWS)), signature)
    return run, t, judge(t, run)


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_key_reuse_is_not_reproduced_only_where_the_checker_checked_every_key(observed_source, data):
    run, t, verdict = _judged(observed_source, data, ["JAX201"])
    uses = run.rec.key_uses
    if verdict.status == NOT_REPRODUCED:
        assert not _most(uses["legacy"], t.span), verdict.detail
        assert not any(run.rec.unchecked_uses.get(row) for row in t.span), verdict.detail
        assert _most(uses["typed"], t.span), verdict.detail
        assert all(uses["typed"].get(row, 0) <= uses["checked"].get(row, 0) for row in t.span), verdict.detail
    if verdict.status == CONFIRMED:
        assert "KeyReuseError" in verdict.detail or "same PRNG key" in verdict.detail or \
            "constant seed" in verdict.detail, verdict.detail


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_recompilation_is_judged_only_by_the_compile_counts_and_unrolling_seen(observed_source, data):
    run, t, verdict = _judged(observed_source, data, ["JAX501", "JAX502", "JAX503", "JAX504", "JAX505"])
    seen = compile_counts(t, run)
    sessions = set().union(*(run.rec.sessions.get(row, set()) for row in t.span))
    per_trace = _most(run.rec.traced, t.span) // len(sessions) if sessions else 0
    assert "nothing recompiled" not in verdict.detail
    if verdict.status == CONFIRMED:  # a signature change is the bug however few compilations it costs
        explained = t.code == "JAX505" and any(c.reasons for c in seen)
        assert any(c.grew for c in seen) or per_trace >= UNROLL or explained, verdict.detail
    if verdict.status == NOT_REPRODUCED:
        assert run.faithful, verdict.detail  # synthesized arguments need not vary as the program's do
        looked = any(c.calls >= MIN_RECOMPILES for c in seen) or _most(run.rec.lines, t.span) >= MIN_RECOMPILES
        assert looked and not any(c.grew for c in seen), verdict.detail


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_traced_value_finding_is_judged_by_the_error_or_the_trace_seen(observed_source, data):
    run, t, verdict = _judged(observed_source, data, ["JAX101"])
    f = run.failure
    if verdict.status == CONFIRMED:
        assert f is not None and "Tracer" in f.type and f.line in t.span, verdict.detail
    if verdict.status == NOT_REPRODUCED:  # never from a run outside a trace, or under jax.grad alone
        assert run.rec.abstract and _most(run.rec.abstract, t.span), verdict.detail
        assert not (f and any(row in t.span for row, _ in f.frames)), verdict.detail


EVERY_KIND = [f"JAX{n}" for n in (101, 102, 104, 105, 107, 108, 110, 201, 202, 203, 204, 205, 206, 301, 302, 303, 304,
                                  305, 306, 309, 310, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 501, 502, 503,
                                  504, 505)]


def _where_the_bug_shows(t: Target, run: Run) -> bool:
    """Whether the run saw the finding's line run where its bug would have shown, with a check that
    could have seen it go wrong: what every not-reproduced must rest on."""
    rec, span = run.rec, t.span
    finished = not (run.failure and any(row in span for row, _ in run.failure.frames))
    if t.category == 1:  # values abstract: a trace of jit, scan, vmap..., not jax.grad alone
        return bool(rec.abstract and _most(rec.abstract, span)) and finished
    if t.code in ("JAX201", "JAX202", "JAX203", "JAX206"):  # every key used checked by JAX's checker
        uses = rec.key_uses
        return bool(_most(uses["typed"], span)) and not _most(uses["legacy"], span) and finished \
            and not any(rec.unchecked_uses.get(row) for row in span) \
            and all(uses["typed"].get(row, 0) <= uses["checked"].get(row, 0) for row in span)
    if t.code in ("JAX204", "JAX205"):  # a draw seen while tracing, on every call
        return bool(_most(rec.traced, span) and _most(rec.effects["rng"], span))
    if t.code in ("JAX401", "JAX402"):  # item assignment raises wherever it runs
        return bool(_most(rec.lines, span)) and finished
    if t.code in ("JAX404", "JAX405"):  # output where the check listens
        heard = set().union(*(rec.writes.channels.get(row, set()) for row in span))
        return bool(_most(rec.traced, span)) and heard == {"heard"}
    if t.code in ("JAX406", "JAX407"):  # writes followed until the trace was over
        followed = any(row in rec.writes.outlived for row in span) or _most(rec.writes.inside, span)
        return bool(_most(rec.traced, span) and followed) and not any(
            row in rec.writes.unseen or row in rec.writes.leaked for row in span)
    if t.code == "JAX303" or t.category == 5:  # the program's own calls, enough of them, compiled
        seen = compile_counts(t, run)
        enough = any(c.calls >= MIN_RECOMPILES for c in seen) or _most(rec.lines, span) >= MIN_RECOMPILES
        if t.code == "JAX505":  # a carry seen started and coming back, compiled once at most
            start = (t.signature or {}).get("carry_start")
            enough = start is not None and sum(c.compiles for c in seen) <= 1 and _most(rec.lines, span) >= 2 \
                and _most(rec.lines, t.source.span(start)) >= 1
        if t.code == "JAX503":
            enough = enough and any(rec.sessions.get(row) for row in span)
        return run.faithful and enough and not any(c.grew for c in seen)
    return False  # no run shows the bug (a discarded result, a host read...) or no check looks at it


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_no_verdict_is_stronger_than_what_was_observed(observed_source, data):
    """For every kind of finding: not-reproduced only where the line ran as the bug needs and a check
    could have seen it; confirmed only on an error, a compile count, a leak or a trace-time effect."""
    run, t, verdict = _judged(observed_source, data, EVERY_KIND)
    if verdict.status == NOT_REPRODUCED:
        assert _where_the_bug_shows(t, run), (t.code, verdict.detail)
    if verdict.status == CONFIRMED:
        seen = compile_counts(t, run)
        assert run.failure is not None or any(c.grew or c.reasons for c in seen) or _most(run.rec.traced, t.span) \
            or any(row in run.rec.writes.leaked for row in t.span), (t.code, verdict.detail)


@pytest.mark.parametrize("code", ["JAX101", "JAX201", "JAX303", "JAX404", "JAX501", "JAX502", "JAX503"])
def test_a_run_that_showed_nothing_decides_nothing(observed_source, code):
    """A run that never reached the line and recorded nothing is inconclusive, for every category."""
    run = Run("running it", faithful=True, rec=Recorder(observed_source.path, _Clean(), set()), backend="cpu")
    for row in ROWS:
        assert judge(_target(observed_source, code, row), run).status == INCONCLUSIVE
