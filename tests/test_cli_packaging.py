"""Packaging: the console script, the pre-commit hook, and the README's set-up commands."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def test_console_script_and_packages():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["scripts"] == {"jaxlint": "jaxlint.cli:main"}
    assert project["tool"]["setuptools"]["packages"]["find"]["include"] == ["jaxlint", "jaxlint.*"]
    # static linting must install without JAX: JAX comes only with the extras
    assert not [d for d in project["project"]["dependencies"] if re.match(r"jax\b", d)]


def test_pre_commit_manifest_is_valid():
    clientlib = pytest.importorskip("pre_commit.clientlib")
    (hook,) = clientlib.load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    assert hook["id"] == "jaxlint"
    assert hook["entry"] == "jaxlint check --force-exclude"
    assert hook["require_serial"] is True


def test_readme_set_up_commands():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"## Set up\n.*?```sh\n(.*?)```", readme, re.S).group(1).splitlines()
    assert block == [
        "python3 -m venv .venv && . .venv/bin/activate && pip install . && jaxlint check examples/",
        'python3 -m venv .venv && . .venv/bin/activate && pip install ".[test]" && python -m pytest -q -n auto',
    ]
    assert "python -m pytest -q -n auto" in (ROOT / ".ci" / "run").read_text()  # CI runs the README's command
    assert not re.search(r"pip install\s+['\"]?jaxlint\b", readme)  # that name on PyPI is another project


def test_docs_name_every_output_format_and_command():
    from jaxlint.cli import main
    from jaxlint.config import OUTPUT_FORMATS

    contract = (ROOT / "docs" / "contract.md").read_text()
    readme = (ROOT / "README.md").read_text()
    for output_format in OUTPUT_FORMATS:
        assert f"`{output_format}`" in readme
        if output_format not in ("full", "concise", "grouped"):  # text layouts are not part of the contract
            assert re.search(rf"(`|--output-format ){output_format}\b", contract), output_format
    for command in main.commands:
        assert f"`jaxlint {command}" in contract


def test_flake8_entry_point_and_server_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["flake8.extension"] == {"JAX": "jaxlint.flake8_plugin:JaxlintChecker"}
    server = project["optional-dependencies"]["server"]
    assert {re.match(r"[a-z]+", d).group() for d in server} == {"pygls", "lsprotocol"}


def test_readme_ci_recipes_run(tmp_path):
    """Each `jaxlint` command of the README's CI recipes, run as written on a project with a bug."""
    import json
    import os
    import shlex
    import subprocess

    yaml_blocks = re.findall(r"```yaml\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    commands = [
        shlex.split(m)
        for block in yaml_blocks
        for m in re.findall(r"^\s*-\s+(?:run:\s+)?(jaxlint check[^\n#]*)", block, re.M)
    ]
    assert len(commands) == 3
    (tmp_path / "model.py").write_text(
        "import jax\n\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"
    )
    for command in commands:
        done = subprocess.run(
            [sys.executable, "-m", "jaxlint", *command[1:]],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "CI_PROJECT_DIR": str(tmp_path)},
        )
        assert done.returncode == (0 if "--exit-zero" in command else 1), done.stderr
    assert json.loads((tmp_path / "jaxlint.sarif").read_text())["runs"][0]["results"]
    (issue,) = json.loads((tmp_path / "gl-code-quality-report.json").read_text())
    assert issue["location"] == {"path": "model.py", "lines": {"begin": 6, "end": 6}}
