"""Every rule's page, as `jaxlint rule CODE` prints it: the same sections in one order, short enough
to read, limitations one line each, and a "How to silence" line whose three ways each work."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from jaxlint.cli import main
from jaxlint.rule import NOT_SILENCED_BY_NOQA
from jaxlint.rules import all_rules
from marks import family_marks

RULES = all_rules()
ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 120
# Every page's sections, in this order; those marked False only where the rule has them.
SECTIONS = {
    "What it does": True,
    "Why is this bad?": True,
    "Example": True,
    "Use instead": True,
    "Fix safety": False,
    "How to silence": True,
    "Options": False,
    "Limitations": True,
    "References": False,
}
# A limitation is a principle stated in one line, not a case; a page states a few.
MAX_LIMIT_CHARS = 160
MAX_LIMITS = 10
marked = family_marks(r"JAX\d{3}")


def _sections(page: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    for line in page.splitlines():
        if line.startswith("## "):
            sections[line[3:]] = []
        elif sections:
            sections[list(sections)[-1]].append(line)
    return sections


@pytest.fixture(scope="module")
def printed():
    """Every rule's page as the command line prints it, by code (one `jaxlint rule --all` run)."""
    out = CliRunner().invoke(main, ["rule", "--all", "--output-format", "json"])
    assert out.exit_code == 0, out.output
    return {page["code"]: page["explanation"] for page in json.loads(out.output)}


@pytest.mark.parametrize("code", sorted(RULES))
def test_page_has_the_sections_in_order(code, printed, cli):
    text = cli("rule", code).stdout
    assert text == printed[code]
    rule = RULES[code]
    present = {
        "Fix safety": bool(rule.fix_safety),
        "Options": bool(rule.options),
        "References": bool(rule.references),
    }
    expected = [name for name, always in SECTIONS.items() if always or present[name]]
    assert list(_sections(text)) == expected


@pytest.mark.parametrize("code", sorted(RULES))
def test_page_is_short(code, cli):
    lines = cli("rule", code).stdout.splitlines()
    assert len(lines) <= MAX_LINES, (
        f"`jaxlint rule {code}` prints {len(lines)} lines (at most {MAX_LINES}): the cases belong in "
        "the rule's `decisions` and `limitations`, on its full account"
    )


@pytest.mark.parametrize("code", sorted(RULES))
def test_limitations_are_principles_one_line_each(code, printed):
    rule = RULES[code]
    assert rule.limits, f"{code} states no limitation: where does it stay silent?"
    assert len(rule.limits) <= MAX_LIMITS, f"{code} states {len(rule.limits)} limitations: keep the principles"
    assert len(set(rule.limits)) == len(rule.limits)
    for limit in rule.limits:
        assert "\n" not in limit and len(limit) <= MAX_LIMIT_CHARS, limit
        assert f"- {limit}" in _sections(printed[code])["Limitations"]


@pytest.mark.parametrize("code", sorted(RULES))
def test_page_links_to_its_full_account(code, printed):
    rule = RULES[code]
    links = re.findall(r"\[([^\]]+)\]\(([^)]+)\)", "\n".join(_sections(printed[code])["Limitations"]))
    assert len(links) == 1
    path, url = links[0]
    assert url == rule.details_url and url.endswith("/" + path)
    account = (ROOT / path).read_text(encoding="utf-8")
    assert account == rule.details()
    for text in (rule.decisions, rule.limitations):
        if text:
            assert textwrap.dedent(text).strip() in account


def _silencing(page: str) -> list[str]:
    """The code spans of the page's one "How to silence" line."""
    lines = [line for line in _sections(page)["How to silence"] if line]
    assert len(lines) == 1
    return re.findall(r"`([^`]+)`", lines[0])


def _reported(cli, code: str) -> set[tuple[str, int]]:
    out = cli("check", "--output-format", "json", "--no-cache", ".")
    return {(f["filename"].rsplit("/", 2)[-2], f["location"]["row"]) for f in out.json if f["code"] == code}


def _configuration(code: str, setting: str = "") -> str:
    """`pyproject.toml` with `setting`, selecting the rule where it is off by default, with the
    options its examples are linted with."""
    rule = RULES[code]
    lines = ["[tool.jaxlint]", setting]
    if rule.opt_in:
        lines.append(f'extend-select = ["{code}"]')
    lines.append("[tool.jaxlint.options]")
    lines += [f"{key} = {json.dumps(value)}" for key, value in rule.example_options.items()]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("code", sorted(RULES))
def test_each_way_to_silence_works(code, printed, cli, make_files):
    example = textwrap.dedent(RULES[code].bad[0])
    rows = {row for row, c in marked(example) if c == code}
    spans = _silencing(printed[code])
    make_files({"src/bad.py": example, "tests/bad.py": example, "pyproject.toml": _configuration(code)})
    assert _reported(cli, code) == {(folder, row) for folder in ("src", "tests") for row in rows}

    table = next(s for s in spans if s.startswith("per-file-ignores"))
    make_files({"pyproject.toml": _configuration(code, table)})
    assert _reported(cli, code) == {("src", row) for row in rows}

    ignore = next(s for s in spans if s.startswith("ignore ="))
    make_files({"pyproject.toml": _configuration(code, ignore)})
    assert _reported(cli, code) == set()

    make_files({"pyproject.toml": _configuration(code)})
    directive = next((s for s in spans if s.startswith("# noqa:")), None)
    assert (directive is None) == (code in NOT_SILENCED_BY_NOQA)
    with_noqa = "\n".join(
        f"{line}  {directive or f'# noqa: {code}'}" if row in rows else line
        for row, line in enumerate(example.replace(f"# {code}", "").splitlines(), 1)
    )
    make_files({"src/bad.py": with_noqa})
    without = {("tests", row) for row in rows}
    assert _reported(cli, code) == (without if directive else without | {("src", row) for row in rows})
