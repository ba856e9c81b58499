"""`--output-format json`: a JSON array of findings with ruff's fields (docs/contract.md)."""

from __future__ import annotations

import json

from jaxlint.findings import Finding
from jaxlint.output import Report


def render(findings: list[Finding], report: Report) -> str:
    return (
        json.dumps([f.to_json(url=report.url(f.code)) for f in findings], indent=2, ensure_ascii=False) + "\n"
    )
