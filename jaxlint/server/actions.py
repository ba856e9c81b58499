"""Code actions: a finding's own fix, a `# noqa: CODE` to suppress it, and every safe fix at once."""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace import TextDocument

from jaxlint.findings import Edit, Finding, Position
from jaxlint.fixes import applicable
from jaxlint.server.diagnostics import text_edits
from jaxlint.linter import PARSE_ERROR_CODE
from jaxlint.suppression import UNUSED_NOQA_CODE, directives

FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.jaxlint"
UNSUPPRESSIBLE = (PARSE_ERROR_CODE, UNUSED_NOQA_CODE)


def _edit(document: TextDocument, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    identifier = types.OptionalVersionedTextDocumentIdentifier(uri=document.uri, version=document.version)
    return types.WorkspaceEdit(
        document_changes=[types.TextDocumentEdit(text_document=identifier, edits=edits)]
    )


def quick_fix(
    document: TextDocument, finding: Finding, diagnostic: types.Diagnostic, unsafe_fixes: bool
) -> types.CodeAction | None:
    """The finding's fix as a quick fix; unsafe fixes are offered only when the project allows them."""
    if not applicable(finding.fix, unsafe_fixes):
        return None
    return types.CodeAction(
        title=f"{finding.fix.message} ({finding.code})",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=_edit(document, text_edits(document, list(finding.fix.edits))),
        is_preferred=finding.fix.applicability == "safe",
    )


def suppression(
    document: TextDocument, finding: Finding, diagnostic: types.Diagnostic
) -> types.CodeAction | None:
    """`# noqa: CODE` at the end of the finding's line, or CODE added to the directive already there.

    None for what a `# noqa` cannot suppress: a file that does not parse, or an unused directive
    (another directive would not silence it; its fix removes it)."""
    if finding.code in UNSUPPRESSIBLE:
        return None
    row = finding.noqa_row if finding.noqa_row is not None else finding.start.row
    line = document.lines[row - 1].rstrip("\r\n") if row <= len(document.lines) else ""
    on_row = (d for d in directives(document.source) if d.row == row and not d.file_level)
    existing = next((d for d in on_row if d.codes is not None), None)
    if existing is not None:
        at = Position(row, existing.column + existing.codes_span[1] + 1)
        edit = Edit(f", {finding.code}", at, at)
    else:
        end = Position(row, len(line) + 1)
        edit = Edit(f"  # noqa: {finding.code}", end, end)
    return types.CodeAction(
        title=f"Suppress {finding.code} with `# noqa: {finding.code}`",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=_edit(document, text_edits(document, [edit])),
    )


def fix_all(document: TextDocument, fixed_source: str, kind: str = FIX_ALL) -> types.CodeAction | None:
    """Every applicable fix, as one edit replacing the document (None when nothing changes)."""
    if fixed_source == document.source:
        return None
    lines = document.lines
    end = types.Position(line=len(lines), character=0)
    whole = types.Range(start=types.Position(line=0, character=0), end=end)
    return types.CodeAction(
        title="jaxlint: fix all auto-fixable problems",
        kind=kind,
        edit=_edit(document, [types.TextEdit(range=whole, new_text=fixed_source)]),
    )
