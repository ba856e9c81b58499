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


def test_hook_fails_on_a_bug_and_passes_after_the_fix(tmp_path):
    repo = tmp_path / "project"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    _git("config", "user.email", "dev@example.com", cwd=repo)
    _git("config", "user.name", "dev", cwd=repo)
    (repo / "model.py").write_text(BUGGY)
    _git("add", "model.py", cwd=repo)
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"))

    def hook() -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "jaxlint", "--all-files"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    # pre-commit builds the hook's environment from this checkout alone: jaxlint and its
    # dependencies, no JAX (test_cli_packaging checks that none of them is JAX)
    failed = hook()
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "model.py:6:8: JAX101" in failed.stdout

    (repo / "model.py").write_text(FIXED)
    _git("add", "model.py", cwd=repo)
    passed = hook()
    assert passed.returncode == 0, passed.stdout + passed.stderr
