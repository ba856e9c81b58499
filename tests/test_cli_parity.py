"""ruff's habits: --add-noqa, --show-settings and --watch."""

from __future__ import annotations

import pytest

from jaxlint import cli as cli_module

PRINTS = "import jax\nprint(bad)\n"


def test_add_noqa_then_the_run_passes(cli, make_files, test_rules, tmp_path):
    make_files(
        {
            "a.py": "import jax\nprint(bad)\nx = 1  # noqa: E501\ny = bad  # keep\ns = '''\nbad\n'''\n",
            "b.py": "import jax\nz = bad + \\\n    bad\n",
        }
    )
    out = cli("check", "--add-noqa", "--no-cache")
    assert out.code == 0
    assert (tmp_path / "a.py").read_text() == (
        "import jax\nprint(bad)  # noqa: JAX098, JAX099\nx = 1  # noqa: E501\n"
        "y = bad  # keep  # noqa: JAX099\ns = '''\nbad\n'''\n"
    )
    # a line continued by a backslash cannot take a comment: that finding stays
    assert (tmp_path / "b.py").read_text() == "import jax\nz = bad + \\\n    bad  # noqa: JAX099\n"
    assert out.stderr == "Added 4 noqa directives.\n"
    remaining = cli("check", "--no-cache", "--output-format", "json").json
    assert [(f["filename"][-4:], f["location"]["row"]) for f in remaining] == [("b.py", 2)]


def test_add_noqa_extends_an_existing_directive(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": "import jax\nprint(bad)  # noqa: JAX098, E501\n"})
    assert cli("check", "--add-noqa", "--no-cache").code == 0
    assert (tmp_path / "a.py").read_text() == "import jax\nprint(bad)  # noqa: JAX098, E501, JAX099\n"


def test_show_settings(cli, make_files, test_rules, tmp_path):
    make_files(
        {
            "base.toml": 'ignore = ["JAX099"]\n',
            "pyproject.toml": '[tool.jaxlint]\nextend = "base.toml"\noutput-format = "concise"\n',
        }
    )
    out = cli("check", "--show-settings", ".")
    assert out.code == 0
    lines = out.stdout.splitlines()
    assert f"Configuration files: {tmp_path / 'base.toml'}, {tmp_path / 'pyproject.toml'}" in lines
    assert "rules = ['JAX001', 'JAX098']" in lines
    assert "output-format = concise" in lines


def test_watch_lints_again_after_a_change(cli, make_files, test_rules, tmp_path, monkeypatch):
    make_files({"a.py": "import jax\nx = 1\n"})
    looks = []

    def fake_sleep(seconds):
        # the first look finds no change; then the user edits the file; then presses Ctrl-C
        looks.append(seconds)
        if len(looks) == 2:
            (tmp_path / "a.py").write_text(PRINTS + "# edited\n")
        if len(looks) == 4:
            raise KeyboardInterrupt

    monkeypatch.setattr(cli_module.time, "sleep", fake_sleep)
    out = cli("check", "--watch", "--no-cache", "--output-format", "concise")
    assert out.code == 0
    assert out.stdout.count("All checks passed!") == 1
    assert "a.py:2:1: JAX098 [*] `print` call" in out.stdout
    assert out.stderr.count("File change detected...") == 1


def test_watch_survives_a_broken_configuration(cli, make_files, test_rules, tmp_path, monkeypatch):
    make_files({"a.py": PRINTS, "pyproject.toml": "[tool.jaxlint\n"})
    looks = []

    def fake_sleep(seconds):
        looks.append(seconds)
        if len(looks) == 1:
            (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
        if len(looks) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(cli_module.time, "sleep", fake_sleep)
    out = cli("check", "--watch", "--no-cache", "--output-format", "concise")
    assert out.code == 0
    assert "is not valid TOML" in out.stderr
    assert "a.py:2:1: JAX098 [*] `print` call" in out.stdout


@pytest.mark.parametrize(
    "flag", ["--add-noqa", "--show-settings", "--watch", "--output-file", "--exit-non-zero-on-fix"]
)
def test_options_are_documented_in_help(cli, flag):
    assert flag in cli("check", "--help").stdout
