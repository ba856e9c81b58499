"""`--dynamic` driven by a project's own code: the pytest plugin, configured driver commands, the
worker's import path, and the top-level messages.

The acceptance run drives tests/sample_project (a package with pytree dataclass arguments and its own
tests, with bugs planted where argument synthesis cannot call) by its tests through the CLI.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jaxlint.cli import main

needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
SAMPLE = Path(__file__).parent / "sample_project"


def _by_place(findings):
    return {(Path(f["filename"]).name, f["code"], f["location"]["row"]): f["confirmation"] for f in findings}


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    """The sample project, copied, linted and driven by its tests once (the run takes a while)."""
    from click.testing import CliRunner

    root = tmp_path_factory.mktemp("sample") / "sample_project"
    shutil.copytree(SAMPLE, root)
    cwd = os.getcwd()
    os.chdir(root)
    try:
        try:
            runner = CliRunner(mix_stderr=False)
        except TypeError:
            runner = CliRunner()
        static = runner.invoke(main, ["check", "--no-cache", "--output-format", "json", "sampleproj", "scripts"])
        driven = runner.invoke(main, ["check", "--no-cache", "--output-format", "json", "--dynamic",
                                      "--driver", "pytest", "sampleproj", "scripts"])
    finally:
        os.chdir(cwd)
    return json.loads(static.stdout), driven, root


@needs_jax
def test_sample_project_static_findings_are_confirmed_by_its_tests(sample_run):
    static, driven, _ = sample_run
    assert driven.exit_code == 1, driven.stderr
    out = _by_place(json.loads(driven.stdout))
    assert static, "the sample project has bugs the static pass finds"
    for f in static:
        verdict = out[(Path(f["filename"]).name, f["code"], f["location"]["row"])]
        assert verdict["status"] == "confirmed", verdict["detail"]
        assert "running test checks/" in verdict["detail"]


@needs_jax
def test_sample_project_bugs_the_static_pass_misses_are_observed(sample_run):
    static, driven, _ = sample_run
    statics = {(Path(f["filename"]).name, f["code"], f["location"]["row"]) for f in static}
    observed = {k: v for k, v in _by_place(json.loads(driven.stdout)).items() if v["status"] == "observed"}
    assert not set(observed) & statics
    codes = {(name, code) for name, code, _ in observed}
    static_codes = {(name, code) for name, code, _ in statics}
    # a key kept on an object, a traced `if` and `int()` in helpers of pytree arguments, item assignment
    # on a pytree's leaf, a jit rebuilt per call, a tracer stored on a module-level object: each is
    # observed by the run unless the static pass already reports it (then it is confirmed, above)
    planted = {("data.py", "JAX201"), ("optim.py", "JAX101"), ("metrics.py", "JAX105"), ("metrics.py", "JAX401"),
               ("train.py", "JAX502"), ("train.py", "JAX407")}
    assert planted - static_codes <= codes
    assert len(planted - static_codes) >= 2
    assert all("running test checks/" in v["detail"] for v in observed.values())
    assert not [k for k in observed if k[0] == "metrics.py" and k[2] >= 28]  # float() outside jit is fine


@needs_jax
def test_observed_findings_have_the_json_shape(sample_run):
    _, driven, _ = sample_run
    for f in json.loads(driven.stdout):
        assert set(f) >= {"code", "name", "message", "filename", "location", "end_location", "url", "fix",
                          "noqa_row", "cell", "severity", "confirmation"}
        assert set(f["confirmation"]) == {"status", "detail", "backend"}
        assert f["confirmation"]["backend"] == "cpu"
        assert f["location"]["column"] >= 1 and f["end_location"]["row"] == f["location"]["row"]


LIB = """
import jax
import jax.numpy as jnp


@jax.jit
def step(x):
    print("x is", x)
    return x * 2


class Counter:
    def __init__(self, key):
        self.key = key

    def sample(self):
        return jax.random.uniform(self.key, (2,))


@jax.jit
def total(x):
    return x.sum()


