"""Where `--dynamic` runs: finding the accelerator as JAX finds one, never two processes on its chip,
a busy chip waited for, one worker that takes the files in turn, the CPU unless a verdict needs
the accelerator. Detection reads a fake machine (a folder standing for `/`); scheduling runs fake
workers. What needs a real accelerator is at the end and skips without one."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import jaxlint.dynamic as dynamic
from jaxlint.dynamic import accelerators
from jaxlint.dynamic.accelerators import Accelerator, busy, detect
from jaxlint.dynamic.runner import Containment, Outcome, merge, run_jobs
from jaxlint.findings import Finding, Position

# What JAX 0.10.2 said on a TPU v5e host when a second process tried to open the chip.
LOCKED = ("RuntimeError: Unable to initialize backend 'tpu': ABORTED: Internal error when accessing libtpu "
          "multi-process lockfile. Run \"$ sudo rm /tmp/libtpu_lockfile\". (set JAX_PLATFORMS='' to "
          "automatically choose an available backend)")


def _machine(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "machine"
    for name, text in files.items():
        path = root / name.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    root.mkdir(parents=True, exist_ok=True)
    return root


def _site(tmp_path: Path, *packages: str) -> list[str]:
    site = tmp_path / "site"
    for package in packages:
        (site / package).mkdir(parents=True)
        (site / package / "__init__.py").write_text("")
    site.mkdir(parents=True, exist_ok=True)
    return [str(site)]


TPU_CHIP = {"/sys/bus/pci/devices/0000:00:08.0/vendor": "0x1ae0\n",
            "/sys/bus/pci/devices/0000:00:08.0/device": "0x0063\n"}


def test_a_tpu_is_libtpu_and_a_tpu_chip_on_the_pci_bus(tmp_path):
    found = detect({}, str(_machine(tmp_path, TPU_CHIP)), _site(tmp_path, "libtpu"))
    assert found == Accelerator("tpu", "libtpu and 1 TPU chip(s) on the PCI bus")


def test_a_chip_without_libtpu_is_not_one_jax_opens(tmp_path):
    assert detect({}, str(_machine(tmp_path, TPU_CHIP)), _site(tmp_path)) is None


def test_another_google_device_is_not_a_tpu(tmp_path):
    machine = _machine(tmp_path, {"/sys/bus/pci/devices/0000:00:04.0/vendor": "0x1ae0\n",
                                  "/sys/bus/pci/devices/0000:00:04.0/device": "0x0042\n"})
    assert detect({}, str(machine), _site(tmp_path, "libtpu")) is None


def test_a_chip_passed_through_vfio_counts_where_the_pci_bus_is_hidden(tmp_path):
    machine = _machine(tmp_path, {"/dev/vfio/2": "", "/dev/vfio/vfio": ""})  # no /dev/accel0 there
    assert detect({}, str(machine), _site(tmp_path, "libtpu")) == Accelerator("tpu", "libtpu and /dev/vfio/2")
    other = tmp_path / "other"
    assert detect({}, str(_machine(other, {"/dev/vfio/vfio": ""})), _site(other, "libtpu")) is None


def test_libtpu_named_by_its_variable_and_a_forced_start(tmp_path):
    library = tmp_path / "libtpu.so"
    library.write_text("")
    found = detect({"TPU_LIBRARY_PATH": str(library), "JAX_FORCE_TPU_INIT": "1"}, str(_machine(tmp_path, {})), [])
    assert found is not None and found.backend == "tpu"


@pytest.mark.parametrize("platforms,backend", [("cpu", None), ("tpu,cpu", "tpu"), ("cuda", "gpu"),
                                               ("cpu,rocm", "gpu")])
def test_jax_platforms_names_the_backend_first(tmp_path, platforms, backend):
    machine = _machine(tmp_path, TPU_CHIP)
    found = detect({"JAX_PLATFORMS": platforms}, str(machine), _site(tmp_path, "libtpu"))
    assert (found and found.backend) == backend


def test_an_nvidia_gpu_needs_a_device_file_and_the_cuda_plugin(tmp_path):
    machine = _machine(tmp_path, {"/dev/nvidiactl": ""})
    assert detect({}, str(machine), _site(tmp_path, "jax_cuda12_plugin")) == \
        Accelerator("gpu", "a JAX CUDA plugin and an NVIDIA device")
    assert detect({}, str(machine), _site(tmp_path / "plain")) is None
    assert detect({}, str(_machine(tmp_path / "bare", {})), _site(tmp_path / "other", "jax_cuda12_plugin")) is None


def test_a_busy_chip_is_told_from_other_failures():
    assert busy(LOCKED)
    assert busy("TPU initialization failed: open(/dev/accel0): Device or resource busy")
    assert not busy("RuntimeError: Unable to initialize backend 'cuda': no supported devices found")
    assert not busy("ModuleNotFoundError: No module named 'jax'")


# -- scheduling, with fake workers ----------------------------------------------------------------


class _Device:
    """A chip one worker at a time may hold; the first `busy_starts` starts find it held elsewhere."""

    def __init__(self, busy_starts: int = 0, dies_on: set = frozenset()):
        self.busy_starts, self.dies_on = busy_starts, set(dies_on)
        self.holders, self.starts, self.most = 0, 0, 0
        self.sleeps: list[float] = []

    def start(self, backend, jobs, timeout, containment):
        self.starts += 1
        self.holders += 1
        self.most = max(self.most, self.holders)
        return _FakeWorker(self, busy=self.starts <= self.busy_starts)


class _FakeWorker:
    def __init__(self, device: _Device, busy: bool):
        self.device, self.busy, self.ended = device, busy, False

    def decide(self, job, timeout):
        if self.busy:
            return Outcome({}, alive=False, busy=LOCKED)
        path = job["path"]
        status = "inconclusive" if path in self.device.dies_on else "confirmed"
        return Outcome({f["index"]: {"status": status, "detail": path, "backend": "tpu"} for f in job["findings"]},
                       alive=path not in self.device.dies_on)

    def end(self):
        if not self.ended:
            self.ended = True
            self.device.holders -= 1


def _jobs(*paths):
    return [{"path": p, "findings": [{"index": i}]} for i, p in enumerate(paths)]


CONTAINMENT = Containment.configured({}, 60)


def test_one_worker_takes_every_file_in_turn():
    device = _Device()
    verdicts = run_jobs(_jobs("a.py", "b.py", "c.py"), "tpu", 60, CONTAINMENT, start=device.start)
    assert device.starts == 1 and device.holders == 0
    assert [v["status"] for v in verdicts.values()] == ["confirmed"] * 3


def test_a_busy_chip_is_waited_for_not_reported():
    device = _Device(busy_starts=2)
    verdicts = run_jobs(_jobs("a.py", "b.py"), "tpu", 60, CONTAINMENT, start=device.start,
                        sleep=device.sleeps.append)
    assert [v["status"] for v in verdicts.values()] == ["confirmed", "confirmed"]
    assert device.starts == 3 and device.sleeps == [2.0, 5.0] and device.most == 1


def test_a_chip_busy_past_the_time_limit_is_named_as_the_reason():
    device = _Device(busy_starts=99)
    verdicts = run_jobs(_jobs("a.py"), "tpu", 12, CONTAINMENT, start=device.start, sleep=device.sleeps.append)
    assert verdicts[0]["status"] == "inconclusive"
    detail = verdicts[0]["detail"]
    assert "stayed busy for 7s, held by another process" in detail and "lockfile" in detail
    assert device.most == 1


def test_a_worker_that_dies_is_ended_before_the_next_one_starts():
    device = _Device(dies_on={"b.py"})
    verdicts = run_jobs(_jobs("a.py", "b.py", "c.py"), "tpu", 60, CONTAINMENT, start=device.start)
    assert [v["status"] for v in verdicts.values()] == ["confirmed", "inconclusive", "confirmed"]
    assert device.starts == 2 and device.most == 1 and device.holders == 0


def test_a_confirmation_stands_whichever_job_gave_it():
    verdicts = {1: {"status": "inconclusive", "detail": "own"}}
    merge(verdicts, {1: {"status": "confirmed", "detail": "through a call", "elsewhere": True}})
    merge(verdicts, {1: {"status": "not-reproduced", "detail": "own, later"}})
    assert verdicts[1]["detail"] == "through a call"


def _finding(path: Path, code: str) -> Finding:
    return Finding(code, "name", "message", str(path), Position(1, 1), Position(1, 2))


@pytest.fixture
def scheduled(monkeypatch, tmp_path):
    """confirm() with run_jobs replaced: each call's backend and files, verdicts made up per code."""
    calls = []

    def fake_run_jobs(jobs, backend, timeout, containment, report=None):
        calls.append((backend, sorted(Path(j["path"]).name for j in jobs)))
        out = {}
        for j in jobs:
            for f in j["findings"]:
                ignored = f["code"] == "JAX304" and backend == "cpu"
                out[f["index"]] = {"status": "inconclusive" if ignored else "confirmed", "detail": "d",
                                   "backend": backend, **({"needs_accelerator": True} if ignored else {})}
        return out

    monkeypatch.setattr(dynamic, "run_jobs", fake_run_jobs)
    files = [tmp_path / "a.py", tmp_path / "b.py"]
    for f in files:
        f.write_text("x = 1\n")
    return calls, files


