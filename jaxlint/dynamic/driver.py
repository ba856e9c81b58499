"""`--dynamic --driver`: judge the findings by running the project's own code (its tests, or the
commands configured as drivers) with JAX's checkers on, instead of probing each file.

Each driver is one time-limited subprocess started from the project root (`python -m pytest -p
jaxlint.pytest ARGS`, or `python -m jaxlint.dynamic.driver_script COMMAND`) that writes its
verdicts and observed events to a result file as it goes. Verdicts of several drivers merge:
confirmed by any wins, then not-reproduced, else inconclusive. JAX is imported only there; a
driver whose JAX could not start because another process holds the accelerator is started again
after a pause.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass

from jaxlint.dynamic import imports, names, processes, runner
from jaxlint.dynamic.claims import signature_change
from jaxlint.dynamic.driver_session import REQUEST_ENV
from jaxlint.findings import Finding, Position

OUTPUT_KEPT = 8192
RANK = {"confirmed": 0, "not-reproduced": 1, "inconclusive": 2}


@dataclass
class Driver:
    label: str  # "the tests (pytest ...)" or "the driver `scripts/train.py --steps 3`"
    argv: list[str]


def pytest_driver(args: list[str]) -> Driver:
    shown = " ".join(["pytest", *args])
    return Driver(f"the tests ({shown})", [sys.executable, "-m", "pytest", "-p", "jaxlint.pytest", *args])


def command_driver(command: str) -> Driver:
    return Driver(f"the driver `{command}`", [sys.executable, "-m", "jaxlint.dynamic.driver_script",
                                             *shlex.split(command)])


def drive(findings: list[Finding], files: list[str], drivers: list[Driver], *, root: str,
          backend: str | None, timeout: float, show_progress: bool) -> list[Finding]:
    """The findings, each with `confirmation` set (merged with any they already have), then the
    observed ones."""
    from jaxlint.rules import all_rules

    verdicts = {i: f.confirmation for i, f in enumerate(findings) if f.confirmation}  # from probing
    upgrades = {i: f for i, f in enumerate(findings) if f.category == 6 and i not in verdicts}
    verdicts.update(names.confirm_names(upgrades, timeout, runner.worker_env("cpu")))
    rows = [{"index": i, "path": f.path, "code": f.code, "row": f.start.row, "end_row": f.end.row,
             "signature": signature_change(f.message)}
            for i, f in enumerate(findings) if f.category not in (0, 6) and f.cell is None and f.path.endswith(".py")]
    observed: dict[tuple, dict] = {}
    for n, driver in enumerate(drivers, start=1):
        line = _ProgressLine(f"jaxlint --dynamic: {driver.label} ({n}/{len(drivers)})", show_progress)
        result, ending = _run_when_free(driver, files, rows, root, backend, timeout, line.show)
        line.close()
        ran_on = (result or {}).get("backend")
        for row in rows:
            got = (result or {}).get("verdicts", {}).get(str(row["index"]))
            if got is None:
                got = {"status": "inconclusive", "detail": f"{driver.label} {ending or 'gave no verdict'}"}
            elif ending and got["status"] == "inconclusive":
                got = {**got, "detail": f"{got['detail']}; then {driver.label} {ending}"}
            got = {**got, "backend": ran_on if "verdicts" in (result or {}) else None}
            old = verdicts.get(row["index"])
            if old is None or RANK[got["status"]] < RANK[old["status"]]:
                verdicts[row["index"]] = got
        for event in (result or {}).get("observed", []):
            place = (event["code"], os.path.realpath(event["path"]), event["row"])
            observed.setdefault(place, {**event, "backend": ran_on})
    out = []
    for i, f in enumerate(findings):
        verdict = verdicts.get(i) or {"status": "inconclusive", "detail": "not a JAX finding in a .py file: "
                                                                         "nothing to run", "backend": None}
        out.append(f.with_(confirmation=verdict))
    rules = all_rules()
    out += [observed_finding(e, rules) for e in observed.values() if e["code"] in rules]
    return out


def observed_finding(event: dict, rules) -> Finding:
    """A finding of the rule an event matches, placed on the event's line."""
    rule = rules[event["code"]]
    try:
        with open(event["path"], encoding="utf-8") as f:
            text = f.read().splitlines()[event["row"] - 1]
    except (OSError, IndexError, UnicodeDecodeError):
        text = ""
    start = len(text) - len(text.lstrip()) + 1
    return Finding(event["code"], rule.name, rule.summary, event["path"], Position(event["row"], start),
                   Position(event["row"], max(start, len(text.rstrip()) + 1)),
                   confirmation={"status": "observed", "detail": event["detail"], "backend": event.get("backend")})


