"""Suppression: `# noqa` on the reported line, file-level `# jaxlint: noqa`, and per-file ignores."""

from __future__ import annotations

import pytest


def rows(cli, *args) -> list[tuple[str, int]]:
    return [(f["code"], f["location"]["row"]) for f in cli("check", "--output-format", "json", *args).json]


@pytest.mark.parametrize(
    "comment, kept",
    [
        ("# noqa", []),
        ("# NOQA", []),
        ("#noqa", []),
        ("# noqa: JAX098", [("JAX099", 2)]),
        ("# noqa:JAX098", [("JAX099", 2)]),
        ("# noqa: JAX098, JAX099", []),
        ("# noqa: JAX098 JAX099", []),
        ("# noqa: JAX098,JAX099 because reasons", []),
        ("# noqa: JAX101", [("JAX098", 2), ("JAX099", 2)]),
        ("# noqa: jax098", [("JAX099", 2)]),  # codes are case-insensitive, as in --select
        ("# noqa:jax098,Jax099", []),
        ("# noqa: JAX09", [("JAX098", 2), ("JAX099", 2)]),  # exact codes, not prefixes
        ("# type: ignore  # noqa: JAX098", [("JAX099", 2)]),
        ("# not a noqa directive", [("JAX098", 2), ("JAX099", 2)]),
    ],
)
def test_line_noqa(cli, make_files, test_rules, comment, kept):
    make_files({"a.py": f"import jax\nprint(bad)  {comment}\n"})
    assert rows(cli) == kept


def test_noqa_inside_a_string_does_not_count(cli, make_files, test_rules):
    make_files({"a.py": 'import jax\nprint("# noqa")\nx = """\n# noqa\n"""; print(x)\n'})
    assert rows(cli) == [("JAX098", 2), ("JAX098", 5)]


def test_noqa_applies_to_its_own_line_only(cli, make_files, test_rules):
    make_files({"a.py": "import jax\n# noqa\nprint(1)\nprint(2)  # noqa\n"})
    assert rows(cli) == [("JAX098", 3)]


@pytest.mark.parametrize(
    "directive, kept",
    [
        ("# jaxlint: noqa", []),
        ("# jaxlint: noqa: JAX099", [("JAX098", 3)]),
        ("#jaxlint:noqa:JAX098,JAX099", []),
        ("# flake8: noqa", []),
        ("# flake8: noqa: JAX098", [("JAX098", 3), ("JAX099", 3)]),  # flake8 ignores that form
    ],
)
def test_file_level_noqa(cli, make_files, test_rules, directive, kept):
    make_files({"a.py": f"{directive}\nimport jax\nprint(bad)\n"})
    assert rows(cli) == kept


def test_noqa_never_hides_a_parse_error(cli, make_files):
    make_files({"a.py": "# jaxlint: noqa\nx = (  # noqa\n"})
    assert [code for code, _ in rows(cli)] == ["JAX001"]


def test_per_file_ignores(cli, make_files, test_rules):
    make_files(
        {
            "pyproject.toml": """\
                [tool.jaxlint.per-file-ignores]
                "scripts/*.py" = ["JAX098"]
                "**/test_*.py" = ["JAX09"]
                "!src/**" = ["JAX099"]
                """,
            "scripts/run.py": "import jax\nprint(bad)\n",
            "pkg/tests/test_a.py": "import jax\nprint(bad)\n",
            "src/core.py": "import jax\nprint(bad)\n",
        }
    )
    found = cli("check", "--output-format", "json").json
    assert [(f["filename"].split("/")[-1], f["code"]) for f in found] == [
        ("core.py", "JAX098"),
        ("core.py", "JAX099"),
    ]


def test_per_file_ignores_basename_pattern(cli, make_files, test_rules):
    make_files(
        {
            "jaxlint.toml": '[per-file-ignores]\n"__init__.py" = ["JAX098"]\n',
            "pkg/__init__.py": "import jax\nprint(1)\n",
        }
    )
    assert rows(cli) == []


def test_extend_per_file_ignores(cli, make_files, test_rules):
    make_files(
        {
            "jaxlint.toml": '[per-file-ignores]\n"a.py" = ["JAX098"]\n[extend-per-file-ignores]\n"a.py" = ["JAX099"]\n',
            "a.py": "import jax\nprint(bad)\n",
        }
    )
    assert rows(cli) == []


def test_file_level_directive_must_be_the_whole_comment(cli, make_files, test_rules):
    make_files({"a.py": "# see the jaxlint: noqa docs\nimport jax\nprint(1)\n"})
    assert rows(cli) == [("JAX098", 3)]


# ---------------------------------------------------------------- JAX002: unused and unknown noqa codes

TRACED_IF = """\
import jax


@jax.jit
def f(x):
    if x > 0:{comment}
        return x
    return -x
"""


def unused(cli, *args):
    return [
        (f["location"]["row"], f["message"])
        for f in cli("check", "--output-format", "json", *args).json
        if f["code"] == "JAX002"
    ]


@pytest.mark.parametrize(
    "comment, expected",
    [
        ("  # noqa: JAX101", []),
        ("  # noqa: jax101", []),
        ("  # noqa", []),  # a blanket directive may serve other tools
        ("  # noqa: JAX101, E501", []),  # other tools' codes are theirs to judge
        ("  # noqa: JAX101, JAX102", [(6, "Unused `noqa` directive (unused: `JAX102`)")]),
        ("  # noqa: JAX101, JAX901", [(6, "Unused `noqa` directive (unknown: `JAX901`)")]),
    ],
)
def test_unused_and_unknown_noqa_codes(cli, make_files, comment, expected):
    make_files({"a.py": TRACED_IF.format(comment=comment)})
    assert unused(cli) == expected


def test_unused_noqa_needs_the_rule_to_have_run(cli, make_files):
    make_files({"a.py": "import jax\nx = 1  # noqa: JAX101\n"})
    assert unused(cli) == [(2, "Unused `noqa` directive (unused: `JAX101`)")]
    # JAX101 did not run: whether its directive is used cannot be known, so nothing is said
    assert unused(cli, "--extend-ignore", "JAX101") == []
    assert unused(cli, "--extend-ignore", "JAX002") == []


@pytest.mark.parametrize(
    "line, fixed",
    [
        ("x = 1  # noqa: JAX101", "x = 1"),
        ("x = 1  # noqa: E501, JAX101", "x = 1  # noqa: E501"),
        ("x = 1  # noqa: JAX101 because of the loop", "x = 1  # because of the loop"),
        ("x = 1  # type: ignore  # noqa: JAX101", "x = 1  # type: ignore"),
        ("x = 1  # noqa:JAX101,JAX999", "x = 1"),
    ],
)
def test_fix_removes_unused_codes(cli, make_files, tmp_path, line, fixed):
    make_files({"a.py": f"import jax\n{line}\n"})
    outcome = cli("check", "--fix", "--no-cache")
    assert outcome.code == 0, outcome.stdout
    assert (tmp_path / "a.py").read_text() == f"import jax\n{fixed}\n"


def test_fix_keeps_the_used_codes(cli, make_files, tmp_path):
    make_files({"a.py": TRACED_IF.format(comment="  # noqa: JAX102, JAX101")})
    assert cli("check", "--fix", "--no-cache").code == 0
    assert "    if x > 0:  # noqa: JAX101\n" in (tmp_path / "a.py").read_text()
