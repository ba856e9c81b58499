"""The line each key of a TOML document is written on, so that a configuration error can name it.

`tomllib` gives values without positions. This reads a document that `tomllib` has already
accepted, so it follows only what moves a key: table headers, dotted keys, inline tables, and
the strings and arrays a key's value may spread over several lines.
"""

from __future__ import annotations

import re

KeyPath = tuple[str, ...]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SCALAR_END = re.compile(r"[,\]}\n#]|$")


def key_lines(text: str) -> dict[KeyPath, int]:
    """Each key path (`("tool", "jaxlint", "options")`) mapped to the 1-based line where it is first
    written: a table header, a key, or a dotted key's prefix. Keys inside an array of tables or an
    array of inline tables have no path of their own and are left out."""
    return _Scanner(text).lines


class _Scanner:
    def __init__(self, text: str):
        self.text, self.at, self.line = text, 0, 1
        self.lines: dict[KeyPath, int] = {}
        table: KeyPath | None = ()
        while self._skip_blank(newlines=True):
            if self.text.startswith("[[", self.at):
                self.at += 2
                self._key()  # an array of tables: its entries have no key path
                table = None
            elif self._peek() == "[":
                self.at += 1
                table = self._key()
                self._record(table)
            else:
                self._key_value(table)
            self._skip_to_line_end()

    def _key_value(self, table: KeyPath | None) -> None:
        """`key = value` in `table` (None: where no key is recorded, an array of tables)."""
        key = self._key()
        if table is not None:
            self._record(table + key)
        self.at += 1  # `=`
        self._value(None if table is None else table + key)

    def _peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def _record(self, path: KeyPath) -> None:
        for end in range(1, len(path) + 1):
            self.lines.setdefault(path[:end], self.line)

    def _skip_blank(self, newlines: bool) -> bool:
        """Skip spaces and comments (and line breaks, if `newlines`); False at the end of the text."""
        while self.at < len(self.text):
            char = self.text[self.at]
            if char == "#":
                self._skip_to_line_end()
            elif char == "\n" and newlines:
                self.line += 1
                self.at += 1
            elif char in " \t\r":
                self.at += 1
            else:
                return True
        return False

    def _skip_to_line_end(self) -> None:
        end = self.text.find("\n", self.at)
        self.at = len(self.text) if end < 0 else end

    def _key(self) -> KeyPath:
        """A dotted key, bare or quoted parts; leaves the scanner after it (before `=` or `]`)."""
        parts = []
        while True:
            self._skip_blank(newlines=False)
            char = self._peek()
            if char in "\"'":
                # Escapes in a quoted key are kept as written: such a key only loses its line.
                parts.append(self._string()[1:-1])
            else:
                match = _BARE_KEY.match(self.text, self.at)
                if match is None:
                    return tuple(parts)
                parts.append(match.group())
                self.at = match.end()
            self._skip_blank(newlines=False)
            if self._peek() != ".":
                return tuple(parts)
            self.at += 1

    def _string(self) -> str:
        """The string literal at the scanner, quotes included, counting the lines it spans."""
        start, quote = self.at, self.text[self.at]
        delimiter = quote * 3 if self.text.startswith(quote * 3, self.at) else quote
        self.at += len(delimiter)
        while self.at < len(self.text) and not self.text.startswith(delimiter, self.at):
            if self.text[self.at] == "\\" and quote == '"':
                self.at += 1
            self.at += 1
        self.at += len(delimiter)
        # A multi-line string may end in up to two more quotes of its own kind (`"""a""""`).
        while delimiter != quote and self._peek() == quote:
            self.at += 1
        self.line += self.text.count("\n", start, self.at)
        return self.text[start:self.at]

    def _value(self, path: KeyPath | None) -> None:
        """Skip one value; an inline table's keys are recorded under `path` (None: not addressable)."""
        self._skip_blank(newlines=False)
        char = self._peek()
        if char in "\"'":
            self._string()
        elif char in "[{":
            self.at += 1
            closing = "]" if char == "[" else "}"
            while self._skip_blank(newlines=True) and self._peek() != closing:
                if self._peek() == ",":
                    self.at += 1
                elif closing == "]":
                    self._value(None)
                else:
                    self._key_value(path)
            self.at += 1
        else:
            self.at = _SCALAR_END.search(self.text, self.at + 1).start()  # a scalar has a character at least
