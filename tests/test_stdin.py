"""Standard input: `jaxlint check --stdin-filename PATH -` lints an editor's buffer as the file PATH."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PRINTS = "import jax\nprint(bad)\n"


def test_dash_alone_reads_stdin(cli, test_rules):
    out = cli("check", "--output-format", "json", "-", input=PRINTS)
    assert out.code == 1
    assert [(f["code"], f["filename"], f["location"]["row"]) for f in out.json] == [
        ("JAX098", "-", 2),
        ("JAX099", "-", 2),
    ]


@pytest.mark.parametrize("args", [["--stdin-filename", "pkg/a.py", "-"], ["--stdin-filename", "pkg/a.py"]])
def test_stdin_filename_names_the_buffer(cli, test_rules, tmp_path, args):
    out = cli("check", "--output-format", "concise", *args, input=PRINTS)
    assert out.code == 1
    assert out.stdout.splitlines()[0] == "pkg/a.py:2:1: JAX098 [*] `print` call"
    assert not (tmp_path / "pkg").exists()  # nothing is written, nothing needs to exist


def test_the_buffer_is_shown_not_the_file_on_disk(cli, make_files, test_rules):
    make_files({"a.py": "x = 1\n"})
    out = cli("check", "--stdin-filename", "a.py", input=PRINTS)
    assert "2 | print(bad)" in out.stdout


def test_config_and_per_file_ignores_of_the_path_apply(cli, make_files, test_rules):
    make_files(
        {
            "project/pyproject.toml": """
                [tool.jaxlint]
                output-format = "json"
                [tool.jaxlint.per-file-ignores]
                "tests/**" = ["JAX098"]
                """,
        }
    )
    out = cli("check", "--stdin-filename", "project/tests/test_a.py", "-", input=PRINTS)
    assert [f["code"] for f in out.json] == ["JAX099"]
    out = cli("check", "--stdin-filename", "project/src/a.py", "-", input=PRINTS)
    assert [f["code"] for f in out.json] == ["JAX098", "JAX099"]


def test_noqa_in_the_buffer_applies(cli, test_rules):
    out = cli("check", "--output-format", "json", "-", input="import jax\nprint(bad)  # noqa: JAX098\n")
    assert [f["code"] for f in out.json] == ["JAX099"]


def test_fix_prints_the_fixed_source_and_the_rest_on_stderr(cli, make_files, test_rules, tmp_path):
    make_files({"a.py": PRINTS})
    out = cli("check", "--fix", "--stdin-filename", "a.py", input=PRINTS)
    assert out.stdout == "import jax\njax.debug.print(bad)\n"
    assert "JAX099" in out.stderr and "1 fixed, 1 remaining" in out.stderr
    assert out.code == 1
    assert (tmp_path / "a.py").read_text() == PRINTS  # the file on disk is the editor's business

    out = cli("check", "--fix", "--unsafe-fixes", "--stdin-filename", "a.py", input=PRINTS)
    assert (out.stdout, out.code) == ("import jax\njax.debug.print(good)\n", 0)


def test_fix_with_nothing_to_fix_prints_the_source_unchanged(cli, test_rules):
    source = "import jax\nx = 1\n"
    out = cli("check", "--fix", "--stdin-filename", "a.py", input=source)
    assert (out.stdout, out.code) == (source, 0)


def test_diff_from_stdin(cli, test_rules):
    out = cli("check", "--diff", "--stdin-filename", "a.py", input=PRINTS)
    assert out.code == 1
    assert "-print(bad)\n+jax.debug.print(bad)\n" in out.stdout


def test_force_exclude_passes_an_excluded_buffer_through(cli, make_files, test_rules):
    make_files({"pyproject.toml": '[tool.jaxlint]\nextend-exclude = ["generated"]\n'})
    args = ("check", "--force-exclude", "--stdin-filename", "generated/a.py")
    assert (cli(*args, input=PRINTS).code, cli(*args, input=PRINTS).stdout) == (0, "")
    out = cli(*args, "--fix", input=PRINTS)
    assert (out.code, out.stdout) == (0, PRINTS)


def test_notebook_from_stdin(cli, test_rules):
    notebook = (
        '{"cells": [{"cell_type": "code", "metadata": {}, "source": ["import jax\\n", "print(1)\\n"],'
        ' "outputs": [], "execution_count": null}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    )
    out = cli("check", "--output-format", "json", "--stdin-filename", "n.ipynb", input=notebook)
    assert [(f["code"], f["cell"], f["location"]["row"]) for f in out.json] == [("JAX098", 1, 2)]


def test_syntax_error_on_stdin_is_jax001(cli, test_rules):
    out = cli("check", "--output-format", "json", "-", input="x = (\n")
    assert [f["code"] for f in out.json] == ["JAX001"]


@pytest.mark.parametrize(
    "args",
    [["-", "a.py"], ["--stdin-filename", "a.py", "b.py"], ["--dynamic", "-"]],
)
def test_stdin_misuse_is_a_usage_error(cli, test_rules, args):
    assert cli("check", *args, input=PRINTS).code == 2


def test_piped_through_the_real_command(tmp_path):
    # the issue as a user met it: `cat f.py | jaxlint check -`
    done = subprocess.run(
        [sys.executable, "-m", "jaxlint", "check", "--no-cache", "--output-format", "json", "-"],
        input="import jax\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "No such file" not in done.stdout
    assert [f["code"] for f in json.loads(done.stdout)] == ["JAX101"]
