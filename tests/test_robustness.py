"""Odd bytes, odd files and failing disks: jaxlint never damages a file, never shows a traceback, never goes quiet."""

from __future__ import annotations

import ast
import errno
import json
import os
import stat
import subprocess
import sys
import time

import pytest

from jaxlint import cli as cli_module
from jaxlint import files, runner, write as writing
from jaxlint.cache import Cache
from jaxlint.fixes import apply_fixes
from jaxlint.notebook import Notebook
from jaxlint.output import printable
from jaxlint.rules import all_rules
from jaxlint.source import Source, split_lines

# Characters `str.splitlines` breaks at but Python's tokenizer (and so `ast`) does not.
NOT_LINE_BREAKS = ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def ast_lines(text: str) -> list[str]:
    """The lines `ast` numbers, by its own splitter (which, from Python 3.13, also yields an empty last one)."""
    lines = ast._splitlines_no_ff(text)
    return lines[:-1] if lines and lines[-1] == "" else lines

# A list updated in place (fine) next to a JAX array updated in place (JAX401, with a safe fix).
MUTATION = """\
import jax.numpy as jnp
{odd}
def h(n):
    a = [0]
    c = jnp.zeros(n)
    a[0] = 9
    c[0] = 1
    return a, c
"""

# Lines that hold them where Python allows them: a form feed alone, any of them in a comment or a string.
ODD_LINES = (
    ["\x0c", "\x0c    \x0c"]
    + [f"# a comment {c} here" for c in NOT_LINE_BREAKS]
    + [f"s = 'a string {c} here'" for c in NOT_LINE_BREAKS]
)

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False


def write(path, text: str) -> None:
    path.write_bytes(text.encode("utf-8"))


# ---------------------------------------------------------------- 1. lines as `ast` counts them


@pytest.mark.parametrize("odd", ODD_LINES, ids=ascii)
def test_fix_rewrites_the_reported_line_whatever_precedes_it(cli, tmp_path, odd):
    path = tmp_path / "m.py"
    write(path, MUTATION.format(odd=odd))
    out = cli("check", "--no-cache", "--fix", "--output-format", "json", "m.py")
    assert out.code == 0, out.stderr
    text = path.read_bytes().decode("utf-8")
    assert "    a[0] = 9\n" in text
    assert "    c = c.at[0].set(1)\n" in text
    ast.parse(text)


@pytest.mark.parametrize("odd", ODD_LINES, ids=ascii)
def test_reported_line_and_snippet_are_the_finding_s(cli, tmp_path, odd):
    write(tmp_path / "m.py", MUTATION.format(odd=odd))
    out = cli("check", "--no-cache", "--output-format", "json", "m.py")
    [finding] = out.json
    assert finding["location"] == {"row": 7, "column": 5}
    full = cli("check", "--no-cache", "m.py").stdout
    underlined = full.splitlines()[full.splitlines().index("  |     ^^^^ JAX401") - 1]
    assert underlined == "7 |     c[0] = 1"


def test_notebook_cells_are_split_as_python_splits_them(cli, tmp_path):
    cell = MUTATION.format(odd="# \u2028 \x0c")
    data = {
        "cells": [{"cell_type": "code", "metadata": {}, "source": split_lines(cell, keepends=True), "outputs": []}],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "n.ipynb").write_text(json.dumps(data), encoding="utf-8")
    out = cli("check", "--no-cache", "--output-format", "json", "n.ipynb")
    assert [(f["cell"], f["location"]["row"]) for f in out.json] == [(1, 7)]
    assert cli("check", "--no-cache", "--fix", "n.ipynb").code == 0
    fixed = "".join(json.loads((tmp_path / "n.ipynb").read_text(encoding="utf-8"))["cells"][0]["source"])
    assert "    a[0] = 9\n" in fixed and "    c = c.at[0].set(1)\n" in fixed


