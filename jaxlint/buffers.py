"""Linting text that has no file of its own (standard input, an editor's document) as the file it stands for."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from jaxlint.findings import Finding
from jaxlint.fixes import fix_until_stable
from jaxlint.linter import Linted, parse_error
from jaxlint.output import display_path
from jaxlint.runner import Document, LintSettings, lint_document, load_document
from jaxlint.source import SourceError


@dataclass
class BufferResult:
    """The findings left in the buffer and, when fixing, the fixed buffer (unchanged when nothing applied)."""

    findings: list[Finding]
    fixed_data: bytes
    fixed: Counter = field(default_factory=Counter)
    diff: str = ""
    warnings: list[str] = field(default_factory=list)  # analyses cut short


def lint_buffer(data: bytes, path: str, settings: LintSettings) -> BufferResult:
    """Lint (and, if the settings ask, fix) `data` as the contents of `path`; a notebook if `path` names one."""
    try:
        document = load_document(path, data, settings.is_notebook(path))
    except SourceError as err:
        return BufferResult([parse_error(path, err)], data)
    findings, fixed_document, fixed, warnings = lint_in_memory(document, path, settings)
    if not fixed:
        return BufferResult(findings, data, warnings=warnings)
    diff = document.diff(fixed_document, display_path(path)) if settings.diff else ""
    return BufferResult(findings, fixed_document.encode(), fixed, diff, warnings)


def lint_in_memory(
    document: Document, path: str, settings: LintSettings
) -> tuple[list[Finding], Document, Counter, list[str]]:
    """The findings left in a document that has no file of its own, the fixed document, what was
    fixed, and the last lint's warnings (analyses cut short)."""
    runs: list[Linted] = []

    def lint(document: Document) -> list[Finding]:  # the fixer re-lints after each pass
        runs.append(lint_document(document, path, settings))
        return runs[-1].findings

    if not (settings.fix or settings.diff):
        return lint(document), document, Counter(), runs[-1].warnings
    fixed_document, findings, fixed = fix_until_stable(document, lint, settings.unsafe_fixes)
    return findings, fixed_document, fixed, runs[-1].warnings
