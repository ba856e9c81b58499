"""JAX's explanations of its jit cache misses (`jax_explain_cache_misses`), read: what differed
between the call that made JAX trace a function again and the closest call before it.

- REBUILT: a function never seen, and another was defined on the same line before (a jit built anew);
- STATIC: a static argument's value (`Static(val=...)`);
- STATIC_LEAF: the static part of a pytree argument: a filtering jit's non-array leaves (a `Static`
  holding a treedef, as `equinox.filter_jit` passes them) or a custom node's static field;
- KEYWORD: an argument passed by keyword where it had been passed by position, or the other way
  round (the positional tuple and the keyword dict differ, naming the keywords);
- WEAK_TYPE: only the weak type of an argument (a Python scalar, then an array of its dtype);
- SHAPES: the shapes or dtypes of the arguments.
"""

from __future__ import annotations

import re

REBUILT, STATIC, STATIC_LEAF, KEYWORD, WEAK_TYPE, SHAPES = (
    "rebuilt", "static", "static leaf", "keyword", "weak type", "shapes")
KEY_SETS = re.compile(r"symmetric difference of key sets: \{(?P<keys>[^}]*)\}")
WEAK_ONLY = re.compile(r"now (?P<new>\S+?)\{weak_type=\w+\} and before (?P<old>\S+?)\{weak_type=\w+\}")
TYPE_DIFF = re.compile(r"^\s*\* at .+, now .+ and before .+$", re.M)


def kind(reason: str) -> str | None:
    """Which kind of difference JAX names (one of the kinds above), or None."""
    if "never seen function" in reason:
        return REBUILT if "same line" in reason else None
    if "Static(" in reason:
        return STATIC_LEAF if "PyTreeDef(" in reason else STATIC
    if "pytree node metadata does not match" in reason:
        return STATIC_LEAF
    if KEY_SETS.search(reason):
        return KEYWORD
    if "different input types" in reason:
        diffs = TYPE_DIFF.findall(reason)
        weak = [m for m in map(WEAK_ONLY.search, diffs) if m and m.group("new") == m.group("old")]
        return WEAK_TYPE if diffs and len(weak) == len(diffs) else SHAPES
    return None


def keywords(reason: str) -> set[str]:
    """The parameter names passed by keyword in one call and not in the other."""
    m = KEY_SETS.search(reason)
    return set(re.findall(r"'([^']+)'", m.group("keys"))) if m else set()


def summary(reason: str, limit: int = 160) -> str:
    """The explanation on one line, its end kept (where JAX names what differed)."""
    text = " ".join(line.strip() for line in reason.splitlines() if line.strip())
    return text if len(text) <= limit else "..." + text[-limit:].split(" ", 1)[-1]
