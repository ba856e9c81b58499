"""`--timings`: where a run's time goes, each phase counted once however phases nest."""

from __future__ import annotations

import json
import types

from jaxlint import timings
from jaxlint.rules import iter_rules
from jaxlint.runner import LintSettings, lint_run

TRACED = """\
import jax


@jax.jit
def step(x):
    if x > 0:
        return x
    return -x
"""


def _ticking(monkeypatch) -> None:
    """A clock that advances one second each time it is read."""
    ticks = iter(range(1000))
    fake = types.SimpleNamespace(process_time=lambda: float(next(ticks)), perf_counter=lambda: float(next(ticks)))
    monkeypatch.setattr(timings, "time", fake)


def test_a_nested_phase_counts_for_itself_only(monkeypatch):
    _ticking(monkeypatch)

    def inner() -> str:
        return "done"

    def outer() -> str:
        return timings.run("inner", inner)

    with timings.recording() as seconds:  # read at 0
        assert timings.run("outer", outer) == "done"  # switches at 1 (outer), 2 (inner), 3 (outer), 4 (back)
    # the end of the block reads at 5
    assert seconds == {"other": 2.0, "outer": 2.0, "inner": 1.0}


def test_nothing_is_recorded_outside_a_recording(monkeypatch):
    _ticking(monkeypatch)
    decorated = timings.timed("phase")(lambda x: x + 1)
    assert decorated(1) == 2
    assert timings.run("phase", len, "ab") == 2
    assert timings.stop() == {}


def test_a_phase_that_raises_gives_the_time_back(monkeypatch):
    _ticking(monkeypatch)

    def fails() -> None:
        raise ValueError

    with timings.recording() as seconds:
        try:
            timings.run("fails", fails)
        except ValueError:
            pass
        timings.run("after", len, "")
    assert set(seconds) == {"other", "fails", "after"}


def test_a_timed_run_says_what_each_stage_linted(tmp_path):
    paths = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.py"
        path.write_text(TRACED)
        paths.append(str(path))
    codes = frozenset(rule.code for rule in iter_rules(None))
    run = lint_run(paths, LintSettings(codes=codes, timings=True))
    first = run.stages["first"]
    assert first.files == 2
    for phase in ("read", "parse", "names", "tracing", "values", "JAX101 traced-if"):
        assert phase in first.seconds
    assert all(seconds >= 0 for seconds in first.seconds.values())
    assert [sorted(f.code for f in r.findings) for r in run.reported()] == [["JAX101"], ["JAX101"]]
    assert lint_run(paths, LintSettings(codes=codes)).stages == {}  # not asked: nothing recorded


def test_timings_go_to_standard_error_and_leave_the_findings_alone(cli, make_files):
    make_files({"a.py": TRACED})
    plain = cli("check", "--no-cache", "--output-format", "json")
    timed = cli("check", "--no-cache", "--output-format", "json", "--timings")
    assert timed.code == plain.code == 1
    assert json.loads(timed.stdout) == json.loads(plain.stdout)
    assert "timings: the run" in timed.stderr and "find files" in timed.stderr
    lines = timed.stderr.splitlines()
    phases = {line.split()[0] for line in lines[lines.index(next(l for l in lines if "linting the files" in l)) + 2:]}
    assert {"parse", "values", "JAX101", "all"} <= phases
