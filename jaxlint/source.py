"""Source text: decoding bytes, parsing with the stdlib `ast`, and converting its byte offsets to characters."""

from __future__ import annotations

import ast
import bisect
import codecs
import io
import re
import tokenize
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate

from jaxlint.findings import Position
from jaxlint.timings import timed


# The line breaks of Python's tokenizer. `str.splitlines` also breaks at form feeds, \x0b,
# \x1c-\x1e, \x85, U+2028 and U+2029, which `ast` counts as ordinary characters.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_LINE_BREAK_BYTES = re.compile(rb"\r\n|\r|\n")
_CODING = re.compile(rb"[ \t\f]*#.*?coding[:=]")  # PEP 263's declaration, as `tokenize` looks for it


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """`text`'s lines as `ast` numbers them: `str.splitlines`, but breaking only at \\n, \\r\\n and \\r."""
    if "\r" not in text:  # the common case, without a match object per line
        lines = text.split("\n")
        last = lines.pop()
        if keepends:
            lines = [line + "\n" for line in lines]
        if last:
            lines.append(last)
        return lines
    lines, start = [], 0
    for match in _LINE_BREAK.finditer(text):
        lines.append(text[start : match.end() if keepends else match.start()])
        start = match.end()
    if start < len(text):
        lines.append(text[start:])
    return lines


class SourceError(Exception):
    """The file cannot be read as Python: reported as JAX001, never raised to the user."""

    def __init__(self, message: str, row: int = 1, column: int = 1):
        super().__init__(message)
        self.row = row
        self.column = column


def decode(data: bytes) -> str:
    """Decode Python source bytes, honouring a BOM and a PEP 263 coding cookie. SourceError, at the
    place that cannot be decoded, if they are not text in that encoding."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise _no_encoding(data, exc) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise _undecodable(data, encoding, exc) from None
    if text.startswith(codecs.BOM_UTF8.decode("utf-8")):
        text = text[1:]
    return text


def _undecodable(data: bytes, encoding: str, exc: UnicodeDecodeError) -> SourceError:
    """Where the bytes stop being `encoding`: the row, the column in characters, and the byte offset."""
    before = data[:exc.start]
    breaks = list(_LINE_BREAK_BYTES.finditer(before))
    line_start = breaks[-1].end() if breaks else 0
    row, column = len(breaks) + 1, len(before[line_start:].decode(encoding, "replace")) + 1
    held = " ".join(f"0x{byte:02x}" for byte in data[exc.start:exc.end])
    return SourceError(
        f"the file is not valid {encoding}: line {row}, column {column} (byte offset {exc.start}) holds "
        f"{held}: {exc.reason}",
        row,
        column,
    )


def _no_encoding(data: bytes, exc: SyntaxError) -> SourceError:
    """Why `tokenize` found no encoding: a declaration it cannot use, or, with none, where the file
    stops being UTF-8 (which `tokenize` reads undeclared first lines as)."""
    row = _declaration_row(data)
    if row is None:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as undecodable:
            return _undecodable(data, "utf-8", undecodable)
    row = row or 1
    return SourceError(f"line {row}: cannot use the file's encoding declaration: {exc}", row)


def _declaration_row(data: bytes) -> int | None:
    """The line (1 or 2, where PEP 263 puts it) of the file's coding declaration, if it has one."""
    lines = data.removeprefix(codecs.BOM_UTF8).splitlines()[:2]
    return next((row for row, line in enumerate(lines, 1) if _CODING.match(line)), None)


@dataclass
class Source:
    """A parsed module: its text, its tree, and character positions for the tree's byte offsets."""

    text: str
    tree: ast.Module
    # row -> `_wide(row)`, computed once however many findings the row holds
    _wide_rows: dict[int, tuple[list[int], list[int]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    @timed("parse")
    def parse(cls, text: str, filename: str = "<string>") -> "Source":
        try:
            tree = ast.parse(text, filename=filename)
        except SyntaxError as exc:
            raise SourceError(
                f"SyntaxError: {exc.msg}", exc.lineno or 1, max(exc.offset or 1, 1)
            ) from None
        except (RecursionError, MemoryError):
            raise SourceError("the file is too deeply nested to parse") from None
        except ValueError as exc:  # e.g. source with null bytes
            raise SourceError(f"cannot parse: {exc}") from None
        return cls(text, tree)

    @cached_property
    def lines(self) -> list[str]:
        return split_lines(self.text)

    def line(self, row: int) -> str:
        return self.lines[row - 1] if 0 < row <= len(self.lines) else ""

    def _wide(self, row: int) -> tuple[list[int], list[int]] | None:
        """For a row with non-ASCII characters: the UTF-8 offset just after each of them, and how many
        bytes beyond one per character the row holds up to there. None for an ASCII row."""
        line = self.line(row)
        if line.isascii():
            return None
        found = self._wide_rows.get(row)
        if found is None:
            ends, extra, total = [], [], 0
            for match in _NON_ASCII.finditer(line):
                total += len(match.group().encode("utf-8", "surrogatepass")) - 1
                ends.append(match.start() + total + 1)
                extra.append(total)
            found = self._wide_rows[row] = (ends, extra)
        return found

    def char_column(self, row: int, byte_offset: int) -> int:
        """1-based character column of a 0-based UTF-8 byte offset on a 1-based row.

        Constant time on an ASCII row, logarithmic on others: a long line with many findings
        (generated or minified code) must not cost its length per finding.
        """
        wide = self._wide(row)
        if wide is None:
            return byte_offset + 1
        ends, extra = wide
        before = bisect.bisect_right(ends, byte_offset)
        return byte_offset - (extra[before - 1] if before else 0) + 1

    def start(self, node: ast.AST) -> Position:
        return Position(node.lineno, self.char_column(node.lineno, node.col_offset))

    def end(self, node: ast.AST) -> Position:
        row = node.end_lineno or node.lineno
        offset = node.end_col_offset if node.end_col_offset is not None else node.col_offset
        return Position(row, self.char_column(row, offset))

    @cached_property
    def _starts(self) -> list[int]:
        """The index in `text` where each line starts."""
        if "\r" not in self.text:
            return [0, *accumulate(len(line) + 1 for line in self.text.split("\n")[:-1])]
        return [0] + [match.end() for match in _LINE_BREAK.finditer(self.text)]

    def segment(self, node: ast.AST) -> str:
        """The node's source text, as `ast.get_source_segment` gives it, without re-splitting the file per call."""
        first, last = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        begin, end = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if first is None or last is None or begin is None or end is None:
            return ""
        if not 0 < first <= last <= len(self.lines):
            return ""
        starts = self._starts
        return self.text[
            starts[first - 1] + self.char_column(first, begin) - 1 : starts[last - 1] + self.char_column(last, end) - 1
        ]

    def snippet(self, node: ast.AST, width: int = 40) -> str:
        """The node's source on one line, shortened for a message."""
        text = " ".join(self.segment(node).split())
        return text if len(text) <= width else text[: width - 1] + "…"
