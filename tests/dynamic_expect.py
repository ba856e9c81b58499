"""Findings a dynamic-check fixture expects, from `# expect: CODE STATUS [words the detail must
contain] [| the finding's message]` markers on its lines: built directly, so such tests do not
depend on the static rules (a message is given where the check reads it, as for JAX505)."""

from __future__ import annotations

import re
from pathlib import Path

from jaxlint.findings import Finding, Position

EXPECT = re.compile(r"#\s*expect:\s*(JAX\d{3})\s+(confirmed|not-reproduced|inconclusive)\s*(.*)$")


def expectations(path: Path) -> list[tuple[Finding, str, list[str]]]:
    """Findings (and the expected status and detail words) from the `# expect:` markers of a file."""
    out = []
    for row, line in enumerate(path.read_text().splitlines(), start=1):
        m = EXPECT.search(line)
        if m:
            code, status, rest = m.groups()
            words, _, message = rest.partition(" | ")
            col = len(line) - len(line.lstrip()) + 1
            finding = Finding(code, "test", message or "test finding", str(path), Position(row, col),
                              Position(row, len(line)))
            out.append((finding, status, words.split()))
    return out
