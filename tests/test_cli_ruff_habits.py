"""What a ruff user types, kept to ruff's meaning: the options and commands ruff has that fit here."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from jaxlint import cli as cli_module
from jaxlint import config as config_module
from jaxlint import runner
from jaxlint.rules import all_rules
from jaxlint.settings_reference import settings

from test_cli_notebook import notebook

ROOT = Path(__file__).resolve().parent.parent
PRINTS = "import jax\nprint(bad)\n"  # JAX098 (safe fix) at 2:1, JAX099 (unsafe fix) at 2:7
ANSI = re.compile(r"\x1b\[[0-9;]*m")


# ---- check's options -----------------------------------------------------------------------------
def test_n_is_no_cache(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": PRINTS})
    assert cli("check", "-n").code == 1
    assert not (tmp_path / ".jaxlint_cache").exists()
    assert cli("check").code == 1
    assert (tmp_path / ".jaxlint_cache").is_dir()


def test_fix_only_fixes_and_reports_only_what_it_fixed(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": PRINTS})
    out = cli("check", "--fix-only", "--no-cache")
    assert (out.code, out.stdout) == (0, "Fixed 1 error.\n")  # JAX099 remains: not reported, exit 0
    assert (tmp_path / "a.py").read_text() == "import jax\njax.debug.print(bad)\n"
    assert cli("check", "--fix-only", "--no-cache").stdout == ""  # nothing left to fix
    make_files({"b.py": PRINTS})
    out = cli("check", "--fix-only", "--exit-non-zero-on-fix", "--output-format", "json", "--no-cache", "b.py")
    assert (out.code, out.stdout) == (1, "")


def test_fix_only_as_a_setting(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": PRINTS, "pyproject.toml": "[tool.jaxlint]\nfix-only = true\n"})
    assert cli("check", "--no-cache").stdout == "Fixed 1 error.\n"


@pytest.mark.parametrize(
    "args, setting",
    [(("--unfixable", "JAX098"), ""), (("--fixable", "JAX099"), ""), ((), 'unfixable = ["JAX098"]\n'),
     ((), 'fixable = ["JAX0"]\nunfixable = ["JAX098"]\n')],
)
def test_an_unfixable_rule_shows_no_fix_and_is_not_fixed(cli, make_files, test_rules, tmp_path, args, setting):
    make_files({"a.py": PRINTS, "pyproject.toml": f"[tool.jaxlint]\n{setting}"})
    found = {f["code"]: f["fix"] for f in cli("check", "--no-cache", "--output-format", "json", *args).json}
    assert found["JAX098"] is None  # as ruff: the fix is dropped, not only left unapplied
    assert cli("check", "--fix", "--no-cache", *args).code == 1
    assert (tmp_path / "a.py").read_text() == PRINTS


def test_fixable_on_the_command_line_wins_over_the_configuration(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": PRINTS, "pyproject.toml": '[tool.jaxlint]\nunfixable = ["JAX098"]\n'})
    found = {f["code"]: f["fix"] for f in cli("check", "-n", "--output-format", "json", "--fixable", "JAX098").json}
    assert found["JAX098"]["applicability"] == "safe"


def test_the_cache_keeps_fixable_runs_apart(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": PRINTS})
    assert cli("check", "--output-format", "json").json[0]["fix"] is not None
    assert cli("check", "--output-format", "json", "--unfixable", "JAX098").json[0]["fix"] is None
    assert cli("check", "--output-format", "json").json[0]["fix"] is not None


def test_ignore_noqa(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": "import jax\nprint(1)  # noqa: JAX098\nx = 1  # noqa: JAX099\n"})
    assert cli("check", "-n", "--output-format", "json").json == []  # the unused one needs JAX002's rule
    found = cli("check", "-n", "--ignore-noqa", "--output-format", "json").json
    assert [(f["code"], f["location"]["row"]) for f in found] == [("JAX098", 2)]


def test_ignore_noqa_still_judges_the_directives(cli, make_files):
    # As ruff's RUF100 under --ignore-noqa: the directive that matches a finding is used, the other is not.
    make_files({"a.py": "import jax\n\n\n@jax.jit\ndef f(x):\n    if x > 0:  # noqa: JAX101\n        return x\n"
                        "    return -x\n\n\ny = 1  # noqa: JAX101\n"})

    def found(*args):
        return [(f["code"], f["location"]["row"]) for f in cli("check", "-n", "--output-format", "json", *args).json]

    assert found() == [("JAX002", 11)]
    assert found("--ignore-noqa") == [("JAX101", 6), ("JAX002", 11)]


def test_quiet_and_silent(cli, make_files, test_rules):
    make_files({"a.py": PRINTS})
    quiet = cli("check", "-n", "-q", "--output-format", "concise")
    assert quiet.code == 1 and "JAX098" in quiet.stdout and "Found" not in quiet.stdout
    for flag in ("-s", "--silent"):
        silent = cli("check", "-n", flag)
        assert (silent.code, silent.stdout, silent.stderr) == (1, "", "")
    assert cli("check", "-n", "-s", "--exit-zero").code == 0


def test_color(cli, make_files, test_rules, monkeypatch):
    make_files({"a.py": PRINTS})
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert ANSI.search(cli("check", "-n").stdout)  # auto follows FORCE_COLOR
    assert not ANSI.search(cli("check", "-n", "--color", "never").stdout)
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setenv("NO_COLOR", "1")
    assert ANSI.search(cli("check", "-n", "--color", "always").stdout)
    assert cli("check", "--color", "sometimes").code == 2


def test_verbose_says_what_the_run_did(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": PRINTS, "pyproject.toml": "[tool.jaxlint]\n"})
    out = cli("check", "-v", "--output-format", "json")
    assert out.code == 1 and json.loads(out.stdout)  # the output itself is untouched
    assert f"debug: configuration: {tmp_path / 'pyproject.toml'}" in out.stderr
    assert "debug: 1 file(s) to lint" in out.stderr
    assert f"debug: results cache: {tmp_path / '.jaxlint_cache'}" in out.stderr
    assert re.search(r"debug: linted in [0-9.]+s", out.stderr)


def test_per_file_ignores_on_the_command_line(cli, make_files, test_rules):
    make_files({"a.py": PRINTS, "b.py": PRINTS, "pyproject.toml": '[tool.jaxlint.per-file-ignores]\n"b.py" = ["JAX0"]\n'})

    def found(*args):
        return sorted((Path(f["filename"]).name, f["code"]) for f in cli("check", "-n", "--output-format", "json", *args).json)

    # replaces the configured table (b.py is linted again), pairs comma-separated as ruff's
    assert found("--per-file-ignores", "a.py:JAX098,a.py:JAX099") == [("b.py", "JAX098"), ("b.py", "JAX099")]
    # extends it
    assert found("--extend-per-file-ignores", "a.py:JAX099") == [("a.py", "JAX098")]
    for bad in ("a.py", "a.py:JAX9", "[z-a]:JAX098"):
        out = cli("check", "--per-file-ignores", bad)
        assert out.code == 2 and "Invalid value for '--per-file-ignores'" in out.stderr


@pytest.mark.parametrize("how", ["option", "setting"])
def test_extension_lints_another_suffix_as_a_notebook(cli, make_files, test_rules, how):
    files = {"n.ipy": notebook(("code", "import jax\n"), ("code", "x = 1\nprint(2)\n"))}
    args = ("--extension", "ipy:ipynb") if how == "option" else ()
    if how == "setting":
        files["pyproject.toml"] = '[tool.jaxlint]\nextension = { ipy = "ipynb" }\n'
    make_files(files)
    assert cli("check", "-n", *args).stdout.startswith("n.ipy:cell 2:2:1: JAX098")  # walked, read as a notebook
    assert cli("check", "--extension", "ipy:cobol").code == 2


def test_a_bad_extension_setting_is_a_configuration_error(cli, make_files):
    make_files({"a.py": "x = 1\n", "pyproject.toml": '[tool.jaxlint]\nextension = { ipy = "rust" }\n'})
    out = cli("check", "a.py")
    assert out.code == 2 and "invalid value for `extension`" in out.stderr


# ---- rdjson (reviewdog) --------------------------------------------------------------------------
def test_rdjson_follows_reviewdogs_diagnostic_result(cli, make_files, test_rules, tmp_path):
    # Its columns count UTF-8 bytes and its ends are exclusive: `bad` after `é` (2 bytes) starts at byte 14.
    make_files({"a.py": "import jax\ns = 'é'; print(bad)\n", "n.ipynb": notebook(("code", "import jax\nprint(1)\n"))})
    out = cli("check", "-n", "--output-format", "rdjson")
    assert out.code == 1
    result = json.loads(out.stdout)
    assert result["source"]["name"] == "jaxlint"
    by_code = {(Path(d["location"]["path"]).name, d["code"]["value"]): d for d in result["diagnostics"]}
    bad = by_code[("a.py", "JAX099")]
    assert bad["location"]["range"] == {"start": {"line": 2, "column": 17}, "end": {"line": 2, "column": 20}}
    assert bad["severity"] == "ERROR"
    assert bad["code"]["url"].endswith("/rules/JAX099.md")
    assert bad["suggestions"] == [{"range": bad["location"]["range"], "text": "good"}]
    printed = by_code[("a.py", "JAX098")]
    assert printed["location"]["range"]["start"] == {"line": 2, "column": 11}
    cell = by_code[("n.ipynb", "JAX098")]
    assert "range" not in cell["location"] and cell["message"].startswith("cell 1:2:1: ")
    assert "Found" not in out.stdout  # a machine format: no summary


# ---- defects ------------------------------------------------------------------------------------
def test_add_noqa_writes_into_notebook_cells(cli, make_files, test_rules, tmp_path):
    source = notebook(("markdown", "print(bad)\n"), ("code", "%matplotlib inline\nimport jax\n"),
                      ("code", "!ls\nprint(bad)\n"))
    make_files({"n.ipynb": source})
    out = cli("check", "--add-noqa", "--no-cache")
    assert (out.code, out.stderr) == (0, "Added 2 noqa directives.\n")
    cells = json.loads((tmp_path / "n.ipynb").read_text())["cells"]
    assert cells[2]["source"] == ["!ls\n", "print(bad)  # noqa: JAX098, JAX099\n"]
    assert cells[0]["source"] == "print(bad)\n"  # markdown untouched
    assert cli("check", "--no-cache").code == 0
    assert cli("check", "--add-noqa", "--no-cache").stderr == "Added 0 noqa directives.\n"


def test_azure_names_a_notebook_cell(cli, make_files, test_rules, tmp_path):
    make_files({"n.ipynb": notebook(("code", "import jax\n"), ("code", "x = 1\nprint(2)\n"))})
    (line,) = cli("check", "-n", "--output-format", "azure").stdout.splitlines()
    # the cell's row is no line of the .ipynb file: the file's start, as ruff's, and the cell in the message
    assert f"sourcepath={tmp_path / 'n.ipynb'};linenumber=1;columnnumber=1;code=JAX098;]cell 2:2:1: " in line


def test_show_settings_shows_option_defaults_and_stdin_filename(cli, make_files, tmp_path):
    make_files({"pyproject.toml": "[tool.jaxlint.options]\nunroll-threshold = 7\n"})
    lines = cli("check", "--show-settings", "--stdin-filename", "src/m.py").stdout.splitlines()
    assert "Settings for: src/m.py" in lines
    (options,) = [line for line in lines if line.startswith("options = ")]
    assert "'unroll-threshold': 7" in options and "'test-files': " in options and "'test-functions': " in options
    from jaxlint.dynamic.limits import DEFAULT_MEMORY

    (dynamic,) = [line for line in lines if line.startswith("settings = ")]
    assert f"'memory-limit': '{DEFAULT_MEMORY >> 30}GiB'" in dynamic and "'drivers': []" in dynamic
    assert "Settings for: -" in cli("check", "--show-settings", "-").stdout


def test_every_option_is_documented():
    readme = (ROOT / "README.md").read_text()
    contract = (ROOT / "docs" / "contract.md").read_text()
    options = [o for p in cli_module.check.params for o in p.opts if o.startswith("--")]
    assert "--fix-only" in options
    for option in options:
        assert f"`{option}" in readme, f"{option} is missing from README.md's options table"
        assert f"`{option}" in contract, f"{option} is missing from docs/contract.md"


def test_dynamic_timeout_help_matches_the_defaults(cli):
    help_text = " ".join(cli("check", "--help").stdout.split())
    assert f"{int(cli_module.DRIVER_TIMEOUT)} per driven run" in help_text
    readme = (ROOT / "README.md").read_text()
    assert f"default: 60 per file probed; {int(cli_module.DRIVER_TIMEOUT)} per driven run" in readme


def test_readme_and_contract_agree_on_ctrl_c_in_watch_mode():
    for page in (ROOT / "README.md", ROOT / "docs" / "contract.md"):
        rows = [line for line in page.read_text().splitlines() if line.startswith("| 130 |")]
        assert rows and all("`--watch`" in row and "exits 0" in row for row in rows), page


@pytest.mark.parametrize("selector", ["FOO", "JAX9", "JAX999", "JAX1x"])
def test_every_bad_selector_is_one_usage_error(cli, selector):
    out = cli("check", "--select", selector, ".")
    assert out.code == 2
    assert out.stderr.startswith("Usage: ")
    assert f"Error: Invalid value for '--select': unknown rule selector `{selector}`: " in out.stderr


@pytest.mark.parametrize("selector", ["FOO", "JAX9", "JAX999"])
def test_a_bad_configured_selector_names_its_setting(cli, make_files, tmp_path, selector):
    make_files({"pyproject.toml": f'[tool.jaxlint]\nignore = ["{selector}"]\n', "a.py": "x = 1\n"})
    out = cli("check", "a.py")
    assert out.code == 2
    assert f"{tmp_path / 'pyproject.toml'}:2: invalid value for `ignore` in [tool.jaxlint]: " in out.stderr
    assert f"unknown rule selector `{selector}`: " in out.stderr


def test_the_projects_own_root_passes_its_check(cli):
    out = cli("check", "--no-cache", str(ROOT))
    assert (out.code, out.stdout) == (0, "All checks passed!\n"), out.stdout


def test_the_examples_still_fail_on_their_own(cli):
    found = cli("check", "--no-cache", "--output-format", "json", str(ROOT / "examples")).json
    assert {Path(f["filename"]).name for f in found} >= {"key_reuse.py", "traced_branch.py", "normalise.ipynb"}


BRANCH = "import jax\n\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"


def test_workers_are_not_forked_once_a_threaded_library_is_loaded(cli, make_files, monkeypatch):
    import multiprocessing

    methods = []
    get_context = multiprocessing.get_context

    def recording(method=None):
        methods.append(method)
        return get_context(method)

    monkeypatch.setattr(multiprocessing, "get_context", recording)
    monkeypatch.setattr(runner, "worker_count", lambda: 2)
    monkeypatch.setattr(runner, "_SERIAL_BYTES", 0)
    make_files({f"m{i}.py": BRANCH for i in range(4)})
    monkeypatch.setitem(sys.modules, "jax", sys.modules.get("jax") or object())
    out = cli("check", "-n", "--output-format", "json")
    assert out.code == 1 and len(out.json) == 4  # the workers linted every file
    assert methods == (["forkserver"] if sys.platform == "linux" else [None])


def test_fork_is_kept_where_no_thread_can_run(monkeypatch):
    for name in runner._THREADED_MODULES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(runner.threading, "active_count", lambda: 1)
    assert runner.start_method() == ("fork" if sys.platform == "linux" else None)


# ---- commands -----------------------------------------------------------------------------------
def test_version(cli):
    from jaxlint import __version__

    assert cli("version").stdout == f"jaxlint {__version__}\n"
    assert cli("version", "--output-format", "json").json == {"version": __version__, "commit_info": None}


def test_clean_removes_the_caches(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": PRINTS, "sub/pyproject.toml": "[tool.jaxlint]\n", "sub/b.py": PRINTS})
    cli("check")
    cli("check", "sub")
    assert (tmp_path / ".jaxlint_cache").is_dir() and (tmp_path / "sub" / ".jaxlint_cache").is_dir()
    out = cli("clean", "-v")
    assert out.code == 0
    assert "Removing cache at: .jaxlint_cache" in out.stderr
    assert not (tmp_path / ".jaxlint_cache").exists() and not (tmp_path / "sub" / ".jaxlint_cache").exists()


def test_clean_removes_a_configured_cache_only_if_jaxlint_made_it(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": PRINTS, "pyproject.toml": '[tool.jaxlint]\ncache-dir = "store"\n', "keep/notes.txt": "mine"})
    cli("check")
    assert (tmp_path / "store").is_dir()
    cli("clean")
    assert not (tmp_path / "store").exists()
    make_files({"pyproject.toml": '[tool.jaxlint]\ncache-dir = "keep"\n'})
    cli("clean")
    assert (tmp_path / "keep" / "notes.txt").read_text() == "mine"


def test_config_lists_and_describes_every_setting(cli):
    keys = cli("config").stdout.splitlines()
    assert set(keys) == {"extend", *config_module._SETTINGS}  # every key `[tool.jaxlint]` accepts, no other
    assert cli("config", "options").stdout.splitlines() == ["unroll-threshold", "test-functions", "test-files"]
    described = cli("config", "fixable").stdout
    assert 'Default value: ["ALL"]' in described and "Type: list[RuleSelector]" in described
    as_json = cli("config", "options.unroll-threshold", "--output-format", "json").json
    assert as_json["default"] == "100" and as_json["scope"] == "options"
    out = cli("config", "line-length")
    assert out.code == 2 and "no setting is called 'line-length'" in out.stderr


def test_every_setting_has_a_doc_and_an_example():
    for setting in settings():
        assert setting.doc and setting.example and setting.default, setting.name


def test_rule_all(cli):
    rules = all_rules()
    text = cli("rule", "--all").stdout
    assert [line[2:8] for line in text.splitlines() if line.startswith("# JAX")] == list(rules)
    pages = cli("rule", "--all", "--output-format", "json").json
    assert [p["code"] for p in pages] == list(rules) and all(p["explanation"] for p in pages)
    assert cli("rule").code == 2
    assert cli("rule", "JAX101", "--all").code == 2
