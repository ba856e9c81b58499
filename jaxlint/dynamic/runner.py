"""The linter's side of the dynamic check: one time-limited worker subprocess per file."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections import deque

from jaxlint.dynamic import imports

PLATFORMS = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda", "tpu": "tpu", "rocm": "rocm"}
ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
OUTPUT_KEPT = 8192  # bytes of the worker's raw output kept for error messages
MAX_WORKERS = 8  # each worker is a Python process with JAX loaded: a few hundred MB
# Started with -c so the worker's own directory never shadows the user's modules.
BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); import jaxlint.dynamic.worker as w; "
    "sys.path.remove(sys.argv[1]); w.main(sys.argv[2:])"
)


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


def worker_env(backend: str | None) -> dict[str, str]:
    env = dict(os.environ)
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


def run_file(path: str, findings: list[dict], backend: str | None, timeout: float, settings: dict) -> dict:
    """Verdicts for one file's findings, keyed by finding index; never raises for user-code failures."""
    root = project_root(path)
    with tempfile.TemporaryDirectory(prefix="jaxlint-dynamic-") as tmp:
        request, result = os.path.join(tmp, "request.json"), os.path.join(tmp, "result.json")
        with open(request, "w", encoding="utf-8") as f:
            json.dump({"path": path, "root": root, "timeout": timeout, "settings": settings,
                       "findings": findings}, f, default=str)
        package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        proc = subprocess.Popen(
            [sys.executable, "-c", BOOTSTRAP, package_parent, request, result],
            cwd=root, env=imports.with_import_path(worker_env(backend), root, path), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        )
        tail: deque = deque(maxlen=OUTPUT_KEPT)
        reader = threading.Thread(target=_drain, args=(proc.stdout, tail), daemon=True)
        reader.start()
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill_group(proc)
        reader.join(timeout=1)
        state = _read(result)
    return _verdicts(findings, state, _ending(proc.returncode, timed_out, timeout, state, bytes(tail)))


def _drain(stream, tail: deque) -> None:
    """Read the worker's raw output to its end, keeping only the last bytes."""
    for chunk in iter(lambda: stream.read1(65536), b""):
        tail.extend(chunk)


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the worker and anything the user's code started with it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    proc.wait()


def _read(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _ending(code: int, timed_out: bool, timeout: float, state: dict | None, output: bytes) -> str | None:
    """Why the worker stopped early, or None when it finished normally."""
    phase = (state or {}).get("phase", "starting")
    if timed_out:
        return f"timed out after {timeout:g}s while {phase}"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return f"crashed with signal {name} while {phase}"
    if code != 0:
        return f"exited with status {code} while {phase}"
    if state is None or phase != "done":
        last = output.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        return f"stopped without a result while {phase} ({last[0][:200]})"
    return None


def _verdicts(findings: list[dict], state: dict | None, ending: str | None) -> dict:
    decided = (state or {}).get("verdicts", {})
    out = {}
    for f in findings:
        v = decided.get(str(f["index"])) or {"status": "inconclusive", "detail": ""}
        detail = v["detail"]
        if not v.get("final"):
            stop = f"the run {ending or 'gave no verdict'}"
            detail = f"{detail}; then {stop}" if detail else stop
        out[f["index"]] = {"status": v["status"], "detail": detail}
    return out