TEXTS = [
    "a = 1\r\nb = (1,\r\n  2)\n\x0c\nc = 'é\u2028x'  # \x85 \x0b\nd = [\n é,\r f]\r",
    "x = ('αβ'\n, 3)\n",
    "a = 'x\u2028y'\n\x0c\nb = 2  # \x85 \x1c\n\n",
    "",
    "\n\n",
    "x = 1",
]


@pytest.mark.parametrize("text", TEXTS)
def test_split_lines_agrees_with_ast(text):
    assert split_lines(text, keepends=True) == ast_lines(text)
    assert split_lines(text) == [line.rstrip("\r\n") for line in ast_lines(text)]


@pytest.mark.parametrize("text", TEXTS)
def test_segment_agrees_with_ast(text):
    source = Source.parse(text)
    for node in ast.walk(source.tree):
        if getattr(node, "end_col_offset", None) is not None:
            assert source.segment(node) == (ast.get_source_segment(text, node) or "")


def test_fix_offsets_count_rows_as_ast_does():
    from jaxlint.findings import Edit, Finding, Fix, Position

    text = "x = 1\x0c\ny = 2\n"
    edit = Edit("z", Position(2, 1), Position(2, 2))
    finding = Finding("JAX401", "n", "m", "p", Position(2, 1), Position(2, 2), Fix("safe", "m", (edit,)))
    assert apply_fixes(text, [finding], False)[0] == "x = 1\x0c\nz = 2\n"


# ---------------------------------------------------------------- 2-4. writing fixes


