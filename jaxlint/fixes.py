"""Applying fixes: the applicable fixes' edits, without overlaps, pass after pass, each result re-parsed."""

from __future__ import annotations

import ast
import bisect
import difflib
from collections import Counter
from typing import Callable, Sequence

from jaxlint.findings import Finding, Fix, Position
from jaxlint.source import split_lines

MAX_PASSES = 10


def applicable(fix: Fix | None, unsafe_fixes: bool) -> bool:
    """Whether `--fix` applies this fix: safe ones always, unsafe ones only with `--unsafe-fixes`."""
    return fix is not None and (fix.applicability == "safe" or unsafe_fixes)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for line in split_lines(text, keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _offset(starts: list[int], at: Position) -> int:
    """The string index of a 1-based row and character column, clamped to the text."""
    if at.row < 1:
        return 0
    if at.row >= len(starts):
        return starts[-1]
    return min(starts[at.row - 1] + at.column - 1, starts[at.row])


def apply_fixes(
    text: str, findings: Sequence[Finding], unsafe_fixes: bool
) -> tuple[str, Counter[tuple[str, str]]]:
    """One pass: `text` with every applicable fix that overlaps no earlier one applied, and the counts fixed.

    A fix is applied whole or not at all; the others wait for the next pass, when their
    findings are reported again against the new text.
    """
    starts = _line_starts(text)
    chosen: list[tuple[int, int, str]] = []
    taken = _Spans()
    fixed: Counter[tuple[str, str]] = Counter()
    candidates = [f for f in findings if applicable(f.fix, unsafe_fixes) and f.fix.edits]
    candidates.sort(key=lambda f: min(e.start for e in f.fix.edits))
    for finding in candidates:
        spans = sorted(
            (_offset(starts, e.start), _offset(starts, e.end), e.content) for e in finding.fix.edits
        )
        if any(a > b for a, b, _ in spans) or _overlap(spans):
            continue
        if any(taken.overlaps(a, b) for a, b, _ in spans):
            continue
        chosen.extend(spans)
        for a, b, _ in spans:
            taken.add(a, b)
        fixed[(finding.code, finding.name)] += 1
    if not chosen:
        return text, fixed
    pieces, cursor = [], 0
    for a, b, content in sorted(chosen):
        pieces.append(text[cursor:a])
        pieces.append(content)
        cursor = b
    pieces.append(text[cursor:])
    return "".join(pieces), fixed


class _Spans:
    """Disjoint spans of the text, sorted, so that each new edit is checked against them in log time."""

    def __init__(self) -> None:
        self._spans: list[tuple[int, int]] = []  # sorted by start; disjoint, so the ends are sorted too

    def overlaps(self, a: int, b: int) -> bool:
        """Whether [a, b) overlaps a span, or is an insertion at the very point of another insertion."""
        below = bisect.bisect_left(self._spans, (b, b))  # the spans that start before b (or at b, if empty)
        if below and self._spans[below - 1][1] > a and self._spans[below - 1][0] < b:
            return True
        return a == b and (a, a) in self._spans[max(below - 1, 0) : below + 1]

    def add(self, a: int, b: int) -> None:
        bisect.insort(self._spans, (a, b))


def _overlap(spans: list[tuple[int, int, str]]) -> bool:
    return any(spans[i][1] > spans[i + 1][0] for i in range(len(spans) - 1))


def parses(text: str) -> bool:
    """Whether `text` is still valid Python: a fix that breaks the module is never written."""
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def fix_until_stable(document, lint: Callable, unsafe_fixes: bool) -> tuple[object, list[Finding], Counter]:
    """Lint and fix until no fix applies (or MAX_PASSES): the fixed document, what remains, what was fixed.

    `document` is a module or a notebook: it has `source` (the Python text to lint) and
    `with_fixes(findings, unsafe_fixes) -> (document, Counter)`.
    """
    fixed_total: Counter[tuple[str, str]] = Counter()
    findings = lint(document)
    for _ in range(MAX_PASSES):
        fixed_document, fixed = document.with_fixes(findings, unsafe_fixes)
        if not fixed or not parses(fixed_document.source):
            break
        document = fixed_document
        fixed_total += fixed
        findings = lint(document)
    return document, findings, fixed_total


def unified_diff(old: str, new: str, name: str) -> str:
    """A unified diff of one file (or notebook cell) as ruff's `--diff` prints it."""
    lines = []
    for line in difflib.unified_diff(
        split_lines(old, keepends=True), split_lines(new, keepends=True), fromfile=name, tofile=name
    ):
        lines.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(lines)
