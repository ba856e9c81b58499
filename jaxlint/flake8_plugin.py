"""The flake8 plugin: `flake8 --select JAX` runs jaxlint's rules, with the same codes and messages.

flake8 does the rest as it does for every plugin: selection, `# noqa`, per-file ignores, output.
So the two codes about jaxlint itself stay out: flake8 reports syntax errors as E999, and judges
its own `# noqa` comments. A rule that is off unless selected by its code (`Rule.opt_in`) runs
where the project's own configuration selects it, flake8 having no such notion.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, Sequence

from jaxlint import __version__
from jaxlint.config import ConfigError
from jaxlint.linter import PARSE_ERROR_CODE, lint_source
from jaxlint.project import FileSettings
from jaxlint.rules import all_rules, opt_in_codes
from jaxlint.suppression import UNUSED_NOQA_CODE


class JaxlintChecker:
    name = "jaxlint"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]):
        self.filename = filename
        self.lines = lines

    def _settings(self) -> tuple[dict, frozenset[str]]:
        """The `[tool.jaxlint.options]` of the file's project, read by the rules, and the codes its
        configuration selects (defaults if unreadable)."""
        if self.filename in ("stdin", "-", ""):
            return {}, frozenset()
        try:
            settings = FileSettings.for_path(Path(self.filename).resolve())
        except ConfigError:
            return {}, frozenset()
        return settings.config.options, settings.selected

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        options, selected = self._settings()
        codes = set(all_rules()) - {PARSE_ERROR_CODE, UNUSED_NOQA_CODE} - (opt_in_codes() - selected)
        for finding in lint_source("".join(self.lines), self.filename, codes, options):
            # flake8's columns are 0-based
            yield finding.start.row, finding.start.column - 1, f"{finding.code} {finding.message}", type(self)
