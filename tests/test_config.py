"""Configuration: discovery upward, file kinds, validation, CLI precedence, and rule selection."""

from __future__ import annotations

from pathlib import Path

import pytest

from jaxlint.config import Selection, resolve_selection

CODES = ["JAX001", "JAX101", "JAX102", "JAX201", "JAX301"]
PRINTS = "import jax\nprint(bad)\n"


def codes(cli, *args) -> list[str]:
    out = cli("check", "--output-format", "json", *args)
    assert out.code in (0, 1), out.stderr
    return [f["code"] for f in out.json]


@pytest.mark.parametrize(
    "layers, expected",
    [
        ([], CODES),
        ([Selection(select=["JAX1"])], ["JAX001", "JAX101", "JAX102"]),
        ([Selection(select=["JAX1"], ignore=["JAX102"])], ["JAX001", "JAX101"]),
        ([Selection(select=["JAX102"], ignore=["JAX1"])], ["JAX001", "JAX102"]),
        ([Selection(select=["JAX1"], ignore=["JAX1"])], ["JAX001"]),  # an ignore wins a tie
        ([Selection(ignore=["JAX"])], []),
        ([Selection(ignore=["JAX0"])], ["JAX101", "JAX102", "JAX201", "JAX301"]),
        (
            [Selection(select=["JAX1"]), Selection(extend_select=["JAX201"])],
            ["JAX001", "JAX101", "JAX102", "JAX201"],
        ),
        ([Selection(select=["JAX1"]), Selection(select=["JAX3"])], ["JAX001", "JAX301"]),
        ([Selection(ignore=["JAX101"]), Selection(select=["ALL"])], CODES),  # a new select starts afresh
        (
            [Selection(ignore=["JAX101"]), Selection(extend_select=["JAX2"])],
            ["JAX001", "JAX102", "JAX201", "JAX301"],
        ),
    ],
)
def test_resolve_selection(layers, expected):
    assert sorted(resolve_selection(layers, CODES)) == expected


def test_pyproject_found_walking_up(cli, make_files, test_rules):
    make_files(
        {
            "pyproject.toml": '[tool.jaxlint]\nignore = ["JAX098"]\n',
            "deep/er/still/a.py": PRINTS,
        }
    )
    assert codes(cli, "deep/er/still/a.py") == ["JAX099"]
    assert codes(cli, "deep") == ["JAX099"]


def test_pyproject_without_jaxlint_table_is_skipped(cli, make_files, test_rules):
    make_files(
        {
            "pyproject.toml": '[tool.jaxlint]\nignore = ["JAX098"]\n',
            "sub/pyproject.toml": '[project]\nname = "x"\n',
            "sub/a.py": PRINTS,
        }
    )
    assert codes(cli, "sub") == ["JAX099"]


def test_dot_jaxlint_toml_beats_pyproject(cli, make_files, test_rules):
    make_files(
        {
            "pyproject.toml": '[tool.jaxlint]\nignore = ["JAX098"]\n',
            ".jaxlint.toml": 'ignore = ["JAX099"]\n',
            "a.py": PRINTS,
        }
    )
    assert codes(cli) == ["JAX098"]


def test_cli_flags_win_over_config(cli, make_files, test_rules):
    make_files(
        {"pyproject.toml": '[tool.jaxlint]\nselect = ["JAX098"]\noutput-format = "concise"\n', "a.py": PRINTS}
    )
    assert codes(cli, "--select", "JAX099") == ["JAX099"]
    assert cli("check").stdout.startswith("a.py:2:1: JAX098")


def test_explicit_config_and_isolated(cli, make_files, test_rules):
    make_files(
        {
            "pyproject.toml": '[tool.jaxlint]\nignore = ["JAX098"]\n',
            "other.toml": 'ignore = ["JAX099"]\n',
            "a.py": PRINTS,
        }
    )
    assert codes(cli, "--config", "other.toml") == ["JAX098"]
    assert codes(cli, "--isolated") == ["JAX098", "JAX099"]


def test_inline_config_override(cli, make_files, test_rules):
    make_files({"a.py": PRINTS})
    assert codes(cli, "--config", "ignore = ['JAX099']") == ["JAX098"]


