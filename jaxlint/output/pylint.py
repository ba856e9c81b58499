"""`--output-format pylint`: `path:row: [CODE] message`, the line format pylint's parsers read."""

from __future__ import annotations

from jaxlint.findings import Finding
from jaxlint.output import Report, display_path, printable


def render(findings: list[Finding], report: Report) -> str:
    lines = []
    for f in findings:
        cell = f"cell {f.cell}:" if f.cell is not None else ""
        lines.append(f"{display_path(f.path)}:{cell}{f.start.row}: [{f.code}] {printable(f.message)}\n")
    return "".join(lines)
