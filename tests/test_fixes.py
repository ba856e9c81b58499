"""Fixes: --fix, --unsafe-fixes, --diff, --show-fixes, and the edit engine underneath."""

from __future__ import annotations

import ast

from jaxlint.findings import Edit, Finding, Fix, Position
from jaxlint.fixes import apply_fixes
from jaxlint.rules import all_rules

SOURCE = "import jax\n\ndef f(x):\n    print(bad)\n    print(x)\n    return bad\n"


def finding(
    code: str, *edits: tuple[str, tuple[int, int], tuple[int, int]], applicability: str = "safe"
) -> Finding:
    fix = Fix(applicability, "m", tuple(Edit(c, Position(*s), Position(*e)) for c, s, e in edits))
    return Finding(code, "n", "m", "a.py", Position(1, 1), Position(1, 1), fix=fix)


def test_apply_fixes_skips_overlaps_and_counts():
    text = "abc\ndef\n"
    new, fixed = apply_fixes(
        text,
        [
            finding("JAX1", ("X", (1, 1), (1, 3))),
            finding("JAX2", ("Y", (1, 2), (1, 4))),  # overlaps the first: waits for the next pass
            finding("JAX3", ("Z", (2, 1), (2, 1)), ("!", (2, 4), (2, 4))),
            finding("JAX4", ("U", (2, 2), (2, 3)), applicability="unsafe"),
        ],
        unsafe_fixes=False,
    )
    assert new == "Xc\nZdef!\n"
    assert dict(fixed) == {("JAX1", "n"): 1, ("JAX3", "n"): 1}


def test_apply_fixes_counts_characters_and_handles_the_end():
    new, _ = apply_fixes(
        "é = 1", [finding("JAX1", ("x", (1, 1), (1, 2))), finding("JAX2", ("\n", (1, 6), (2, 1)))], False
    )
    assert new == "x = 1\n"


def test_fix_writes_safe_fixes(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": SOURCE})
    out = cli("check", "--fix")
    assert out.code == 1
    assert (tmp_path / "a.py").read_text() == SOURCE.replace("print(", "jax.debug.print(")
    assert out.stdout.splitlines()[-2:] == [
        "Found 4 errors (2 fixed, 2 remaining).",
        "2 unsafe fixes available with `--fix --unsafe-fixes`.",
    ]


def test_unsafe_fixes(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": SOURCE})
    out = cli("check", "--fix", "--unsafe-fixes")
    assert out.code == 0
    assert (tmp_path / "a.py").read_text() == SOURCE.replace("print(", "jax.debug.print(").replace(
        "bad", "good"
    )
    assert out.stdout.splitlines()[-1] == "Found 4 errors (4 fixed, 0 remaining)."


def test_fix_from_config(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": SOURCE, "pyproject.toml": "[tool.jaxlint]\nfix = true\nunsafe-fixes = true\n"})
    assert cli("check").code == 0
    assert "bad" not in (tmp_path / "a.py").read_text()


def test_show_fixes(cli, make_files, test_rules):
    make_files({"a.py": SOURCE})
    out = cli("check", "--fix", "--show-fixes", "--select", "JAX098")
    assert "Fixed 2 errors:\n- a.py:\n    2 × JAX098 (test-print-call)\n" in out.stdout


def test_diff_prints_and_writes_nothing(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": SOURCE})
    out = cli("check", "--diff")
    assert out.code == 1
    assert out.stdout.startswith("--- a.py\n+++ a.py\n@@ ")
    assert (
        "-    print(bad)\n-    print(x)\n+    jax.debug.print(bad)\n+    jax.debug.print(x)\n" in out.stdout
    )
    assert out.stderr.strip() == "Would fix 2 errors (2 additional fixes available with `--unsafe-fixes`)."
    assert (tmp_path / "a.py").read_text() == SOURCE


def test_diff_without_changes_exits_0(cli, make_files, test_rules):
    make_files({"a.py": "import jax\nx = bad\n"})
    out = cli("check", "--diff")
    assert out.code == 0 and out.stdout == ""


def test_fix_that_breaks_the_syntax_is_not_written(cli, make_files, test_rules, tmp_path, monkeypatch):
    rule = type(all_rules()["JAX098"])
    original = rule.check

    def broken(self, module, report):
        original(self, module, report)
        for f in report.findings:
            object.__setattr__(f, "fix", Fix("safe", "oops", (Edit("print((", f.start, f.end),)))

    monkeypatch.setattr(rule, "check", broken)
    make_files({"a.py": SOURCE})
    out = cli("check", "--fix", "--select", "JAX098", "--output-format", "concise")
    assert (tmp_path / "a.py").read_text() == SOURCE
    assert out.code == 1 and "Found 2 errors." in out.stdout


def test_overlapping_fixes_wait_for_the_next_pass(cli, make_files, test_rules, tmp_path, monkeypatch):
    # A fix that rewrites the whole call: the inner call's fix overlaps the outer's, so it lands a pass later.
    rule = type(all_rules()["JAX098"])
    original = rule.check

    def whole_call(self, module, report):
        original(self, module, report)
        for f in report.findings:
            segment = report.source.segment(_call_at(module.tree, f.start))
            edit = Edit(segment.replace("print", "jax.debug.print", 1), f.start, f.end)
            object.__setattr__(f, "fix", Fix("safe", "whole call", (edit,)))

    monkeypatch.setattr(rule, "check", whole_call)
    make_files({"a.py": "import jax\nprint(print(1))\n"})
    out = cli("check", "--fix", "--select", "JAX098")
    assert out.code == 0
    assert (tmp_path / "a.py").read_text() == "import jax\njax.debug.print(jax.debug.print(1))\n"
    assert out.stdout.splitlines()[-1] == "Found 2 errors (2 fixed, 0 remaining)."


def _call_at(tree, start):
    return next(
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and (n.lineno, n.col_offset + 1) == (start.row, start.column)
    )


def test_fix_keeps_encoding_and_line_endings(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": b"# -*- coding: latin-1 -*-\r\nimport jax\r\nprint('\xe9')\r\n"})
    cli("check", "--fix")
    assert (
        tmp_path / "a.py"
    ).read_bytes() == b"# -*- coding: latin-1 -*-\r\nimport jax\r\njax.debug.print('\xe9')\r\n"
