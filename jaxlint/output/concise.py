"""`--output-format concise`: one line per finding, `path:row:col: CODE [*] message`."""

from __future__ import annotations

from jaxlint.findings import Finding
from jaxlint.output import Report, styled_headline


def render(findings: list[Finding], report: Report) -> str:
    return "".join(f"{styled_headline(f, report)}\n" for f in findings)
