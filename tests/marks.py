"""What a test source expects to be reported: a `# JAX101` comment at the end of each such line."""

from __future__ import annotations

import re
from typing import Callable


def family_marks(codes: str) -> Callable[[str], set[tuple[int, str]]]:
    """The reader of marks whose code matches `codes` (a pattern: `JAX1\\d\\d` for one family):
    it gives the (row, code) of each in a source, rows counted from 1."""
    mark = re.compile(rf"#\s*({codes})\b")

    def marked(source: str) -> set[tuple[int, str]]:
        return {(row, code) for row, line in enumerate(source.splitlines(), 1) for code in mark.findall(line)}

    return marked
