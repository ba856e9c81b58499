"""A line `ast` does not break but `str.splitlines` does, inserted after line 1 of every rule example,
moves every finding (and every fix edit below line 1) down one row and changes nothing else."""

from __future__ import annotations

import io
import re
import textwrap
import tokenize

import pytest

from jaxlint.findings import Edit, Finding, Position
from jaxlint.linter import lint_source
from jaxlint.rules import all_rules

# A form feed alone on a line, and comments holding a line separator, NEL and a vertical tab.
INSERTED = ["\x0c", "# before \u2028 after", "# before \x85 after", "# before \x0b after"]

EXAMPLES = [
    (f"{code}-{kind}-{index}", textwrap.dedent(example), rule.example_options)
    for code, rule in all_rules().items()
    for kind, examples in (("bad", rule.bad), ("good", rule.good))
    for index, example in enumerate(examples)
]


def line_one_ends_a_logical_line(text: str) -> bool:
    """Whether a line may go after line 1: it is not inside a string or after a backslash."""
    first = text.split("\n", 1)[0]
    if first.endswith("\\"):
        return False
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    return not any(t.start[0] == 1 < t.end[0] for t in tokens if t.type == tokenize.STRING)


def moved(at: Position) -> Position:
    return Position(at.row + 1, at.column) if at.row > 1 else at


LINE_REFERENCE = re.compile(r"\bline (\d+)\b")


def shifted(finding: Finding) -> Finding:
    fix = finding.fix
    if fix is not None:
        fix = type(fix)(fix.applicability, fix.message, tuple(Edit(e.content, moved(e.start), moved(e.end)) for e in fix.edits))
    noqa = None if finding.noqa_row is None else moved(Position(finding.noqa_row, 1)).row
    # A message that names another line ("consumed ... on line 7") names it at its new row.
    message = LINE_REFERENCE.sub(lambda m: f"line {moved(Position(int(m.group(1)), 1)).row}", finding.message)
    return finding.with_(start=moved(finding.start), end=moved(finding.end), fix=fix, noqa_row=noqa, message=message)


@pytest.mark.parametrize("name,example,options", EXAMPLES, ids=[name for name, _, _ in EXAMPLES])
def test_inserted_line_moves_every_finding_down_one_row(name, example, options):
    if not line_one_ends_a_logical_line(example):
        pytest.skip("line 1 continues onto line 2")
    first, rest = example.split("\n", 1) if "\n" in example else (example, "")
    expected = [shifted(f) for f in lint_source(example, "example.py", options=options)]
    for line in INSERTED:
        assert lint_source(f"{first}\n{line}\n{rest}", "example.py", options=options) == expected, ascii(line)
