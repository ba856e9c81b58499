"""`--output-format json-lines`: one JSON object per finding per line."""

from __future__ import annotations

import json

from jaxlint.findings import Finding
from jaxlint.output import Report, valid_unicode


def render(findings: list[Finding], report: Report) -> str:
    return "".join(
        valid_unicode(json.dumps(f.to_json(url=report.url(f.code)), ensure_ascii=False)) + "\n" for f in findings
    )
