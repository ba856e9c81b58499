"""Code as a message quotes it: the expression's source, cut short."""

from __future__ import annotations

import ast


def short_source(node: ast.AST, limit: int = 40) -> str:
    """`node`'s source, its first `limit - 3` characters and "..." where it is longer than `limit`."""
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."
