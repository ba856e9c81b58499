"""`--output-format full`: each finding's headline, then its source lines with the span underlined."""

from __future__ import annotations

from typing import Mapping

from jaxlint.findings import Finding
from jaxlint.notebook import Notebook
from jaxlint.output import Report, styled_headline
from jaxlint.source import SourceError, decode

CONTEXT = 2  # lines shown above and below the finding, as ruff shows
TAB = 4


def _lines(path: str, cell: int | None, buffers: Mapping[str, bytes]) -> tuple[str, ...]:
    """The lines of the file (or notebook cell) a finding is in; empty when it cannot be read."""
    try:
        data = buffers.get(path)
        if data is None:
            with open(path, "rb") as handle:
                data = handle.read()
        text = Notebook.parse(data).cell_source(cell - 1) if cell is not None else decode(data)
    except (OSError, SourceError, IndexError):
        return ()
    return tuple(text.splitlines())


def _snippet(finding: Finding, lines: tuple[str, ...]) -> list[str]:
    row = finding.start.row
    if not 0 < row <= len(lines):
        return []
    first, last = max(row - CONTEXT, 1), min(row + CONTEXT, len(lines))
    while first < row and not lines[first - 1].strip():
        first += 1
    while last > row and not lines[last - 1].strip():
        last -= 1
    width = len(str(last))
    gutter = " " * (width + 1)
    line = lines[row - 1]
    start = len(line[: finding.start.column - 1].expandtabs(TAB))
    if finding.end.row == row:
        end = len(line[: finding.end.column - 1].expandtabs(TAB))
    else:
        end = len(line.expandtabs(TAB))  # a span over several lines: underline to the end of its first
    carets = "^" * max(end - start, 1)
    out = [f"{gutter}|"]
    for number in range(first, last + 1):
        text = lines[number - 1].expandtabs(TAB)
        out.append(f"{number:>{width}} | {text}".rstrip())
        if number == row:
            out.append(f"{gutter}| {' ' * start}{carets} {finding.code}")
    out.append(f"{gutter}|")
    return out


def render(findings: list[Finding], report: Report) -> str:
    blocks = []
    sources: dict[
        tuple[str, int | None], tuple[str, ...]
    ] = {}  # findings come grouped by file: read each once
    for f in findings:
        out = [styled_headline(f, report)]
        key = (f.path, f.cell)
        if key not in sources:
            sources[key] = _lines(f.path, f.cell, report.buffers)
        snippet = _snippet(f, sources[key])
        out.extend(snippet)
        indent = " " * (len(snippet[0]) - 1) if snippet else "  "
        if f.fix is not None:
            out.append(f"{indent}= help: {f.fix.message}")
        if f.confirmation:
            out.append(f"{indent}= {f.confirmation['status']}: {f.confirmation.get('detail', '')}")
        blocks.append("\n".join(out) + "\n\n")
    return "".join(blocks)
