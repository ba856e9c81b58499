"""`jaxlint check` through its public surface: exit codes, JSON, selection, robustness on hostile files."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import types

import pytest
from click.testing import CliRunner

from jaxlint.cli import main
from jaxlint.rules import all_rules

# `--dynamic` stops with exit 2 before anything else when JAX is not installed (Python 3.9 has
# no usable JAX): the tests of what happens next need it.
needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="--dynamic needs JAX")

PRINTS = """\
import jax

def f(x):
    print(x)
    return bad
"""


def codes(outcome) -> list[str]:
    return [f["code"] for f in outcome.json]


def test_clean_folder_passes(cli, make_files):
    make_files({"ok.py": "import jax\nx = 1\n"})
    out = cli("check")
    assert out.code == 0
    assert out.stdout == "All checks passed!\n"


def test_no_python_files_warns_and_passes(cli):
    out = cli("check")
    assert out.code == 0
    assert "No Python files found" in out.stderr


def test_json_findings_have_the_contract_fields(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": PRINTS})
    out = cli("check", "--output-format", "json")
    assert out.code == 1
    first = out.json[0]
    assert set(first) == {
        "code",
        "name",
        "message",
        "filename",
        "location",
        "end_location",
        "url",
        "fix",
        "noqa_row",
        "cell",
        "severity",
        "confirmation",
    }
    assert first["code"] == "JAX098"
    assert first["name"] == "test-print-call"
    assert first["filename"] == str(tmp_path / "a.py")
    assert first["location"] == {"row": 4, "column": 5}
    assert first["end_location"] == {"row": 4, "column": 13}
    assert first["noqa_row"] == 4
    assert first["cell"] is None and first["confirmation"] is None
    assert first["url"].endswith("JAX098.md")
    assert first["fix"]["applicability"] == "safe"
    assert first["fix"]["edits"][0] == {
        "content": "jax.debug.print",
        "location": {"row": 4, "column": 5},
        "end_location": {"row": 4, "column": 10},
    }
    assert codes(out) == ["JAX098", "JAX099"]


def test_columns_count_characters_not_bytes(cli, make_files, test_rules):
    make_files({"a.py": "import jax\ns = 'ééé'; print(s)\n"})
    assert cli("check", "--output-format", "json").json[0]["location"] == {"row": 2, "column": 12}


def test_exit_zero(cli, make_files, test_rules):
    make_files({"a.py": PRINTS})
    assert cli("check", "--exit-zero").code == 0


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--select", "JAX099"], ["JAX099"]),
        (["--ignore", "JAX098"], ["JAX099"]),
        (["--select", "JAX09"], ["JAX098", "JAX099"]),
        (["--select", "JAX0,JAX098"], ["JAX098", "JAX099"]),
        (["--select", "ALL", "--ignore", "JAX09"], []),
        (["--select", "JAX098", "--ignore", "JAX09"], ["JAX098"]),  # the more specific selector wins
        (["--select", "JAX09", "--ignore", "JAX099"], ["JAX098"]),
        (["--select", "JAX098", "--extend-select", "JAX099"], ["JAX098", "JAX099"]),
        (["--extend-ignore", "JAX099"], ["JAX098"]),
        (["--select", "jax098"], ["JAX098"]),  # codes are case-insensitive, as `jaxlint rule jax098`
        (["--select", "all", "--ignore", "Jax099"], ["JAX098"]),
    ],
)
def test_selection(cli, make_files, test_rules, args, expected):
    make_files({"a.py": PRINTS})
    assert codes(cli("check", "--output-format", "json", *args)) == expected


@pytest.mark.parametrize("selector", ["FOO", "JAX1234", "JAX9"])
def test_bad_selectors_are_usage_errors(cli, make_files, test_rules, selector):
    make_files({"a.py": PRINTS})
    out = cli("check", "--select", selector)
    assert out.code == 2
    assert selector in out.stderr


def test_syntax_error_is_reported_and_other_files_still_linted(cli, make_files, test_rules):
    make_files({"bad.py": "def f(:\n", "good.py": "import jax\nprint(1)\n"})
    found = cli("check", "--output-format", "json").json
    assert [(os.path.basename(f["filename"]), f["code"]) for f in found] == [
        ("bad.py", "JAX001"),
        ("good.py", "JAX098"),
    ]
    assert found[0]["name"] == "syntax-error"


def test_parse_errors_stay_on_when_selecting_other_rules(cli, make_files, test_rules):
    make_files({"bad.py": "def f(:\n"})
    assert codes(cli("check", "--output-format", "json", "--select", "JAX099")) == ["JAX001"]
    assert cli("check", "--ignore", "JAX001").code == 0


def test_non_utf8_file_is_jax001(cli, make_files, test_rules):
    make_files({"latin.py": b"x = '\xe9\xe8'\n", "good.py": "import jax\nprint(1)\n"})
    assert codes(cli("check", "--output-format", "json")) == ["JAX098", "JAX001"]


def test_coding_cookie_is_honoured(cli, make_files, test_rules):
    make_files({"latin.py": b"# -*- coding: latin-1 -*-\nimport jax\nprint('\xe9')\n"})
    assert codes(cli("check", "--output-format", "json")) == ["JAX098"]


def test_empty_file_passes(cli, make_files):
    make_files({"empty.py": ""})
    assert cli("check").code == 0


def test_missing_path_is_a_finding(cli):
    out = cli("check", "--output-format", "json", "nope.py")
    assert out.code == 1
    assert codes(out) == ["JAX001"]
    # the system's reason, and named as ruff's E902: nothing was parsed
    assert out.json[0]["message"] == "No such file or directory"
    assert out.json[0]["name"] == "io-error"


def test_statistics_tell_a_missing_path_from_a_broken_file(cli, make_files):
    make_files({"bad.py": "def f(:\n", "worse.py": "x = (\n"})
    out = cli("check", "--statistics", "nope.py", "bad.py", "worse.py")
    assert out.code == 1
    rows = [line.split("\t") for line in out.stdout.splitlines() if "\t" in line]
    assert rows == [["2", "JAX001", "syntax-error"], ["1", "JAX001", "io-error"]]
    out = cli("check", "--statistics", "--output-format", "json", "nope.py", "bad.py")
    assert [(row["code"], row["name"], row["count"]) for row in out.json] == [
        ("JAX001", "io-error", 1), ("JAX001", "syntax-error", 1)]
    assert set(out.json[0]) == {"code", "name", "count", "fixable", "fixable_count"}


def test_a_missing_path_is_reported_whatever_is_selected(cli, make_files, test_rules):
    make_files({"a.py": "x = 1\n"})
    out = cli("check", "--output-format", "json", "--select", "JAX099", "a.py", "nope.py")
    assert out.code == 1
    assert [(f["code"], f["name"], os.path.basename(f["filename"])) for f in out.json] == [
        ("JAX001", "io-error", "nope.py")]
    assert cli("check", "--ignore", "JAX001", "a.py", "nope.py").code == 0


def test_an_undecodable_file_is_reported_where_it_stops_being_text(cli, make_files):
    make_files({"latin.py": b"x = 1\ny = '\xe9t\xe9'\n", "declared.py": b"# coding: ascii\nx = 1\ny = '\xc3\xa9'\n"})
    found = cli("check", "--output-format", "json", "latin.py", "declared.py").json
    where = {os.path.basename(f["filename"]): (f["name"], f["location"], f["message"]) for f in found}
    name, location, message = where["latin.py"]
    assert (name, location) == ("syntax-error", {"row": 2, "column": 6})
    assert "line 2" in message and "offset 11" in message and "0xe9" in message
    name, location, message = where["declared.py"]
    assert (name, location) == ("syntax-error", {"row": 3, "column": 6})
    assert "ascii" in message and "line 3" in message and "offset 27" in message


def test_an_output_file_under_a_file_names_both(cli, make_files, tmp_path):
    make_files({"a.py": "x = 1\n"})
    out = cli("check", "a.py", "-o", "a.py/out/x.json")
    assert out.code == 2
    assert "a.py/out/x.json" in out.stderr and " a.py " in out.stderr
    assert (tmp_path / "a.py").read_text() == "x = 1\n"


def test_symlink_loop_on_the_command_line_is_a_finding(cli, tmp_path):
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    out = cli("check", "--output-format", "json", "loop1")
    assert out.code == 1, out.stderr
    assert "Traceback" not in out.stderr
    (finding,) = out.json
    assert finding["code"] == "JAX001" and finding["filename"].endswith("loop1")
    assert finding["name"] == "io-error" and not finding["message"].startswith("Failed to parse")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file_is_jax001(cli, make_files):
    root = make_files({"secret.py": "x = 1\n"})
    (root / "secret.py").chmod(0)
    assert codes(cli("check", "--output-format", "json")) == ["JAX001"]


def test_huge_file_does_not_crash(cli, make_files, test_rules):
    body = "".join(f"def f{i}(x):\n    return jnp.sin(x) + {i}\n" for i in range(25_000))
    make_files({"huge.py": "import jax.numpy as jnp\n" + body + "print(1)\n"})
    out = cli("check", "--output-format", "json")
    assert out.code == 1
    assert codes(out) == ["JAX098"]


def test_deeply_nested_expression_does_not_crash(cli, make_files):
    make_files({"deep.py": "import jax\nx = " + "1+(" * 2000 + "1" + ")" * 2000 + "\n"})
    out = cli("check", "--output-format", "json")
    assert out.code in (0, 1)
    assert codes(out) in ([], ["JAX001"])


def test_many_files_lint_in_parallel_like_serially(cli, make_files):
    # Enough source to use worker processes (the runner lints small inputs in-process). The real
    # rules: a worker started by forkserver (once JAX is loaded) registers them afresh.
    filler = "# " + "x" * 78 + "\n"
    branch = "import jax\n\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"
    make_files({f"m{i}.py": branch + filler * 1000 for i in range(6)})
    found = cli("check", "--output-format", "json", "--no-cache").json
    assert [os.path.basename(f["filename"]) for f in found] == [f"m{i}.py" for i in range(6)]


def test_internal_error_in_a_rule_exits_2_but_reports_the_rest(cli, make_files, test_rules, monkeypatch):
    def explode(self, module, report):
        if "boom" in module.source.text:
            raise RuntimeError("rule bug")

    monkeypatch.setattr(type(all_rules()["JAX099"]), "check", explode)
    make_files({"a.py": "import jax\nboom = 1\n", "b.py": "import jax\nprint(1)\n"})
    out = cli("check", "--output-format", "json")
    assert out.code == 2
    assert "rule bug" in out.stderr and "a.py" in out.stderr
    assert codes(out) == ["JAX098"]


def test_statistics(cli, make_files, test_rules):
    make_files({"a.py": PRINTS, "b.py": "import jax\nprint(1)\n"})
    out = cli("check", "--statistics")
    assert out.code == 1
    assert out.stdout.splitlines()[:2] == ["2\tJAX098\t[*] test-print-call", "1\tJAX099\t[ ] test-bad-name"]
    stats = cli("check", "--statistics", "--output-format", "json").json
    assert stats[0] == {
        "code": "JAX098",
        "name": "test-print-call",
        "count": 2,
        "fixable": True,
        "fixable_count": 2,
    }


def test_quiet_prints_findings_only(cli, make_files, test_rules):
    make_files({"a.py": PRINTS})
    out = cli("check", "--quiet", "--output-format", "concise")
    assert out.stdout.splitlines() == [
        "a.py:4:5: JAX098 [*] `print` call",
        "a.py:5:12: JAX099 the name `bad`",
    ]


def test_summary_counts_fixes(cli, make_files, test_rules):
    make_files({"a.py": PRINTS})
    tail = cli("check", "--output-format", "concise").stdout.splitlines()[-2:]
    assert tail == [
        "Found 2 errors.",
        "[*] 1 fixable with `--fix` (1 unsafe fix available with `--fix --unsafe-fixes`).",
    ]
    tail = cli("check", "--output-format", "concise", "--unsafe-fixes").stdout.splitlines()[-2:]
    assert tail == ["Found 2 errors.", "[*] 2 fixable with `--fix`."]


def test_machine_formats_have_no_summary(cli, make_files, test_rules):
    make_files({"a.py": PRINTS})
    for fmt in ("json", "sarif"):
        assert "Found" not in cli("check", "--output-format", fmt).stdout


def test_rules_listing(cli, test_rules):
    out = cli("rules")
    assert out.code == 0
    line = next(line for line in out.stdout.splitlines() if line.startswith("JAX098"))
    assert "test-print-call" in line and "linter" in line and "[*]" in line
    listed = {r["code"]: r for r in cli("rules", "--output-format", "json").json}
    assert listed["JAX099"] == {
        "code": "JAX099",
        "name": "test-bad-name",
        "category": "linter",
        "summary": "Test rule: the name `bad`",
        "fixable": True,
        "url": listed["JAX099"]["url"],
    }


def test_rule_page(cli, test_rules):
    out = cli("rule", "JAX098")
    assert out.code == 0
    assert out.stdout.startswith("# JAX098: test-print-call\n")
    assert "## Why is this bad?" in out.stdout
    assert cli("rule", "JAX998").code == 2


@needs_jax
def test_dynamic_passes_findings_to_the_confirmer(cli, make_files, test_rules, monkeypatch):
    seen = {}

    def confirm(findings, *, backend, timeout, settings, show_progress, sandboxed):
        seen.update(backend=backend, timeout=timeout, settings=settings, sandboxed=sandboxed)
        return [f.with_(confirmation={"status": "confirmed", "detail": "raised here"}) for f in findings]

    monkeypatch.setitem(sys.modules, "jaxlint.dynamic", types.SimpleNamespace(confirm=confirm))
    make_files({"a.py": "import jax\nprint(1)\n", "pyproject.toml": '[tool.jaxlint.dynamic]\nmemory-limit = "2GiB"\n'})
    out = cli("check", "--dynamic", "--backend", "cpu", "--dynamic-timeout", "5", "--output-format", "json")
    assert out.json[0]["confirmation"] == {"status": "confirmed", "detail": "raised here"}
    assert seen == {"backend": "cpu", "timeout": 5.0, "settings": {"memory-limit": "2GiB"}, "sandboxed": False}


@needs_jax
def test_dynamic_unavailable_is_exit_2(cli, make_files, monkeypatch):
    monkeypatch.setitem(sys.modules, "jaxlint.dynamic", None)
    make_files({"a.py": "x = 1\n"})
    out = cli("check", "--dynamic")
    assert out.code == 2
    assert "--dynamic is unavailable" in out.stderr


def test_backend_without_dynamic_is_a_usage_error(cli, make_files):
    make_files({"a.py": "x = 1\n"})
    assert cli("check", "--backend", "cpu").code == 2


def test_cache_reuses_results_and_notices_changes(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": "import jax\nprint(1)\n"})
    first = cli("check", "--output-format", "json").json
    assert (tmp_path / ".jaxlint_cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert cli("check", "--output-format", "json").json == first
    (tmp_path / "a.py").write_text("import jax\nx = 1\n\nprint(2)\n")
    assert cli("check", "--output-format", "json").json[0]["location"]["row"] == 4
    assert codes(cli("check", "--output-format", "json", "--select", "JAX099")) == []


def test_no_cache_writes_no_cache(cli, make_files, tmp_path):
    make_files({"a.py": "x = 1\n"})
    cli("check", "--no-cache")
    assert not (tmp_path / ".jaxlint_cache").exists()


def test_cache_dir_option(cli, make_files, tmp_path):
    make_files({"a.py": "x = 1\n"})
    cli("check", "--cache-dir", "elsewhere")
    assert (tmp_path / "elsewhere" / ".gitignore").exists()


def _module_cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_subprocess_json_and_exit_codes(make_files):
    root = make_files({"bad.py": "x = (\n", "ok.py": "x = 1\n"})
    done = _module_cli("check", "--no-cache", "--output-format", "json", ".", cwd=root)
    assert done.returncode == 1
    assert [f["code"] for f in json.loads(done.stdout)] == ["JAX001"]
    assert _module_cli("check", "--no-cache", "ok.py", cwd=root).returncode == 0
    assert _module_cli("check", "--select", "NOPE", cwd=root).returncode == 2
    assert _module_cli("rule", "JAX998", cwd=root).returncode == 2
    version = _module_cli("--version", cwd=root)
    assert version.returncode == 0 and version.stdout.startswith("jaxlint ")


def test_startup_imports_neither_libcst_nor_jax(make_files):
    root = make_files({"a.py": "import jax\nx = 1\n"})
    probe = (
        "import sys; from jaxlint.cli import main\n"
        "try:\n    main(['check', '--no-cache', '.'])\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in ('libcst', 'jax') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.splitlines()[-1] == "[]"


def test_unexpected_exception_is_exit_2_with_a_message(cli, make_files, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("discovery bug")

    monkeypatch.setattr("jaxlint.cli.discover", broken)
    make_files({"a.py": "x = 1\n"})
    out = cli("check")
    assert out.code == 2
    assert "internal error: RuntimeError: discovery bug" in out.stderr


def test_unwritable_cache_only_warns(cli, make_files, test_rules):
    make_files({"a.py": "import jax\nprint(1)\n", "blocker": "a file where the cache folder should go\n"})
    out = cli("check", "--cache-dir", "blocker/cache", "--output-format", "json")
    assert out.code == 1
    assert codes(out) == ["JAX098"]
    assert "cannot write the cache" in out.stderr


def test_corrupt_cache_is_ignored(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": "import jax\nprint(1)\n"})
    first = cli("check", "--output-format", "json").json
    (cache_file,) = (tmp_path / ".jaxlint_cache").glob("*/*.json")
    cache_file.write_text('{"%s": [1, 2, 3, [["JAX098"]]]}' % (tmp_path / "a.py"))
    assert cli("check", "--output-format", "json").json == first
    cache_file.write_text("not json")
    assert cli("check", "--output-format", "json").json == first


def test_read_only_checkout_gets_no_cache_and_no_warning(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": "import jax\nprint(1)\n"})
    tmp_path.chmod(0o555)
    try:
        out = cli("check", "--output-format", "json")
    finally:
        tmp_path.chmod(0o755)
    assert codes(out) == ["JAX098"]
    assert not (tmp_path / ".jaxlint_cache").exists()
    assert "cache" not in out.stderr


@pytest.mark.parametrize("width", [80, 60, 40])
def test_every_command_is_summed_up_whole_in_help(width):
    out = CliRunner().invoke(main, ["--help"], terminal_width=width)
    assert out.exit_code == 0
    listed = out.output.split("Commands:\n", 1)[1]
    summaries = {}
    for line in listed.splitlines():  # a summary wider than the terminal wraps onto indented lines
        name, _, text = line.strip().partition(" ")
        if line.startswith("  ") and not line.startswith("   "):
            summaries[name] = text.strip()
        else:
            summaries[list(summaries)[-1]] += " " + line.strip()
    assert set(summaries) == set(main.commands)
    for name, summary in summaries.items():
        assert summary and not summary.endswith("..."), (name, summary)
