"""File discovery: .gitignore, default and configured excludes, --force-exclude, notebooks, symlink loops."""

from __future__ import annotations

import os
import re

import pytest

from jaxlint.files import discover, glob_to_regex, parse_gitignore


def shown(cli, *args) -> list[str]:
    out = cli("check", "--show-files", *args)
    assert out.code == 0, out.stderr
    return out.stdout.splitlines()


@pytest.mark.parametrize(
    "pattern, path, matches",
    [
        ("*.py", "a.py", True),
        ("*.py", "d/a.py", False),
        ("**/a.py", "a.py", True),
        ("**/a.py", "x/y/a.py", True),
        ("d/**", "d/x/y.py", True),
        ("d/**/y.py", "d/y.py", True),
        ("d/**/y.py", "d/a/b/y.py", True),
        ("a?.py", "ab.py", True),
        ("[ab].py", "b.py", True),
        ("[!ab].py", "b.py", False),
        ("\\*.py", "*.py", True),
    ],
)
def test_glob_to_regex(pattern, path, matches):
    assert bool(re.fullmatch(glob_to_regex(pattern), path)) is matches


def test_braces_only_in_config_globs():
    assert re.fullmatch(glob_to_regex("{a,b}.py", braces=True), "b.py")
    assert not re.fullmatch(glob_to_regex("{a,b}.py"), "b.py")


def test_gitignore_rules_last_match_wins():
    ignore = parse_gitignore("# comment\n*.py\n!keep.py\nbuild/\n/top.py\n", "/r")
    assert ignore.decide("/r/x.py", "x.py", False) is True
    assert ignore.decide("/r/keep.py", "keep.py", False) is False
    assert ignore.decide("/r/build", "build", True) is True
    assert ignore.decide("/r/build", "build", False) is None  # `build/` matches folders only
    assert ignore.decide("/r/sub/top.txt", "top.txt", False) is None


def test_walks_python_files_and_notebooks_sorted(cli, make_files):
    make_files({"b.py": "", "a.pyi": "", "n.ipynb": "{}", "notes.txt": "", "pkg/c.py": ""})
    assert shown(cli) == ["a.pyi", "b.py", "n.ipynb", os.path.join("pkg", "c.py")]


def test_gitignore_patterns(cli, make_files):
    make_files(
        {
            ".gitignore": "gen_*.py\n!gen_keep.py\nout/\n/only_top.py\ndocs/**/skip.py\n",
            "gen_a.py": "",
            "gen_keep.py": "",
            "out/x.py": "",
            "only_top.py": "",
            "sub/only_top.py": "",
            "docs/a/b/skip.py": "",
            "docs/a/keep.py": "",
            "main.py": "",
        }
    )
    assert shown(cli) == [
        os.path.join("docs", "a", "keep.py"),
        "gen_keep.py",
        "main.py",
        os.path.join("sub", "only_top.py"),
    ]


def test_nested_gitignore_overrides_parent(cli, make_files):
    make_files(
        {
            ".gitignore": "*_gen.py\n",
            "a_gen.py": "",
            "pkg/.gitignore": "!b_gen.py\nlocal.py\n",
            "pkg/b_gen.py": "",
            "pkg/local.py": "",
            "local.py": "",
        }
    )
    assert shown(cli) == ["local.py", os.path.join("pkg", "b_gen.py")]


def test_gitignore_of_enclosing_repository_applies_to_subfolder(cli, make_files, tmp_path):
    make_files({".git/HEAD": "", ".gitignore": "skip.py\n", "src/skip.py": "", "src/keep.py": ""})
    assert shown(cli, "src") == [os.path.join("src", "keep.py")]


def test_no_respect_gitignore(cli, make_files):
    make_files({".gitignore": "skip.py\n", "skip.py": ""})
    assert shown(cli, "--no-respect-gitignore") == ["skip.py"]


def test_default_excludes(cli, make_files):
    make_files(
        {
            name + "/x.py": ""
            for name in (".venv", "venv", "build", "dist", "node_modules", "__pycache__", ".tox", ".git")
        }
        | {"keep.py": ""}
    )
    assert shown(cli) == ["keep.py"]


def test_configured_excludes(cli, make_files):
    make_files(
        {
            "pyproject.toml": '[tool.jaxlint]\nextend-exclude = ["legacy", "tests/fixtures/*.py", "*_pb2.py"]\n',
            "legacy/a.py": "",
            "tests/fixtures/b.py": "",
            "tests/test_c.py": "",
            "proto_pb2.py": "",
            "build/default.py": "",
        }
    )
    assert shown(cli) == [os.path.join("tests", "test_c.py")]  # extend-exclude keeps the defaults


def test_exclude_replaces_the_defaults(cli, make_files):
    make_files({"jaxlint.toml": 'exclude = ["other"]\n', "build/a.py": "", "other/b.py": ""})
    assert shown(cli) == [os.path.join("build", "a.py")]


def test_explicit_files_are_linted_unless_force_exclude(cli, make_files):
    make_files(
        {"pyproject.toml": '[tool.jaxlint]\nextend-exclude = ["gen"]\n', "gen/a.py": "", ".venv/b.py": ""}
    )
    assert shown(cli, "gen/a.py", ".venv/b.py") == [
        os.path.join(".venv", "b.py"),
        os.path.join("gen", "a.py"),
    ]
    assert shown(cli, "--force-exclude", "gen/a.py", ".venv/b.py") == []
    assert shown(cli, "--force-exclude", "gen") == []


def test_force_exclude_from_config(cli, make_files):
    make_files({"pyproject.toml": "[tool.jaxlint]\nforce-exclude = true\n", ".venv/b.py": ""})
    assert shown(cli, ".venv/b.py") == []


def test_duplicates_are_linted_once(cli, make_files):
    make_files({"a.py": ""})
    assert shown(cli, ".", "a.py", "./a.py") == ["a.py"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_symlink_loop_ends(cli, make_files, tmp_path):
    make_files({"pkg/a.py": ""})
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "loop")
    os.symlink(tmp_path, tmp_path / "pkg" / "up")
    assert shown(cli) == [os.path.join("pkg", "a.py")]


def test_broken_symlink_is_skipped(cli, make_files, tmp_path):
    make_files({"a.py": ""})
    os.symlink(tmp_path / "missing.py", tmp_path / "dangling.py")
    assert shown(cli) == ["a.py"]


def test_discover_reports_missing_paths(tmp_path):
    found = discover([str(tmp_path / "nope")], root=tmp_path, excludes=[])
    assert found.files == [] and found.missing == [(str(tmp_path / "nope"), "No such file or directory")]
