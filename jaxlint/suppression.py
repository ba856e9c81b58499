"""Suppression: `# noqa` comments on a finding's line, file-level `# jaxlint: noqa`, and per-file ignores."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Collection, Mapping, Sequence

from jaxlint.config import codes_matching
from jaxlint.files import PathPatterns
from jaxlint.findings import PARSE_ERROR_CODE, Edit, Finding, Fix, Position
from jaxlint.source import split_lines

ALL = None  # a blanket directive: it suppresses every code

UNUSED_NOQA_CODE = "JAX002"
UNUSED_NOQA_NAME = "unused-noqa"
_JAX_CODE = re.compile(r"JAX[0-9]{3}")

_MENTION = re.compile("noqa", re.IGNORECASE)
# A directive that could name a JAX code (the only ones the unused-noqa rule judges).
_JAX_MENTION = re.compile(r"noqa[^\n]*jax", re.IGNORECASE)
# The word and the codes are matched in any case; a colon and a comma- or space-separated list may follow.
_LINE = re.compile(r"#\s*(?i:noqa)\b")
_FILE = re.compile(r"#\s*(?P<tool>jaxlint|flake8)\s*:\s*(?i:noqa)\b")
_CODES = re.compile(r":\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)")
_CODE = re.compile(r"[A-Za-z]+[0-9]+")


@dataclass(frozen=True)
class Directive:
    """One `# noqa` comment: where it is, what it names, and where its code list lies within the comment."""

    row: int
    column: int  # 0-based character column of the `#`
    comment: str
    codes: frozenset[str] | None  # None: every code
    file_level: bool
    codes_span: tuple[int, int] = (0, 0)  # the code list's bounds within `comment`
    written: tuple[str, ...] = ()  # the codes as written, in order
    space_before: int = 0  # the whitespace between the code and the comment


def _parse(comment: str, row: int = 0, column: int = 0, space_before: int = 0) -> Directive | None:
    """The directive in one comment's text, or None.

    `# noqa:` followed by no valid code is malformed and suppresses nothing (ruff warns of it).
    """
    match = _FILE.match(comment)  # a file-level directive is the whole comment, not a mention inside one
    file_level = match is not None
    if match is None:
        match = _LINE.search(comment)
        if match is None:
            return None
    rest = comment[match.end() :]
    if not rest.lstrip().startswith(":"):
        return Directive(row, column, comment, ALL, file_level, space_before=space_before)
    if file_level and match.group("tool") == "flake8":
        return None  # flake8 ignores its file directive when codes follow: so do we
    offset = match.end() + len(rest) - len(rest.lstrip())
    codes = _CODES.match(comment, offset)
    if codes is None:
        return None
    written = tuple(_CODE.findall(codes.group("codes")))
    return Directive(
        row,
        column,
        comment,
        frozenset(c.upper() for c in written),
        file_level,
        codes.span("codes"),
        written,
        space_before,
    )


def _comments(text: str) -> list[tuple[int, int, str, str]]:
    """(row, column, text, line) of each comment that mentions noqa (tokens: `"# noqa"` in a string is no comment)."""
    try:
        return [
            (token.start[0], token.start[1], token.string, token.line)
            for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type == tokenize.COMMENT and _MENTION.search(token.string)
        ]
    except (tokenize.TokenError, SyntaxError):
        # Only a file that failed to parse gets here; its lines are the best guess left.
        lines = enumerate(split_lines(text), 1)
        return [
            (row, line.index("#"), line[line.index("#") :], line)
            for row, line in lines
            if "#" in line and _MENTION.search(line)
        ]


def _space_before(line: str, column: int) -> int:
    code = line[:column]
    return len(code) - len(code.rstrip()) if code.strip() else 0


def directives(text: str) -> list[Directive]:
    """Every `# noqa` directive in a module's text."""
    if not _MENTION.search(text):
        return []
    found = (
        _parse(comment, row, column, _space_before(line, column))
        for row, column, comment, line in _comments(text)
    )
    return [d for d in found if d is not None]


def _mentions_jax_directive(text: str) -> bool:
    # No character but the ASCII letters matches `noqa` blind to case, so lowering the text
    # first answers most files exactly, many times faster than the case-blind search.
    return "noqa" in text.lower() and _JAX_MENTION.search(text) is not None


def apply_noqa(
    findings: list[Finding],
    text: str,
    codes: Collection[str] | None = None,
    known: Collection[str] = (),
    path: str = "",
    ignore: bool = False,
) -> list[Finding]:
    """The findings that no `# noqa` directive in `text` suppresses. A parse error is never suppressed.

    When `codes` (the rules that ran) includes the unused-noqa rule, each JAX code in a line's
    directive that suppressed nothing is reported: one that names no rule in `known`, or whose
    rule ran and found nothing there. Codes of other tools are theirs to judge. With `ignore`
    (`--ignore-noqa`), the directives suppress nothing but are judged as usual, as ruff does.
    """
    if not findings and not _mentions_jax_directive(text):
        return findings  # nothing to suppress, nothing to judge: most files, and no tokenizing
    found = directives(text)
    if not found:
        return findings
    by_row: dict[int, Directive] = {}
    whole_file: frozenset[str] | None = frozenset()
    for directive in found:
        if directive.file_level:
            whole_file = ALL if directive.codes is ALL or whole_file is ALL else whole_file | directive.codes
        else:
            by_row[directive.row] = directive
    kept = []
    used: dict[int, set[str]] = {}
    for finding in findings:
        if finding.code != PARSE_ERROR_CODE:
            if (whole_file is ALL or finding.code in whole_file) and not ignore:
                continue
            row = finding.noqa_row if finding.noqa_row is not None else finding.start.row
            directive = by_row.get(row)
            if directive is not None and (directive.codes is ALL or finding.code in directive.codes):
                used.setdefault(row, set()).add(finding.code)
                if not ignore:
                    continue
        kept.append(finding)
    if codes is not None and UNUSED_NOQA_CODE in codes:
        ran = frozenset(codes)
        kept += [
            finding
            for directive in by_row.values()
            for finding in _unused(directive, used.get(directive.row, set()), ran, frozenset(known), path)
        ]
        kept.sort(key=Finding.sort_key)
    return kept


