"""`--statistics`: how many findings of each code and name, most frequent first (text, or JSON for machine formats)."""

from __future__ import annotations

import json
from collections import Counter

from jaxlint.findings import Finding
from jaxlint.output import Report


def render(findings: list[Finding], report: Report, as_json: bool) -> str:
    # Counted by code and name: JAX001 is `io-error` for a path that cannot be read and
    # `syntax-error` for a file that does not parse, two problems to tell apart.
    counts = Counter((f.code, f.name) for f in findings)
    fixable = Counter((f.code, f.name) for f in findings if report.fixable(f))
    order = sorted(counts, key=lambda kind: (-counts[kind], kind))
    if as_json:
        rows = [
            {
                "code": code,
                "name": name,
                "count": counts[code, name],
                "fixable": fixable[code, name] > 0,
                "fixable_count": fixable[code, name],
            }
            for code, name in order
        ]
        return json.dumps(rows, indent=2) + "\n"
    if not order:
        return ""
    count_width = max(len(str(n)) for n in counts.values())
    code_width = max(len(code) for code, _ in order)
    any_fixable = bool(fixable)
    lines = []
    for code, name in order:
        marker = ("[*] " if fixable[code, name] else "[ ] ") if any_fixable else ""
        lines.append(f"{counts[code, name]:>{count_width}}\t{code:<{code_width}}\t{marker}{name}\n")
    return "".join(lines)
