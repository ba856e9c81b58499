"""What a test source expects to be reported: a `# JAX101` comment at the end of each such line."""

from __future__ import annotations

import re
import textwrap
from typing import Callable


def family_marks(codes: str) -> Callable[[str], set[tuple[int, str]]]:
    """The reader of marks whose code matches `codes` (a pattern: `JAX1\\d\\d` for one family):
    it gives the (row, code) of each in a source, rows counted from 1."""
    mark = re.compile(rf"#\s*({codes})\b")

    def marked(source: str) -> set[tuple[int, str]]:
        return {(row, code) for row, line in enumerate(source.splitlines(), 1) for code in mark.findall(line)}

    return marked


def cli_reports(cli, make_files, sources: list[str], select: str) -> tuple[set, set]:
    """Each source (dedented) in a file of its own, linted through the command line's JSON with
    `--select`: what it reports and what the sources mark, as (file name, row, code)."""
    files = {f"case_{i}.py": textwrap.dedent(source) for i, source in enumerate(sources)}
    make_files(files)
    out = cli("check", "--output-format", "json", "--select", select, "--isolated", "--no-cache")
    got = {(f["filename"].rsplit("/", 1)[-1], f["location"]["row"], f["code"]) for f in out.json}
    marked = family_marks(select + r"\d\d" if len(select) == 4 else select)
    expected = {(name, row, code) for name, text in files.items() for row, code in marked(text)}
    return got, expected