def totals(xs):
    out = []
    for x in xs:
        out.append(total(x))
    return out


def one_total(x):
    return total(x)
"""

RUN = """
import sys

import jax
import jax.numpy as jnp

import lib

for _ in range(int(sys.argv[2])):
    lib.step(jnp.ones(3))
lib.totals([jnp.ones(n) for n in (1, 2, 3)])
for n in (4, 5, 6):
    lib.one_total(jnp.ones(n))
c = lib.Counter(jax.random.PRNGKey(0))
c.sample()
c.sample()
"""


@needs_jax
def test_configured_driver_command_confirms_and_observes(cli, make_files):
    make_files({"pyproject.toml": '[tool.jaxlint.dynamic]\ndrivers = ["run.py --n 2"]\n',
                "lib.py": LIB, "run.py": RUN})
    out = cli("check", "--no-cache", "--output-format", "json", "--dynamic", "--driver", "commands", "lib.py")
    found = _by_place(out.json)
    confirmed = found[("lib.py", "JAX404", 8)]
    assert confirmed["status"] == "confirmed" and "command `run.py --n 2`" in confirmed["detail"]
    observed = found[("lib.py", "JAX201", 17)]  # a legacy key kept on an object, reused
    assert observed["status"] == "observed" and "KeyReuseError" in observed["detail"]
    shapes = found[("lib.py", "JAX501", 28)]  # the linted code's own loop over shapes it was given
    assert shapes["status"] == "observed" and "different input types" in shapes["detail"]
    assert not [k for k in found if k[2] == 33]  # each shape came from one call of one_total: the caller's


@needs_jax
def test_observed_findings_obey_noqa_and_the_selection(cli, make_files):
    make_files({"pyproject.toml": '[tool.jaxlint.dynamic]\ndrivers = ["run.py --n 2"]\n',
                "lib.py": LIB.replace("(2,))\n", "(2,))  # noqa: JAX201\n"), "run.py": RUN})
    out = cli("check", "--no-cache", "--output-format", "json", "--dynamic", "--driver", "commands", "lib.py")
    assert "JAX201" not in [f["code"] for f in out.json]


@needs_jax
def test_a_driver_that_overruns_its_time_limit_leaves_findings_inconclusive(cli, make_files):
    make_files({"pyproject.toml": '[tool.jaxlint.dynamic]\ndrivers = ["slow.py"]\n', "lib.py": LIB,
                "slow.py": "import time\nimport lib\ntime.sleep(60)\n"})
    out = cli("check", "--no-cache", "--output-format", "json", "--dynamic", "--driver", "commands",
              "--dynamic-timeout", "8", "lib.py")
    verdict = _by_place(out.json)[("lib.py", "JAX404", 8)]
    assert verdict["status"] == "inconclusive" and "timed out after 8s" in verdict["detail"]


@needs_jax
def test_pytest_plugin_runs_alone_and_writes_a_report(make_files, tmp_path):
    make_files({"pyproject.toml": "[project]\nname = 'demo'\n", "lib.py": LIB,
                "test_lib.py": "import jax.numpy as jnp\nimport lib\n\n\ndef test_step():\n"
                               "    lib.step(jnp.ones(3))\n    lib.step(jnp.ones(3))\n"})
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    env.pop("JAXLINT_DRIVER_REQUEST", None)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "jaxlint.pytest", "-p", "no:cacheprovider",
                          "--jaxlint-report", "report.json", "test_lib.py"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "lib.py:8: JAX404 confirmed" in run.stdout
    report = json.loads((tmp_path / "report.json").read_text())
    assert _by_place(report)[("lib.py", "JAX404", 8)]["status"] == "confirmed"


def test_arguments_after_double_dash_need_the_pytest_driver(cli, make_files):
    make_files({"a.py": "x = 1\n"})
    out = cli("check", "--dynamic", "a.py", "--", "-k", "x")
    assert out.code == 2 and "--driver pytest" in out.stderr
    assert cli("check", "--driver", "pytest", "a.py").code == 2


def test_missing_jax_names_the_dynamic_extra(cli, make_files, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "jax" else real(name, *a))
    make_files({"a.py": "import jax\n"})
    out = cli("check", "--dynamic", "a.py")
    assert out.code == 2
    [line] = out.stderr.strip().splitlines()
    assert "pip install '.[dynamic]'" in line and "pip install jaxlint" not in line


@needs_jax
@pytest.mark.parametrize("fmt,terminal,shown", [("full", True, True), ("json", True, False),
                                                ("full", False, False)])
def test_progress_only_on_a_terminal_and_in_text_formats(cli, make_files, monkeypatch, fmt, terminal, shown):
    import types

    seen = {}

    def confirm(findings, *, show_progress, **kwargs):
        seen["progress"] = show_progress
        return findings

    monkeypatch.setitem(sys.modules, "jaxlint.dynamic", types.SimpleNamespace(confirm=confirm))
    monkeypatch.setattr("jaxlint.cli._stderr_is_terminal", lambda: terminal)
    make_files({"a.py": "x = 1\n"})
    cli("check", "--dynamic", "--output-format", fmt, "a.py")
    assert seen["progress"] is shown


WHEEL_CORE = """
import jax

