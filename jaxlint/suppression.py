"""Suppression: `# noqa` comments on a finding's line, file-level `# jaxlint: noqa`, and per-file ignores."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path
from typing import Mapping, Sequence

from jaxlint.config import codes_matching
from jaxlint.files import PathPatterns
from jaxlint.findings import Finding
from jaxlint.linter import PARSE_ERROR_CODE
from jaxlint.source import split_lines

ALL = None  # a blanket directive: it suppresses every code

_MENTION = re.compile("noqa", re.IGNORECASE)
# The word is matched in any case, the codes exactly (as ruff); a colon and a comma- or space-separated list may follow.
_LINE = re.compile(r"#\s*(?i:noqa)\b")
_FILE = re.compile(r"#\s*(?P<tool>jaxlint|flake8)\s*:\s*(?i:noqa)\b")
_CODES = re.compile(r":\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)")
_CODE = re.compile(r"[A-Z]+[0-9]+")


def _parse(comment: str) -> tuple[bool, frozenset[str] | None, bool]:
    """(is a directive, codes or ALL, is file-level) for one comment's text.

    `# noqa:` followed by no valid code is malformed and suppresses nothing (ruff warns of it).
    """
    match = _FILE.match(comment)  # a file-level directive is the whole comment, not a mention inside one
    file_level = match is not None
    if match is None:
        match = _LINE.search(comment)
        if match is None:
            return False, ALL, False
    rest = comment[match.end() :]
    if not rest.lstrip().startswith(":"):
        return True, ALL, file_level
    if file_level and match.group("tool") == "flake8":
        return False, ALL, False  # flake8 ignores its file directive when codes follow: so do we
    codes = _CODES.match(rest.lstrip())
    if codes is None:
        return False, ALL, False
    return True, frozenset(_CODE.findall(codes.group("codes"))), file_level


def _comments(text: str) -> list[tuple[int, str]]:
    """(row, text) of every comment that mentions noqa; tokens, so `"# noqa"` in a string does not count."""
    try:
        return [
            (token.start[0], token.string)
            for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type == tokenize.COMMENT and _MENTION.search(token.string)
        ]
    except (tokenize.TokenError, SyntaxError):
        # Only a file that failed to parse gets here; its lines are the best guess left.
        lines = enumerate(split_lines(text), 1)
        return [
            (row, line[line.index("#") :]) for row, line in lines if "#" in line and _MENTION.search(line)
        ]


def apply_noqa(findings: list[Finding], text: str) -> list[Finding]:
    """The findings that no `# noqa` directive in `text` suppresses. A parse error is never suppressed."""
    if not findings or not _MENTION.search(text):
        return findings
    by_row: dict[int, frozenset[str] | None] = {}
    whole_file: frozenset[str] | None = frozenset()
    for row, comment in _comments(text):
        is_directive, codes, file_level = _parse(comment)
        if not is_directive:
            continue
        if file_level:
            whole_file = ALL if codes is ALL or whole_file is ALL else whole_file | codes
        else:
            by_row[row] = codes
    kept = []
    for finding in findings:
        if finding.code != PARSE_ERROR_CODE:
            if whole_file is ALL or finding.code in whole_file:
                continue
            row = finding.noqa_row if finding.noqa_row is not None else finding.start.row
            if row in by_row and (by_row[row] is ALL or finding.code in by_row[row]):
                continue
        kept.append(finding)
    return kept


class PerFileIgnores:
    """`per-file-ignores`: glob → codes or prefixes; a glob starting with `!` applies to files it does not match."""

    def __init__(self, table: Mapping[str, Sequence[str]], root: Path, codes: list[str]):
        self._entries = []
        for pattern, selectors in table.items():
            negated = pattern.startswith("!")
            matcher = PathPatterns([pattern[1:] if negated else pattern], root)
            self._entries.append((matcher, negated, codes_matching(selectors, codes)))
        self._memo: dict[str, frozenset[str]] = {}

    def __bool__(self) -> bool:
        return bool(self._entries)

    def ignored(self, path: str) -> frozenset[str]:
        """The codes ignored in the file at absolute `path`."""
        found = self._memo.get(path)
        if found is None:
            found = frozenset().union(
                *(codes for matcher, negated, codes in self._entries if matcher.match(path) != negated)
            )
            self._memo[path] = found
        return found
