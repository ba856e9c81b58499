"""Jupyter notebooks: the code cells as one Python module (magics blanked) and findings mapped back to cells."""

from __future__ import annotations

import bisect
import copy
import json
import re
from collections import Counter
from dataclasses import replace
from typing import Callable, Optional, Sequence, Tuple

from jaxlint.findings import Edit, Finding, Position
from jaxlint.fixes import apply_fixes, unified_diff
from jaxlint.source import SourceError, split_lines

# Adds `# noqa` directives to a text for findings in it: (text, findings, the text as Python reads
# it or None) -> (new text, directives added). Suppression's `with_noqa`, handed in by the caller.
NoqaWriter = Callable[[str, Sequence[Finding], Optional[str]], Tuple[str, int]]

# Cell magics whose body is still Python; any other (%%bash, %%html, …) makes the cell not Python.
_PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug", "pypy", "python", "python3"}
# IPython syntax that is not Python: `%magic`, `!shell`, `?help`, `x = !cmd`, `x = %magic`, `obj?`.
# A magic is `%` then a name and a shell line `!` then anything but `=`, so that a continuation
# line starting with Python's `% args` or `!= y` is left alone.
_MAGIC = r"(?:%{1,2}[A-Za-z_]|![^=])"
# How messages point at another row of the module ("consumed on line 6", "(line 6)").
_LINE_REFERENCE = re.compile(r"\bline ([0-9]+)\b")
_IPYTHON_LINE = re.compile(rf"\s*(?:{_MAGIC}|\?|[\w.,\s]+=\s*{_MAGIC}|[\w.]+\?\??\s*$)")


def _blank_ipython(lines: list[str]) -> list[str]:
    """The cell's lines with IPython-only lines replaced by `pass` (same indent), keeping every row in place."""
    if lines and lines[0].startswith("%%"):
        magic = lines[0][2:].split(None, 1)[0] if lines[0][2:].strip() else ""
        if magic not in _PYTHON_CELL_MAGICS:
            return [""] * len(lines)
        lines = ["pass"] + lines[1:]
    out = []
    continued = False
    for line in lines:
        if continued or _IPYTHON_LINE.match(line):
            indent = line[: len(line) - len(line.lstrip())]
            out.append("" if continued else indent + "pass")
            continued = line.rstrip().endswith("\\")
        else:
            out.append(line)
    return out


def _table(value: object) -> dict:
    """A JSON object, or an empty one in place of anything else (notebook metadata is often hand-edited)."""
    return value if isinstance(value, dict) else {}


def _is_python(data: dict) -> bool:
    metadata = _table(data.get("metadata"))
    language = _table(metadata.get("language_info")).get("name") or _table(metadata.get("kernelspec")).get(
        "language"
    )
    return not isinstance(language, str) or language.lower().startswith("python")


def _cell_text(cell: dict, index: int) -> str:
    """A cell's `source`: a string or a list of strings (nbformat); anything else makes the notebook unreadable."""
    source = cell.get("source", "")
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    raise SourceError(f"not a notebook: the source of cell {index + 1} is not text")


