"""Linting text that has no file of its own (standard input, an editor's document) as the file it stands for."""

from __future__ import annotations

import io
import tokenize
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping

from jaxlint.cache import Cache
from jaxlint.findings import Finding
from jaxlint.fixes import fix_until_stable
from jaxlint.analysis.project.project import Project
from jaxlint.linter import Linted, module_facts, parse_error
from jaxlint.output import display_path
from jaxlint.runner import Document, LintSettings, lint_document, lint_run, load_document
from jaxlint.source import SourceError


@dataclass
class BufferResult:
    """The findings left in the buffer and, when fixing, the fixed buffer (unchanged when nothing applied)."""

    findings: list[Finding]
    fixed_data: bytes
    fixed: Counter = field(default_factory=Counter)
    diff: str = ""
    warnings: list[str] = field(default_factory=list)  # analyses cut short


def lint_buffer(
    data: bytes, path: str, settings: LintSettings, callers: Iterable[str] = (), cache: Cache | None = None
) -> BufferResult:
    """Lint (and, if the settings ask, fix) `data` as the contents of `path`; a notebook if `path` names one.

    It is linted as `lint_files` lints the file, `data` standing in for the file's contents, with
    the `callers` (the project's modules that may call into it) for the traced calls they make."""
    try:
        document = load_document(path, data, settings.is_notebook(path))
    except SourceError as err:
        return BufferResult([parse_error(path, err)], data)
    linted = lint_in_memory(document, data, path, settings, callers, cache=cache)
    if not linted.fixed:
        return BufferResult(linted.findings, data, warnings=linted.warnings)
    diff = document.diff(linted.document, display_path(path)) if settings.diff else ""
    return BufferResult(linted.findings, linted.document.encode(), linted.fixed, diff, linted.warnings)


@dataclass
class InMemory:
    """A document's findings left after fixing (when the settings fix), and what they were found from."""

    findings: list[Finding]
    document: Document  # fixed, or the document itself when nothing was fixed
    fixed: Counter
    warnings: list[str]  # the last lint's: analyses cut short
    read: set[str]  # the files whose text the findings may depend on (`Run.read`)


def lint_in_memory(
    document: Document,
    data: bytes,
    path: str,
    settings: LintSettings,
    callers: Iterable[str] = (),
    *,
    texts: Mapping[str, bytes] | None = None,
    cache: Cache | None = None,
) -> InMemory:
    """`document` (read from `data`) standing for the file `path`, linted as the file would be;
    `texts` stand in for the contents of other files (an editor's other buffers). The `cache` keeps
    the results of the modules linted with it that read none of those texts."""
    texts = {**(texts or {}), path: data}
    plain = replace(settings, fix=False, diff=False, hash_contents=cache is not None)
    run = lint_run([path], plain, cache, callers=callers, texts=texts)
    (result,) = run.reported()
    if result.error:  # as `check` of the file: a bug in a rule is not taken for a clean file
        raise LintError(result.error)
    if not (settings.fix or settings.diff):
        return InMemory(result.findings or [], document, Counter(), result.warnings, run.read())
    # The fixer re-lints after each pass, with the traced calls the project makes into the file.
    project = Project(settings.options, facts=module_facts, texts=texts)
    runs: list[Linted] = []

    def lint(document: Document) -> list[Finding]:
        runs.append(lint_document(document, path, settings, project, result.received))
        return runs[-1].findings

    fixed_document, findings, fixed = fix_until_stable(document, lint, settings.unsafe_fixes)
    return InMemory(findings, fixed_document, fixed, runs[-1].warnings, run.read())


def declared_encoding(text: str) -> str:
    """The encoding a buffer's coding cookie declares, if it can hold the text (as its file would), else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(text.encode("utf-8")).readline)
        text.encode(encoding)
    except (SyntaxError, LookupError, UnicodeEncodeError):
        return "utf-8"
    return "utf-8" if encoding == "utf-8-sig" else encoding


def encoded(text: str) -> bytes:
    """A buffer's text as its file's bytes (in its declared encoding)."""
    return text.encode(declared_encoding(text))


class LintError(Exception):
    """An internal error while linting a buffer (a bug in a rule)."""
