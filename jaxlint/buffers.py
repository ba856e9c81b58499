"""Linting text that has no file of its own (standard input, an editor's document) as the file it stands for."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Iterable

from jaxlint.findings import Finding
from jaxlint.fixes import fix_until_stable
from jaxlint.analysis.project.project import Project
from jaxlint.linter import Linted, module_facts, parse_error
from jaxlint.output import display_path
from jaxlint.runner import Document, LintSettings, lint_document, lint_files, load_document
from jaxlint.source import SourceError


@dataclass
class BufferResult:
    """The findings left in the buffer and, when fixing, the fixed buffer (unchanged when nothing applied)."""

    findings: list[Finding]
    fixed_data: bytes
    fixed: Counter = field(default_factory=Counter)
    diff: str = ""
    warnings: list[str] = field(default_factory=list)  # analyses cut short


def lint_buffer(data: bytes, path: str, settings: LintSettings, callers: Iterable[str] = ()) -> BufferResult:
    """Lint (and, if the settings ask, fix) `data` as the contents of `path`; a notebook if `path` names one.

    It is linted as `lint_files` lints the file, `data` standing in for the file's contents, with
    the `callers` (the project's modules that may call into it) for the traced calls they make."""
    try:
        document = load_document(path, data, settings.is_notebook(path))
    except SourceError as err:
        return BufferResult([parse_error(path, err)], data)
    findings, fixed_document, fixed, warnings = lint_in_memory(document, data, path, settings, callers)
    if not fixed:
        return BufferResult(findings, data, warnings=warnings)
    diff = document.diff(fixed_document, display_path(path)) if settings.diff else ""
    return BufferResult(findings, fixed_document.encode(), fixed, diff, warnings)


def lint_in_memory(
    document: Document, data: bytes, path: str, settings: LintSettings, callers: Iterable[str] = ()
) -> tuple[list[Finding], Document, Counter, list[str]]:
    """The findings left in `document` (read from `data`) standing for the file `path`, the fixed
    document, what was fixed, and the last lint's warnings (analyses cut short)."""
    plain = replace(settings, fix=False, diff=False, hash_contents=False)
    (result,) = lint_files([path], plain, callers=callers, texts={path: data})
    if result.error:  # as `check` of the file: a bug in a rule is not taken for a clean file
        raise LintError(result.error)
    if not (settings.fix or settings.diff):
        return result.findings or [], document, Counter(), result.warnings
    # The fixer re-lints after each pass, with the traced calls the project makes into the file.
    project = Project(settings.options, facts=module_facts)
    runs: list[Linted] = []

    def lint(document: Document) -> list[Finding]:
        runs.append(lint_document(document, path, settings, project, result.received))
        return runs[-1].findings

    fixed_document, findings, fixed = fix_until_stable(document, lint, settings.unsafe_fixes)
    return findings, fixed_document, fixed, runs[-1].warnings


class LintError(Exception):
    """An internal error while linting a buffer (a bug in a rule)."""
