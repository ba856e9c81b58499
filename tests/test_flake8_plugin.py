"""The flake8 plugin, run through flake8 itself: the same rules, codes, positions and messages as `jaxlint check`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("flake8")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def flake8(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_flake8_reports_what_jaxlint_reports(tmp_path):
    done = flake8(
        "--select",
        "JAX",
        "--format",
        "%(path)s|%(row)d|%(col)d|%(code)s|%(text)s",
        str(EXAMPLES),
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    from_flake8 = sorted(tuple(line.split("|", 4)) for line in done.stdout.splitlines())
    linted = subprocess.run(
        [
            sys.executable,
            "-m",
            "jaxlint",
            "check",
            "--isolated",
            "--no-cache",
            "--output-format",
            "json",
            str(EXAMPLES),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    from_jaxlint = sorted(
        (f["filename"], str(f["location"]["row"]), str(f["location"]["column"]), f["code"], f["message"])
        for f in json.loads(linted.stdout)
        if f["cell"] is None and f["code"] not in ("JAX001", "JAX002")
    )
    assert from_jaxlint, "the examples are buggy on purpose"
    assert from_flake8 == from_jaxlint


def test_flake8_noqa_and_selection(tmp_path):
    source = (
        "import jax\n\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n\n\n"
        "@jax.jit\ndef g(x):\n    if x > 0:  # noqa: JAX101\n        return x\n    return -x\n"
    )
    (tmp_path / "a.py").write_text(source)
    done = flake8("--select", "JAX", "a.py", cwd=tmp_path)
    assert done.returncode == 1
    assert [line.split(" ")[:2] for line in done.stdout.splitlines()] == [["a.py:6:8:", "JAX101"]]
    assert flake8("--select", "JAX2", "a.py", cwd=tmp_path).returncode == 0


def test_a_configuration_problem_is_said_on_stderr(tmp_path):
    """flake8 has no finding for a broken `[tool.jaxlint]`: the plugin says so once on stderr and
    lints with the defaults, where `jaxlint check` refuses with exit status 2."""
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nselectt = ["JAX2"]\n')
    (tmp_path / "a.py").write_text((EXAMPLES / "key_reuse.py").read_text())
    (tmp_path / "b.py").write_text((EXAMPLES / "key_reuse.py").read_text())
    done = flake8("--select", "JAX", "-j", "1", "a.py", "b.py", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "JAX201" in done.stdout
    assert done.stderr.count("selectt") == 1, done.stderr
    checked = subprocess.run(
        [sys.executable, "-m", "jaxlint", "check", "a.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert checked.returncode == 2
    assert "selectt" in checked.stderr