def _confirm(findings, backend, detect):
    return dynamic.confirm(findings, backend=backend, timeout=60, settings={}, show_progress=False, detect=detect)


def _no_detection():
    raise AssertionError("nothing needed the accelerator")


def test_without_a_backend_every_file_runs_on_the_cpu_on_its_own(scheduled):
    calls, (a, b) = scheduled
    out = _confirm([_finding(a, "JAX101"), _finding(b, "JAX201")], None, _no_detection)
    assert sorted(calls) == [("cpu", ["a.py"]), ("cpu", ["b.py"])]
    assert [f.confirmation["backend"] for f in out] == ["cpu", "cpu"]


def test_what_the_cpu_cannot_show_runs_again_on_the_accelerator(scheduled):
    calls, (a, b) = scheduled
    out = _confirm([_finding(a, "JAX304"), _finding(b, "JAX101")], None, lambda: Accelerator("tpu", "test"))
    assert ("tpu", ["a.py"]) in calls and len(calls) == 3
    assert out[0].confirmation == {"status": "confirmed", "detail": "d", "backend": "tpu"}


def test_without_an_accelerator_what_the_cpu_cannot_show_stays_inconclusive(scheduled):
    calls, (a, _) = scheduled
    out = _confirm([_finding(a, "JAX304")], None, lambda: None)
    assert calls == [("cpu", ["a.py"])] and out[0].confirmation["status"] == "inconclusive"
    assert "needs_accelerator" not in out[0].confirmation


