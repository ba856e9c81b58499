"""pytest plugin: run a project's tests with JAX's checkers on and judge jaxlint's findings by them.

Load it explicitly (it is not registered to load itself into every pytest run):

    pytest -p jaxlint.pytest [--jaxlint-report FILE] [ARGS]

Every test then runs with JAX's key-reuse checker (legacy `PRNGKey` keys routed to typed keys),
`jax_check_tracer_leaks` and `jax_explain_cache_misses` on, so a test can fail where it passed
before: that failure is JAX catching the bug. At the end, each static finding on the linted files
is `confirmed` (naming the test that showed it), `not-reproduced` or `inconclusive`, and what the
tests showed that the static pass did not is listed as `observed`.

`jaxlint check --dynamic --driver pytest [-- ARGS]` runs this plugin for you and reports the
verdicts in jaxlint's own output formats. Run alone, the plugin lints pytest's root folder with
jaxlint first and prints the verdicts in pytest's terminal summary.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile

import pytest

from jaxlint.dynamic.driver_session import Session, load_request

def pytest_addoption(parser) -> None:
    group = parser.getgroup("jaxlint")
    group.addoption("--jaxlint-report", metavar="FILE", default=None,
                    help="Write jaxlint's findings with their verdicts as JSON to FILE.")


def pytest_configure(config) -> None:
    request = load_request()
    standalone = request is None
    if standalone:
        request = _lint(str(config.rootpath))
    plugin = _Plugin(Session(request, "test"), request if standalone else None, config)
    config.pluginmanager.register(plugin, "jaxlint-session")


class _Plugin:
    def __init__(self, session: Session, standalone: dict | None, config):
        self.session = session
        self.standalone = standalone
        self.config = config

    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection(self, session):
        self.session.begin("collection (importing the test modules)")
        try:
            yield
        finally:
            self.session.end()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.session.begin(item.nodeid)
        try:
            yield
        finally:
            self.session.end()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.failed and call.excinfo is not None:
            self.session.note_failure(call.excinfo.value)

    def pytest_unconfigure(self, config) -> None:
        if self.standalone is not None:  # the result file was this plugin's own
            with contextlib.suppress(OSError):
                os.remove(self.session.result_path)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.standalone is None:
            return
        with open(self.session.result_path, encoding="utf-8") as f:
            result = json.load(f)
        findings = _judged(self.standalone, result)
        report = self.config.getoption("--jaxlint-report")
        if report:
            with open(report, "w", encoding="utf-8") as f:
                json.dump(findings, f, indent=2)
        terminalreporter.section("jaxlint")
        for f in findings:
            c = f["confirmation"]
            terminalreporter.write_line(
                f"{f['filename']}:{f['location']['row']}: {f['code']} {c['status']}: {c['detail']}")
        counts: dict[str, int] = {}
        for f in findings:
            counts[f["confirmation"]["status"]] = counts.get(f["confirmation"]["status"], 0) + 1
        terminalreporter.write_line(", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
                                    or "no findings")


def _lint(root: str) -> dict:
    """Lint `root` with jaxlint (its own configuration applies) and make a request of its findings."""
    out = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "--exit-zero",
                          "--show-files", root], capture_output=True, text=True, check=False)
    files = [os.path.abspath(line) for line in out.stdout.splitlines() if line.strip()]
    out = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "--exit-zero",
                          root], capture_output=True, text=True, check=False)
    static = json.loads(out.stdout or "[]")
    findings = [{"index": i, "path": f["filename"], "code": f["code"], "row": f["location"]["row"],
                 "end_row": f["end_location"]["row"], "json": f} for i, f in enumerate(static)]
    fd, result = tempfile.mkstemp(prefix="jaxlint-pytest-", suffix=".json")
    os.close(fd)
    return {"files": files, "findings": findings, "result": result}


def _judged(request: dict, result: dict) -> list[dict]:
    """jaxlint's JSON findings with their verdicts, then the observed ones."""
    from jaxlint.dynamic.driver import observed_finding
    from jaxlint.rules import all_rules

    rules = all_rules()
    judged = [{**f["json"], "confirmation": result["verdicts"].get(str(f["index"]))} for f in request["findings"]]
    for e in result["observed"]:
        judged.append(observed_finding(e, rules).to_json(url=rules[e["code"]].url))
    return judged
