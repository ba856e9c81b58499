"""Every supported Python: annotations are never evaluated at import time (Python 3.9 cannot read `X | None`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted((ROOT / "jaxlint").rglob("*.py")) + sorted((ROOT / "tests").glob("*.py"))


def _future_annotations(tree: ast.Module) -> bool:
    if all(isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) for node in tree.body):
        return True  # a docstring alone (a package's `__init__.py`): no annotation to defer
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(alias.name == "annotations" for alias in node.names)
        for node in tree.body
    )


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_defers_annotations(path):
    # Python 3.9 evaluates `list[int] | None` in a signature at import time and fails: every
    # module defers its annotations so that the syntax of newer versions stays harmless.
    assert _future_annotations(ast.parse(path.read_text(encoding="utf-8")))
