"""Findings as LSP diagnostics and text edits, in the position encoding the client negotiated."""

from __future__ import annotations

from typing import Sequence

from lsprotocol import types
from pygls.workspace import TextDocument

from jaxlint.findings import Edit, Finding, Position
from jaxlint.rules import all_rules
from jaxlint.suppression import UNUSED_NOQA_CODE

SOURCE = "jaxlint"


def lsp_position(document: TextDocument, at: Position) -> types.Position:
    """A 1-based row and character column as a 0-based LSP position in the client's code units."""
    lines = document.lines
    row = min(max(at.row - 1, 0), len(lines))
    column = max(at.column - 1, 0)
    if row == len(lines):
        return types.Position(line=row, character=0)
    return document.position_codec.position_to_client_units(lines, types.Position(line=row, character=column))


def lsp_range(document: TextDocument, start: Position, end: Position) -> types.Range:
    return types.Range(start=lsp_position(document, start), end=lsp_position(document, end))


def text_edits(document: TextDocument, edits: Sequence[Edit]) -> list[types.TextEdit]:
    return [types.TextEdit(range=lsp_range(document, e.start, e.end), new_text=e.content) for e in edits]


def diagnostic(document: TextDocument, finding: Finding) -> types.Diagnostic:
    """The diagnostic for a finding: its code links the rule's page; an unused suppression is shown faded."""
    rule = all_rules().get(finding.code)
    return types.Diagnostic(
        range=lsp_range(document, finding.start, finding.end),
        message=finding.message,
        severity=types.DiagnosticSeverity.Error
        if finding.severity == "error"
        else types.DiagnosticSeverity.Warning,
        code=finding.code,
        code_description=types.CodeDescription(href=rule.url) if rule is not None else None,
        source=SOURCE,
        tags=[types.DiagnosticTag.Unnecessary] if finding.code == UNUSED_NOQA_CODE else None,
    )
