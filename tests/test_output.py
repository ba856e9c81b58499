"""Output formats: full, concise, json-lines, github, sarif, and the confirmation markers of --dynamic."""

from __future__ import annotations

import importlib.util
import json
import sys
import types

import pytest

# `--dynamic` stops with exit 2 before anything else when JAX is not installed (Python 3.9 has
# no usable JAX): the tests of what happens next need it.
needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="--dynamic needs JAX")

SOURCE = "import jax\n\n\ndef f(x):\n    y = 1\n    print(bad,\n          x)\n    return x\n"


@pytest.fixture
def project(make_files, test_rules):
    return make_files({"a.py": SOURCE})


def test_full_shows_the_source_with_the_span_underlined(cli, project):
    out = cli("check", "--output-format", "full")
    assert out.code == 1
    assert out.stdout.split("\n\n")[1] == "\n".join(
        [
            "a.py:6:11: JAX099 the name `bad`",
            "  |",
            "4 | def f(x):",
            "5 |     y = 1",
            "6 |     print(bad,",
            "  |           ^^^ JAX099",
            "7 |           x)",
            "8 |     return x",
            "  |",
            "  = help: Rename to `good`",
        ]
    )
    assert out.stdout.startswith("a.py:6:5: JAX098 [*] `print` call\n")
    assert (
        "6 |     print(bad,\n  |     ^^^^^^^^^^ JAX098\n" in out.stdout
    )  # a multi-line span: to the end of its first line


def test_full_is_the_default(cli, project):
    assert cli("check").stdout == cli("check", "--output-format", "full").stdout


def test_concise(cli, project):
    assert cli("check", "--output-format", "concise").stdout.splitlines()[:2] == [
        "a.py:6:5: JAX098 [*] `print` call",
        "a.py:6:11: JAX099 the name `bad`",
    ]


def test_unsafe_fix_marker_needs_unsafe_fixes(cli, project):
    assert (
        "a.py:6:11: JAX099 [*] the name `bad`"
        in cli("check", "--output-format", "concise", "--unsafe-fixes").stdout
    )


def test_paths_outside_the_working_folder_stay_absolute(cli, project, tmp_path, monkeypatch):
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert cli("check", "--output-format", "concise", str(tmp_path / "a.py")).stdout.startswith(
        f"{tmp_path / 'a.py'}:6:5: JAX098"
    )


def test_json_lines(cli, project, tmp_path):
    lines = cli("check", "--output-format", "json-lines").stdout.splitlines()
    assert [json.loads(line)["code"] for line in lines] == ["JAX098", "JAX099"]
    assert json.loads(lines[0])["filename"] == str(tmp_path / "a.py")


def test_github(cli, project, tmp_path):
    lines = cli("check", "--output-format", "github").stdout.splitlines()
    assert lines[1] == (
        f"::error title=jaxlint (JAX099),file={tmp_path / 'a.py'},line=6,col=11,endLine=6,endColumn=14"
        "::a.py:6:11: JAX099 the name `bad`%0A  help: Rename to `good`"
    )


def test_sarif(cli, project, tmp_path):
    log = cli("check", "--output-format", "sarif").json
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "jaxlint"
    assert [r["id"] for r in driver["rules"]] == ["JAX098", "JAX099"]
    assert driver["rules"][0]["shortDescription"]["text"] == "Test rule: a `print` call"
    assert driver["rules"][0]["helpUri"].endswith("JAX098.md")
    result = run["results"][1]
    assert result["ruleId"] == "JAX099" and result["level"] == "error"
    assert result["message"]["text"] == "the name `bad`"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == (tmp_path / "a.py").as_uri()
    assert location["region"] == {"startLine": 6, "startColumn": 11, "endLine": 6, "endColumn": 14}


def test_sarif_without_findings_is_still_a_log(cli, make_files):
    make_files({"a.py": "x = 1\n"})
    out = cli("check", "--output-format", "sarif")
    assert out.code == 0 and out.json["runs"][0]["results"] == []


def test_empty_json_is_an_empty_array(cli, make_files):
    make_files({"a.py": "x = 1\n"})
    assert cli("check", "--output-format", "json").json == []


@needs_jax
def test_confirmation_is_shown(cli, project, monkeypatch):
    def confirm(findings, **_):
        return [
            f.with_(confirmation={"status": "confirmed", "detail": "TracerBoolConversionError here"})
            for f in findings
        ]

    monkeypatch.setitem(sys.modules, "jaxlint.dynamic", types.SimpleNamespace(confirm=confirm))
    full = cli("check", "--dynamic", "--select", "JAX099").stdout
    assert full.startswith("a.py:6:11: JAX099 the name `bad` [confirmed]\n")
    assert "  = confirmed: TracerBoolConversionError here\n" in full
    concise = cli("check", "--dynamic", "--select", "JAX099", "--output-format", "concise").stdout
    assert concise.startswith("a.py:6:11: JAX099 the name `bad` [confirmed]\n")
    sarif = cli("check", "--dynamic", "--select", "JAX099", "--output-format", "sarif").json
    assert sarif["runs"][0]["results"][0]["properties"]["confirmation"]["status"] == "confirmed"
