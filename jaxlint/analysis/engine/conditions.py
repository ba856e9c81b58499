"""Where a branch runs, as far as the tests on its way decide it from the environment.

Code written for several releases of a library tests the release (`if version < (0, 4, 25):`)
or whether a name exists (`hasattr(m, "tree")`), directly or through a name bound once to
such a test (`OLD = version < (0, 4, 25)`, then `if OLD:` or `f if OLD else g`). A `Reach` is
what those tests say about a piece of code: the releases it may run on, a union of half-open
spans of version tuples, and whether a test that no span expresses (a name's presence, another
library's version) decides it as well. A version compared as text is compared as Python
compares text, release by release (`"0.10.0" < "0.4.26"`). `branches(test)` gives the reach of
each outcome of a test; `not`, `and`, `or`, chained comparisons and names bound once are followed.

The engine knows no library: what the tested version is, which expressions are constant
versions and which ones read the environment at all are handed in (`Leaves`).
"""

from __future__ import annotations

import ast
import operator
import weakref
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Optional, Protocol, Tuple

from jaxlint.analysis.engine.walk import children

if TYPE_CHECKING:
    from jaxlint.analysis.engine.names import Names, Scope

Version = Tuple[int, ...]
Span = Tuple[Optional[Version], Optional[Version]]  # [low, high); None: unbounded
_PARTS = 3  # versions are compared as three numbers: `0.4` is `0.4.0`

# How a tested version compares: as a tuple (`(0, 4, 1) > (0, 4)`, as Python compares
# `__version_info__`), as a release (`0.4 == 0.4.0`, as `packaging.version` compares), or as
# text (`"0.10.0" < "0.4.26"`, as Python compares `__version__` with a string).
TUPLE, RELEASE, TEXT = "tuple", "release", "text"
# The releases a comparison of text is decided for, one by one: every one up to 2.39.49.
_TEXT_RELEASES = tuple((major, minor, patch) for major in range(3) for minor in range(40) for patch in range(50))


def _padded(version: Version) -> Version:
    return tuple(version[:_PARTS]) + (0,) * (_PARTS - len(version))


def _next(version: Version) -> Version:
    return version[:-1] + (version[-1] + 1,)


@dataclass(frozen=True)
class Reach:
    """The releases a piece of code may run on (`spans`, sorted and disjoint), and whether a test
    of the environment that no span expresses decides it too (`opaque`)."""

    spans: Tuple[Span, ...] = ((None, None),)
    opaque: bool = False

    def both(self, other: "Reach") -> "Reach":
        """Where this and `other` hold together (a branch inside a branch)."""
        spans = []
        for low, high in self.spans:
            for other_low, other_high in other.spans:
                start = _later(low, other_low)
                end = _earlier(high, other_high)
                if start is None or end is None or start < end:
                    spans.append((start, end))
        return Reach(_merged(spans), self.opaque or other.opaque)

    def either(self, other: "Reach") -> "Reach":
        """Where this or `other` holds (paths that meet)."""
        return Reach(_merged([*self.spans, *other.spans]), self.opaque or other.opaque)

    def before(self, version: Version) -> bool:
        """Whether every release this runs on precedes `version`."""
        last = self.spans[-1][1] if self.spans else ()
        return last is not None and last <= _padded(version)

    def first_from(self, version: Version) -> Optional[Version]:
        """The first release this runs on at or after `version`, if any."""
        version = _padded(version)
        for low, high in self.spans:
            if high is None or high > version:
                return version if low is None or low <= version else low
        return None


EVERYWHERE = Reach()
OPAQUE = Reach(opaque=True)


def _later(a: Optional[Version], b: Optional[Version]) -> Optional[Version]:
    return b if a is None else a if b is None else max(a, b)


def _earlier(a: Optional[Version], b: Optional[Version]) -> Optional[Version]:
    return b if a is None else a if b is None else min(a, b)


def _merged(spans: list) -> Tuple[Span, ...]:
    ordered = sorted(spans, key=lambda span: (span[0] is not None, span[0] or ()))
    out: list = []
    for low, high in ordered:
        if out and (out[-1][1] is None or (low is not None and low <= out[-1][1])):
            last_low, last_high = out[-1]
            out[-1] = (last_low, None if high is None or last_high is None else max(last_high, high))
        else:
            out.append((low, high))
    return tuple(out)


def _complement(spans: Tuple[Span, ...]) -> Tuple[Span, ...]:
    out, cursor = [], None
    for low, high in spans:  # sorted, disjoint and apart: each gap between them is a span
        if low is not None:
            out.append((cursor, low))
        if high is None:
            return tuple(out)
        cursor = high
    out.append((cursor, None))
    return tuple(out)