def test_fix_keeps_the_file_whole_when_the_disk_is_full(cli, tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    write(path, MUTATION.format(odd=""))
    before = path.read_bytes()

    def full_disk(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writing.os, "fsync", full_disk)
    out = cli("check", "--no-cache", "--fix", "m.py")
    assert out.code == 2
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["m.py"]  # no temporary file left behind
    assert "m.py: cannot write the fixes: No space left on device" in out.stderr
    assert "m.py:7:5: JAX401" in out.stdout
    assert "All checks passed!" not in out.stdout


def test_fix_keeps_the_file_s_mode_and_symbolic_link(cli, tmp_path):
    path = tmp_path / "m.py"
    write(path, MUTATION.format(odd=""))
    os.chmod(path, 0o640)
    os.symlink("m.py", tmp_path / "link.py")
    assert cli("check", "--no-cache", "--fix", "link.py").code == 0
    assert os.path.islink(tmp_path / "link.py")
    assert "c = c.at[0].set(1)" in path.read_text(encoding="utf-8")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


def test_fix_leaves_a_file_edited_meanwhile_alone(cli, tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    write(path, MUTATION.format(odd=""))
    edited = MUTATION.format(odd="# edited while jaxlint ran")
    lint = runner.fix_until_stable

    def slow_fix(*args, **kwargs):
        result = lint(*args, **kwargs)
        write(path, edited)
        return result

    monkeypatch.setattr(runner, "fix_until_stable", slow_fix)
    out = cli("check", "--no-cache", "--fix", "m.py")
    assert out.code == 2
    assert path.read_text(encoding="utf-8") == edited
    assert "changed while it was being fixed" in out.stderr
    assert "JAX401" in out.stdout


def test_fix_reports_a_file_it_may_not_write(cli, tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    write(path, MUTATION.format(odd=""))
    if ROOT:  # root may write anything: deny it as the file system would deny anyone else
        access = os.access
        monkeypatch.setattr(writing.os, "access", lambda path, mode, **kw: mode != os.W_OK and access(path, mode))
    else:
        os.chmod(path, 0o444)
    out = cli("check", "--no-cache", "--fix", "--output-format", "json", "m.py")
    assert out.code == 2
    assert "cannot write the fixes: Permission denied" in out.stderr
    assert [f["code"] for f in out.json] == ["JAX401"]
    assert "internal error" not in out.stderr


# ---------------------------------------------------------------- 5. notebooks


def notebook(cells, metadata) -> str:
    return json.dumps({"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5})


CODE_CELL = {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["import jax\n", "x = 1\n"]}


@pytest.mark.parametrize(
    "metadata",
    [[], "python", {"language_info": "python"}, {"kernelspec": 3}, {"language_info": {"name": 3}}, None],
)
def test_notebook_with_odd_metadata_is_linted(cli, tmp_path, metadata):
    (tmp_path / "n.ipynb").write_text(notebook([CODE_CELL], metadata), encoding="utf-8")
    out = cli("check", "--no-cache", "n.ipynb")
    assert (out.code, out.stdout, out.stderr) == (0, "All checks passed!\n", "")


@pytest.mark.parametrize("source", [["x = 1\n", 3], [None], 7, None, {"a": 1}])
def test_notebook_cell_with_odd_source_is_jax001(cli, tmp_path, source):
    cell = dict(CODE_CELL, source=source)
    (tmp_path / "n.ipynb").write_text(notebook([cell], {}), encoding="utf-8")
    out = cli("check", "--no-cache", "--output-format", "json", "n.ipynb")
    assert out.code == 1 and out.stderr == ""
    [finding] = out.json
    assert finding["code"] == "JAX001" and "cell 1" in finding["message"]


# ---------------------------------------------------------------- 6. bad globs


@pytest.mark.parametrize("option", ["--exclude", "--extend-exclude"])
def test_bad_glob_on_the_command_line_is_a_usage_error(cli, make_files, option):
    make_files({"a.py": "x = 1\n"})
    out = cli("check", option, "[z-a]", ".")
    assert out.code == 2
    assert "invalid glob `[z-a]`" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize(
    "setting",
    ['exclude = ["[z-a]"]', 'extend-exclude = ["[z-a]"]', 'per-file-ignores = {"[z-a]" = ["JAX1"]}'],
)
def test_bad_glob_in_the_config_is_a_config_error(cli, make_files, setting):
    make_files({"a.py": "x = 1\n", "pyproject.toml": f"[tool.jaxlint]\n{setting}\n"})
    out = cli("check", ".")
    assert out.code == 2
    assert "invalid glob `[z-a]`" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_bad_glob_in_gitignore_is_skipped_with_a_warning(cli, make_files, test_rules):
    make_files({".gitignore": "[z-a]\nskipped.py\n", "a.py": "import jax\nprint(1)\n", "skipped.py": "import jax\nprint(1)\n"})
    out = cli("check", "--no-cache", "--output-format", "json", ".")
    assert out.code == 1
    assert [os.path.basename(f["filename"]) for f in out.json] == ["a.py"]
    assert "ignoring the invalid pattern `[z-a]`" in out.stderr


# ---------------------------------------------------------------- 7. config that is not UTF-8


@pytest.mark.parametrize("name", ["pyproject.toml", "jaxlint.toml"])
def test_config_that_is_not_utf8_is_one_line_and_exit_2(cli, make_files, name):
    table = "[tool.jaxlint]\n" if name == "pyproject.toml" else ""
    make_files({"a.py": "x = 1\n", name: table.encode() + b'select = ["JAX1"]  # \xff\xfe\n'})
    out = cli("check", ".")
    assert out.code == 2
    assert out.stderr.strip().endswith("is not valid TOML: it is not UTF-8 text")
    assert len(out.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------- 8. the cache


def cache_files(tmp_path):
    return [p for p in (tmp_path / ".jaxlint_cache").rglob("*.json")]


def test_a_hostile_cache_is_discarded_and_rewritten(cli, make_files, tmp_path):
    make_files({"m.py": MUTATION.format(odd="")})
    first = cli("check", "--output-format", "json")
    [cache_file] = cache_files(tmp_path)
    cache_file.write_text("[" * 100_000, encoding="utf-8")
    for _ in range(2):  # this run, and every later one
        out = cli("check", "--output-format", "json")
        assert (out.code, out.json, out.stderr) == (1, first.json, "")
    assert json.loads(cache_file.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "damage",
    [
        lambda row: row.__setitem__(3, ["7", 5]),  # a row as a string
        lambda row: row.__setitem__(0, 401),  # a code that is not a string
        lambda row: row.__setitem__(8, ["safe", "m", [["x", [1, 1], [1, "2"]]]]),  # an edit's column
        lambda row: row.__setitem__(6, -1),  # a cell below 1
        lambda row: row.pop(),  # a row too short
        lambda row: row.__setitem__(2, {"text": "m"}),  # a message that is not a string
    ],
)
def test_cache_rows_of_the_wrong_type_are_not_trusted(cli, make_files, tmp_path, damage):
    make_files({"m.py": MUTATION.format(odd="")})
    first = cli("check", "--output-format", "json")
    [cache_file] = cache_files(tmp_path)
    entries = json.loads(cache_file.read_text(encoding="utf-8"))
    [entry] = entries.values()
    damage(entry[3][0][1][0])  # the first finding of the results without calls into the file
    cache_file.write_text(json.dumps(entries), encoding="utf-8")
    assert cli("check", "--output-format", "json").json == first.json
    full = cli("check")  # the format that reads rows and columns to draw the snippet
    assert full.code == 1 and "m.py:7:5: JAX401" in full.stdout


def test_cache_entry_of_the_wrong_shape_is_linted_afresh(tmp_path):
    cache = Cache(tmp_path, "k")
    cache._entries = {"/a.py": [1, 2], "/b.py": "x", "/c.py": [1, 2, 3, "rows"], "/d.py": [1.5, 2, "d", []]}
    info = os.stat(tmp_path)
    for path in cache._entries.copy():
        assert cache.lookup(path, info) == (None, None)


# ---------------------------------------------------------------- 9. symbolic link loops


def test_symlink_loop_named_first_is_a_finding(cli, make_files, tmp_path):
    make_files({"a.py": "x = 1\n"})
    os.symlink("loop2", tmp_path / "loop1")
    os.symlink("loop1", tmp_path / "loop2")
    out = cli("check", "--output-format", "json", "loop1", "a.py")
    assert out.code == 1 and out.stderr == ""
    [finding] = out.json
    assert finding["code"] == "JAX001" and finding["filename"].endswith("loop1")
    assert os.strerror(errno.ELOOP) in finding["message"]


def test_symlink_loop_inside_a_folder_ends(cli, make_files, tmp_path):
    make_files({"pkg/a.py": "x = 1\n"})
    os.symlink("..", tmp_path / "pkg" / "up")
    os.symlink("self.py", tmp_path / "pkg" / "self.py")
    out = cli("check", "--no-cache", "pkg")
    assert out.code == 0, out.stdout


# ---------------------------------------------------------------- 10. unroll-threshold


@pytest.mark.parametrize("value", ["1e400", "-inf", "nan", '"many"', "0", "-3", "2.5", "true"])
def test_invalid_unroll_threshold_is_a_config_error(cli, make_files, value):
    make_files({"a.py": "x = 1\n", "pyproject.toml": f"[tool.jaxlint.options]\nunroll-threshold = {value}\n"})
    out = cli("check", ".")
    assert out.code == 2
    assert "unroll-threshold" in out.stderr and "Traceback" not in out.stderr


def test_invalid_unroll_threshold_on_the_command_line_is_a_config_error(cli, make_files):
    make_files({"a.py": "x = 1\n"})
    out = cli("check", "--config", "options.unroll-threshold = 1e400", ".")
    assert out.code == 2 and "unroll-threshold" in out.stderr


def test_valid_unroll_threshold_is_accepted(cli, make_files):
    make_files({"a.py": "x = 1\n", "pyproject.toml": "[tool.jaxlint.options]\nunroll-threshold = 500\n"})
    assert cli("check", ".").code == 0


# ---------------------------------------------------------------- 11. a full disk under stdout


def run_jaxlint(*args, cwd, stdout=subprocess.PIPE):
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", *args],
        cwd=cwd,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(
    "args",
    [
        ("check", "--no-cache", "m.py"),
        ("check", "--no-cache", "--output-format", "json", "m.py"),
        ("check", "--show-files", "m.py"),
        ("rules",),
        ("rule", "JAX401"),
    ],
)
def test_stdout_on_a_full_device_is_one_line_and_exit_2(tmp_path, args):
    write(tmp_path / "m.py", MUTATION.format(odd=""))
    with open("/dev/full", "w") as full:
        done = run_jaxlint(*args, cwd=tmp_path, stdout=full)
    assert done.returncode == 2
    assert done.stderr == "Error: cannot write the output: No space left on device\n"


# ---------------------------------------------------------------- 12. linear in findings


def many_findings(functions: int) -> str:
    body = "".join(
        f"\n@jax.jit\ndef f{i}(x, n):\n    if x > 0:\n        x = x + 1\n    print('é', x)\n    return x\n"
        for i in range(functions)
    )
    return "import jax\n" + body


def test_cost_grows_linearly_with_findings(tmp_path):
    settings = runner.LintSettings(codes=frozenset(all_rules()))

    def seconds(functions: int) -> float:
        path = tmp_path / f"m{functions}.py"
        write(path, many_findings(functions))
        best = float("inf")
        for _ in range(3):  # CPU time of this process (one file is linted here): other processes do not count
            start = time.process_time()
            [result] = runner.lint_files([str(path)], settings)
            best = min(best, time.process_time() - start)
        assert len(result.findings) == 2 * functions
        return best

    small, large = seconds(200), seconds(800)
    assert large < 4 * 2 * small  # 4x the findings: linear, with slack for a busy machine; quadratic is 16x


def test_segment_does_not_resplit_the_file(monkeypatch):
    source = Source.parse(many_findings(3))
    monkeypatch.setattr(ast, "get_source_segment", None)
    assert [source.segment(n) for n in ast.walk(source.tree) if isinstance(n, ast.If)] == ["if x > 0:\n        x = x + 1"] * 3


# ---------------------------------------------------------------- 15. FIFOs, devices, huge files


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_named_on_the_command_line_is_reported_not_waited_on(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    done = run_jaxlint("check", "--no-cache", "--output-format", "json", "pipe.py", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    [finding] = json.loads(done.stdout)
    assert finding["code"] == "JAX001" and "not a regular file" in finding["message"]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_link_to_a_device_is_reported_when_named_and_skipped_when_walked(tmp_path):
    os.symlink("/dev/zero", tmp_path / "zero.py")
    done = run_jaxlint("check", "--no-cache", "--output-format", "json", "zero.py", cwd=tmp_path)
    assert done.returncode == 1 and "not a regular file" in done.stdout
    done = run_jaxlint("check", "--no-cache", ".", cwd=tmp_path)
    assert done.returncode == 0 and "No Python files found" in done.stderr


def test_file_over_the_size_limit_is_reported_not_read(cli, make_files, monkeypatch):
    make_files({"big.py": "x = 1\n" * 100})
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 100)
    out = cli("check", "--no-cache", "--output-format", "json", "big.py")
    [finding] = out.json
    assert finding["code"] == "JAX001" and "larger than" in finding["message"]


# ---------------------------------------------------------------- 17. unreadable folders


def test_unreadable_folder_is_a_finding_not_a_pass(cli, make_files, tmp_path, monkeypatch):
    make_files({"pkg/ok.py": "x = 1\n", "pkg/secret/hidden.py": "x = 1\n"})
    secret = str(tmp_path / "pkg" / "secret")
    if ROOT:
        scandir = os.scandir

        def denied(path="."):
            if os.fspath(path) == secret:
                raise PermissionError(errno.EACCES, "Permission denied", path)
            return scandir(path)

        monkeypatch.setattr(files.os, "scandir", denied)
    else:
        os.chmod(secret, 0)
    try:
        out = cli("check", "--no-cache", "--output-format", "json", "pkg")
    finally:
        os.chmod(secret, 0o755)
    assert out.code == 1
    [finding] = out.json
    assert finding["code"] == "JAX001" and finding["filename"] == secret
    assert "cannot read the folder: Permission denied" in finding["message"]


# ---------------------------------------------------------------- 18. file names


ODD_NAMES = [b"bad\xff.py", "esc\x1b[31m.py".encode(), "nl\nname.py".encode()]  # sorted as jaxlint sorts


@pytest.mark.skipif(sys.platform != "linux", reason="file names that are not UTF-8 need a Linux file system")
@pytest.mark.parametrize("output_format", ["json", "json-lines", "sarif", "full", "concise", "github"])
def test_odd_file_names_keep_every_format_valid(tmp_path, output_format):
    for name in ODD_NAMES:
        (tmp_path / os.fsdecode(name)).write_bytes(b"import jax\n@jax.jit\ndef f(x):\n    print(x)\n")
    done = subprocess.run(
        [sys.executable, "-m", "jaxlint", "check", "--no-cache", "--output-format", output_format, "."],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    text = done.stdout.decode("utf-8")  # strictly UTF-8, whatever the names
    assert not any(c in text for c in "\x1b\udcff")
    if output_format == "json":
        names = [f["filename"] for f in json.loads(text)]
        assert names == [os.path.join(str(tmp_path), name.decode("utf-8", "replace")) for name in ODD_NAMES]
    elif output_format == "json-lines":
        assert len([json.loads(line) for line in text.splitlines()]) == 3
    elif output_format == "sarif":
        results = json.loads(text)["runs"][0]["results"]
        uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
        assert [uri.rsplit("/", 1)[1] for uri in uris] == ["bad%FF.py", "esc%1B%5B31m.py", "nl%0Aname.py"]
    elif output_format in ("full", "concise"):
        shown = [line.split(":")[0] for line in text.splitlines() if ": JAX404" in line]
        assert shown == ["bad\\xff.py", "esc\\x1b[31m.py", "nl\\x0aname.py"]
    else:
        assert len(text.splitlines()) == 3  # one annotation per finding, the newline in a name escaped


def test_control_characters_in_the_source_do_not_reach_the_terminal(cli, tmp_path):
    write(tmp_path / "m.py", 'import jax\n@jax.jit\ndef f(x):\n    print("\x1b[31m\x07", x)\n')
    out = cli("check", "--no-cache", "m.py")
    assert out.code == 1
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout
    assert '4 |     print("\u241b[31m\u2407", x)\n  |     ^^^^^^^^^^^^^^^^^^ JAX404' in out.stdout


@pytest.mark.parametrize("char", ["\x85", "\u2028", "\u2029"], ids=ascii)
def test_json_lines_stay_one_finding_per_line(cli, tmp_path, char):
    source = "import jax.numpy as jnp\ndef f(n):\n    c = jnp.zeros(n)\n    c[0] = len('%s')\n" % char
    write(tmp_path / "m.py", source)
    out = cli("check", "--no-cache", "--output-format", "json-lines", "m.py")
    [line] = out.stdout.splitlines()  # as str.splitlines counts lines
    assert json.loads(line)["fix"]["edits"][0]["content"] == "c = c.at[0].set(len('%s'))" % char
    assert printable(f"a{char}b") == "a%sb" % ascii(char)[1:-1]


# ---------------------------------------------------------------- 19. empty selections, Ctrl-C


@pytest.mark.parametrize("value", ["", "JAX1,", ",", " "])
def test_empty_selector_is_a_usage_error(cli, make_files, value):
    make_files({"a.py": "x = 1\n"})
    out = cli("check", "--select", value, ".")
    assert out.code == 2
    assert "unknown rule selector ``" in out.stderr


def test_ctrl_c_exits_130(cli, make_files, monkeypatch):
    make_files({"a.py": "x = 1\n"})

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_module, "lint_run", interrupted)
    out = cli("check", ".")
    assert out.code == 130
    assert out.stderr == "Interrupted.\n"


def test_notebook_source_of_the_wrong_type_is_a_source_error():
    from jaxlint.source import SourceError

    with pytest.raises(SourceError, match="cell 2"):
        Notebook({"cells": [CODE_CELL, dict(CODE_CELL, source=[1])]})


# ---- analyses cut short are reported, not silent ----------------------------------------------
DEEP = "import jax\n\n\n@jax.jit\ndef deep(x):\n    y = x" + "[0]" * 600 + "\n    if y > 0:\n        return y\n    return x\n"


def test_a_function_too_deep_to_analyse_is_named_on_standard_error(cli, make_files):
    make_files({"deep.py": DEEP, "fine.py": "import jax\n\n\n@jax.jit\ndef f(x):\n    return x\n"})
    for _ in range(2):  # the second run reads the cache and says it again
        out = cli("check", "--output-format", "json", ".")
        assert out.code == 0 and out.json == []  # the JSON and the exit status are the findings'
        assert out.stderr.splitlines() == [
            "warning: deep.py: the analysis of `deep` (line 5) was cut short (an expression in it is nested too "
            "deeply to follow); findings in it may be missing"
        ]


def test_a_function_too_deep_to_analyse_read_from_standard_input_is_named_too(cli, make_files):
    make_files({"pyproject.toml": "[tool.jaxlint]\n"})
    for extra in ((), ("--fix",)):
        out = cli("check", "--output-format", "json", *extra, "--stdin-filename", "deep.py", "-", input=DEEP)
        assert out.stderr.splitlines()[0] == (
            "warning: deep.py: the analysis of `deep` (line 5) was cut short (an expression in it is nested too "
            "deeply to follow); findings in it may be missing"
        )


def test_a_solve_that_does_not_settle_is_named_on_standard_error(cli, make_files, monkeypatch):
    from functools import partial

    from jaxlint.analysis.engine import dataflow

    from jaxlint.analysis.values import values

    monkeypatch.setattr(values, "solve", partial(dataflow.solve, max_visits=1))  # a bound any loop reaches
    make_files({"m.py": "import jax\n\n\n@jax.jit\ndef f(x):\n    for i in range(3):\n        x = x + i\n    return x\n"})
    out = cli("check", "--no-cache", "m.py")
    assert "warning: m.py: the analysis of `f` (line 5) was cut short (its loops did not settle" in out.stderr


def test_a_loop_variance_solve_that_does_not_settle_is_named_on_standard_error(cli, make_files, monkeypatch):
    from functools import partial

    from jaxlint.analysis.engine import dataflow, loop_variance

    monkeypatch.setattr(loop_variance, "solve", partial(dataflow.solve, max_visits=1))
    make_files({"m.py": """import jax


@jax.jit
def step(x):
    return x


def main(xs, n):
    for t in xs:
        step(xs[:n])
        n = n + 1


for t in range(3):
    step(t)
    t = t + 1
"""})
    out = cli("check", "--no-cache", "--select", "JAX501", "m.py")
    assert out.stderr.splitlines() == [
        "warning: m.py: the analysis of the module's own statements was cut short (its loops did not settle "
        "within the solver's bound); findings in them may be missing",
        "warning: m.py: the analysis of `main` (line 9) was cut short (its loops did not settle within the "
        "solver's bound); findings in it may be missing",
    ]
