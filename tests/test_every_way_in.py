"""Each file's findings are the same whichever way it reaches jaxlint: `check` of the folder, of the
file alone, of the file on standard input, the flake8 plugin and the language server. The project
has findings that only its other modules explain: a helper that goes wrong when another module's
jit traces it (two imports away), and a key handed to a project function that does not consume it
(linted alone, the call would count as a draw)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("flake8")
pytest.importorskip("pygls")
from test_server import shown_in_the_editor  # noqa: E402

PROJECT = Path(__file__).parent / "projects" / "everywhere"


def _own(findings: list[dict], path: Path) -> list[tuple]:
    """(row, column, code, message) of the findings in `path`, from `check`'s JSON."""
    return sorted(
        (f["location"]["row"], f["location"]["column"], f["code"], f["message"])
        for f in findings
        if f["filename"] == str(path)
    )


def _flake8(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "JAX", "--format",
         "%(path)s|%(row)d|%(col)d|%(code)s|%(text)s", str(root)],
        capture_output=True, text=True, timeout=300, cwd=root,
    )


def test_every_way_in_gives_each_file_the_same_findings(tmp_path, cli):
    root = tmp_path / "everywhere"
    shutil.copytree(PROJECT, root)
    paths = sorted(root.rglob("*.py"))
    in_folder = cli("check", "--output-format", "json", str(root)).json
    expected = {path: _own(in_folder, path) for path in paths}
    assert [(path.name, [(row, code) for row, _, code, _ in found]) for path, found in expected.items() if found] == [
        ("ops.py", [(5, "JAX101")]),
        ("train.py", [(15, "JAX201")]),  # not on line 14: `ops.spec` consumes no key
    ]

    for path in paths:
        alone = cli("check", "--output-format", "json", str(path)).json
        assert _own(alone, path) == expected[path], path
        piped = cli("check", "--output-format", "json", "--stdin-filename", str(path), "-", input=path.read_text())
        assert _own(piped.json, path) == expected[path], path

    done = _flake8(root)
    assert done.returncode == 1, done.stderr
    by_flake8: dict[Path, list[tuple]] = {path: [] for path in paths}
    for line in done.stdout.splitlines():
        name, row, column, code, text = line.split("|", 4)
        by_flake8[(root / name).resolve()].append((int(row), int(column), code, text))
    assert {path: sorted(found) for path, found in by_flake8.items()} == expected

    assert shown_in_the_editor(root, paths) == expected


def test_a_flake8_run_reads_what_an_earlier_one_cached(tmp_path):
    """flake8's processes share jaxlint's results cache: a second run over the tree lints nothing
    again, and finds what the first found."""
    root = tmp_path / "everywhere"
    shutil.copytree(PROJECT, root)
    first = _flake8(root)
    [cache] = (root / ".jaxlint_cache").rglob("*.json")
    before = cache.read_bytes()
    second = _flake8(root)
    assert second.stdout.splitlines() and sorted(second.stdout.splitlines()) == sorted(first.stdout.splitlines())
    assert cache.read_bytes() == before
