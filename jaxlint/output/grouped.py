"""`--output-format grouped`: the findings under their file's name, `row:col CODE [*] message` each."""

from __future__ import annotations

from itertools import groupby

from jaxlint.findings import Finding
from jaxlint.output import Report, display_path, headline, style


def render(findings: list[Finding], report: Report) -> str:
    blocks = []
    for path, in_file in groupby(findings, key=lambda f: f.path):
        lines = [style(f"{display_path(path)}:", report, bold=True, underline=True)]
        for f in in_file:
            cell = f"cell {f.cell}:" if f.cell is not None else ""
            code, _, rest = headline(f, report).partition(" ")
            lines.append(
                f"  {cell}{f.start.row}:{f.start.column} {style(code, report, fg='red', bold=True)} {rest}"
            )
        blocks.append("\n".join(lines) + "\n\n")
    return "".join(blocks)
