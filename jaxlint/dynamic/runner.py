"""The linter's side of the dynamic check: contained workers that decide files in turn, each within
its time limit.

A worker is a supervisor process (supervisor.py) in a session of its own, and below it the worker
process, in another session, under resource limits (limits.py). It starts JAX once, then takes one
file at a time (a job), the next only once the linter has the verdicts of the last: on the CPU a
worker takes one file; on an accelerator one worker takes them all, so the device is opened once.
Verdicts come back over a private pipe with a per-worker secret (channel.py). The worker's output
goes to a pipe the linter drains, never to the linter's own streams. When a file is done, every
process its code started is stopped and killed; when a worker ends, for whatever reason (a file
past its time limit ends it, and a fresh worker takes the next file), so is everything it started
(processes.py; on systems without /proc, the two sessions are killed). A worker whose JAX could
not start because another process holds the device is started again after a pause.

Files decided in one worker share its interpreter: modules they import, JAX's configuration
and threads left running carry over from one file to the next.

Limits, stated plainly: the user's code runs as the user, with the user's files and network.
It cannot signal the linter through its parent or its parent's process group, nor (unless it
runs as root) open the linter's output through /proc, but a module that searches the process
table can still find the linter and signal it; `--sandbox` (sandbox.py) closes that, with a
process namespace of its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass

from jaxlint.dynamic import imports, processes, sandbox
from jaxlint.dynamic.channel import LOST, ChannelReader
from jaxlint.dynamic.limits import Limits, describe_memory
from jaxlint.dynamic.supervisor import FAILED


PLATFORMS = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda", "tpu": "tpu", "rocm": "rocm"}
ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
OUTPUT_KEPT = 8192  # bytes of the worker's raw output kept for error messages
MAX_WORKERS = 8  # each worker is a Python process with JAX loaded: a few hundred MB
SNAPSHOT_INTERVAL = 0.5  # seconds between records of the run's process tree
EXIT_GRACE = 2.0  # seconds to wait for the last records once the worker has ended
BUSY_PAUSES = (2.0, 5.0, 10.0)  # seconds between starts while another process holds the device
# Started with -c so the package's own directory never shadows the user's modules.
BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); import jaxlint.dynamic.supervisor as s; "
    "sys.path.remove(sys.argv[1]); s.main(sys.argv[2:])"
)
# How running out of host memory reads in a verdict: Python's error, and XLA's when its arrays
# live in host memory (on an accelerator the same words mean the device's memory, which no limit here holds).
HOST_OUT_OF_MEMORY = ("MemoryError", "std::bad_alloc")
CPU_OUT_OF_MEMORY = ("RESOURCE_EXHAUSTED",)


@dataclass(frozen=True)
class Containment:
    """How every run of one `--dynamic` check is held: its resource limits and its sandbox."""

    limits: Limits
    sandbox: str  # one of dynamic_settings.SANDBOXES

    @classmethod
    def configured(cls, settings: dict, timeout: float, sandboxed: bool = False) -> Containment:
        """From `[tool.jaxlint.dynamic]` (as the configuration checked it) and `--sandbox`."""
        return cls(Limits.for_run(settings, timeout), sandbox.chosen(settings, sandboxed))

    def unavailable(self) -> str | None:
        """Why no run can be contained as asked, or None."""
        if os.name != "posix":
            return "--dynamic runs its workers only on POSIX systems (Linux, macOS)"
        return sandbox.unavailable() if self.sandbox == "bwrap" else None


def project_root(path: str) -> str:
    """The nearest enclosing directory with a project marker, else the folder above the file's package."""
    directory = os.path.dirname(path)
    probe = directory
    while True:
        if any(os.path.exists(os.path.join(probe, m)) for m in ROOT_MARKERS):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return imports.package_parent(path)
        probe = parent


def worker_env(backend: str | None, marker: str | None = None) -> dict[str, str]:
    """The environment of code run for --dynamic; `marker` tags the processes a contained run sweeps."""
    env = dict(os.environ)
    if marker is not None:
        env[processes.MARKER] = marker
    if backend:
        env["JAX_PLATFORMS"] = PLATFORMS.get(backend, backend)
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"  # the user's own processes may share the accelerator
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def max_parallel(files: int) -> int:
    """CPU workers at once: one per core up to MAX_WORKERS (each holds its own JAX)."""
    return max(1, min(os.cpu_count() or 1, MAX_WORKERS, files))


def job(path: str, findings: list[dict], timeout: float, settings: dict, elsewhere: list[dict] = ()) -> dict:
    """What a worker needs to decide one file's findings (and, by the errors its code raises, the
    findings `elsewhere`, of other files, with their paths)."""
    root = project_root(path)
    return {"path": path, "root": root, "import_path": imports.import_path(root, path), "timeout": timeout,
            "settings": settings, "findings": findings, "elsewhere": [f for f in elsewhere if f["path"] != path]}


@dataclass
class Outcome:
    """How a worker dealt with one job."""

    verdicts: dict  # finding index -> verdict
    alive: bool  # the worker can take the next job
    busy: str | None = None  # JAX could not start because another process holds the device