def test_with_an_accelerator_backend_every_file_runs_there_in_one_worker(scheduled):
    calls, (a, b) = scheduled
    out = _confirm([_finding(a, "JAX101"), _finding(b, "JAX201")], "tpu", _no_detection)
    assert calls == [("tpu", ["a.py", "b.py"])]
    assert {f.confirmation["backend"] for f in out} == {"tpu"}


# -- on a machine with a TPU (skipped elsewhere, as in CI) ------------------------------------------

ON_TPU = (accelerators.detect() or Accelerator("", "")).backend == "tpu" and \
    importlib.util.find_spec("jax") is not None
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _examples(*args: str) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--no-cache", "--output-format", "json",
                           "--dynamic", *args, str(EXAMPLES)], capture_output=True, text=True, timeout=600)
    return json.loads(done.stdout)


@pytest.mark.skipif(not ON_TPU, reason="needs a TPU")
def test_on_a_tpu_host_the_default_runs_on_the_cpu_and_confirms_every_example():
    found = _examples()
    assert [f["confirmation"]["status"] for f in found] == ["confirmed"] * len(found)
    assert {f["confirmation"]["backend"] for f in found} == {"cpu"}


@pytest.mark.skipif(not ON_TPU, reason="needs a TPU")
def test_on_a_tpu_host_the_tpu_backend_confirms_every_example_there():
    found = _examples("--backend", "tpu")
    assert [f["confirmation"]["status"] for f in found] == ["confirmed"] * len(found)
    assert {f["confirmation"]["backend"] for f in found} == {"tpu"}


