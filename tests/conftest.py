"""Shared fixtures: a CLI runner that parses JSON output, and two throw-away rules with fixes for CLI tests."""

from __future__ import annotations

import ast
import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from jaxlint import config as config_module
from jaxlint import rule as rule_module
from jaxlint.cli import main
from jaxlint.findings import Edit, Fix
from jaxlint.rule import Rule


class PrintCall(Rule):
    """Test rule: every `print(...)` call, with a safe fix to `jax.debug.print`."""

    code = "JAX098"
    name = "test-print-call"
    summary = "Test rule: a `print` call"
    what = "Reports `print` calls."
    why = "Only for the command-line tests."
    bad = ("print(x)  # JAX098",)
    good = ("jax.debug.print('{}', x)",)
    fixable = True

    def check(self, module, report) -> None:
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                edit = Edit("jax.debug.print", report.source.start(node.func), report.source.end(node.func))
                report(node, "`print` call", Fix("safe", "Replace with `jax.debug.print`", (edit,)))


class BadName(Rule):
    """Test rule: every use of the name `bad` (option `bad-name`), with an unsafe fix renaming it to `good`."""

    code = "JAX099"
    name = "test-bad-name"
    summary = "Test rule: the name `bad`"
    what = "Reports the name `bad`."
    why = "Only for the command-line tests."
    bad = ("y = bad  # JAX099",)
    good = ("y = good",)
    fixable = True

    def check(self, module, report) -> None:
        target = module.options.get("bad-name", "bad")  # `[tool.jaxlint.options]` reaches rules
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Name) and node.id == target:
                edit = Edit("good", report.source.start(node), report.source.end(node))
                report(node, "the name `bad`", Fix("unsafe", "Rename to `good`", (edit,)))


def _a_name(value):
    if not isinstance(value, str):
        raise TypeError("expected a name")
    return value


@pytest.fixture
def test_rules(monkeypatch):
    """Make the two test rules the only rules for one test, so the CLI tests do not depend on the real
    ones; the configuration knows BadName's option."""
    monkeypatch.setattr(rule_module, "REGISTRY", {})
    for cls in (PrintCall, BadName):
        rule_module.register(cls)
    monkeypatch.setitem(config_module.RULE_OPTIONS, "bad-name", _a_name)
    yield


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self):
        return json.loads(self.stdout)


@pytest.fixture
def cli(monkeypatch, tmp_path):
    """Run `jaxlint ARGS...` in-process with the working folder set to `tmp_path`."""
    monkeypatch.chdir(tmp_path)

    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:  # click 8.2 and later always keep stderr apart
        runner = CliRunner()

    def run(*args: str, input: str | bytes | None = None) -> Outcome:
        result = runner.invoke(main, list(args), input=input, catch_exceptions=False)
        return Outcome(result.exit_code, result.stdout, result.stderr)

    return run


@pytest.fixture
def make_files(tmp_path):
    """Create files (relative path → text, dedented, or bytes) under `tmp_path`; returns `tmp_path`."""

    def make(files: dict[str, str | bytes]) -> Path:
        for name, content in files.items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(textwrap.dedent(content), encoding="utf-8")
        return tmp_path

    return make
