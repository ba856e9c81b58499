"""Source text: decoding bytes, parsing with the stdlib `ast`, and converting its byte offsets to characters."""

from __future__ import annotations

import ast
import codecs
import io
import tokenize
from dataclasses import dataclass
from functools import cached_property

from jaxlint.findings import Position


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
        return self.text.splitlines()

    def line(self, row: int) -> str:
        return self.lines[row - 1] if 0 < row <= len(self.lines) else ""

    def char_column(self, row: int, byte_offset: int) -> int:
        """1-based character column of a 0-based UTF-8 byte offset on a 1-based row."""
        line = self.line(row)
        if line.isascii():
            return byte_offset + 1
        return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1

    def start(self, node: ast.AST) -> Position:
        return Position(node.lineno, self.char_column(node.lineno, node.col_offset))

    def end(self, node: ast.AST) -> Position:
        row = node.end_lineno or node.lineno
        offset = node.end_col_offset if node.end_col_offset is not None else node.col_offset
        return Position(row, self.char_column(row, offset))

    def segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.text, node) or ""

    def snippet(self, node: ast.AST, width: int = 40) -> str:
        """The node's source on one line, shortened for a message."""
        text = " ".join(self.segment(node).split())
        return text if len(text) <= width else text[: width - 1] + "…"
