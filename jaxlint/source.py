"""Source text: decoding bytes, parsing with the stdlib `ast`, and converting its byte offsets to characters."""

from __future__ import annotations

import ast
import codecs
import io
import re
import tokenize
from dataclasses import dataclass
from functools import cached_property

from jaxlint.findings import Position


# The line breaks of Python's tokenizer. `str.splitlines` also breaks at form feeds, \x0b,
# \x1c-\x1e, \x85, U+2028 and U+2029, which `ast` counts as ordinary characters.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """`text`'s lines as `ast` numbers them: `str.splitlines`, but breaking only at \\n, \\r\\n and \\r."""
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
    """Decode Python source bytes, honouring a BOM and a PEP 263 coding cookie."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise SourceError(f"cannot detect the file's encoding: {exc}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise SourceError(f"file is not valid {encoding}: {exc}") from None
    if text.startswith(codecs.BOM_UTF8.decode("utf-8")):
        text = text[1:]
    return text


@dataclass
class Source:
    """A parsed module: its text, its tree, and character positions for the tree's byte offsets."""

    text: str
    tree: ast.Module

    @classmethod
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

    @cached_property
    def _encoded(self) -> dict[int, bytes]:
        return {}  # row -> the UTF-8 bytes of a non-ASCII line, encoded once however many findings it holds

    def line(self, row: int) -> str:
        return self.lines[row - 1] if 0 < row <= len(self.lines) else ""

    def _line_bytes(self, row: int) -> bytes | None:
        """The row's UTF-8 bytes, or None when the line is ASCII (byte offsets are then character offsets)."""
        line = self.line(row)
        if line.isascii():
            return None
        encoded = self._encoded.get(row)
        if encoded is None:
            encoded = self._encoded[row] = line.encode("utf-8", "surrogatepass")
        return encoded

    def char_column(self, row: int, byte_offset: int) -> int:
        """1-based character column of a 0-based UTF-8 byte offset on a 1-based row."""
        encoded = self._line_bytes(row)
        if encoded is None:
            return byte_offset + 1
        return len(encoded[:byte_offset].decode("utf-8", errors="ignore")) + 1

    def start(self, node: ast.AST) -> Position:
        return Position(node.lineno, self.char_column(node.lineno, node.col_offset))

    def end(self, node: ast.AST) -> Position:
        row = node.end_lineno or node.lineno
        offset = node.end_col_offset if node.end_col_offset is not None else node.col_offset
        return Position(row, self.char_column(row, offset))

    @cached_property
    def _starts(self) -> list[int]:
        """The index in `text` where each line starts."""
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