from pkg.util import scale
from .util import offset


@jax.jit
def f(x):
    if x.sum() > 0:
        return scale(x)
    return offset(x)
"""


@needs_jax
@pytest.mark.parametrize("layout", ["wheel", "src"])
def test_the_worker_imports_like_the_user(cli, make_files, monkeypatch, tmp_path, layout):
    """An unpacked wheel's package (no project marker, run from its parent with PYTHONPATH=.) and a
    src layout both import as `pkg`, so the finding is decided, not `No module named 'pkg'`."""
    base = "site" if layout == "wheel" else "src"
    files = {f"{base}/pkg/__init__.py": "", f"{base}/pkg/util.py": "def scale(x):\n    return 2 * x\n\n\n"
             "def offset(x):\n    return x + 1\n", f"{base}/pkg/core.py": WHEEL_CORE}
    if layout == "src":
        files["pyproject.toml"] = "[project]\nname = 'pkg'\n"
    make_files(files)
    if layout == "wheel":
        monkeypatch.chdir(tmp_path / "site")
        monkeypatch.setenv("PYTHONPATH", ".")
    out = cli("check", "--no-cache", "--output-format", "json", "--dynamic", str(tmp_path / base / "pkg"))
    [finding] = [f for f in out.json if f["code"] == "JAX101"]
    assert finding["confirmation"]["status"] == "confirmed", finding["confirmation"]["detail"]


CLEAN_LIB = """
import jax


@jax.jit
def flatten_twice(x):
    if x.ndim > 1:
        x = x.reshape(-1)
    return x * 2


def never_called(x):
    if x.sum() > 0:
        return x
    return -x


def draw(key):
    return jax.random.normal(key, (2,))
"""


@needs_jax
def test_driven_verdicts_for_lines_that_ran_cleanly_or_never_ran(tmp_path):
    """Findings placed on a JAX-accepted line and on a line no test runs (built directly, so this
    does not depend on the static rules): not-reproduced naming the test, and inconclusive saying
    the line never ran. A test reusing its own key to check determinism is the test's reuse, not the
    library's: nothing is observed."""
    from jaxlint.dynamic.driver import drive, pytest_driver
    from jaxlint.findings import Finding, Position

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "lib.py").write_text(CLEAN_LIB)
    (tmp_path / "test_lib.py").write_text(
        "import jax\nimport jax.numpy as jnp\nimport lib\n\n\ndef test_flat():\n"
        "    assert lib.flatten_twice(jnp.ones((2, 2))).shape == (4,)\n\n\n"
        "def test_draw_is_deterministic():\n    key = jax.random.PRNGKey(0)\n"
        "    assert (lib.draw(key) == lib.draw(key)).all()\n")
    lib = str(tmp_path / "lib.py")
    findings = [Finding("JAX101", "traced-if", "m", lib, Position(row, 5), Position(row, 20)) for row in (7, 13)]
    out = drive(findings, [lib], [pytest_driver(["-p", "no:cacheprovider", "test_lib.py"])], root=str(tmp_path),
                backend="cpu", timeout=300, show_progress=False)
    assert len(out) == 2, [(f.code, f.start.row, f.confirmation) for f in out[2:]]
    ran, never = (f.confirmation for f in out)
    assert ran["status"] == "not-reproduced" and "test_lib.py::test_flat" in ran["detail"], ran["detail"]
    assert never["status"] == "inconclusive" and "line 13 never ran" in never["detail"], never["detail"]


