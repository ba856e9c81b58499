"""Output formats, one module per `--output-format`, and what they share: paths, locations, fix markers."""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass, field
from json import dumps as _dumps  # not `import json`: the submodule `jaxlint.output.json` rebinds that name here
from typing import IO, Mapping

import click

from jaxlint.findings import Finding
from jaxlint.fixes import applicable

# --output-format value -> module in this package
FORMATS = {
    "full": "full",
    "concise": "concise",
    "json": "json",
    "json-lines": "json_lines",
    "sarif": "sarif",
    "github": "github",
    "gitlab": "gitlab",
    "junit": "junit",
    "pylint": "pylint",
    "grouped": "grouped",
    "azure": "azure",
    "rdjson": "rdjson",
}
# Formats read by people: a summary line follows them (machine formats stay parseable).
TEXT_FORMATS = ("full", "concise", "grouped")


@dataclass(frozen=True)
class Report:
    """What a format needs besides the findings: the rules (for urls and docs) and whether unsafe fixes apply."""

    rules: Mapping[str, object]
    unsafe_fixes: bool = False
    # Text linted from somewhere other than its file (standard input), by path: shown instead of the file.
    buffers: Mapping[str, bytes] = field(default_factory=dict)
    colour: bool = False  # text formats style their output (for a terminal)

    def url(self, code: str) -> str | None:
        rule = self.rules.get(code)
        return rule.url if rule is not None else None

    def fixable(self, finding: Finding) -> bool:
        return applicable(finding.fix, self.unsafe_fixes)


# Control characters (C0, DEL, C1), the line and paragraph separators, and the lone surrogates that
# stand for a file name's undecodable bytes.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, as os.fsdecode keeps it
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` safe for a terminal: control characters and undecodable bytes shown as `\\xNN` escapes."""
    return _UNPRINTABLE.sub(_escape, text)


def valid_unicode(text: str) -> str:
    """`text` with the undecodable bytes of file names as U+FFFD, so that it encodes as UTF-8 (as ruff writes them)."""
    return _SURROGATE.sub("\ufffd", text)


def json_text(value: object) -> str:
    """`value` as indented JSON that encodes as UTF-8, with DEL escaped (JSON may hold it raw,
    and a terminal may act on it)."""
    return valid_unicode(_dumps(value, indent=2, ensure_ascii=False)).replace("\x7f", "\\u007f")


def display_path(path: str) -> str:
    """`path` relative to the working directory when it lies below it, else unchanged (as ruff shows paths),
    with control characters and undecodable bytes escaped."""
    cwd = os.getcwd()
    if path.startswith(cwd + os.sep):
        path = path[len(cwd) + 1 :]
    return printable(path)


def location(finding: Finding) -> str:
    """`path:row:col`, or `path:cell N:row:col` in a notebook."""
    cell = f"cell {finding.cell}:" if finding.cell is not None else ""
    return f"{display_path(finding.path)}:{cell}{finding.start.row}:{finding.start.column}"


def headline(finding: Finding, report: Report) -> str:
    """`CODE [*] message`, with the dynamic confirmation's status when there is one."""
    marker = " [*]" if report.fixable(finding) else ""
    status = f" [{finding.confirmation['status']}]" if finding.confirmation else ""
    return f"{finding.code}{marker} {printable(finding.message)}{status}"


def style(text: str, report: Report, **styles) -> str:
    """`text` with click's terminal styles when the report is coloured, else as it is."""
    return click.style(text, **styles) if report.colour else text


def styled_headline(finding: Finding, report: Report) -> str:
    """`path:row:col: CODE [*] message`, the location bold and the code red when coloured."""
    code, _, rest = headline(finding, report).partition(" ")
    return f"{style(location(finding), report, bold=True)}: {style(code, report, fg='red', bold=True)} {rest}"


def use_colour(stream: IO) -> bool:
    """Colour for a terminal, never with NO_COLOR set, always with FORCE_COLOR (as most command-line tools)."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream.isatty()


def render(output_format: str, findings: list[Finding], report: Report) -> str:
    """The findings in one format (the module is imported only when that format is asked for)."""
    module = importlib.import_module(f"{__name__}.{FORMATS[output_format]}")
    return module.render(findings, report)
