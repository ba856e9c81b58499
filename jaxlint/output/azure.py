"""`--output-format azure`: Azure Pipelines logging commands, which annotate the build with each finding."""

from __future__ import annotations

from jaxlint.findings import Finding
from jaxlint.output import Report, printable


def _value(text: str) -> str:
    # Azure's escapes for a property value; the message may not span lines either.
    return (
        text.replace("%", "%AZP25")
        .replace(";", "%3B")
        .replace("]", "%5D")
        .replace("\r", "%0D")
        .replace("\n", "%0A")
    )


def render(findings: list[Finding], report: Report) -> str:
    lines = []
    for f in findings:
        properties = ";".join(
            (
                "type=error",
                f"sourcepath={_value(printable(f.path))}",
                f"linenumber={f.start.row}",
                f"columnnumber={f.start.column}",
                f"code={f.code}",
            )
        )
        message = printable(f.message).replace("%", "%AZP25").replace("\r", "%0D").replace("\n", "%0A")
        lines.append(f"##vso[task.logissue {properties};]{message}\n")
    return "".join(lines)
