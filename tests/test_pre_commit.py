"""pre-commit, end to end: the hook from this checkout, in a throwaway repository, fails on a bug and passes after the fix."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("pre_commit")
if shutil.which("git") is None:
    pytest.skip("git is not installed", allow_module_level=True)

BUGGY = "import jax\n\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"
FIXED = "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(x):\n    return jnp.where(x > 0, x, -x)\n"


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _repository(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    _git("config", "user.email", "dev@example.com", cwd=repo)
    _git("config", "user.name", "dev", cwd=repo)
    return repo


def _hook(repo: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """The hook of this checkout, run by `pre-commit try-repo` on the staged files (or on `args`'s)."""
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"))
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "jaxlint", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_hook_fails_on_a_bug_and_passes_after_the_fix(tmp_path):
    repo = _repository(tmp_path)
    (repo / "model.py").write_text(BUGGY)
    _git("add", "model.py", cwd=repo)

    # pre-commit builds the hook's environment from this checkout alone: jaxlint and its
    # dependencies, no JAX (test_cli_packaging checks that none of them is JAX)
    failed = _hook(repo, tmp_path, "--all-files")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "model.py:6:8: JAX101" in failed.stdout

    (repo / "model.py").write_text(FIXED)
    _git("add", "model.py", cwd=repo)
    passed = _hook(repo, tmp_path, "--all-files")
    assert passed.returncode == 0, passed.stdout + passed.stderr


HELPER = "def clip(x):\n    if x > 0:\n        return x\n    return -x\n"
CALLER = "import jax\n\nimport helper\n\n\ndef step(x):\n    return helper.clip(x) * 2\n"
JITTED = CALLER.replace("def step", "@jax.jit\ndef step")


def test_a_commit_that_makes_another_files_code_traced_is_stopped_at_that_files_line(tmp_path):
    """Only the caller is committed, and only it is named to the hook: the bug its new jit makes is
    in the helper, reported at the helper's line and naming the caller's entry point."""
    repo = _repository(tmp_path)
    (repo / "pyproject.toml").write_text("")
    (repo / "helper.py").write_text(HELPER)
    (repo / "caller.py").write_text(CALLER)
    _git("add", ".", cwd=repo)
    _git("commit", "-q", "-m", "helper and an eager caller", cwd=repo)

    (repo / "caller.py").write_text(JITTED)
    _git("add", "caller.py", cwd=repo)
    stopped = _hook(repo, tmp_path)
    assert stopped.returncode == 1, stopped.stdout + stopped.stderr
    (line,) = [line for line in stopped.stdout.splitlines() if ": JAX101 " in line]
    assert line.startswith("helper.py:2:8: JAX101") and line.endswith("(traced via `caller.step`)")
    assert "caller.py:" not in stopped.stdout
    assert (repo / "helper.py").read_text() == HELPER

    _git("commit", "-q", "-m", "jit the caller", cwd=repo)  # no hook is installed: the commit goes in
    (repo / "caller.py").write_text(JITTED + "\n\nSCALE = 2\n")
    _git("add", "caller.py", cwd=repo)
    still = _hook(repo, tmp_path)  # any later commit of the caller is stopped too, until the helper is fixed
    assert still.returncode == 1 and "helper.py:2:8: JAX101" in still.stdout