class Leaves(Protocol):
    """What the tests are about, for one library (handed in: the engine knows none)."""

    def version(self, expr: ast.expr, names: "Names", scope: "Scope") -> Optional[str]:
        """TUPLE, RELEASE or TEXT where `expr` is the library's version, compared that way."""

    def constant(self, expr: ast.expr, names: "Names", scope: "Scope") -> Optional[Version]:
        """The version a literal written to be compared with it stands for (`(0, 4)`, `parse("0.4")`)."""

    def text(self, expr: ast.expr, names: "Names", scope: "Scope") -> Optional[str]:
        """The text of a string literal written to be compared with the version as text (`"0.4.26"`)."""

    def environment(self, expr: ast.expr, names: "Names", scope: "Scope") -> bool:
        """Whether `expr` reads the environment at all (a version, whether a name exists)."""

    def imported_value(self, expr: ast.expr, names: "Names", scope: "Scope") -> Optional[tuple]:
        """For a name of another module of the project (`OLD` imported from it, `compat.OLD`):
        (that module's names, the value, its scope) where the module binds it once."""


def branches(test: ast.expr, names: "Names", scope: "Scope", leaves: Leaves) -> tuple[Reach, Reach]:
    """The reach of the code run when `test` is true, and of the code run when it is false."""
    return _Tests(leaves).branches(test, names, scope, 0)


_MAX_DEPTH = 8  # names bound to names bound to tests: deeper than any real flag


class _Tests:
    def __init__(self, leaves: Leaves):
        self.leaves = leaves

    def branches(self, test: ast.expr, names: "Names", scope: "Scope", depth: int) -> tuple[Reach, Reach]:
        if depth > _MAX_DEPTH:
            return OPAQUE, OPAQUE
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            true, false = self.branches(test.operand, names, scope, depth + 1)
            return false, true
        if isinstance(test, ast.BoolOp):
            return self._bool(test, names, scope, depth)
        if isinstance(test, ast.Compare):
            return self._compare(test, names, scope)
        if isinstance(test, (ast.Name, ast.Attribute)):
            bound = read_value(names, test, scope) if isinstance(test, ast.Name) else None
            bound = bound or self.leaves.imported_value(test, names, scope)
            if bound is not None:
                other_names, value, value_scope = bound
                return self.branches(value, other_names, value_scope, depth + 1)
        if self.leaves.environment(test, names, scope):
            return OPAQUE, OPAQUE
        return EVERYWHERE, EVERYWHERE

    def _bool(self, test: ast.BoolOp, names, scope, depth) -> tuple[Reach, Reach]:
        outcomes = [self.branches(value, names, scope, depth + 1) for value in test.values]
        conjunction = isinstance(test.op, ast.And)
        # `a and b` is true where both are, false where a is false or a is true and b false.
        met, decided = outcomes[0] if conjunction else outcomes[0][::-1]
        for true, false in outcomes[1:]:
            step, other = (true, false) if conjunction else (false, true)
            decided = decided.either(met.both(other))
            met = met.both(step)
        return (met, decided) if conjunction else (decided, met)

    def _compare(self, test: ast.Compare, names, scope) -> tuple[Reach, Reach]:
        true, other = EVERYWHERE, False  # other: a comparison of something else takes part
        left = test.left
        for op, right in zip(test.ops, test.comparators):
            pair = self._pair(left, op, right, names, scope)
            if pair is None:
                other = True
            elif pair.opaque:
                return OPAQUE, OPAQUE
            else:
                true = true.both(pair)
            left = right
        if true == EVERYWHERE:
            return EVERYWHERE, EVERYWHERE
        # False where the versions fall outside the spans, or anywhere when another comparison fails.
        return true, EVERYWHERE if other else Reach(_complement(true.spans))

    def _pair(self, left: ast.expr, op: ast.cmpop, right: ast.expr, names, scope) -> Optional[Reach]:
        """Where `left op right` holds, if it compares the version; OPAQUE if it reads the environment
        another way; None if it compares something else."""
        leaves = self.leaves
        for version, other, flipped in ((left, right, False), (right, left, True)):
            kind = leaves.version(version, names, scope)
            if kind == TEXT:
                constant = leaves.text(other, names, scope)
            else:
                constant = leaves.constant(other, names, scope) if kind is not None else None
            if constant is not None:
                break
        if constant is None or (kind != TEXT and len(constant) > _PARTS):
            environment = leaves.environment(left, names, scope) or leaves.environment(right, names, scope)
            return OPAQUE if environment else None
        op = _flip(op) if flipped else op
        spans = _compared_as_text(type(op), constant) if kind == TEXT else _compared(kind, op, constant)
        return OPAQUE if spans is None else Reach(spans)