# -- one worker taking files in turn, for real (on the CPU) -----------------------------------------

TRACED_IF = """
import jax


@jax.jit
def f(x):
    if x.sum() > 0:
        return x
    return -x
"""
STARTS_A_CHILD = """
import os, subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
open(os.environ["JAXLINT_TEST_PIDS"], "w").write(str(child.pid))
""" + "\n" * 3
HANGS = """
import signal, time
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})  # deaf to the worker's own time limit
time.sleep(120)
"""
LOOKS_FOR_IT = """
import os
pid = open(os.environ["JAXLINT_TEST_PIDS"]).read()
try:
    alive = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] not in "ZX"
except OSError:
    alive = False
open(os.environ["JAXLINT_TEST_PIDS"] + ".seen", "w").write("alive" if alive else "gone")
"""


@pytest.mark.skipif(importlib.util.find_spec("jax") is None or not Path("/proc/self/stat").exists(),
                    reason="needs jax and /proc")
def test_one_worker_decides_files_in_turn_killing_what_each_started(tmp_path, monkeypatch):
    from jaxlint.dynamic.runner import Worker, job

    sources = {"a.py": STARTS_A_CHILD + TRACED_IF, "b.py": LOOKS_FOR_IT + TRACED_IF,
               "c.py": HANGS + TRACED_IF, "d.py": TRACED_IF}
    (tmp_path / "pyproject.toml").write_text("")
    jobs = []
    for n, (name, text) in enumerate(sources.items()):
        (tmp_path / name).write_text(text)
        row = text.splitlines().index("    if x.sum() > 0:") + 1
        jobs.append(job(str(tmp_path / name), [{"index": n, "code": "JAX101", "row": row, "end_row": row}], 20, {}))
    monkeypatch.setenv("JAXLINT_TEST_PIDS", str(tmp_path / "pids"))
    starts = []

    def start(*args):
        starts.append(args[1][0]["path"])
        return Worker.start(*args)

    verdicts = run_jobs(jobs, "cpu", 20, Containment.configured({}, 20), start=start)
    assert [verdicts[n]["status"] for n in range(4)] == ["confirmed", "confirmed", "inconclusive", "confirmed"]
    assert (tmp_path / "pids.seen").read_text() == "gone"  # a.py's child was killed before b.py ran
    assert "timed out after 20s" in verdicts[2]["detail"]
    assert [Path(p).name for p in starts] == ["a.py", "d.py"]  # a fresh worker after the one that timed out


def test_a_driven_run_whose_accelerator_is_busy_is_started_again(monkeypatch):
    from jaxlint.dynamic import driver

    results = [({"busy": LOCKED}, None), ({"busy": LOCKED}, None), ({"backend": "tpu", "verdicts": {}}, None)]
    monkeypatch.setattr(driver, "_run", lambda *args: results.pop(0))
    pauses: list[float] = []
    got = driver._run_when_free(None, [], [], ".", None, 60, None, sleep=pauses.append)
    assert got == ({"backend": "tpu", "verdicts": {}}, None) and pauses == [2.0, 5.0]


def test_a_driven_run_busy_past_its_time_limit_says_so(monkeypatch):
    from jaxlint.dynamic import driver

    monkeypatch.setattr(driver, "_run", lambda *args: ({"busy": LOCKED}, None))
    result, ending = driver._run_when_free(None, [], [], ".", None, 5, None, sleep=lambda s: None)
    assert result is None and ending.startswith("could not start: the accelerator stayed busy for 2s")
