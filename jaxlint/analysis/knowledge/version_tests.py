"""What a test of the JAX version, or of what the installed libraries have, looks like.

Code written for several JAX releases asks which one it runs on (`jax.__version_info__ <
(0, 4, 25)`, `version.parse(jax.__version__) >= version.parse("0.4.16")`, a tuple built from
`jax.__version__`) or whether a name exists (`hasattr(jax, "tree")`, `getattr(jax.tree,
"map", None)`, `importlib.util.find_spec("jax.extend")`). `JaxVersionTests` reads these for
`engine.conditions`: which expression is JAX's version and how it compares (as a tuple, as a
parsed release, as text), which literal is a version, and which expressions read the
environment at all (another library's version, a name's presence), so that a test of them is
known to be one.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Optional

from jaxlint.analysis.engine.conditions import RELEASE, TEXT, TUPLE, Version, read_value

if TYPE_CHECKING:
    from jaxlint.analysis.engine.names import Names, Scope

# JAX's version as numbers (`(0, 4, 30)`), compared as Python compares tuples.
VERSION_TUPLES = frozenset({"jax.__version_info__", "jax.version.__version_info__"})
# JAX's version as text (`"0.4.30"`): compared as text unless it is parsed.
VERSION_TEXTS = frozenset({"jax.__version__", "jax.version.__version__", "jax.version._version"})
# Functions that return an installed distribution's version text from its name: `version("jax")`.
DISTRIBUTION_VERSIONS = frozenset({"importlib.metadata.version", "importlib_metadata.version"})
# Parsers of version text, and how the versions they return compare.
VERSION_PARSERS = {
    "packaging.version.parse": RELEASE,
    "packaging.version.Version": RELEASE,
    "pkg_resources.parse_version": RELEASE,
    "distutils.version.StrictVersion": RELEASE,
    "distutils.version.LooseVersion": TUPLE,
    "looseversion.LooseVersion": TUPLE,
    "jax.version._version_as_tuple": TUPLE,
}
# Calls whose result says whether a name or a module exists.
PRESENCE_TESTS = frozenset({
    "builtins.hasattr", "builtins.getattr", "builtins.dir", "importlib.util.find_spec", "pkgutil.find_loader",
})
# Attributes that hold a package's version, whichever package it is.
VERSION_ATTRIBUTES = frozenset({"__version__", "__version_info__", "version_info"})
_JAX_DISTRIBUTIONS = frozenset({"jax"})
_MAX_DEPTH = 6

# (the name read, its names, its scope) -> (names, value, scope) where a project module binds it once.
ImportedValue = Callable[[ast.expr, "Names", "Scope"], Optional[tuple]]


class JaxVersionTests:
    """The leaves of `engine.conditions` for JAX (`conditions.Leaves`)."""

    def __init__(self, imported: Optional[ImportedValue] = None):
        self._imported = imported

    def imported_value(self, expr: ast.expr, names: "Names", scope: "Scope") -> Optional[tuple]:
        return self._imported(expr, names, scope) if self._imported is not None else None

    def _bound(self, expr: ast.expr, names: "Names", scope: "Scope") -> Optional[tuple]:
        """What a name bound once stands for, in this module or another of the project."""
        found = read_value(names, expr, scope) if isinstance(expr, ast.Name) else None
        return found or self.imported_value(expr, names, scope)

    # ---- JAX's version -------------------------------------------------------------------------
    def version(self, expr: ast.expr, names: "Names", scope: "Scope", depth: int = 0) -> Optional[str]:
        if depth > _MAX_DEPTH:
            return None
        if self._text(expr, names, scope, depth):
            return TEXT
        if isinstance(expr, (ast.Name, ast.Attribute)):
            if names.qualname(expr, scope) in VERSION_TUPLES:
                return TUPLE
            bound = self._bound(expr, names, scope)
            return self.version(bound[1], bound[0], bound[2], depth + 1) if bound is not None else None
        if isinstance(expr, ast.IfExp):  # `v.__version_info__ if hasattr(...) else tuple(...)`
            kind = self.version(expr.body, names, scope, depth + 1)
            return kind if kind == self.version(expr.orelse, names, scope, depth + 1) else None
        if isinstance(expr, ast.Call) and len(expr.args) == 1:
            callee = names.qualname(expr.func, scope)
            if callee in VERSION_PARSERS and self._text(expr.args[0], names, scope, depth + 1):
                return VERSION_PARSERS[callee]
            # `tuple(map(int, jax.__version__.split(".")))`, `tuple(int(p) for p in ...)`
            if callee == "builtins.tuple" and any(
                self._text(node, names, scope, depth + 1) for node in ast.walk(expr.args[0])
            ):
                return TUPLE
        return None

    def _text(self, expr: ast.expr, names: "Names", scope: "Scope", depth: int) -> bool:
        """Whether `expr` is JAX's version as text."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.Call):
            return (
                names.qualname(expr.func, scope) in DISTRIBUTION_VERSIONS
                and len(expr.args) == 1
                and isinstance(expr.args[0], ast.Constant)
                and expr.args[0].value in _JAX_DISTRIBUTIONS
            )
        if not isinstance(expr, (ast.Name, ast.Attribute)):
            return False
        if names.qualname(expr, scope) in VERSION_TEXTS:
            return True
        bound = self._bound(expr, names, scope)
        return bound is not None and self._text(bound[1], bound[0], bound[2], depth + 1)

    # ---- versions written to compare with it ----------------------------------------------------
    def constant(self, expr: ast.expr, names: "Names", scope: "Scope", depth: int = 0) -> Optional[Version]:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Tuple):
            parts = [e.value for e in expr.elts if isinstance(e, ast.Constant) and type(e.value) is int]
            return tuple(parts) if parts and len(parts) == len(expr.elts) else None
        if isinstance(expr, ast.Call):
            if names.qualname(expr.func, scope) not in VERSION_PARSERS or len(expr.args) != 1:
                return None
            text = expr.args[0]
            return _parsed(text.value) if isinstance(text, ast.Constant) and isinstance(text.value, str) else None
        bound = self._bound(expr, names, scope) if isinstance(expr, (ast.Name, ast.Attribute)) else None
        return self.constant(bound[1], bound[0], bound[2], depth + 1) if bound is not None else None

    def text(self, expr: ast.expr, names: "Names", scope: "Scope", depth: int = 0) -> Optional[str]:
        if isinstance(expr, ast.Constant):
            return expr.value if isinstance(expr.value, str) else None
        bound = self._bound(expr, names, scope) if isinstance(expr, (ast.Name, ast.Attribute)) and depth < _MAX_DEPTH else None
        return self.text(bound[1], bound[0], bound[2], depth + 1) if bound is not None else None

    # ---- the environment at all -----------------------------------------------------------------
    def environment(self, expr: ast.expr, names: "Names", scope: "Scope", depth: int = 0) -> bool:
        if depth > _MAX_DEPTH:
            return False
        for node in ast.walk(expr):
            if isinstance(node, ast.Attribute) and node.attr in VERSION_ATTRIBUTES:
                if names.qualname(node.value, scope) is not None:
                    return True  # a package's version, JAX's or another's
            elif isinstance(node, (ast.Name, ast.Attribute)):
                bound = self._bound(node, names, scope)
                if bound is not None and self.environment(bound[1], bound[0], bound[2], depth + 1):
                    return True
            elif isinstance(node, ast.Call):
                callee = names.qualname(node.func, scope)
                if callee in DISTRIBUTION_VERSIONS:
                    return True
                if callee in PRESENCE_TESTS and node.args and _imported(node.args[0], names, scope):
                    return True
        return False


def _imported(expr: ast.expr, names: "Names", scope: "Scope") -> bool:
    """Whether `expr` names something imported (a module, or a name of one) rather than a value
    of the program: `hasattr(jax.tree, "map")` asks about JAX, `hasattr(x, "shape")` about `x`."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, str)  # `find_spec("jax.extend")`
    name = names.qualname(expr, scope)
    return name is not None and not name.startswith("builtins.")


def _parsed(text: str) -> Optional[Version]:
    parts = text.strip().split(".")
    return tuple(int(p) for p in parts) if parts and all(p.isdigit() for p in parts) else None
