"""Test code, by the `test-functions` and `test-files` options: test code feeds one key to
several computations on purpose, to compare them, and transforms the functions it tests in ways
it shows they survive."""

from __future__ import annotations

import ast
import os
import re
from typing import Any, Mapping

from jaxlint.analysis.engine.names import Names

# Test code feeds one key to several computations on purpose (pytest's and unittest's naming).
DEFAULT_TEST_FUNCTIONS = r"^test|^Test|Tests?$|TestCase$"
# pytest's own `python_files` default, and its fixture modules.
DEFAULT_TEST_FILES = r"^test_.*\.py$|_test\.py$|^conftest\.py$"


def test_pattern(
    options: Mapping[str, Any], option: str = "test-functions", default: str = DEFAULT_TEST_FUNCTIONS,
) -> re.Pattern | None:
    """The `test-functions` (or `test-files`) option: a regular expression, or an empty string for none."""
    value = options.get(option, options.get(option.replace("-", "_"), default))
    if not isinstance(value, str) or not value:
        return None
    try:
        return re.compile(value)
    except re.error:
        return re.compile(default)


def test_file(path: str, options: Mapping[str, Any]) -> bool:
    """Whether the `test-files` option names the module's file (by its name) as test code."""
    pattern = test_pattern(options, "test-files", DEFAULT_TEST_FILES)
    return pattern is not None and bool(pattern.search(os.path.basename(path)))


def test_functions(names: Names, pattern: re.Pattern | None) -> set[int]:
    """Functions named as tests, methods of classes named (or derived from classes named) as
    tests, and everything nested in them. A method named as a test of a class that is not one
    is not a test: pytest and unittest collect methods only from test classes (a data source's
    `test_data(self, key)` is the code under test, not a test)."""
    if pattern is None:
        return set()
    test_classes = {
        id(cls) for cls in names.classes
        if pattern.search(cls.name) or any(pattern.search(base_label(base)) for base in cls.bases)
    }
    tests = set()
    for fn in names.functions:
        cls = names.parent_class.get(id(fn))
        if (cls is None and pattern.search(getattr(fn, "name", ""))) or (cls is not None and id(cls) in test_classes):
            tests.add(id(fn))
    changed = True
    while changed:
        changed = False
        for fn in names.functions:
            parent = names.parent_function.get(id(fn))
            if id(fn) not in tests and parent is not None and id(parent) in tests:
                tests.add(id(fn))
                changed = True
    return tests


def base_label(node: ast.AST) -> str:
    """The last name of a dotted name (`TestCase` of `unittest.TestCase`)."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""
