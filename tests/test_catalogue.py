"""The rule catalogue: the checked-in `rules/` must be exactly what the rules generate, so docs cannot drift."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from jaxlint.catalogue import differences, main, pages, sync_readme, write
from jaxlint.cli import main as cli
from jaxlint.rule import Rule
from jaxlint.rules import all_rules

RULES_DIR = Path(__file__).resolve().parent.parent / "rules"
PACKAGE_DIR = RULES_DIR.parent / "jaxlint"

# "What it does" is read in half a minute: a few sentences, never the rule's whole contract.
WHAT_IT_DOES_MAX_WORDS = 120


def test_checked_in_pages_match_the_rules():
    stale = differences(RULES_DIR, all_rules())
    assert not stale, f"out of date: {stale}; run `python -m jaxlint.catalogue` from the checkout's root"


def test_every_rule_has_a_page_equal_to_rule_page():
    for code, rule in all_rules().items():
        assert (RULES_DIR / f"{code}.md").read_text(encoding="utf-8") == rule.page()


def test_write_then_check(tmp_path, test_rules):
    rules = all_rules()
    (tmp_path / "JAX997.md").write_text("a rule that is gone\n")
    assert "JAX997.md" in write(tmp_path, rules)
    assert not (tmp_path / "JAX997.md").exists()
    assert differences(tmp_path, rules) == []
    assert (tmp_path / "JAX098.md").read_text() == rules["JAX098"].page()
    index = (tmp_path / "README.md").read_text()
    assert "| [JAX098](JAX098.md) | test-print-call | linter | Test rule: a `print` call | yes |" in index
    assert main(["--check", str(tmp_path)]) == 0
    (tmp_path / "JAX098.md").write_text("edited by hand\n")
    assert main(["--check", str(tmp_path)]) == 1


def test_index_lists_every_rule():
    index = pages(all_rules())["README.md"]
    for code in all_rules():
        assert f"[{code}]({code}.md)" in index


def test_module_entry_point_check_mode():
    done = subprocess.run(
        [sys.executable, "-m", "jaxlint.catalogue", "--check", str(RULES_DIR)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_project_readme_table_matches_the_rules():
    readme = RULES_DIR.parent / "README.md"
    assert not sync_readme(readme, all_rules(), write=False), "run `python -m jaxlint.catalogue`"
    for code in all_rules():
        assert f"[{code}](rules/{code}.md)" in readme.read_text(encoding="utf-8")


def _sections(page: str) -> dict[str, str]:
    """A page's `## ` sections by heading, each the text up to the next heading."""
    sections: dict[str, str] = {}
    heading = None
    for line in page.splitlines():
        if line.startswith("## "):
            heading = line[3:]
            sections[heading] = ""
        elif heading is not None:
            sections[heading] += line + "\n"
    return sections


@pytest.mark.parametrize("code", sorted(all_rules()))
def test_what_it_does_stays_short(code):
    what = _sections(all_rules()[code].page())["What it does"]
    words = len(what.split())
    assert words <= WHAT_IT_DOES_MAX_WORDS, (
        f"{code}'s \"What it does\" has {words} words (at most {WHAT_IT_DOES_MAX_WORDS}): keep it to what the "
        "rule reports and why that matters; the precise decisions belong in the rule's `decisions`"
    )


def test_every_page_that_decides_says_how_under_its_own_heading():
    for code, rule in all_rules().items():
        headings = list(_sections(rule.page()))
        if rule.decisions:
            assert "How it decides" in headings, code
            assert headings.index("Use instead") < headings.index("How it decides"), code
            if "Known limitations" in headings:
                assert headings.index("How it decides") < headings.index("Known limitations"), code
        else:
            assert "How it decides" not in headings, code
    assert sum(1 for rule in all_rules().values() if rule.decisions) >= len(all_rules()) // 2


class _Decides(Rule):
    code = "JAX097"
    name = "test-decides"
    summary = "Test rule: a page with every optional section"
    what = "Reports `x`."
    why = "Only for the page tests."
    bad = ("x  # JAX097",)
    good = ("y",)
    decisions = """
        - `x` counts;
        - `y` does not.
        """
    fix_safety = "Safe."
    options = "None."
    limitations = "It cannot see `z`."


def test_page_orders_its_sections():
    page = _Decides().page()
    assert list(_sections(page)) == [
        "What it does",
        "Why is this bad?",
        "Example",
        "Use instead",
        "Fix safety",
        "How it decides",
        "Options",
        "Known limitations",
    ]
    assert "## How it decides\n- `x` counts;\n- `y` does not.\n" in page


def test_rule_command_prints_how_it_decides():
    rule = next(rule for rule in all_rules().values() if rule.decisions)
    text = CliRunner().invoke(cli, ["rule", rule.code])
    assert text.exit_code == 0, text.output
    assert "\n## How it decides\n" in text.output
    assert text.output == rule.page()
    explained = CliRunner().invoke(cli, ["rule", rule.code, "--output-format", "json"])
    assert json.loads(explained.output)["explanation"] == rule.page()


def _internal_names() -> set[str]:
    """Class names of jaxlint's own machinery that read as code, not as words (`KeyFlow`, `_FunctionRun`)."""
    names = set()
    for path in PACKAGE_DIR.rglob("*.py"):
        if "rules" in path.relative_to(PACKAGE_DIR).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                names.add(node.name)
    return names


def test_pages_speak_of_the_users_code_not_of_jaxlints_internals():
    internal = _internal_names()
    odd = {name for name in internal if name.startswith("_") or sum(c.isupper() for c in name) > 1}
    for code, rule in all_rules().items():
        sections = _sections(rule.page())
        text = sections["What it does"] + sections.get("How it decides", "")
        for word in re.findall(r"\b_?[A-Za-z]\w*", text):
            assert word not in odd, f"{code}'s page names jaxlint's internal {word!r}"
        for owner in re.findall(r"`(_?[A-Z]\w*)\.\w", text):
            assert owner not in internal, f"{code}'s page names jaxlint's internal {owner!r}"
