"""The flake8 plugin: `flake8 --select JAX` reports for each file what `jaxlint check FILE` reports.

Each file is linted as `check` lints a file named alone: with its project around it (the modules
that may call into it, `callers.py`, and those its traced calls enter), its project's
configuration and rule options, through the project's results cache. flake8 lints files in
several processes, one file at a time: each process keeps the cache it read and takes in what the
others saved before each file, so the project's modules are linted once for the whole run, not
once per file that imports them.

flake8 does the rest as it does for every plugin: selection, `# noqa`, per-file ignores, output.
So the two codes about jaxlint itself stay out: flake8 reports syntax errors as E999, and judges
its own `# noqa` comments. A rule that is off unless selected by its code (`Rule.opt_in`) runs
where the project's own configuration selects it, flake8 having no such notion. A project whose
`[tool.jaxlint]` has a problem is said so on stderr (once per flake8 process), and its files are
linted with the defaults.
"""

from __future__ import annotations

import ast
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Iterator, Sequence

from jaxlint import __version__
from jaxlint.buffers import LintError, encoded
from jaxlint.config import ConfigError
from jaxlint.files import read_bytes
from jaxlint.findings import Finding
from jaxlint.linter import PARSE_ERROR_CODE, lint_source
from jaxlint.project import FileSettings
from jaxlint.rules import all_rules, opt_in_codes
from jaxlint.runner import lint_files
from jaxlint.source import SourceError, decode
from jaxlint.suppression import UNUSED_NOQA_CODE

_NO_PATH = ("stdin", "-", "")  # what flake8 names standard input without --stdin-display-name


class JaxlintChecker:
    name = "jaxlint"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]):
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        for finding in findings("".join(self.lines), self.filename):
            # flake8's columns are 0-based
            yield finding.start.row, finding.start.column - 1, f"{finding.code} {finding.message}", type(self)


def findings(text: str, filename: str) -> list[Finding]:
    """Every rule's findings in `text`, flake8's view of the file `filename`, as `jaxlint check`
    finds them in that file (`# noqa` comments left to flake8)."""
    # An opt-in rule runs only where the project's configuration selects it by its code.
    codes = frozenset(all_rules()) - {PARSE_ERROR_CODE, UNUSED_NOQA_CODE} - opt_in_codes()
    if filename in _NO_PATH:
        return lint_source(text, filename, codes)
    path = os.path.abspath(filename)
    try:
        project = FileSettings.for_path(Path(path))
    except ConfigError as error:
        # flake8 has no finding for it: said on stderr (once per flake8 process), and the file is
        # linted alone with the defaults, where `check` exits 2.
        _warn_once(str(error))
        return lint_source(text, path, codes)
    codes |= opt_in_codes() & project.selected
    settings = replace(project.lint, codes=codes, ignore_noqa=True, fix=False, hash_contents=True)
    cache = project.cache(settings)
    texts = {} if _on_disk(path, text) else {path: encoded(text)}
    (result,) = lint_files([path], settings, cache, callers=project.callers(Path(path), texts), texts=texts)
    cache.save()
    if result.error:  # as `check` of the file: a bug in a rule is not taken for a clean file
        raise LintError(result.error)
    return result.findings or []


_WARNED: set[str] = set()


def _warn_once(problem: str) -> None:
    if problem not in _WARNED:
        _WARNED.add(problem)
        print(f"jaxlint: {problem} (linted with the default settings)", file=sys.stderr)


def _on_disk(path: str, text: str) -> bool:
    """Whether `text` is the file's own (flake8 read it from the file, not from standard input)."""
    try:
        return decode(read_bytes(path)) == text
    except (OSError, SourceError):
        return False
