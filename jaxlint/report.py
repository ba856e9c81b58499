"""The reporter a rule writes to: turns AST nodes into findings with character positions."""

from __future__ import annotations

import ast

from jaxlint.findings import Finding, Fix
from jaxlint.rule import Rule
from jaxlint.source import Source


class Reporter:
    """Collects one rule's findings for one module; at most one finding per rule and node."""

    def __init__(self, rule: Rule, source: Source, path: str):
        self.rule = rule
        self.source = source
        self.path = path
        self.findings: list[Finding] = []
        self._seen: set[tuple[int, int, int, int]] = set()

    def __call__(self, node: ast.AST, message: str, fix: Fix | None = None) -> None:
        start, end = self.source.start(node), self.source.end(node)
        key = (start.row, start.column, end.row, end.column)
        if key in self._seen:
            return
        self._seen.add(key)
        self.findings.append(
            Finding(
                code=self.rule.code,
                name=self.rule.name,
                message=message,
                path=self.path,
                start=start,
                end=end,
                fix=fix,
                noqa_row=_noqa_row(self.source, node),
            )
        )


def _noqa_row(source: Source, node: ast.AST) -> int:
    """A finding on a multi-line string is suppressed on the string's last line (as ruff)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.end_lineno or node.lineno
    return node.lineno
