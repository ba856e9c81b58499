"""Module constants: private names a module binds once, to a literal, and never rebinds.

`_USE_EAGER = False` at module level, with no other binding of `_USE_EAGER` anywhere in the
module (no second assignment, augmented assignment, loop target, import, `del`, or `global`
declaration that would let a function rebind it), holds that literal whenever a function
reads it, so a branch it decides never runs the other way.  Only private names count: a
leading underscore says other modules are not meant to set it, while a public flag is a
setting they (or a test) may patch.
"""

from __future__ import annotations

import ast
from collections import Counter

from jaxlint.analysis.engine.lattice import Value, constant
from jaxlint.analysis.engine.names import Names, Scope
from jaxlint.analysis.engine.walk import walk


class ModuleConstants:
    def __init__(self, names: Names):
        self.names = names
        self._bindings: Counter | None = None  # counted on the first read that could be a constant

    def value(self, node: ast.Name, scope: Scope) -> Value | None:
        """The literal a read of a module constant yields; None for any other name."""
        name = node.id
        if not name.startswith("_") or name.startswith("__"):
            return None
        module = self.names.module
        assigned = module.assigned.get(name)
        if not assigned or len(assigned) != 1 or not isinstance(assigned[0], ast.Constant):
            return None
        if self.names.lookup(name, scope) is not module:
            return None
        if self._bindings is None:
            self._bindings = _binding_counts(module.node)
        if self._bindings[name] != 1:
            return None
        return constant(assigned[0].value)


def _binding_counts(tree: ast.AST) -> Counter:
    """How many times each name is bound, deleted or declared global anywhere in the module."""
    counts: Counter = Counter()
    for node in walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            counts[node.id] += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[node.name] += 1
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                counts[(alias.asname or alias.name).split(".")[0]] += 1
        elif isinstance(node, ast.ExceptHandler) and node.name:
            counts[node.name] += 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                counts[name] += 2  # a function may rebind it
        elif type(node).__name__ in ("MatchAs", "MatchStar") and getattr(node, "name", None):
            counts[node.name] += 1
    return counts