def test_rule_options_reach_the_rules(cli, make_files, test_rules):
    make_files(
        {
            "pyproject.toml": '[tool.jaxlint.options]\nbad-name = "worse"\n',
            "a.py": "import jax\nworse = bad\n",
        }
    )
    found = cli("check", "--output-format", "json", "--select", "JAX099").json
    assert [f["location"] for f in found] == [{"row": 2, "column": 1}]


def test_malformed_toml_is_exit_2_naming_the_file(cli, make_files, tmp_path):
    make_files({"pyproject.toml": "[tool.jaxlint\nselect = 1\n", "a.py": ""})
    out = cli("check")
    assert out.code == 2
    assert str(tmp_path / "pyproject.toml") in out.stderr


@pytest.mark.parametrize(
    "setting",
    [
        'select = "JAX1"',
        'select = ["BAD"]',
        'output-format = "xml"',
        "respect-gitignore = 1",
        'per-file-ignores = ["x"]',
    ],
)
def test_invalid_values_are_exit_2(cli, make_files, setting):
    make_files({"jaxlint.toml": setting + "\n", "a.py": ""})
    out = cli("check")
    assert out.code == 2
    assert "jaxlint.toml" in out.stderr


def test_an_unknown_key_stops_the_run_naming_its_file_and_line(cli, make_files, tmp_path):
    make_files({"pyproject.toml": "[project]\nname = 'x'\n\n[tool.jaxlint]\nline-length = 88\n", "a.py": "x = 1\n"})
    out = cli("check")
    assert out.code == 2, out.stderr  # as ruff's `unknown field`
    assert f"{tmp_path / 'pyproject.toml'}:5: unknown key `line-length`" in out.stderr
    assert "did you mean" not in out.stderr  # no setting is close


# (file, its text, the line of the misspelt key, the key written, the key meant)
MISSPELT = [
    ("pyproject.toml", "[tool.jaxlint]\n{} = []\n", 2, written, meant)
    for written, meant in [("selct", "select"), ("extend_ignore", "extend-ignore"),
                           ("per-file-ignore", "per-file-ignores"), ("respect-git-ignore", "respect-gitignore"),
                           ("Exclude", "exclude")]
] + [
    ("pyproject.toml", "[tool.jaxlint.options]\n# the loop bound\n{} = 3\n", 3, "unrol-threshold",
     "unroll-threshold"),
    ("pyproject.toml", "[tool.jaxlint.options]\n{} = '^t'\n", 2, "test_function", "test-functions"),
    ("pyproject.toml", '[tool.jaxlint.dynamic]\n"m:f" = "m:g"\n{} = ["x.py"]\n', 3, "driver", "drivers"),
    ("pyproject.toml", '[tool.jaxlint.dynamic]\n{} = "8GiB"\n', 2, "memroy-limit", "memory-limit"),
    ("pyproject.toml", '[tool.jaxlint]\nselect = ["JAX1"]\ndynamic.{} = "bwrap"\n', 3, "sandbx", "sandbox"),
    ("jaxlint.toml", "select = []\n[options]\n{} = 3\n", 3, "unroll-treshold", "unroll-threshold"),
    ("jaxlint.toml", "\noptions = {{ {} = 3 }}\n", 2, "unroll-threshhold", "unroll-threshold"),
]


@pytest.mark.parametrize(("name", "text", "line", "written", "meant"), MISSPELT)
def test_a_misspelt_key_in_any_table_names_the_setting_meant(cli, make_files, tmp_path, name, text, line, written,
                                                             meant):
    make_files({name: text.format(written), "a.py": "x = 1\n"})
    for args in ((), ("--show-settings",), ("--statistics", "--exit-zero")):
        out = cli("check", *args)
        assert out.code == 2, (args, out.stdout)
        assert f"{tmp_path / name}:{line}: unknown key `{written}`" in out.stderr
        assert out.stderr.rstrip().endswith(f"; did you mean `{meant}`?")
        assert out.stdout == ""