@needs_jax
def test_cache_miss_reasons_from_jax_name_the_kind_of_change():
    """JAX's own `jax_explain_cache_misses` explanations, read as the runs read them: one program
    per kind of change, with JAX compiling the function again for it."""
    import logging
    from functools import partial

    import equinox as eqx
    import jax
    import jax.numpy as jnp
    from flax import struct
    from jax.tree_util import Partial

    from jaxlint.dynamic import misses
    from jaxlint.dynamic.recorder import CACHE_MISS

    reasons = []

    class Collect(logging.Handler):
        def emit(self, record):
            m = CACHE_MISS.match(record.getMessage())
            if m:
                reasons.append(m.group("reason"))

    def last(run):
        reasons.clear()
        run()
        return reasons[-1]

    @jax.jit
    def total(x):
        return x.sum()

    @partial(jax.jit, static_argnums=1)
    def scale(x, k):
        return x * k

    class Model(eqx.Module):
        step: int
        w: jax.Array

    @eqx.filter_jit
    def advance(model):
        return Model(model.step + 1, model.w)

    @struct.dataclass
    class State:
        w: jax.Array
        count: int = struct.field(pytree_node=False)

    @jax.jit
    def tick(s):
        return State(s.w + 1, s.count + 1)  # noqa: JAX504

    @jax.jit
    def shift(x, by):
        return x + by

    @jax.jit
    def accumulate(t, x):
        return t + x

    def carry():
        t = 0.0
        for _ in range(2):
            t = accumulate(t, jnp.ones(()))  # noqa: JAX505

    def keyword():
        shift(jnp.ones(2), 1.0)
        Partial(shift, by=1.0)(jnp.ones(2))

    def ticks():
        s = State(jnp.ones(2), 0)
        for _ in range(3):
            s = tick(s)

    def states(step):
        m = Model(0, jnp.ones(2))
        for _ in range(3):
            m = step(m)

    logger, handler = logging.getLogger("jax"), Collect()
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.WARNING)
    jax.config.update("jax_explain_cache_misses", True)
    try:
        assert misses.kind(last(lambda: [jax.jit(lambda x: x + 1)(jnp.ones(2)) for _ in range(3)])) == misses.REBUILT  # noqa: JAX502
        explained = {
            misses.SHAPES: last(lambda: [total(jnp.ones(n)) for n in (1, 2, 3)]),  # noqa: JAX501
            misses.STATIC: last(lambda: [scale(jnp.ones(2), k) for k in (1, 2, 3)]),
            misses.STATIC_LEAF: last(lambda: states(advance)),
            misses.KEYWORD: last(keyword),
            misses.WEAK_TYPE: last(carry),
        }
        flax_leaf = last(ticks)
        if any("explanation unavailable" in r for r in explained.values()):  # JAX on some Pythons (3.13) cannot say why
            assert {misses.kind(r) for r in explained.values() if "explanation unavailable" in r} == {None}
            return
        for kind, reason in explained.items():
            assert misses.kind(reason) == kind, reason
        assert misses.kind(flax_leaf) == misses.STATIC_LEAF, flax_leaf
        assert misses.keywords(explained[misses.KEYWORD]) == {"by"}
    finally:
        jax.config.update("jax_explain_cache_misses", False)
        logger.removeHandler(handler)
        logger.setLevel(level)

