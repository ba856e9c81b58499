"""`--output-format sarif`: SARIF 2.1.0, the format code-scanning services read."""

from __future__ import annotations

from pathlib import Path

import jaxlint
from jaxlint.findings import Finding
from jaxlint.output import Report, json_text, valid_unicode

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/jaxlint/jaxlint"


def _uri(path: str) -> str:
    """The file's URI, its undecodable bytes percent-encoded; a name no file system gave (a lone
    surrogate that is no byte) with U+FFFD in its place."""
    try:
        return Path(path).as_uri()
    except UnicodeEncodeError:
        return Path(valid_unicode(path)).as_uri()


def _rule(code: str, name: str, report: Report) -> dict:
    rule = report.rules.get(code)
    described = {
        "id": code,
        "name": name,
        "defaultConfiguration": {"enabled": True, "level": "error"},
        "properties": {"id": code, "name": name, "problem.severity": "error"},
    }
    if rule is not None:
        described.update(
            shortDescription={"text": rule.summary},
            fullDescription={"text": rule.page()},
            help={"text": rule.summary},
            helpUri=rule.url,
        )
        described["properties"]["category"] = rule.category
    return described


def _result(finding: Finding) -> dict:
    result = {
        "ruleId": finding.code,
        "level": "error",
        "message": {"text": finding.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(finding.path)},
                    "region": {
                        "startLine": finding.start.row,
                        "startColumn": finding.start.column,
                        "endLine": finding.end.row,
                        "endColumn": finding.end.column,
                    },
                }
            }
        ],
    }
    properties = {}
    if finding.cell is not None:
        properties["cell"] = finding.cell
    if finding.confirmation:
        properties["confirmation"] = finding.confirmation
    if properties:
        result["properties"] = properties
    return result


def render(findings: list[Finding], report: Report) -> str:
    names = {f.code: f.name for f in findings}
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "jaxlint",
                        "informationUri": INFORMATION_URI,
                        "version": jaxlint.__version__,
                        "rules": [_rule(code, names[code], report) for code in sorted(names)],
                    }
                },
                "results": [_result(f) for f in findings],
            }
        ],
    }
    return json_text(log) + "\n"
