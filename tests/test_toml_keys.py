"""The line each key of a TOML document is written on (what configuration errors name)."""

from __future__ import annotations

import sys
import textwrap

import pytest

from jaxlint.toml_keys import key_lines

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

DOCUMENT = textwrap.dedent('''\
    [project]
    description = """
    [tool.jaxlint.fake]
    fake = 1
    """
    dependencies = [
      "a = b",  # [tool.jaxlint.other]
      'c',
    ]
    [tool.jaxlint]
    select = ["JAX1"]  # a comment
    options = { unroll-threshold = 3, "test-files" = 'x', nested = { deep = 1 } }
    dynamic.memory-limit = "8GiB"

    [ tool . jaxlint . "per-file-ignores" ]
    "tests/**" = ["JAX2"]
    s = """a""""
    when = 1979-05-27 07:32:00  # a date
    [[tool.other]]
    hidden = 1
    [tool.jaxlint.extension]
    ipy = "ipynb"
    ''')


@pytest.mark.parametrize(
    ("path", "line"),
    [
        (("project", "description"), 2),
        (("project", "dependencies"), 6),
        (("tool", "jaxlint"), 10),
        (("tool", "jaxlint", "select"), 11),
        (("tool", "jaxlint", "options"), 12),
        (("tool", "jaxlint", "options", "test-files"), 12),
        (("tool", "jaxlint", "options", "nested", "deep"), 12),
        (("tool", "jaxlint", "dynamic"), 13),
        (("tool", "jaxlint", "dynamic", "memory-limit"), 13),
        (("tool", "jaxlint", "per-file-ignores"), 15),
        (("tool", "jaxlint", "per-file-ignores", "tests/**"), 16),
        (("tool", "jaxlint", "per-file-ignores", "when"), 18),
        (("tool", "jaxlint", "extension", "ipy"), 22),
    ],
)
def test_each_key_has_the_line_it_is_written_on(path, line):
    tomllib.loads(DOCUMENT)  # the scanner reads only what TOML accepts
    assert key_lines(DOCUMENT)[path] == line


@pytest.mark.parametrize(
    "path", [("tool", "jaxlint", "fake"), ("tool", "jaxlint", "other"), ("tool", "other", "hidden"), ("fake",)]
)
def test_what_strings_hold_and_arrays_of_tables_are_no_keys(path):
    assert path not in key_lines(DOCUMENT)


def test_an_empty_document_has_no_keys():
    assert key_lines("") == {} and key_lines("# only a comment\n") == {}
