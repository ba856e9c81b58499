"""Every rule's advice against the line it is attached to, on the rule's own bad examples through
the command line's JSON: the code a message tells the user to write, and the code a fix puts in,
is never what the flagged line already says."""

from __future__ import annotations

import textwrap

import pytest

from advice import flagged_code, normalised, remedies
from jaxlint.rules import all_rules

RULES = all_rules()
CODES = sorted(code for code, rule in RULES.items() if rule.bad)


def reported(cli, make_files, code: str) -> list[tuple[str, dict]]:
    """(example source, finding) for every finding of the rule's bad examples."""
    rule = RULES[code]
    sources = {f"example_{i}.py": textwrap.dedent(example) for i, example in enumerate(rule.bad)}
    make_files(sources)
    overrides = [a for k, v in rule.example_options.items() for a in ("--config", f"{k} = {v!r}")]
    out = cli(
        "check", "--isolated", "--no-cache", "--unsafe-fixes", "--select", code,
        "--output-format", "json", *overrides, *sources,
    )
    assert out.code in (0, 1), out.stderr
    return [(sources[f["filename"].rsplit("/", 1)[-1]], f) for f in out.json]


def replaced(source: str, edit: dict) -> str:
    """The text of `source` an edit replaces (rows and columns from 1)."""
    lines = source.splitlines(keepends=True)
    start, end = edit["location"], edit["end_location"]

    def offset(position: dict) -> int:
        return sum(len(line) for line in lines[: position["row"] - 1]) + position["column"] - 1

    return source[offset(start) : offset(end)]


@pytest.mark.parametrize("code", CODES)
def test_advice_is_not_the_flagged_line(cli, make_files, code):
    findings = reported(cli, make_files, code)
    assert findings, f"{code}'s bad examples report nothing"
    for source, finding in findings:
        row = finding["location"]["row"]
        line = flagged_code(source, row)
        for remedy in remedies(finding["message"]):
            assert normalised(remedy) not in line, (row, finding["message"])
        for edit in (finding["fix"] or {}).get("edits", ()):
            content = normalised(edit["content"])
            assert content not in line, (row, edit)
            assert content != normalised(replaced(source, edit)), (row, edit)
