"""`--dynamic` against hostile code: every case ends with an honest verdict, within its time limit.

The fixtures live in tests/hostile/ and mark their finding lines with
`# expect: CODE STATUS [words the detail must contain]`.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import time
from pathlib import Path

import pytest

from jaxlint.findings import Finding, Position

pytestmark = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")

HOSTILE = Path(__file__).parent / "hostile"
EXPECT = re.compile(r"#\s*expect:\s*(JAX\d{3})\s+(confirmed|not-reproduced|inconclusive)\s*(.*)$")
TIMEOUT = 15.0


def _expected():
    cases = []
    for path in sorted(HOSTILE.glob("*.py")):
        for row, line in enumerate(path.read_text().splitlines(), start=1):
            m = EXPECT.search(line)
            if m:
                code, status, words = m.groups()
                finding = Finding(code, "test", "test finding", str(path), Position(row, 1), Position(row, 2))
                cases.append((finding, status, words.split()))
    return cases


CASES = _expected()


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    from jaxlint.dynamic import confirm

    cwd, modules = os.getcwd(), set(sys.modules)
    pids = tmp_path_factory.mktemp("hostile") / "pids.txt"  # escaping_children.py writes there
    os.environ["JAXLINT_HOSTILE_PIDS"] = str(pids)  # inherited by every process the runs start
    started = time.monotonic()
    try:
        results = confirm([f for f, _, _ in CASES], backend="cpu", timeout=TIMEOUT, settings={}, show_progress=False)
    finally:
        del os.environ["JAXLINT_HOSTILE_PIDS"]
    elapsed = time.monotonic() - started
    assert os.getcwd() == cwd
    assert "jax" not in set(sys.modules) - modules
    return results, elapsed, pids


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{Path(f.path).name}:{f.start.row}" for f, _, _ in CASES])
def test_hostile_case_ends_honestly(outcome, index):
    results, _, _ = outcome
    _, status, words = CASES[index]
    got = results[index].confirmation
    assert got["status"] == status, got["detail"]
    for word in words:
        assert word in got["detail"], got["detail"]


def test_hostile_suite_stays_within_its_limits(outcome):
    _, elapsed, _ = outcome
    files = len({f.path for f, _, _ in CASES})
    # Workers run in parallel; even one at a time each file is bounded by the per-file limit.
    assert elapsed < TIMEOUT * files + 10


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_hostile_runs_leave_no_process_behind(outcome):
    from jaxlint.dynamic import processes

    _, _, pids = outcome
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 2  # one in a new session, one double-forked with a clean environment
    live = [p.pid for p in processes.table().values() if not p.zombie]
    assert not [pid for pid in live
                if pid in started or processes.has_environment(pid, "JAXLINT_HOSTILE_PIDS", str(pids))]