def _run_when_free(driver: Driver, files: list[str], rows: list[dict], root: str, backend: str | None,
                   timeout: float, progress, sleep=time.sleep) -> tuple[dict | None, str | None]:
    """`_run`, started again after a pause while another process holds the accelerator (its JAX
    could not start), until the time limit has gone by in pauses."""
    waited, tries = 0.0, 0
    while True:
        result, ending = _run(driver, files, rows, root, backend, timeout, progress)
        busy = (result or {}).get("busy")
        if busy is None:
            return result, ending
        pause = runner.busy_pause(tries)
        if waited + pause > timeout:
            return None, f"could not start: the accelerator stayed busy for {waited:g}s, held by another " \
                         f"process: {busy}"
        sleep(pause)
        waited, tries = waited + pause, tries + 1


def _run(driver: Driver, files: list[str], rows: list[dict], root: str, backend: str | None,
         timeout: float, progress) -> tuple[dict | None, str | None]:
    """The driver's result file (None when it wrote none), and why it stopped early (None if it did not)."""
    with tempfile.TemporaryDirectory(prefix="jaxlint-driver-") as tmp:
        request, result = os.path.join(tmp, "request.json"), os.path.join(tmp, "result.json")
        with open(request, "w", encoding="utf-8") as f:
            json.dump({"files": files, "findings": rows, "result": result}, f)
        marker = secrets.token_hex(16)
        env = imports.with_import_path(runner.worker_env(backend, marker), root)
        env[REQUEST_ENV] = request
        package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], package_parent])  # jaxlint itself, last
        started = time.monotonic()
        proc = subprocess.Popen(driver.argv, cwd=root, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        tree = processes.ProcessTree(proc.pid, marker) if processes.available() else None
        tail: deque = deque(maxlen=OUTPUT_KEPT)
        reader = threading.Thread(target=runner._drain, args=(proc.stdout, tail), daemon=True)
        reader.start()

        def tick() -> None:
            if tree is not None:
                tree.snapshot()
            progress(_read(result))

        try:
            timed_out = _wait(proc, started + timeout, tick)
        finally:
            _stop(proc, tree)  # and whatever the tests started
        reader.join(timeout=1)
        state = _read(result)
    if timed_out:
        return state, f"timed out after {timeout:g}s"
    if state is None:
        last = bytes(tail).decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        return None, f"stopped with status {proc.returncode} after {time.monotonic() - started:.0f}s " \
                     f"without a result ({last[0][:200]})"
    return state, None


def _stop(proc: subprocess.Popen, tree: processes.ProcessTree | None) -> None:
    """Kill the driver and every process it started (those that left its session too, where /proc shows them)."""
    if tree is not None:
        tree.sweep()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _read(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _wait(proc: subprocess.Popen, deadline: float, tick) -> bool:
    """Wait for `proc` until `deadline`, calling `tick` about once a second; whether time ran out."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return True
        try:
            proc.wait(timeout=min(1.0, left))
            return False
        except subprocess.TimeoutExpired:
            tick()


class _ProgressLine:
    """One line on stderr, redrawn in place: runs done, findings confirmed, events observed so far."""

    def __init__(self, title: str, enabled: bool):
        self.title, self.enabled, self.width = title, enabled, 0
        self.show(None)

    def show(self, state: dict | None) -> None:
        if not self.enabled:
            return
        text = self.title
        if state:
            confirmed = sum(v["status"] == "confirmed" for v in state.get("verdicts", {}).values())
            text += f": {state.get('runs', 0)} runs, {confirmed} findings confirmed, " \
                    f"{len(state.get('observed', []))} observed"
        self.width = max(self.width, len(text))
        sys.stderr.write("\r" + text.ljust(self.width))
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()