class Notebook:
    """A notebook's JSON and the Python module made of its code cells, one after another.

    `text` is the JSON as read, and `changed` the cells whose source an edit rewrote: writing the
    notebook back splices those sources into the text and leaves every other byte as it was."""

    def __init__(self, data: dict, text: Optional[str] = None, changed: frozenset = frozenset()):
        self.data = data
        self.text = text
        self.changed = changed
        cells = data.get("cells")
        if not isinstance(cells, list):
            raise SourceError("not a notebook: no `cells` list")
        self.code_cells: list[int] = []  # indices into `cells` of the code cells
        pieces: list[str] = []
        self._first_rows: list[int] = []  # 1-based row in `source` where each code cell starts
        row = 1
        python = _is_python(data)
        for index, cell in enumerate(cells):
            if not python or not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            lines = _blank_ipython(split_lines(_cell_text(cell, index)))
            self.code_cells.append(index)
            self._first_rows.append(row)
            pieces.extend(line + "\n" for line in lines)
            row += len(lines)
        self.source = "".join(pieces)

    @classmethod
    def parse(cls, data: bytes) -> "Notebook":
        try:
            loaded = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise SourceError(f"notebook is not valid JSON: {exc}") from None
        if not isinstance(loaded, dict):
            raise SourceError("not a notebook: the JSON is not an object")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None  # another encoding JSON allows: written back whole
        return cls(loaded, text)

    def cell_source(self, index: int) -> str:
        """The text of cell `index` (0-based) as the user wrote it, magics included."""
        return _cell_text(self.data["cells"][index], index)

    def _locate(self, row: int) -> tuple[int, int]:
        """(position in code_cells, row within that cell) of a 1-based row of `source`."""
        at = max(bisect.bisect_right(self._first_rows, row) - 1, 0)
        return at, row - self._first_rows[at] + 1

    def relocate(self, finding: Finding) -> Finding:
        """A finding on `source` moved to its cell: `cell` is 1-based over all cells, as ruff counts."""
        if not self.code_cells:
            return finding
        at, row = self._locate(finding.start.row)
        shift = self._first_rows[at] - 1

        def moved(p: Position) -> Position:
            return Position(max(p.row - shift, 1), p.column)

        fix = finding.fix
        if fix is not None:
            if all(self._locate(e.start.row)[0] == at == self._locate(e.end.row)[0] for e in fix.edits):
                fix = replace(
                    fix, edits=tuple(Edit(e.content, moved(e.start), moved(e.end)) for e in fix.edits)
                )
            else:
                fix = None  # an edit that spans cells cannot be written back into the notebook
        return finding.with_(
            message=self._relocate_lines(finding.message, at),
            start=Position(row, finding.start.column),
            end=moved(finding.end),
            noqa_row=None if finding.noqa_row is None else max(finding.noqa_row - shift, 1),
            cell=self.code_cells[at] + 1,
            fix=fix,
        )

    def module_row(self, cell: int, row: int) -> int:
        """The row of `source` that row `row` of cell `cell` (1-based over all cells) is."""
        return self._first_rows[self.code_cells.index(cell - 1)] + row - 1

    def rows_in_cell(self, text: str, cell: int) -> str:
        """`text`'s `line N` (rows of `source`) as rows of cell `cell`, naming the cell when it is another."""
        return self._relocate_lines(text, self.code_cells.index(cell - 1))

    def _relocate_lines(self, message: str, at: int) -> str:
        """A message's `line N` (a row of `source`) as the cell's own row, naming the cell when it is another."""

        def cell_row(match: re.Match) -> str:
            other, row = self._locate(int(match.group(1)))
            if other == at:
                return f"line {row}"
            return f"line {row} of cell {self.code_cells[other] + 1}"

        return _LINE_REFERENCE.sub(cell_row, message)

    def with_fixes(self, findings: list[Finding], unsafe_fixes: bool) -> tuple["Notebook", Counter]:
        """A copy with each cell's applicable fixes applied (findings as `relocate` returns them)."""
        return self._edited(findings, lambda text, in_cell: apply_fixes(text, in_cell, unsafe_fixes), Counter())

    def with_noqa(self, findings: list[Finding], with_noqa: NoqaWriter) -> tuple["Notebook", int]:
        """A copy with `# noqa: CODE` added in each cell for its findings (as `relocate` returns them),
        each cell's text edited by `with_noqa` (suppression's: it reads the configuration, notebooks need not)."""

        def add(text: str, in_cell: list[Finding]) -> tuple[str, int]:
            python = "".join(line + "\n" for line in _blank_ipython(split_lines(text)))
            return with_noqa(text, in_cell, python)

        return self._edited(findings, add, 0)

    def _edited(self, findings: list[Finding], edit, total):
        """A copy with each cell that holds findings rewritten by `edit(text, its findings)`, which
        returns the new text and what it did (a count); and the sum of those counts."""
        data = copy.deepcopy(self.data)
        by_cell: dict[int, list[Finding]] = {}
        changed = set(self.changed)
        for finding in findings:
            if finding.cell is not None:
                by_cell.setdefault(finding.cell, []).append(finding)
        for cell, in_cell in sorted(by_cell.items()):
            new_text, done = edit(self.cell_source(cell - 1), in_cell)
            if done:
                original = data["cells"][cell - 1].get("source")
                data["cells"][cell - 1]["source"] = (
                    split_lines(new_text, keepends=True) if isinstance(original, list) else new_text
                )
                changed.add(cell - 1)
                total += done
        return (Notebook(data, self.text, frozenset(changed)) if total else self), total

    def diff(self, fixed: "Notebook", name: str) -> str:
        """A unified diff per changed cell, each headed `NAME:cell N`."""
        return "".join(
            unified_diff(self.cell_source(i), fixed.cell_source(i), f"{name}:cell {i + 1}") + "\n"
            for i in self.code_cells
            if self.cell_source(i) != fixed.cell_source(i)
        )

    def encode(self) -> bytes:
        """The notebook's JSON: the text as read with the changed cells' sources spliced in, or,
        without that text, as Jupyter writes it (one-space indent, UTF-8, final newline)."""
        if self.text is not None:
            spliced = _splice_sources(self.text, {i: self.data["cells"][i]["source"] for i in self.changed})
            if spliced is not None:
                return spliced.encode("utf-8")
        return (json.dumps(self.data, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


# ---- writing back: the changed sources spliced into the JSON as read --------------------------------
_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


def _splice_sources(text: str, sources: dict) -> Optional[str]:
    """`text`, a notebook's JSON, with the `source` of each cell in `sources` (index -> new value)
    replaced and every other byte kept; None where the text cannot be followed."""
    spans = _source_spans(text)
    if spans is None or any(index not in spans for index in sources):
        return None
    pieces, cursor = [], 0
    for index in sorted(sources):
        start, end = spans[index]
        pieces += [text[cursor:start], _encoded(text, start, end, sources[index])]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _source_spans(text: str) -> Optional[dict]:
    """cell index -> (start, end) of its `source` value in the JSON text."""
    try:
        at = _SPACE.match(text).end()
        for key, start, _ in _members(text, at):
            if key == "cells":
                spans = {}
                for index, (item, _) in enumerate(_items(text, start)):
                    for name, value, end in _members(text, item) if text[item] == "{" else ():
                        if name == "source":
                            spans[index] = (value, end)
                return spans
    except (ValueError, IndexError):
        return None
    return None


def _members(text: str, at: int):
    """(key, value start, value end) of each member of the JSON object at `at`."""
    if text[at] != "{":
        raise ValueError("not an object")
    at = _SPACE.match(text, at + 1).end()
    while text[at] != "}":
        key, at = json.decoder.scanstring(text, at + 1)
        at = _SPACE.match(text, at).end()
        if text[at] != ":":
            raise ValueError("no colon")
        start = _SPACE.match(text, at + 1).end()
        _, end = _DECODER.raw_decode(text, start)
        yield key, start, end
        at = _SPACE.match(text, end).end()
        if text[at] == ",":
            at = _SPACE.match(text, at + 1).end()


def _items(text: str, at: int):
    """(start, end) of each element of the JSON array at `at`."""
    if text[at] != "[":
        raise ValueError("not an array")
    at = _SPACE.match(text, at + 1).end()
    while text[at] != "]":
        _, end = _DECODER.raw_decode(text, at)
        yield at, end
        at = _SPACE.match(text, end).end()
        if text[at] == ",":
            at = _SPACE.match(text, at + 1).end()


def _encoded(text: str, start: int, end: int, value) -> str:
    """The JSON of a new source, laid out as the one at text[start:end] was: a list keeps its
    indentation, and each line the edit left as it was keeps its own spelling."""
    elements = list(_items(text, start)) if isinstance(value, list) and text[start] == "[" else []
    if not value or not elements:  # a string, or a list that was empty (an edit never makes one grow)
        return json.dumps(value, ensure_ascii=False)
    spelled: dict = {}
    for first, last in elements:
        spelled.setdefault(json.loads(text[first:last]), []).append(text[first:last])
    lead = text[start + 1 : elements[0][0]]
    separator = text[elements[0][1] : elements[1][0]] if len(elements) > 1 else "," + lead
    tail = text[elements[-1][1] : end - 1]
    lines = [spelled[line].pop(0) if spelled.get(line) else json.dumps(line, ensure_ascii=False) for line in value]
    return "[" + lead + separator.join(lines) + tail + "]"
