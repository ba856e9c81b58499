"""Properties that hold for any input: generated programs, odd text, hostile caches, notebooks and globs.

A few examples each, to keep the suite quick; `scripts/fuzz.py` runs the same checks for as long as asked.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
import warnings

import hypothesmith
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from jaxlint import cache
from jaxlint.files import check_glob, parse_gitignore
from jaxlint.notebook import Notebook
from jaxlint.output import FORMATS, Report, render
from jaxlint.rules import all_rules
from jaxlint.runner import LintSettings, lint_document
from jaxlint.source import Source, SourceError, split_lines

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "scripts"))
import fuzz  # noqa: E402  (the long run's checks, shared)

QUICK = settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def ast_lines(text: str) -> list[str]:
    """The lines `ast` numbers, by its own splitter (which, from Python 3.13, also yields an empty last one)."""
    lines = ast._splitlines_no_ff(text)
    return lines[:-1] if lines and lines[-1] == "" else lines

# Text made of Python-ish pieces and the characters lines are split at, or not.
ODD_TEXT = st.lists(
    st.sampled_from(list("ab(): =#'\"\\\n\r\t ") + fuzz.ODD + ["jax", "if ", "def "]), max_size=40
).map("".join)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@pytest.fixture(autouse=True)
def quiet_syntax_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@QUICK
@given(st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node()))
def test_generated_programs_are_linted_fixed_and_rendered(program):
    fuzz.check("import jax\n" + program)


@QUICK
@given(st.data())
def test_mutated_rule_examples_are_linted_fixed_and_rendered(data):
    seed = data.draw(st.integers(0, 2**32))
    import random

    fuzz.check(fuzz.mutant(random.Random(seed)))


@QUICK
@given(ODD_TEXT)
def test_lines_are_split_as_ast_splits_them(text):
    assert split_lines(text, keepends=True) == ast_lines(text)


@QUICK
@given(st.one_of(hypothesmith.from_grammar(), ODD_TEXT.map(lambda t: f"x = {t!r}\ny = ({t!r},\n {t!r})\n")))
def test_segments_are_ast_s(program):
    try:
        source = Source.parse(program)
    except SourceError:
        return
    for node in ast.walk(source.tree):
        if getattr(node, "end_col_offset", None) is not None:
            assert source.segment(node) == (ast.get_source_segment(program, node) or "")


@QUICK
@given(ODD_TEXT)
def test_odd_text_never_breaks_the_linter(text):
    fuzz.check(text)
    fuzz.check("import jax\n@jax.jit\ndef f(x):\n    " + text.replace("\n", "\n    "))


@QUICK
@given(JSON)
def test_any_cache_content_is_read_or_discarded(tmp_path_factory, content):
    directory = tmp_path_factory.mktemp("cache")
    (directory / "key.json").parent.mkdir(parents=True, exist_ok=True)
    store = cache.Cache(directory, "key")
    store._entries = {"/a.py": content} if not isinstance(content, dict) else content
    info = os.stat(directory)
    for path in list(store._entries):
        findings, known = store.lookup(path, info)
        assert findings is None or all(isinstance(f.start.row, int) for f in findings)
        assert known is None or isinstance(known, str)


@QUICK
@given(JSON)
def test_any_notebook_json_is_linted_or_jax001(content):
    data = json.dumps({"cells": content, "metadata": content} if not isinstance(content, dict) else content)
    try:
        notebook = Notebook.parse(data.encode())
    except SourceError:
        return
    findings = lint_document(notebook, "/n.ipynb", LintSettings(codes=frozenset(all_rules()))).findings
    render("json", findings, Report(all_rules()))


@QUICK
@given(st.text(alphabet=st.sampled_from(list("[]!^-az*?{},/\\.")), max_size=12))
def test_globs_are_valid_or_a_value_error(pattern):
    try:
        check_glob(pattern)
    except ValueError as exc:
        assert "invalid glob" in str(exc)
    parse_gitignore(pattern, "/")  # a .gitignore line never raises


@QUICK
@given(st.text(max_size=12), st.lists(st.sampled_from(sorted(FORMATS)), min_size=1, max_size=1))
@example("\x7f", ["rdjson"])  # DEL, which JSON may hold raw, in every JSON format
@example("\x7f", ["sarif"])
@example("\x7f", ["gitlab"])
@example("\x7f", ["json"])
def test_any_file_name_gives_valid_output(name, output_format):
    from jaxlint.findings import Finding, Position

    path = "/" + name.replace("/", "") + ".py"
    finding = Finding("JAX001", "syntax-error", "m", path, Position(1, 1), Position(1, 1))
    out = render(output_format[0], [finding], Report(all_rules()))
    out.encode("utf-8")
    unstyled = re.sub("\x1b\\[[0-9;]*m", "", out)  # colour is added on purpose (stripped when piped)
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f]", unstyled)


@QUICK
@given(st.text(alphabet=st.sampled_from(list("a é€😀\x0c\t")), max_size=30))
def test_character_columns_count_characters(line):
    source = Source("x = 1\n" + line + "\n", ast.Module(body=[], type_ignores=[]))
    encoded = line.encode("utf-8")
    offset = 0
    for char in line + " ":
        assert source.char_column(2, offset) == len(encoded[:offset].decode("utf-8")) + 1
        offset += len(char.encode("utf-8"))
