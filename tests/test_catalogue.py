"""The rule catalogue: the checked-in `rules/` must be exactly what the rules generate, so docs cannot drift."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from jaxlint.catalogue import differences, main, pages, sync_readme, write
from jaxlint.rules import all_rules

RULES_DIR = Path(__file__).resolve().parent.parent / "rules"


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