_FLIPPED = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}


def _flip(op: ast.cmpop) -> ast.cmpop:
    flipped = _FLIPPED.get(type(op))
    return flipped() if flipped is not None else op


def _compared(kind: str, op: ast.cmpop, constant: Version) -> Optional[Tuple[Span, ...]]:
    """The spans of versions `v` (three numbers) for which `v op constant` holds."""
    low = _padded(constant)
    # A tuple shorter than the version is never equal to it and sorts below every version it
    # begins (`(0, 4) < (0, 4, 0)`); a release is equal to its zero-padded form (`0.4 == 0.4.0`).
    equal = kind == RELEASE or len(constant) == _PARTS
    high = _next(low) if equal else low
    if isinstance(op, ast.Lt):
        return ((None, low),)
    if isinstance(op, ast.LtE):
        return ((None, high),)
    if isinstance(op, ast.Gt):
        return ((high, None),)
    if isinstance(op, ast.GtE):
        return ((low, None),)
    if isinstance(op, ast.Eq):
        return ((low, high),) if equal else ()
    if isinstance(op, ast.NotEq):
        return ((None, low), (high, None)) if equal else ((None, None),)
    return None  # `in`, `is`: not a comparison of versions


_TEXT_COMPARISONS = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}


@lru_cache(maxsize=256)
def _compared_as_text(op: type, text: str) -> Optional[Tuple[Span, ...]]:
    """The spans of releases whose version text compares so with `text`: Python compares text
    character by character, so `"0.10.0" < "0.4.26"`, and the spans are found release by release."""
    compare = _TEXT_COMPARISONS.get(op)
    if compare is None:
        return None
    spans, start = [], None
    for release in _TEXT_RELEASES:
        holds = compare(".".join(map(str, release)), text)
        if holds and start is None:
            start = release
        elif not holds and start is not None:
            spans.append((None if start == _TEXT_RELEASES[0] else start, release))
            start = None
    if start is not None:
        spans.append((None if start == _TEXT_RELEASES[0] else start, None))
    return tuple(spans)


# ---- names bound once ---------------------------------------------------------------------------
_BINDINGS: "weakref.WeakKeyDictionary[Names, dict]" = weakref.WeakKeyDictionary()


def single_value(names: "Names", name: str, scope: "Scope") -> Optional[tuple]:
    """(names, value, scope of the value) for a name read in `scope` that the scope binding it
    binds exactly once, by `name = value` (or an annotated assignment); None for any other name."""
    owner = names.lookup(name, scope)
    if owner is None or name in owner.imports or name in owner.defs or name in owner.params:
        return None
    if any(name in other.globals or name in other.nonlocals for other in names.scopes.values() if other is not owner):
        return None  # another scope may rebind it
    per_scope = _BINDINGS.setdefault(names, {})
    bindings = per_scope.get(id(owner.node))
    if bindings is None:
        bindings = per_scope[id(owner.node)] = _bindings(owner.node)
    found = bindings.get(name)
    return (names, found, owner) if found is not None else None


def read_value(names: "Names", expr: ast.Name, scope: "Scope") -> Optional[tuple]:
    """`single_value` of a name where it is read."""
    return single_value(names, expr.id, names.read_scope.get(id(expr), scope))


_SEVERAL = object()  # bound more than once, or not by a plain assignment
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _bindings(scope_node: ast.AST) -> dict:
    """name -> the value of its one plain assignment in the scope's own body (none: bound otherwise or again)."""
    found: dict = {}
    targets: set = set()  # the Name targets of the assignments already counted

    def bind(name: str, value) -> None:
        found[name] = value if name not in found else _SEVERAL

    body = scope_node.body
    stack = list(reversed(body)) if isinstance(body, list) else [body]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bind(node.targets[0].id, node.value)
            targets.add(id(node.targets[0]))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            bind(node.target.id, node.value)
            targets.add(id(node.target))
        elif isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load) and id(node) not in targets:
                bind(node.id, _SEVERAL)
            continue
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bind((alias.asname or alias.name).split(".")[0], _SEVERAL)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bind(node.name, _SEVERAL)
        if isinstance(node, _SCOPES):
            if not isinstance(node, ast.Lambda):
                bind(node.name, _SEVERAL)
            continue  # its body binds in its own scope (decorators and defaults bind nothing)
        stack.extend(children(node))
    return {name: value for name, value in found.items() if value is not _SEVERAL}
