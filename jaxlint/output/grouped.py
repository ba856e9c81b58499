"""`--output-format grouped`: the findings under their file's name, `row:col CODE [*] message` each."""

from __future__ import annotations

from itertools import groupby

import click

from jaxlint.findings import Finding
from jaxlint.output import Report, display_path, headline


def render(findings: list[Finding], report: Report) -> str:
    blocks = []
    for path, in_file in groupby(findings, key=lambda f: f.path):
        lines = [click.style(f"{display_path(path)}:", bold=True, underline=True)]
        for f in in_file:
            cell = f"cell {f.cell}:" if f.cell is not None else ""
            code, _, rest = headline(f, report).partition(" ")
            lines.append(
                f"  {cell}{f.start.row}:{f.start.column} {click.style(code, fg='red', bold=True)} {rest}"
            )
        blocks.append("\n".join(lines) + "\n\n")
    return "".join(blocks)
