"""`--dynamic` holds hostile modules: jaxlint, run as a user runs it, survives them, prints valid JSON,
gives honest reasons, leaves no process behind, and cannot be handed a forged verdict."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from jaxlint.dynamic import processes
from jaxlint.dynamic.channel import Channel, ChannelReader
from jaxlint.dynamic.limits import Limits
from jaxlint.dynamic_settings import parse_memory
from jaxlint.dynamic.runner import _ending, _verdicts
from jaxlint.dynamic.supervisor import FAILED

# `--dynamic` stops with exit 2 before anything else when JAX is not installed (Python 3.9 has
# no usable JAX): the tests of what happens next need it.
needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="--dynamic needs JAX")

needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
needs_proc = pytest.mark.skipif(not processes.available(), reason="needs /proc")
HOSTILE = Path(__file__).parent / "hostile"
CONTAINED = ["signal_parent.py", "forge_verdict.py", "parent_stdout.py", "escaping_children.py", "memory_hog.py"]


def _jaxlint(*args: str, cwd: Path, env: dict | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    """jaxlint in a session of its own (so a module that escaped could not reach the test runner),
    its stdout a pipe, as in `jaxlint check ... | jq`."""
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", *args], cwd=cwd, env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, start_new_session=True,
    )


def _alive(pid: int) -> bool:
    p = processes.read(pid)
    return p is not None and not p.zombie


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    project = tmp_path_factory.mktemp("hostile")
    for name in CONTAINED:
        shutil.copy(HOSTILE / name, project / name)
    (project / "pyproject.toml").write_text('[tool.jaxlint.dynamic]\nmemory-limit = "2GiB"\n')
    pids = project / "pids.txt"
    pids.touch()
    done = _jaxlint("check", "--dynamic", "--backend", "cpu", "--dynamic-timeout", "30", "--no-cache",
                    "--output-format", "json", ".", cwd=project, env={"JAXLINT_HOSTILE_PIDS": str(pids)})
    return done, pids


def _findings(done, name: str) -> list[dict]:
    found = [f for f in json.loads(done.stdout) if Path(f["filename"]).name == name]
    assert found, f"no findings in {name}"
    return found


@needs_jax
@needs_proc
def test_jaxlint_survives_and_prints_valid_json(hostile_run):
    done, _ = hostile_run
    assert done.returncode == 1, done.stderr.decode()
    findings = json.loads(done.stdout)  # text the modules wrote to their parent's streams is not in it
    assert all(f["confirmation"] is not None for f in findings)
    assert b"this is not JSON" not in done.stdout + done.stderr


@needs_jax
@needs_proc
@pytest.mark.parametrize("name", ["signal_parent.py", "parent_stdout.py", "escaping_children.py"])
def test_the_run_carries_on_and_decides(hostile_run, name):
    done, _ = hostile_run
    assert {f["confirmation"]["status"] for f in _findings(done, name)} == {"confirmed"}


@needs_jax
@needs_proc
def test_a_forged_verdict_is_ignored(hostile_run):
    done, _ = hostile_run
    for f in _findings(done, "forge_verdict.py"):
        assert "forged" not in f["confirmation"]["detail"]


@needs_jax
@needs_proc
def test_the_memory_limit_is_named(hostile_run):
    done, _ = hostile_run
    for f in _findings(done, "memory_hog.py"):
        detail = f["confirmation"]["detail"]
        assert f["confirmation"]["status"] == "inconclusive"
        assert "MemoryError" in detail and "2 GiB" in detail and "memory-limit" in detail, detail


@needs_jax
@needs_proc
def test_no_process_is_left_behind(hostile_run):
    done, pids = hostile_run
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 2  # one in a new session, one double-forked with a clean environment
    assert not [pid for pid in started if _alive(pid)]
    # JAXLINT_HOSTILE_PIDS is in the environment of everything else it started
    assert not [p.pid for p in processes.table().values()
                if not p.zombie and processes.has_environment(p.pid, "JAXLINT_HOSTILE_PIDS", str(pids))]


@needs_jax
def test_sandbox_without_bwrap_runs_nothing(tmp_path):
    (tmp_path / "m.py").write_text(textwrap.dedent("""\
        import jax

        open("ran.txt", "w").close()


        @jax.jit
        def f(x):
            if x > 0:
                return x
            return x
    """))
    done = _jaxlint("check", "--dynamic", "--sandbox", "--output-format", "json", "m.py", cwd=tmp_path,
                    env={"PATH": str(Path(sys.executable).parent)})
    findings = json.loads(done.stdout)
    assert findings and all(f["confirmation"]["status"] == "inconclusive" for f in findings)
    assert "bwrap" in findings[0]["confirmation"]["detail"]
    assert not (tmp_path / "ran.txt").exists()


def _bwrap_works() -> bool:
    from jaxlint.dynamic import sandbox

    return sandbox.unavailable() is None


@needs_jax
@needs_proc
@pytest.mark.skipif(not _bwrap_works(), reason="bwrap cannot run here")
def test_the_bwrap_sandbox_hides_the_linter_and_the_world(tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    (tmp_path / "m.py").write_text(textwrap.dedent(f"""\
        import os
        import signal
        import socket

        import jax

        # Everything a module could try without a sandbox: write the project, reach the network,
        # find jaxlint in the process table and kill it.
        for attempt in (
            lambda: open("written.txt", "w").close(),
            lambda: socket.create_connection(("127.0.0.1", {port}), timeout=1),
        ):
            try:
                attempt()
            except OSError:
                pass
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{{pid}}/cmdline", "rb") as f:
                    if b"jaxlint\\x00check" in f.read():  # `python -m jaxlint check`
                        os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass


        @jax.jit
        def f(x):
            if x.sum() > 0:
                return x
            return x
    """))
    done = _jaxlint("check", "--dynamic", "--sandbox", "--backend", "cpu", "--dynamic-timeout", "30",
                    "--output-format", "json", "m.py", cwd=tmp_path)
    findings = json.loads(done.stdout)
    assert done.returncode == 1, done.stderr.decode()
    assert [f["confirmation"]["status"] for f in findings] == ["confirmed"], [f["confirmation"] for f in findings]
    assert not (tmp_path / "written.txt").exists()
    with pytest.raises(BlockingIOError):
        listener.accept()
    listener.close()


def test_sandbox_needs_dynamic(cli):
    out = cli("check", "--sandbox")
    assert out.code == 2
    assert "--sandbox" in out.stderr and "need --dynamic" in out.stderr


@needs_jax
@pytest.mark.parametrize("setting", ['memory-limit = "lots"', "memory-limit = true", 'sandbox = "docker"'])
def test_unreadable_dynamic_settings_are_a_configuration_error(cli, make_files, setting):
    make_files({"pyproject.toml": f"[tool.jaxlint.dynamic]\n{setting}\n",
                "m.py": "import jax\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return x\n"})
    out = cli("check", "--dynamic", "m.py")
    assert out.code == 2
    assert setting.split(" =")[0] in out.stderr


# -- units ---------------------------------------------------------------------------------------


def test_the_channel_keeps_only_records_with_the_secret():
    r, w = os.pipe()
    reader = ChannelReader(r, "s3cret")
    Channel(w, "s3cret").send(state={"phase": "real"})
    for forged in (b'{"state": {"phase": "forged"}}\n', b'{"secret": "guess", "state": {"phase": "forged"}}\n',
                   b'{"secret": null, "exit": {"code": 0}}\n', b"[1, 2]\n", b"not json\n", b"x" * 300_000 + b"\n"):
        os.write(w, forged)
    Channel(w, "s3cret").send(worker=12)
    os.close(w)
    reader.join(timeout=5)
    assert reader.records == {"state": {"phase": "real"}, "worker": 12}
    assert reader.ignored == 6
    assert not reader.ended.is_set()


@pytest.mark.parametrize("text, size", [("8GiB", 8 << 30), ("512MB", 512 << 20), ("2g", 2 << 30),
                                        ("1.5 GiB", 3 << 29), (4096, 4096), ("none", None), ("None", None)])
def test_memory_sizes(text, size):
    assert parse_memory(text) == size


@pytest.mark.parametrize("text", ["", "0", "-1GiB", "8 parsecs", 0, True, 1.5])
def test_memory_sizes_that_are_not(text):
    with pytest.raises(ValueError):
        parse_memory(text)


def test_the_limits_follow_the_settings_and_the_time_limit():
    limits = Limits.for_run({"memory-limit": "1GiB"}, timeout=10)
    assert limits.memory == 1 << 30
    assert limits.cpu_seconds >= 10
    assert Limits.for_run({}, timeout=10).memory == 8 << 30


def test_endings_name_what_stopped_the_worker():
    limits = Limits(None, 70, None, 4096)
    state = {"phase": "importing the module"}
    assert _ending({"signal": signal.SIGXCPU}, 0, False, 5, state, b"", limits) == \
        "used up its CPU-time limit of 70s while importing the module"
    assert _ending({"signal": signal.SIGSEGV}, 0, False, 5, state, b"", limits) == \
        "crashed with signal SIGSEGV while importing the module"
    assert _ending(None, -signal.SIGKILL, False, 5, state, b"", limits) == \
        "was stopped: its supervisor process was killed with signal SIGKILL while importing the module"
    assert _ending(None, None, True, 5, state, b"", limits) == "timed out after 5s while importing the module"
    assert _ending({"code": FAILED}, 0, False, 5, state, b"Traceback ...\nKeyError: 'path'\n", limits) == \
        "failed while importing the module (KeyError: 'path')"
    assert _ending({"code": 3}, 0, False, 5, state, b"", limits) == "exited with status 3 while importing the module"


@pytest.mark.skipif(processes.prctl(processes.PR_GET_DUMPABLE) is None, reason="needs Linux prctl")
def test_the_linter_hides_its_proc_entries_while_user_code_runs():
    before = processes.prctl(processes.PR_GET_DUMPABLE)
    with processes.hidden():
        assert processes.prctl(processes.PR_GET_DUMPABLE) == 0
    assert processes.prctl(processes.PR_GET_DUMPABLE) == before


@pytest.mark.parametrize("detail, backend, named", [
    ("MemoryError at line 4 before line 9 ran", "cpu", True),
    ("JaxRuntimeError at line 4: RESOURCE_EXHAUSTED: Out of memory allocating 8589934592 bytes", "cpu", True),
    ("JaxRuntimeError at line 4: RESOURCE_EXHAUSTED: Out of memory allocating 8589934592 bytes", "gpu", False),
    ("JAX raised TracerBoolConversionError at line 5", "cpu", False),
])
def test_running_out_of_host_memory_names_the_limit(detail, backend, named):
    state = {"phase": "done", "backend": backend,
             "verdicts": {"0": {"status": "inconclusive", "detail": detail, "final": True}}}
    got = _verdicts([{"index": 0}], state, None, Limits(1 << 30, 70, None, 4096))[0]["detail"]
    assert ("1 GiB" in got and "memory-limit" in got) is named
    assert _verdicts([{"index": 0}], state, None, Limits(None, 70, None, 4096))[0]["detail"] == detail


@needs_proc
def test_the_sweep_finds_marked_processes_that_left_the_session_and_lost_their_parent(tmp_path):
    pids = tmp_path / "pids"
    linger = textwrap.dedent(f"""\
        import os, subprocess, sys, time
        code = "import os, time\\nif os.fork(): os._exit(0)\\nos.setsid()\\n" \\
               "open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\\\n')\\ntime.sleep(600)"
        subprocess.Popen([sys.executable, "-c", code], env={{{processes.MARKER!r}: "run-1"}})
        time.sleep(600)
    """)
    root = subprocess.Popen([sys.executable, "-c", linger], start_new_session=True)
    tree = processes.ProcessTree(root.pid, "run-1")
    deadline = time.monotonic() + 30
    while not (pids.exists() and pids.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    escaped = int(pids.read_text())
    assert processes.read(escaped).session != processes.read(root.pid).session
    assert tree.sweep() >= 2
    root.wait(timeout=10)
    assert not _alive(escaped)
    assert tree.leftovers() == []


@needs_proc
def test_the_sweep_stops_a_process_that_keeps_forking_away():
    # Each process forks a child and exits, so no pid lasts: killing a list of pids would miss it.
    chain = "import os, time\nwhile True:\n    time.sleep(0.005)\n    if os.fork():\n        os._exit(0)\n"
    root = subprocess.Popen([sys.executable, "-c", chain], start_new_session=True,
                            env={**os.environ, processes.MARKER: "run-2"})
    tree = processes.ProcessTree(root.pid, "run-2")
    time.sleep(0.5)
    try:
        assert tree.sweep() >= 1
        assert tree.leftovers() == []
    finally:  # never leave a forking process behind, whatever the sweep did
        with contextlib.suppress(ProcessLookupError):
            os.killpg(root.pid, signal.SIGKILL)
        root.wait(timeout=10)
