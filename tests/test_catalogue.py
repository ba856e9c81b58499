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

from jaxlint.catalogue import details, differences, folders, main, pages, sync_readme, write
from jaxlint.cli import main as cli
from jaxlint.rule import DETAILS_FOLDER, Rule
from jaxlint.rules import all_rules

RULES_DIR = Path(__file__).resolve().parent.parent / "rules"
DETAILS_DIR = RULES_DIR.parent / DETAILS_FOLDER
PACKAGE_DIR = RULES_DIR.parent / "jaxlint"

# "What it does" is read in half a minute: a few sentences, never the rule's whole contract.
WHAT_IT_DOES_MAX_WORDS = 120


def test_checked_in_pages_match_the_rules():
    for folder, expected in folders(RULES_DIR, all_rules()):
        stale = differences(folder, expected)
        assert not stale, f"out of date in {folder.name}: {stale}; run `python -m jaxlint.catalogue` from the checkout's root"


def test_every_rule_has_a_page_and_a_full_account():
    for code, rule in all_rules().items():
        assert (RULES_DIR / f"{code}.md").read_text(encoding="utf-8") == rule.page()
        assert (DETAILS_DIR / f"{code}.md").read_text(encoding="utf-8") == rule.details()


def test_write_then_check(tmp_path, test_rules):
    rules = all_rules()
    directory = tmp_path / "rules"
    directory.mkdir()
    (directory / "JAX997.md").write_text("a rule that is gone\n")
    assert "JAX997.md" in write(directory, pages(rules))
    assert not (directory / "JAX997.md").exists()
    assert differences(directory, pages(rules)) == []
    assert (directory / "JAX098.md").read_text() == rules["JAX098"].page()
    index = (directory / "README.md").read_text()
    assert "| [JAX098](JAX098.md) | test-print-call | linter | Test rule: a `print` call | yes |" in index
    assert main([str(directory)]) == 0
    assert (tmp_path / DETAILS_FOLDER / "JAX098.md").read_text() == rules["JAX098"].details()
    assert main(["--check", str(directory)]) == 0
    (directory / "JAX098.md").write_text("edited by hand\n")
    assert main(["--check", str(directory)]) == 1
    main([str(directory)])
    (tmp_path / DETAILS_FOLDER / "JAX099.md").write_text("edited by hand\n")
    assert main(["--check", str(directory)]) == 1


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


def test_the_full_account_says_how_each_rule_decides():
    for code, rule in all_rules().items():
        account = details(all_rules())[f"{code}.md"]
        headings = list(_sections(account))
        assert ("How it decides" in headings) == bool(rule.decisions), code
        assert ("Known limitations" in headings) == bool(rule.limitations), code
        assert headings, f"{code} has no full account: give it `decisions` or `limitations`"
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
    limits = ("It cannot see `z`.",)
    limitations = "It cannot see `z`, nor `w` when `z` is `v`."
    references = ("https://docs.jax.dev",)


def test_page_orders_its_sections():
    page = _Decides().page()
    assert list(_sections(page)) == [
        "What it does",
        "Why is this bad?",
        "Example",
        "Use instead",
        "Fix safety",
        "How to silence",
        "Options",
        "Limitations",
        "References",
    ]
    assert "## Limitations\n- It cannot see `z`.\n" in page
    assert "`x` counts" not in page and "nor `w`" not in page
    assert f"[{DETAILS_FOLDER}/JAX097.md]({_Decides().details_url})" in page


def test_full_account_keeps_the_decisions_and_limitations():
    account = _Decides().details()
    assert list(_sections(account)) == ["How it decides", "Known limitations"]
    assert "## How it decides\n- `x` counts;\n- `y` does not.\n" in account
    assert "nor `w` when `z` is `v`." in account
    assert _Decides().url in account


def test_rule_command_prints_the_page():
    rule = next(rule for rule in all_rules().values() if rule.decisions)
    text = CliRunner().invoke(cli, ["rule", rule.code])
    assert text.exit_code == 0, text.output
    assert text.output == rule.page()
    assert rule.details_url in text.output
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
        text = _sections(rule.page())["What it does"] + "\n".join(rule.limits)
        text += _sections(rule.details()).get("How it decides", "")
        for word in re.findall(r"\b_?[A-Za-z]\w*", text):
            assert word not in odd, f"{code}'s page names jaxlint's internal {word!r}"
        for owner in re.findall(r"`(_?[A-Z]\w*)\.\w", text):
            assert owner not in internal, f"{code}'s page names jaxlint's internal {owner!r}"
