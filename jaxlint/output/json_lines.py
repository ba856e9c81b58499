"""`--output-format json-lines`: one JSON object per finding per line."""

from __future__ import annotations

import json
import re

from jaxlint.findings import Finding
from jaxlint.output import Report, valid_unicode

# Characters JSON may hold raw that `str.splitlines` and many editors still take for line breaks
# (and DEL, which a terminal may act on): escaped, so that every reader sees one finding per line.
_LINE_BREAKING = re.compile("[\x7f\x85\u2028\u2029]")


def _line(finding: Finding, report: Report) -> str:
    text = valid_unicode(json.dumps(finding.to_json(url=report.url(finding.code)), ensure_ascii=False))
    return _LINE_BREAKING.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def render(findings: list[Finding], report: Report) -> str:
    return "".join(_line(f, report) + "\n" for f in findings)
