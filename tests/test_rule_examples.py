"""Every rule's own examples, as data: bad examples are reported exactly on their marked lines, good ones never."""

from __future__ import annotations

import re
import textwrap

import pytest

from jaxlint.linter import lint_source
from jaxlint.rules import all_rules
from jaxlint.suppression import apply_noqa
from marks import family_marks

RULES = all_rules()
marked = family_marks(r"JAX\d{3}")


def findings(example: str, code: str) -> set[tuple[int, str]]:
    """What a user sees of `code` in the example: every rule run, then its `# noqa` comments applied."""
    options = RULES[code].example_options
    found = apply_noqa(lint_source(example, "example.py", set(RULES), options), example, set(RULES), set(RULES))
    return {(f.start.row, f.code) for f in found if f.code == code}


CASES_BAD = [(code, i) for code, rule in RULES.items() for i in range(len(rule.bad))]
CASES_GOOD = [(code, i) for code, rule in RULES.items() for i in range(len(rule.good))]


@pytest.mark.parametrize("code,index", CASES_BAD)
def test_bad_example_is_reported_on_marked_lines(code, index):
    example = textwrap.dedent(RULES[code].bad[index])
    expected = {(row, c) for row, c in marked(example) if c == code}
    assert expected, "a bad example must mark at least one line with its code"
    assert findings(example, code) == expected


@pytest.mark.parametrize("code,index", CASES_GOOD)
def test_good_example_is_quiet(code, index):
    example = textwrap.dedent(RULES[code].good[index])
    assert findings(example, code) == set()


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_is_documented(code):
    rule = RULES[code]
    assert re.fullmatch(r"JAX\d{3}", code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
    page = rule.page()
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
        assert heading in page
    assert rule.bad and rule.good
    if rule.category != "linter":  # the linter's own rules are about jaxlint, not about JAX
        assert rule.demo is not None, "every rule shows, under real JAX, the failure its page promises"


def test_rule_names_are_unique():
    names = [rule.name for rule in RULES.values()]
    assert len(names) == len(set(names))