def run_jobs(jobs: list[dict], backend: str | None, timeout: float, containment: Containment, *,
             report=None, start=None, sleep=time.sleep) -> dict:
    """Verdicts for every job's findings, from one worker at a time that takes the jobs in turn (so
    an accelerator is opened once, not once per file). A worker that times out or crashes ends its
    job; a fresh one takes the rest. A worker whose device another process holds is started again
    after a pause, until the job's time limit has gone by in pauses."""
    start = start or Worker.start
    verdicts: dict = {}
    queue = list(jobs)
    worker, waited, tries = None, 0.0, 0
    while queue:
        if worker is None:
            worker = start(backend, queue, timeout, containment)
        outcome = worker.decide(queue[0], timeout)
        if outcome.busy is not None:
            worker.end()
            worker = None
            pause = busy_pause(tries)
            if waited + pause <= timeout:
                sleep(pause)
                waited, tries = waited + pause, tries + 1
                continue
            reason = f"the {backend} stayed busy for {waited:g}s, held by another process: {outcome.busy}"
            outcome = Outcome({f["index"]: {"status": "inconclusive", "detail": reason, "backend": None}
                               for f in queue[0]["findings"]}, alive=False)
        merge(verdicts, outcome.verdicts)
        if report is not None:
            report(outcome.verdicts)
        queue.pop(0)
        waited, tries = 0.0, 0
        if not outcome.alive and worker is not None:
            worker.end()
            worker = None
    if worker is not None:
        worker.end()
    return verdicts


def busy_pause(tries: int) -> float:
    """Seconds to wait before starting again, the `tries`-th time, a run whose device was busy."""
    return BUSY_PAUSES[min(tries, len(BUSY_PAUSES) - 1)]