def test_a_misspelt_dynamic_key_stops_a_dynamic_run_before_anything_runs(cli, make_files, tmp_path):
    make_files({"pyproject.toml": '[tool.jaxlint.dynamic]\ndriver = ["boom.py"]\n',
                "boom.py": "open('ran', 'w').close()\n"})
    out = cli("check", "--dynamic", "boom.py")
    assert out.code == 2
    assert f"{tmp_path / 'pyproject.toml'}:2: unknown key `driver`" in out.stderr
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize(
    ("setting", "line"),
    [('memory-limit = "lots"', 3), ("memory-limit = true", 3), ('sandbox = "docker"', 3), ('drivers = "x.py"', 3),
     ('"mypkg.train:train_step" = "no factory"', 3), ("'mypkg.train:train_step' = 1", 3)],
)
def test_a_dynamic_value_is_checked_on_every_run(cli, make_files, tmp_path, setting, line):
    make_files({"pyproject.toml": f"[tool.jaxlint.dynamic]\n# --dynamic only\n{setting}\n", "a.py": "x = 1\n"})
    out = cli("check", "a.py")  # without --dynamic
    assert out.code == 2
    key = setting.split(" =")[0].strip("\"'")
    assert f"{tmp_path / 'pyproject.toml'}:{line}: invalid value for `{key}` in [tool.jaxlint.dynamic]: " in out.stderr


def test_entry_point_keys_of_the_dynamic_table_are_settings(cli, make_files):
    make_files({"pyproject.toml": """
        [tool.jaxlint.dynamic]
        "mypkg.train:train_step" = "tests.factories:train_step_args"
        "mypkg.model:Model.apply" = "tests.factories:model_apply_args"
        memory-limit = "none"
        """, "a.py": "x = 1\n"})
    out = cli("check")
    assert (out.code, out.stderr) == (0, "")


@pytest.mark.parametrize(
    ("override", "key", "meant"),
    [("options.unrol-threshold = 3", "unrol-threshold", "unroll-threshold"),
     ("dynamic = { driver = ['x.py'] }", "driver", "drivers"),
     ("selct = ['JAX1']", "selct", "select")],
)
def test_a_misspelt_override_is_refused_as_in_a_file(cli, make_files, override, key, meant):
    make_files({"a.py": "x = 1\n"})
    out = cli("check", "--config", override)
    assert out.code == 2
    assert f"--config {override!r}: unknown key `{key}`" in out.stderr
    assert out.stderr.rstrip().endswith(f"; did you mean `{meant}`?")


def test_a_wrong_override_value_is_refused_as_in_a_file(cli, make_files):
    make_files({"a.py": "x = 1\n"})
    out = cli("check", "--config", "dynamic.memory-limit = 'lots'")
    assert out.code == 2
    assert "invalid value for `memory-limit` in [dynamic]: " in out.stderr


def test_extend_cannot_be_an_override(cli, make_files):
    make_files({"a.py": "x = 1\n", "base.toml": "select = []\n"})
    out = cli("check", "--config", "extend = 'base.toml'")
    assert out.code == 2 and "`extend`" in out.stderr and "did you mean" not in out.stderr


@pytest.mark.parametrize("table", ["options", "dynamic"])
def test_every_documented_key_of_a_table_is_accepted_with_its_example(cli, make_files, table):
    keys = cli("config", table, "--output-format", "json").json
    assert keys
    for key in keys:
        example = cli("config", f"{table}.{key}", "--output-format", "json").json["example"]
        make_files({"pyproject.toml": f"[tool.jaxlint.{table}]\n{example}\n", "a.py": "x = 1\n"})
        out = cli("check", "--show-settings")
        assert out.code == 0, (key, out.stderr)


def test_the_tables_accept_no_key_the_documentation_leaves_out():
    from jaxlint import dynamic_settings, settings_reference
    from jaxlint.config import RULE_OPTIONS

    assert {k.replace("_", "-") for k in RULE_OPTIONS} - {"target-jax-version"} == set(
        settings_reference.keys_under("options"))
    assert set(dynamic_settings.KEYS) == set(settings_reference.keys_under("dynamic"))


def test_cache_dir_from_config_is_relative_to_the_project(cli, make_files, tmp_path):
    make_files({"pyproject.toml": '[tool.jaxlint]\ncache-dir = "var/cache"\n', "sub/a.py": "x = 1\n"})
    cli("check", "sub")
    assert (tmp_path / "var" / "cache" / ".gitignore").exists()


