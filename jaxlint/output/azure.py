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
        # Azure has no notion of a notebook cell, and a cell's row is no line of the .ipynb file:
        # the annotation points at the file's start (as ruff's does) and the message names the cell.
        notebook = f.cell is not None
        properties = ";".join(
            (
                "type=error",
                f"sourcepath={_value(printable(f.path))}",
                f"linenumber={1 if notebook else f.start.row}",
                f"columnnumber={1 if notebook else f.start.column}",
                f"code={f.code}",
            )
        )
        text = printable(f.message)
        if notebook:
            text = f"cell {f.cell}:{f.start.row}:{f.start.column}: {text}"
        message = text.replace("%", "%AZP25").replace("\r", "%0D").replace("\n", "%0A")
        lines.append(f"##vso[task.logissue {properties};]{message}\n")
    return "".join(lines)
