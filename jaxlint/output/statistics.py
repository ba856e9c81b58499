"""`--statistics`: how many findings of each code, most frequent first (text, or JSON for machine formats)."""

from __future__ import annotations

import json
from collections import Counter

from jaxlint.findings import Finding
from jaxlint.output import Report


def render(findings: list[Finding], report: Report, as_json: bool) -> str:
    counts = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if report.fixable(f))
    names = {f.code: f.name for f in findings}
    order = sorted(counts, key=lambda code: (-counts[code], code))
    if as_json:
        rows = [
            {
                "code": code,
                "name": names[code],
                "count": counts[code],
                "fixable": fixable[code] > 0,
                "fixable_count": fixable[code],
            }
            for code in order
        ]
        return json.dumps(rows, indent=2) + "\n"
    if not order:
        return ""
    count_width = max(len(str(n)) for n in counts.values())
    code_width = max(len(code) for code in order)
    any_fixable = bool(fixable)
    lines = []
    for code in order:
        marker = ("[*] " if fixable[code] else "[ ] ") if any_fixable else ""
        lines.append(f"{counts[code]:>{count_width}}\t{code:<{code_width}}\t{marker}{names[code]}\n")
    return "".join(lines)