def _unused(
    directive: Directive, used: set[str], ran: frozenset[str], known: frozenset[str], path: str
) -> list[Finding]:
    """The unused-noqa finding for one line's directive, if it names JAX codes that suppressed nothing."""
    if directive.codes is ALL:
        return []  # a blanket `# noqa` may serve other tools
    unknown = [c for c in directive.written if _JAX_CODE.fullmatch(c.upper()) and c.upper() not in known]
    unused = [c for c in directive.written if c.upper() in ran and c.upper() not in used]
    if not (unknown or unused):
        return []
    start = Position(directive.row, directive.column + 1)
    end = Position(directive.row, directive.column + len(directive.comment) + 1)
    message = unused_message([c.upper() for c in unused], unknown)
    return [
        Finding(
            code=UNUSED_NOQA_CODE,
            name=UNUSED_NOQA_NAME,
            message=message,
            path=path,
            start=start,
            end=end,
            fix=_removal(directive, set(unknown) | set(unused)),
            noqa_row=directive.row,
        )
    ]


def unused_message(unused: Sequence[str], unknown: Sequence[str] = ()) -> str:
    """The unused-noqa message for a directive's unused and unknown codes."""
    parts = []
    if unused:
        parts.append("unused: " + ", ".join(f"`{c}`" for c in unused))
    if unknown:
        parts.append("unknown: " + ", ".join(f"`{c}`" for c in unknown))
    return f"Unused `noqa` directive ({'; '.join(parts)})"


def _removal(directive: Directive, drop: set[str]) -> Fix:
    """Remove the dropped codes from the directive; the whole directive when none is left."""
    keep = [c for c in directive.written if c not in drop]
    comment = directive.comment
    begin, finish = directive.codes_span
    end = Position(directive.row, directive.column + len(comment) + 1)
    if keep:
        replacement = comment[:begin] + ", ".join(keep) + comment[finish:]
        start = Position(directive.row, directive.column + 1)
        return Fix("safe", "Remove the unused codes", (Edit(replacement, start, end),))
    # What else the comment says stays: a `# type: ignore` before the directive, a reason after its codes.
    before = comment[: _LINE.search(comment).start()].rstrip()
    after = comment[finish:].strip().lstrip("#").strip()
    replacement = " ".join(p for p in (before, f"# {after}" if after else "") if p)
    # With nothing left, the spaces that set the comment apart from the code go too.
    start_column = directive.column + 1 - (0 if replacement else directive.space_before)
    edit = Edit(replacement, Position(directive.row, start_column), end)
    return Fix("safe", "Remove the unused `noqa` directive", (edit,))


def with_noqa(text: str, findings: Sequence[Finding], python: str | None = None) -> tuple[str, int]:
    """`text` with `# noqa: CODE` for each finding added on its line (merged into a directive already there).

    A line that ends in a backslash cannot take a comment, a parse error cannot be suppressed and
    an unused directive is not suppressed by another: those are left as they are. `python` is the
    text as Python reads it, row for row, when `text` is not (a notebook cell with IPython magics).
    """
    wanted: dict[int, list[str]] = {}
    for finding in findings:
        if finding.code in (PARSE_ERROR_CODE, UNUSED_NOQA_CODE):
            continue
        row = finding.noqa_row if finding.noqa_row is not None else finding.start.row
        codes = wanted.setdefault(row, [])
        if finding.code not in codes:
            codes.append(finding.code)
    if not wanted:
        return text, 0
    existing = {d.row: d for d in directives(python or text) if not d.file_level}
    inside_strings = _rows_inside_strings(python or text)
    lines = text.splitlines(keepends=True)
    added = 0
    for row, codes in wanted.items():
        if not 0 < row <= len(lines) or row in inside_strings:
            continue
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        directive = existing.get(row)
        if directive is not None and directive.codes is ALL:
            continue  # a blanket `# noqa` already suppresses them
        new = [c for c in codes if directive is None or c not in directive.codes]
        if not new or body.rstrip().endswith("\\"):
            continue
        if directive is not None:
            at = directive.column + directive.codes_span[1]
            body = body[:at] + "".join(f", {c}" for c in new) + body[at:]
        else:
            body = f"{body.rstrip()}  # noqa: {', '.join(new)}"
        lines[row - 1] = body + ending
        added += len(new)
    return "".join(lines), added


def _rows_inside_strings(text: str) -> set[int]:
    """Rows whose end lies inside a multi-line string: a comment there would change the string."""
    rows: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] < token.end[0] and token.type not in (tokenize.NL, tokenize.NEWLINE):
                rows.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        return set(range(1, text.count("\n") + 2))  # cannot tell: touch nothing
    return rows


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
