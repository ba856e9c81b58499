"""`--output-format github`: GitHub Actions workflow commands, which annotate the pull request's lines."""

from __future__ import annotations

from jaxlint.findings import Finding
from jaxlint.output import Report, location, printable


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(findings: list[Finding], report: Report) -> str:
    lines = []
    for f in findings:
        properties = ",".join(
            (
                f"title={_property(f'jaxlint ({f.code})')}",
                f"file={_property(printable(f.path))}",
                f"line={f.start.row}",
                f"col={f.start.column}",
                f"endLine={f.end.row}",
                f"endColumn={f.end.column}",
            )
        )
        message = f"{location(f)}: {f.code} {printable(f.message)}"
        if f.fix is not None:
            message += f"\n  help: {f.fix.message}"
        if f.confirmation:
            message += f"\n  {f.confirmation['status']}: {f.confirmation.get('detail', '')}"
        lines.append(f"::error {properties}::{_data(message)}\n")
    return "".join(lines)
