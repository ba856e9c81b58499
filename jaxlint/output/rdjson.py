"""`--output-format rdjson`: reviewdog's diagnostic format (a `DiagnosticResult`), for pull-request review comments.

Its columns count UTF-8 bytes, 1-based, and its ranges end exclusively (the format's schema);
jaxlint's count characters, so each is converted on the line it is on. A notebook cell's rows
are no lines of the `.ipynb` file: there the location is the file alone, and the message names
the cell.
"""

from __future__ import annotations

from jaxlint.findings import Finding, Position
from jaxlint.output import Report, json_text
from jaxlint.output.full import lines_of

SOURCE = {"name": "jaxlint", "url": "https://github.com/jaxlint/jaxlint"}


def _position(at: Position, lines: tuple[str, ...]) -> dict:
    line = lines[at.row - 1] if 0 < at.row <= len(lines) else ""
    column = len(line[: at.column - 1].encode("utf-8", "surrogatepass")) + 1 + max(at.column - 1 - len(line), 0)
    return {"line": at.row, "column": column}


def _range(start: Position, end: Position, lines: tuple[str, ...]) -> dict:
    return {"start": _position(start, lines), "end": _position(end, lines)}


def _diagnostic(f: Finding, report: Report, lines: tuple[str, ...]) -> dict:
    code = {"value": f.code}
    url = report.url(f.code)
    if url:
        code["url"] = url
    if f.cell is not None:
        message = f"cell {f.cell}:{f.start.row}:{f.start.column}: {f.message}"
        return {"message": message, "location": {"path": f.path}, "severity": "ERROR", "code": code}
    diagnostic = {
        "message": f.message,
        "location": {"path": f.path, "range": _range(f.start, f.end, lines)},
        "severity": "ERROR" if f.severity == "error" else "WARNING",
        "code": code,
    }
    if f.fix is not None:
        diagnostic["suggestions"] = [
            {"range": _range(e.start, e.end, lines), "text": e.content} for e in f.fix.edits
        ]
    return diagnostic


def render(findings: list[Finding], report: Report) -> str:
    lines = lines_of(report)
    result = {
        "source": SOURCE,
        "diagnostics": [_diagnostic(f, report, lines(f.path, f.cell)) for f in findings],
    }
    return json_text(result) + "\n"