class Worker:
    """One started worker: its supervisor, its result channel, its output and its process tree."""

    def __init__(self, proc: subprocess.Popen, channel: ChannelReader, marker: str, limits: Limits):
        self.proc = proc
        self.channel = channel
        self.limits = limits
        self.started = time.monotonic()
        self.sent = 0
        self.tree = processes.ProcessTree(proc.pid, marker) if processes.available() else None
        self.output: deque = deque(maxlen=OUTPUT_KEPT)
        self._drain = threading.Thread(target=_drain, args=(proc.stdout, self.output), daemon=True)
        self._drain.start()
        self.ended = False

    @classmethod
    def start(cls, backend: str | None, jobs: list[dict], timeout: float, containment: Containment) -> Worker:
        """A worker for `jobs` (its environment and sandbox are made for them), waiting for the first."""
        first = jobs[0]
        secret, marker = secrets.token_hex(32), secrets.token_hex(16)
        package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        results, channel_fd = os.pipe()
        command = [sys.executable, "-c", BOOTSTRAP, package_parent, str(channel_fd)]
        if containment.sandbox == "bwrap":
            roots = tuple(j["root"] for j in jobs)
            command = sandbox.command(first["root"], (package_parent, sys.prefix, sys.base_prefix, *sys.path,
                                                      *roots)) + command
        env = imports.with_import_path(worker_env(backend, marker), first["root"], first["path"])
        try:
            proc = subprocess.Popen(
                command, cwd=first["root"], env=env, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, pass_fds=(channel_fd,), start_new_session=True,
            )
        except BaseException:
            os.close(results)
            raise
        finally:
            os.close(channel_fd)
        limits = containment.limits.for_jobs(len(jobs))
        worker = cls(proc, ChannelReader(results, secret), marker, limits)
        worker._send({"secret": secret, "limits": limits.to_json()})
        return worker

    def _send(self, record: dict) -> None:
        with contextlib.suppress(OSError):  # a supervisor that died at once is reported by decide()
            self.proc.stdin.write(json.dumps(record, default=str).encode() + b"\n")
            self.proc.stdin.flush()

    def decide(self, job: dict, timeout: float) -> Outcome:
        """Hand the worker one job and wait for its verdicts (or its end, or the job's time limit)."""
        n, self.sent = self.sent, self.sent + 1
        deadline = (self.started if n == 0 else time.monotonic()) + timeout
        # A long job line fills the pipes while the worker is still starting JAX: written from a
        # thread, so that the time limit holds even if the worker never reads it.
        threading.Thread(target=self._send, args=(job,), daemon=True).start()
        how = self._watch(n, deadline)
        state = self.channel.records.get("state") or {}
        findings = job["findings"] + [{"index": int(i)} for i, v in (state.get("verdicts") or {}).items()
                                      if v.get("elsewhere") and state.get("job") == n]
        if how == "done":
            if self.tree is not None:  # what the file's code started goes with it; the worker stays
                self.tree.sweep(spare={self.proc.pid, self.channel.records.get("worker")})
            return Outcome(_verdicts(findings, state, None, self.limits), alive=True)
        supervisor_code = self.proc.poll()
        self.end()
        if how == "failed":
            if state.get("busy"):
                return Outcome({}, alive=False, busy=state["failed"])
            return Outcome({f["index"]: {"status": "inconclusive", "detail": state["failed"], "backend": None}
                            for f in findings}, alive=False)
        mine = state if state.get("job") == n else None
        ending = _ending(self.channel.records.get("exit"), supervisor_code, how == "timeout", timeout, mine,
                         bytes(self.output), self.limits)
        return Outcome(_verdicts(findings, mine, ending, self.limits), alive=False)


    def _watch(self, n: int, deadline: float) -> str:
        """Wait for job `n`: "done", "failed" (JAX did not start), "ended" (the worker stopped) or
        "timeout", recording the process tree as it goes."""
        snapshot = 0.0
        while True:
            self.channel.updated.clear()  # before reading the state: a record after this wakes the wait
            state = self.channel.records.get("state") or {}
            if state.get("failed"):
                return "failed"
            if state.get("job") == n and state.get("phase") == "done":
                return "done"
            if self.channel.ended.is_set() or self.proc.poll() is not None:
                self.channel.join(timeout=EXIT_GRACE)  # the records sent just before the end
                return "failed" if (self.channel.records.get("state") or {}).get("failed") else "ended"
            now = time.monotonic()
            if now >= deadline:
                return "timeout"
            if self.tree is not None and now - snapshot >= SNAPSHOT_INTERVAL:
                self.tree.snapshot()
                snapshot = now
            self.channel.updated.wait(min(SNAPSHOT_INTERVAL, deadline - now))

    def end(self) -> None:
        """Stop and kill everything the worker started, then collect what is left of its output."""
        if self.ended:
            return
        self.ended = True
        if self.tree is not None:
            self.tree.sweep()
        else:  # no process table: the two sessions are what can be named
            worker = self.channel.records.get("worker")
            for group in (worker, self.proc.pid):
                if isinstance(group, int) and group > 0:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(group, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.channel.join(timeout=2)
        self._drain.join(timeout=1)


def merge(verdicts: dict, more: dict) -> None:
    """Add a job's verdicts: a confirmation stands, whichever job (the finding's file's own, or one
    whose error ran through it) gave it."""
    for index, verdict in more.items():
        old = verdicts.get(index)
        if old is None or (old["status"] != "confirmed" and (verdict["status"] == "confirmed" or
                                                             not verdict.get("elsewhere"))):
            verdicts[index] = verdict


def _drain(stream, tail: deque) -> None:
    """Read the worker's raw output to its end, keeping only the last bytes."""
    for chunk in iter(lambda: stream.read1(65536), b""):
        tail.extend(chunk)


def _ending(exit: dict | None, supervisor_code: int | None, timed_out: bool, timeout: float,
            state: dict | None, output: bytes, limits: Limits) -> str | None:
    """Why the worker stopped early, or None when it finished normally."""
    phase = (state or {}).get("phase", "starting")
    said = (output.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"])[0][:200]
    if timed_out:
        return f"timed out after {timeout:g}s while {phase}"
    if exit is None:
        if supervisor_code is not None and supervisor_code < 0:
            return f"was stopped: its supervisor process was killed with signal {_signal_name(-supervisor_code)} " \
                   f"while {phase}"
        return f"stopped with status {supervisor_code} before reporting how, while {phase} ({said})"
    if "signal" in exit:
        sig = exit["signal"]
        if sig == getattr(signal, "SIGXCPU", None):
            return f"used up its CPU-time limit of {limits.cpu_seconds}s while {phase}"
        return f"crashed with signal {_signal_name(sig)} while {phase}"
    if exit.get("code") == LOST:
        return f"lost its result channel while {phase} (the code closed or replaced its file descriptor)"
    if exit.get("code") == FAILED:
        return f"failed while {phase} ({said})"
    if exit.get("code"):
        return f"exited with status {exit['code']} while {phase}"
    if state is None or phase != "done":
        return f"stopped without a result while {phase} ({said})"
    return None


def _out_of_host_memory(detail: str, backend: str) -> bool:
    words = HOST_OUT_OF_MEMORY + (CPU_OUT_OF_MEMORY if backend == "cpu" else ())
    return any(word in detail for word in words)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _verdicts(findings: list[dict], state: dict | None, ending: str | None, limits: Limits) -> dict:
    decided = (state or {}).get("verdicts", {})
    out = {}
    for f in findings:
        v = decided.get(str(f["index"])) or {"status": "inconclusive", "detail": ""}
        detail = v["detail"]
        if not v.get("final"):
            stop = f"the run {ending or 'gave no verdict'}"
            detail = f"{detail}; then {stop}" if detail else stop
        if limits.memory is not None and _out_of_host_memory(detail, (state or {}).get("backend", "")):
            detail += f" (--dynamic limits a worker's memory to {describe_memory(limits.memory)}: " \
                      f"`memory-limit` in [tool.jaxlint.dynamic])"
        out[f["index"]] = {"status": v["status"], "detail": detail, "backend": (state or {}).get("backend") or None}
        for flag in ("needs_accelerator", "elsewhere"):
            if v.get(flag):
                out[f["index"]][flag] = True
    return out