def test_codes_in_config_are_case_insensitive(cli, make_files, test_rules):
    make_files(
        {
            "pyproject.toml": """
                [tool.jaxlint]
                select = ["jax098"]
                [tool.jaxlint.per-file-ignores]
                "b.py" = ["jax09"]
                """,
            "a.py": PRINTS,
            "b.py": PRINTS,
        }
    )
    found = cli("check", "--output-format", "json").json
    assert [(Path(f["filename"]).name, f["code"]) for f in found] == [("a.py", "JAX098")]


def test_extend_reads_the_base_file_first(cli, make_files, test_rules, tmp_path):
    make_files(
        {
            "base.toml": """
                ignore = ["JAX099"]
                output-format = "concise"
                [options]
                bad-name = "worse"
                """,
            "project/pyproject.toml": """
                [tool.jaxlint]
                extend = "../base.toml"
                extend-select = ["JAX099"]
                """,
            "project/a.py": "import jax\nprint(worse)\n",
        }
    )
    outcome = cli("check", "--no-cache", "project")
    assert outcome.code == 1
    # the base's options and output format apply; the extending file's extend-select is the later
    # layer, so it turns JAX099 back on over the base's ignore (as ruff layers `extend`)
    assert outcome.stdout.splitlines()[:2] == [
        "project/a.py:2:1: JAX098 [*] `print` call",
        "project/a.py:2:7: JAX099 the name `bad`",
    ]
    assert "unknown key" not in outcome.stderr


def test_extend_without_overrides_keeps_the_base_selection(cli, make_files, test_rules):
    make_files(
        {
            "base.toml": 'select = ["JAX099"]\n',
            "project/jaxlint.toml": 'extend = "../base.toml"\n',
            "project/a.py": PRINTS,
        }
    )
    assert [f["code"] for f in cli("check", "--output-format", "json", "project").json] == ["JAX099"]


@pytest.mark.parametrize(
    "files, message",
    [
        ({"project/jaxlint.toml": 'extend = "../missing.toml"\n'}, "does not exist"),
        ({"project/jaxlint.toml": 'extend = "jaxlint.toml"\n'}, "cycle"),
        (
            {
                "project/jaxlint.toml": 'extend = "../base.toml"\n',
                "base.toml": 'extend = "project/jaxlint.toml"\n',
            },
            "cycle",
        ),
        ({"project/jaxlint.toml": "extend = 1\n"}, "expected a path"),
    ],
)
def test_bad_extend_is_exit_2(cli, make_files, files, message):
    make_files({**files, "project/a.py": "x = 1\n"})
    outcome = cli("check", "project")
    assert outcome.code == 2
    assert message in outcome.stderr


@pytest.mark.parametrize(
    "layers,expected",
    [
        ([], ["JAX001", "JAX101", "JAX201"]),  # off by default
        ([Selection(select=["ALL"])], ["JAX001", "JAX101", "JAX201"]),  # ALL leaves it off
        ([Selection(select=["JAX2"])], ["JAX001", "JAX201"]),  # and so does a prefix
        ([Selection(extend_select=["JAX207"])], ["JAX001", "JAX101", "JAX201", "JAX207"]),
        ([Selection(select=["JAX2", "JAX207"])], ["JAX001", "JAX201", "JAX207"]),
        ([Selection(extend_select=["JAX207"]), Selection(ignore=["JAX2"])], ["JAX001", "JAX101"]),
        ([Selection(extend_select=["JAX207"], ignore=["JAX207"])], ["JAX001", "JAX101", "JAX201"]),
    ],
)
def test_a_rule_off_by_default_is_selected_by_its_code_only(layers, expected):
    codes = ["JAX001", "JAX101", "JAX201", "JAX207"]
    assert sorted(resolve_selection(layers, codes, opt_in={"JAX207"})) == expected


def test_the_opt_in_rule_runs_only_when_named(cli, make_files):
    make_files({"a.py": """
        import jax

        def init(key, sizes):
            w_key, b_key = jax.random.split(key)
            return jax.random.normal(key, sizes)
        """})
    assert cli("check", "--no-cache", "--output-format", "json", "--select", "ALL", "a.py").json == []
    found = cli("check", "--no-cache", "--output-format", "json", "--extend-select", "JAX207", "a.py").json
    assert [f["code"] for f in found] == ["JAX207"]
