"""The linter's side of the dynamic check: one contained, time-limited run per file.

A run is a supervisor process (supervisor.py) in a session of its own, and below it the worker,
in another session, under resource limits (limits.py). Verdicts come back over a private pipe
with a per-run secret (channel.py). The worker's output goes to a pipe the linter drains, never to
the linter's own streams. When the run ends, for whatever reason, every process it started is
stopped and killed (processes.py; on systems without /proc, the two sessions are killed).

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
EXIT_GRACE = 2.0  # seconds to wait for the exit report once the worker has said it is done
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
    sandbox: str  # one of sandbox.KINDS

    @classmethod
    def configured(cls, settings: dict, timeout: float, sandboxed: bool = False) -> Containment:
        """From `[tool.jaxlint.dynamic]` and `--sandbox`; raises ValueError for a setting it cannot read."""
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
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"  # parallel workers share one accelerator
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def max_parallel(backend: str | None, files: int) -> int:
    """Workers at once: one per core up to MAX_WORKERS (each holds its own JAX); one for TPUs,
    which a single process holds."""
    platforms = PLATFORMS.get(backend or "", "") or os.environ.get("JAX_PLATFORMS", "")
    if "tpu" in platforms or (not platforms and os.path.exists("/dev/accel0")):
        return 1
    return max(1, min(os.cpu_count() or 1, MAX_WORKERS, files))


def run_file(path: str, findings: list[dict], backend: str | None, timeout: float, settings: dict,
             containment: Containment | None = None) -> dict:
    """Verdicts for one file's findings, keyed by finding index; never raises for user-code failures."""
    containment = containment or Containment.configured(settings, timeout)
    root = project_root(path)
    secret, marker = secrets.token_hex(32), secrets.token_hex(16)
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    results, channel_fd = os.pipe()
    command = [sys.executable, "-c", BOOTSTRAP, package_parent, str(channel_fd)]
    if containment.sandbox == "bwrap":
        command = sandbox.command(root, (package_parent, sys.prefix, sys.base_prefix, *sys.path)) + command
    try:
        proc = subprocess.Popen(
            command, cwd=root, env=imports.with_import_path(worker_env(backend, marker), path, root), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, pass_fds=(channel_fd,), start_new_session=True,
        )
    except BaseException:
        os.close(results)
        raise
    finally:
        os.close(channel_fd)
    run = _Run(proc, ChannelReader(results, secret), marker)
    request = {"secret": secret, "limits": containment.limits.to_json(), "path": path, "root": root,
               "timeout": timeout, "settings": settings, "findings": findings}
    with contextlib.suppress(OSError):  # a supervisor that died at once is reported below
        proc.stdin.write(json.dumps(request, default=str).encode() + b"\n")
        proc.stdin.flush()
    timed_out = run.watch(timeout)
    supervisor_code = proc.poll()
    run.end()
    state = run.channel.records.get("state")
    ending = _ending(run.channel.records.get("exit"), supervisor_code, timed_out, timeout, state,
                     bytes(run.output), containment.limits)
    return _verdicts(findings, state, ending, containment.limits)


class _Run:
    """One started run: its supervisor, its result channel, its output and its process tree."""

    def __init__(self, proc: subprocess.Popen, channel: ChannelReader, marker: str):
        self.proc = proc
        self.channel = channel
        self.tree = processes.ProcessTree(proc.pid, marker) if processes.available() else None
        self.output: deque = deque(maxlen=OUTPUT_KEPT)
        self._drain = threading.Thread(target=_drain, args=(proc.stdout, self.output), daemon=True)
        self._drain.start()

    def watch(self, timeout: float) -> bool:
        """Wait for the worker to end, recording its process tree as it goes; True if time ran out.
        Once the worker has reported its last verdicts, its exit report gets only a short grace
        (a stopped supervisor cannot send it)."""
        deadline = time.monotonic() + timeout
        done_at = None
        while True:
            if done_at is None and (self.channel.records.get("state") or {}).get("phase") == "done":
                done_at = time.monotonic()
                deadline = min(deadline, done_at + EXIT_GRACE)
            left = deadline - time.monotonic()
            if left <= 0:
                return done_at is None
            if self.channel.ended.wait(min(SNAPSHOT_INTERVAL, left)) or self.proc.poll() is not None:
                return False
            if self.tree is not None:
                self.tree.snapshot()

    def end(self) -> None:
        """Stop and kill everything the run started, then collect what is left of its output."""
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
        out[f["index"]] = {"status": v["status"], "detail": detail}
    return out
