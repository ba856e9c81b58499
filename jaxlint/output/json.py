"""`--output-format json`: a JSON array of findings with ruff's fields (docs/contract.md)."""

from __future__ import annotations

from jaxlint.findings import Finding
from jaxlint.output import Report, json_text


def render(findings: list[Finding], report: Report) -> str:
    rows = [f.to_json(url=report.url(f.code)) for f in findings]
    # DEL is valid raw in JSON, but a terminal or log viewer may act on it: escaped as the C0 controls are.
    return json_text(rows) + "\n"
