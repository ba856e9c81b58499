"""What the README says about ruff, checked against the installed ruff."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest


def _ruff() -> list[str]:
    found = shutil.which("ruff")
    if found:
        return [found]
    probe = subprocess.run([sys.executable, "-m", "ruff", "--version"], capture_output=True)
    if probe.returncode == 0:
        return [sys.executable, "-m", "ruff"]
    pytest.skip("ruff is not installed")


SOURCE = "import os\n\nx = 1  # noqa: JAX101\ny = 2  # noqa: F401, JAX101\nprint(os.sep, x, y)\n"


@pytest.mark.parametrize("external", [False, True])
def test_ruff_leaves_jax_noqa_codes_alone(tmp_path, external):
    (tmp_path / "a.py").write_text(SOURCE)
    if external:
        (tmp_path / "ruff.toml").write_text('[lint]\nexternal = ["JAX"]\n')
    done = subprocess.run(
        [*_ruff(), "check", "--no-cache", "--select", "RUF100", "--output-format", "json", "a.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = json.loads(done.stdout)
    # RUF100 flags the F401 that suppresses nothing on line 4, never the JAX codes
    assert [(f["code"], f["location"]["row"]) for f in found] == [("RUF100", 4)]
    assert "JAX101" not in found[0]["message"]
