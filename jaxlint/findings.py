"""What a rule reports: findings, their positions and optional fixes (the JSON shape of docs/contract.md)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

# The finding of a file that does not parse (made by the linter; the configuration and
# suppression treat it apart). A path that cannot be read at all has the same code under a name
# of its own, as ruff tells its `io-error` (E902) from `invalid-syntax`: a typo in a path given
# to a CI job is no broken file.
PARSE_ERROR_CODE = "JAX001"
PARSE_ERROR_NAME = "syntax-error"
IO_ERROR_NAME = "io-error"


@dataclass(frozen=True, order=True)
class Position:
    """A 1-based row and a 1-based column counted in characters (as ruff)."""

    row: int
    column: int

    def to_json(self) -> dict:
        return {"row": self.row, "column": self.column}


@dataclass(frozen=True)
class Edit:
    """Replace the text between `start` and `end` with `content`."""

    content: str
    start: Position
    end: Position

    def to_json(self) -> dict:
        return {
            "content": self.content,
            "location": self.start.to_json(),
            "end_location": self.end.to_json(),
        }


@dataclass(frozen=True)
class Fix:
    applicability: Literal["safe", "unsafe"]
    message: str
    edits: tuple[Edit, ...]

    def to_json(self) -> dict:
        return {
            "applicability": self.applicability,
            "message": self.message,
            "edits": [e.to_json() for e in self.edits],
        }


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    message: str
    path: str
    start: Position
    end: Position
    fix: Fix | None = None
    noqa_row: int | None = None
    cell: int | None = None
    severity: str = "error"
    confirmation: dict | None = field(default=None, compare=False)

    @property
    def category(self) -> int:
        return int(self.code[3])

    def with_(self, **changes) -> "Finding":
        return replace(self, **changes)

    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.start, self.code)

    def to_json(self, url: str | None = None) -> dict:
        return {
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "filename": self.path,
            "location": self.start.to_json(),
            "end_location": self.end.to_json(),
            "url": url,
            "fix": self.fix.to_json() if self.fix else None,
            "noqa_row": self.noqa_row if self.noqa_row is not None else self.start.row,
            "cell": self.cell,
            "severity": self.severity,
            "confirmation": self.confirmation,
        }
