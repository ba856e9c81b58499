"""`--output-format full`: each finding's headline, then its source lines with the span underlined."""

from __future__ import annotations

import re
from typing import Mapping

from jaxlint.files import read_bytes
from jaxlint.findings import Finding
from jaxlint.notebook import Notebook
from jaxlint.output import Report, printable, styled_headline
from jaxlint.source import SourceError, decode, split_lines

CONTEXT = 2  # lines shown above and below the finding, as ruff shows
TAB = 4


# One character for one: control characters as their Unicode control pictures (as ruff shows them),
# lone surrogates as U+FFFD, so that the source cannot drive the terminal and the carets stay aligned.
_UNPRINTABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff]")


def _picture(match: re.Match) -> str:
    code = ord(match.group())
    return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"


def _visible(line: str) -> str:
    return _UNPRINTABLE.sub(_picture, line)


class _Lines:
    """The lines of the file (or notebook cell) a finding is in; empty when it cannot be read.

    Findings come sorted by file: each file is read and each cell split once, and only the
    current file is kept.
    """

    def __init__(self, buffers: Mapping[str, bytes]) -> None:
        self._buffers = buffers  # unsaved text (standard input) by path
        self._path: str | None = None
        self._document: Notebook | str | None = None
        self._lines: dict[int | None, tuple[str, ...]] = {}

    def _read(self, path: str, notebook: bool) -> Notebook | str | None:
        try:
            data = self._buffers.get(path)
            if data is None:
                data = read_bytes(path)
            return Notebook.parse(data) if notebook else decode(data)
        except (OSError, ValueError, SourceError):  # ValueError: a name no file can have (a NUL in it)
            return None

    def __call__(self, path: str, cell: int | None) -> tuple[str, ...]:
        if path != self._path:
            # A finding in a cell came from a notebook, whatever the file's extension (`--extension`).
            notebook = cell is not None or path.endswith(".ipynb")
            self._path, self._document, self._lines = path, self._read(path, notebook), {}
        if cell not in self._lines:
            document, text = self._document, ""
            if isinstance(document, Notebook) and cell is not None:
                try:
                    text = document.cell_source(cell - 1)
                except (IndexError, SourceError):
                    pass
            elif isinstance(document, str):
                text = document
            self._lines[cell] = tuple(split_lines(text))
        return self._lines[cell]


def lines_of(report: Report) -> _Lines:
    """What reads the lines findings are on, for formats that show or measure them."""
    return _Lines(report.buffers)


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
        text = _visible(lines[number - 1].expandtabs(TAB))
        out.append(f"{number:>{width}} | {text}".rstrip())
        if number == row:
            out.append(f"{gutter}| {' ' * start}{carets} {finding.code}")
    out.append(f"{gutter}|")
    return out


def render(findings: list[Finding], report: Report) -> str:
    blocks = []
    lines = _Lines(report.buffers)
    for f in findings:
        out = [styled_headline(f, report)]
        snippet = _snippet(f, lines(f.path, f.cell))
        out.extend(snippet)
        indent = " " * (len(snippet[0]) - 1) if snippet else "  "
        if f.fix is not None:
            out.append(f"{indent}= help: {printable(f.fix.message)}")
        if f.confirmation:
            out.append(f"{indent}= {f.confirmation['status']}: {f.confirmation.get('detail', '')}")
        blocks.append("\n".join(out) + "\n\n")
    return "".join(blocks)
