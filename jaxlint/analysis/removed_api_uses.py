"""Where a module names a JAX API that was removed or deprecated (`knowledge/removed_apis.py`).

Two kinds of use: an import of such a name or module (`from jax import tree_map`, `import
jax.experimental.host_callback as hcb`), which fails where the import runs; and an expression
that spells one through an imported name (`jax.tree_map`, `jnp.product`, `hcb.id_tap`).

Names resolve as `Names` resolves them (scopes, shadowing), but by the name as imported, not
its canonical alias: `jax.tree_map` and `jax.tree_util.tree_map` name the same object to the
rest of the analysis, and only one of them is gone. A use whose base name is bound by an
import that is itself reported is left to that import (the import fails first), unless the
use names a member with advice of its own (`hcb.id_tap`). Assignments to such a name
(`jax.tree_map = jax.tree_util.tree_map`, a compatibility patch) are not uses either.

Compatibility code is no use: code that runs only on the JAX releases where the name exists.
That is code under a test of the JAX version whose branch ends before the release that removes
(or deprecates) the name (`if jax.__version_info__ < (0, 6):`, its `else` under `>=`, through
names bound once to the test or the version, in this module or another of the project:
`engine.conditions`, `knowledge.version_tests`; a version compared as text is compared as
text); code whose running a test of the environment decides in a way no version span says
(`hasattr(jax, "tree")`, another library's version); the body of a `try` whose handler catches
ImportError or AttributeError (the code handles the name being absent), and such a handler
when the `try` reaches for a name of JAX (it runs only where that name is missing: the
fallback to the old one); and the code after an `if` of such a test whose branch returns or
raises.
"""

from __future__ import annotations

import ast
import bisect
import io
import tokenize
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from jaxlint.analysis.engine.conditions import EVERYWHERE, OPAQUE, Reach, branches, single_value
from jaxlint.analysis.engine.reachability import never_completes
from jaxlint.analysis.engine.walk import node_fields
from jaxlint.analysis.knowledge.removed_apis import REMOVED_APIS, ROOTS, RemovedApi, lookup
from jaxlint.analysis.knowledge.version_tests import JaxVersionTests
from jaxlint.source import split_lines

if TYPE_CHECKING:
    from jaxlint.analysis.engine.names import Names, Scope
    from jaxlint.analysis.project.project import ModuleLink

# Any spelling of `jax.a.b` through imports writes `a` and `b` somewhere in the module's code (in
# the import or in the attribute chain, `Names.words`); its last word is written where it is
# used. A module whose code lacks every entry's words names none; occurrences spelled through a
# replacement's module (`tree_util.tree_map`) are not uses of the removed name of the same word.
_SIGNATURES = tuple(tuple(reversed(api.name.split(".")[1:])) for api in REMOVED_APIS if "." in api.name)


def _spelled_elsewhere(word: str) -> tuple[str, ...]:
    """`tree_util.` for `tree_map`: the module prefixes under which a replacement spells the same
    word, and no removed name does (`core.Jaxpr` is `jax.core.Jaxpr` as much as `jax.extend.core.Jaxpr`)."""
    removed = {api.name.rsplit(".", 2)[-2] + "." for api in REMOVED_APIS if api.name.count(".") >= 2 and api.name.rsplit(".", 1)[-1] == word}
    return tuple(sorted({
        replacement.name.rsplit(".", 2)[-2] + "."
        for api in REMOVED_APIS
        if api.name.rsplit(".", 1)[-1] == word
        for replacement in api.replacements
        if replacement.name.rsplit(".", 1)[-1] == word and replacement.name.count(".") >= 2
    } - removed))


_LAST_WORDS = {signature[0]: _spelled_elsewhere(signature[0]) for signature in _SIGNATURES}
_GUARD_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "BaseException"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass(frozen=True)
class ApiUse:
    """One use of a removed or deprecated API.

    `node` is the reference (a Name or Attribute) or, for an import, the statement; `alias` the
    imported name in it. `name` is what is used: `api.name` followed by `rest` (a member of a
    removed module). `base` is the name an expression spells it through (`jnp` in
    `jnp.product`) and `bound_to` what that name was imported as; `call` the call whose
    function the reference is; `reach` the JAX releases the tests of the version around it
    let it run on (`conditions.Reach`).
    """

    node: ast.AST
    api: RemovedApi
    rest: str
    scope: "Scope"
    alias: Optional[ast.alias] = None
    base: Optional[ast.Name] = None
    bound_to: str = ""
    call: Optional[ast.Call] = None
    reach: Reach = EVERYWHERE

    @property
    def name(self) -> str:
        return self.api.name + self.rest

    @property
    def tested_on(self) -> Optional[tuple]:
        """The first release without the name that a test of the JAX version around the use lets
        it run on; None where no such test decides it."""
        gone = self.api.removed or self.api.deprecated
        return None if self.reach == EVERYWHERE or gone is None else self.reach.first_from(gone)

    @property
    def statement(self) -> Optional[ast.stmt]:
        return self.node if isinstance(self.node, (ast.Import, ast.ImportFrom)) else None


_USES: "weakref.WeakKeyDictionary[Names, list[ApiUse]]" = weakref.WeakKeyDictionary()


def removed_api_uses(names: "Names", text: str, link: Optional["ModuleLink"] = None) -> list[ApiUse]:
    """Every use in the module, in source order; computed once per module. `link` places the module
    in its project, where a flag it imports is read (None: linted alone)."""
    found = _USES.get(names)
    if found is None:
        found = _USES[names] = _find(names, text, link)
    return found


def imported(alias: ast.alias, statement: ast.stmt) -> Optional[str]:
    """The dotted name an import alias brings in, as written (`from jax import tree_map`: `jax.tree_map`)."""
    if isinstance(statement, ast.Import):
        return alias.name
    if isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
        return statement.module if alias.name == "*" else f"{statement.module}.{alias.name}"
    return None


def _bound_name(alias: ast.alias, statement: ast.stmt) -> tuple[str, str]:
    """The local name an alias binds and the dotted name it is bound to (`import a.b` binds `a` to `a`)."""
    full = imported(alias, statement) or ""
    if isinstance(statement, ast.Import) and not alias.asname:
        top = alias.name.split(".")[0]
        return top, top
    return alias.asname or alias.name, full


def _project_values(link: Optional["ModuleLink"]):
    """How a name imported from another module of the project is read: the value that module binds it to once."""
    if link is None:
        return None

    def imported_value(expr: ast.expr, names: "Names", scope: "Scope") -> Optional[tuple]:
        qualname = names.qualname(expr, scope)
        found = link.module_value(qualname) if qualname and "." in qualname else None
        if found is None:
            return None
        other, name = found
        return single_value(other, name, other.module)

    return imported_value


def _find(names: "Names", text: str, link: Optional["ModuleLink"]) -> list[ApiUse]:
    if not any(target.split(".")[0] in ROOTS for s in names.scopes.values() for target in s.imports.values()):
        return []
    words = names.words  # what the code spells: a use of a name is spelled there
    present = words.intersection(_LAST_WORDS)
    if not any(sig[0] in present and words.issuperset(sig[1:]) for sig in _SIGNATURES):
        return []
    rows = _rows(text, present)
    if not rows:
        return []
    walk = _Walk(names, sorted(rows | _rows(text, {"import": ()})), JaxVersionTests(_project_values(link)))
    walk.visit(names.module.node, names.module)
    uses = walk.resolve()
    lines = None
    for use in uses:
        if use.alias is not None and getattr(use.alias, "end_col_offset", None) is None:
            lines = lines if lines is not None else split_lines(text, keepends=True)
            _place_aliases(use.statement, lines)
    return uses


def _place_aliases(statement: ast.stmt, lines: list[str]) -> None:
    """Give an import's names the positions Python 3.10 and later give them (the dotted name and its
    `as NAME`); Python 3.9's parser leaves them without one, and a finding points at the name."""
    if getattr(statement.names[0], "end_col_offset", None) is not None:
        return
    first = lines[statement.lineno - 1].encode("utf-8")
    head = first[: statement.col_offset].decode("utf-8", "replace")
    segment = first[statement.col_offset :].decode("utf-8", "replace")
    segment += "".join(lines[statement.lineno : statement.end_lineno or statement.lineno])
    spans: list[list] = []  # [start, end] of each name and its `as NAME`, in order
    started, new_name = False, True
    try:
        for token in tokenize.generate_tokens(io.StringIO(segment).readline):
            if not started:
                started = token.type == tokenize.NAME and token.string == "import"
            elif token.type == tokenize.NEWLINE or token.string in (";", ")"):
                break
            elif token.type == tokenize.NAME and token.string != "as":
                if new_name:
                    spans.append([token.start, token.end])
                else:
                    spans[-1][1] = token.end  # the next part of a dotted name, or the name after `as`
                new_name = True  # another name starts another alias unless `.` or `as` comes between
            elif token.string in (".", "as"):
                new_name = False
    except tokenize.TokenError:
        pass
    if len(spans) < len(statement.names):
        return
    for alias, (start, end) in zip(statement.names, spans):
        alias.lineno, alias.col_offset = _bytes(start, statement, lines, head)
        alias.end_lineno, alias.end_col_offset = _bytes(end, statement, lines, head)


def _bytes(point: tuple[int, int], statement: ast.stmt, lines: list[str], head: str) -> tuple[int, int]:
    """A tokenize (row, column) of the statement's text as the parser gives it: the file's row, UTF-8 bytes."""
    row, column = point
    line = lines[statement.lineno - 1 + row - 1]
    if row == 1:
        column += len(head)
    return statement.lineno + row - 1, len(line[:column].encode("utf-8"))


def _rows(text: str, words: dict | set) -> set[int]:
    """The 1-based rows where one of `words` stands as a word of its own, not after a prefix that
    spells the replacement (`tree_util.tree_map`)."""
    found = []
    for word in words:
        excluded = _LAST_WORDS.get(word, ())
        at = text.find(word)
        while at >= 0:
            end = at + len(word)
            if (
                not (at and (text[at - 1].isalnum() or text[at - 1] == "_"))
                and not (end < len(text) and (text[end].isalnum() or text[end] == "_"))
                and not any(text.endswith(prefix, 0, at) for prefix in excluded)
            ):
                found.append(at)
            at = text.find(word, end)
    rows, row, scanned = set(), 1, 0
    for at in sorted(found):
        row += text.count("\n", scanned, at)
        scanned = at
        rows.add(row)
    return rows


class _Walk:
    """One pass over the module: imports first bind, then references resolve through them."""

    def __init__(self, names: "Names", rows: list[int], leaves: JaxVersionTests):
        self.names = names
        self.rows = rows  # only the nodes over these rows (the words', the imports') are walked
        self.leaves = leaves
        self.uses: list[ApiUse] = []
        # (id(scope), local name) -> the dotted names imports in that scope bind it to, as written
        self.bindings: dict[tuple[int, str], set[str]] = {}
        self.references: list[tuple[ast.AST, "Scope", Optional[tuple]]] = []
        self.guarded: set[tuple[int, str]] = set()  # bindings made by an import in compatibility code
        self.calls: dict[int, ast.Call] = {}  # id(func) -> call
        self._branches: dict[int, tuple[Reach, Reach]] = {}  # id(test) -> the reach of each outcome
        self._reaches: dict[int, tuple] = {}  # id(path) -> (path, where code under it runs)

    def visit(self, root: ast.AST, scope: "Scope") -> None:
        stack: list[tuple[ast.AST, "Scope", Optional[tuple]]] = [(root, scope, None)]
        while stack:
            node, scope, path = stack.pop()
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._import(node, scope, path)
                continue
            if isinstance(node, (ast.Attribute, ast.Name)):
                if isinstance(node.ctx, ast.Load):
                    self.references.append((node, scope, path))
                elif isinstance(node, ast.Attribute):  # `a.b.c = v` stores into what `a.b` reads
                    stack.append((node.value, scope, path))
                    continue
                base = node
                while isinstance(base, ast.Attribute):
                    base = base.value
                if not isinstance(base, ast.Name):  # `f(x).attr`: the chain starts at an expression
                    stack.append((base, scope, path))
                continue
            if isinstance(node, ast.Call):
                self.calls[id(node.func)] = node
            inner = self.names.scopes.get(id(node)) if isinstance(node, _SCOPES) else None
            body = _body_ids(node) if inner is not None else ()
            for child, child_path in self._children(node, scope, path):
                if self._holds_a_row(child):
                    stack.append((child, inner if id(child) in body else scope, child_path))

    def resolve(self) -> list[ApiUse]:
        """The uses: the imports found, and the references resolved through every import's binding."""
        for node, scope, path in self.references:
            self._reference(node, scope, path)
        self.uses.sort(key=lambda use: (use.node.lineno, use.node.col_offset))
        return self.uses

    # ---- where code runs ----------------------------------------------------------------------
    # The tests on the way to a node are a path, `(the path before, step)`, None at the top; a step
    # is `(test, scope, outcome)`, or `(_TRY, body)` for the handler of a `try` that runs where its
    # body failed. A path is read (`_reach`) only for a use of a removed name: tests cost nothing
    # where nothing is used.
    def _children(self, node: ast.AST, scope: "Scope", path: Optional[tuple]):
        """Each child node with the path of tests it runs under."""
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            yield node.test, path
            true, false = (path, (node.test, scope, True)), (path, (node.test, scope, False))
            if isinstance(node, ast.IfExp):
                yield node.body, true
                yield node.orelse, false
                return
            yield from self._block(node.body, scope, true)
            yield from self._block(node.orelse, scope, false)
            return
        if isinstance(node, ast.BoolOp):
            conjunction = isinstance(node.op, ast.And)
            for value in node.values:  # each operand runs only where the ones before it let it
                yield value, path
                path = (path, (value, scope, conjunction))
            return
        if isinstance(node, _TRIES):
            absent = [h for h in node.handlers if _catches_absence(h)]
            yield from self._block(node.body, scope, (path, _OPAQUE_STEP) if absent else path)
            for handler in node.handlers:
                yield handler, (path, (_TRY, node.body)) if handler in absent else path
            yield from self._block(node.orelse, scope, path)
            yield from self._block(node.finalbody, scope, path)
            return
        for name in node_fields(node.__class__):
            value = getattr(node, name, None)
            if isinstance(value, list):
                if value and isinstance(value[0], ast.stmt):
                    yield from self._block(value, scope, path)
                else:
                    yield from ((child, path) for child in value if isinstance(child, ast.AST))
            elif isinstance(value, ast.AST):
                yield value, path

    def _block(self, statements: list, scope: "Scope", path: Optional[tuple]):
        """The statements of a block: after `if T: return ...`, the rest runs only where T is false."""
        for statement in statements:
            yield statement, path
            if isinstance(statement, ast.If):
                body_ends = any(never_completes(s) for s in statement.body)
                if body_ends != any(never_completes(s) for s in statement.orelse):
                    path = (path, (statement.test, scope, not body_ends))

    def _reach(self, path: Optional[tuple]) -> Reach:
        """Where code under a path of tests runs (`conditions.Reach`)."""
        if path is None:
            return EVERYWHERE
        kept = self._reaches.get(id(path))
        if kept is not None and kept[0] is path:
            return kept[1]
        before, step = path
        if step is _OPAQUE_STEP:
            here = OPAQUE
        elif step[0] is _TRY:
            here = OPAQUE if self._reaches_for_jax(step[1]) else EVERYWHERE
        else:
            test, scope, outcome = step
            outcomes = self._branches.get(id(test))
            if outcomes is None:
                outcomes = self._branches[id(test)] = branches(test, self.names, scope, self.leaves)
            here = outcomes[0] if outcome else outcomes[1]
        found = self._reach(before).both(here)
        self._reaches[id(path)] = (path, found)  # the path kept alive, so that its id stays its own
        return found

    def _reaches_for_jax(self, body: list) -> bool:
        """Whether a `try` body imports or reads a name of JAX: its handler runs where that name is missing."""
        for statement in body:
            for node in ast.walk(statement):
                if isinstance(node, ast.Import) and any(_of_jax(alias.name) for alias in node.names):
                    return True
                if isinstance(node, ast.ImportFrom) and node.level == 0 and _of_jax(node.module or ""):
                    return True
                if isinstance(node, ast.Attribute) and _of_jax(self.names.qualname(node) or ""):
                    return True
        return False

    # ---- imports and references -----------------------------------------------------------------
    def _import(self, statement: ast.stmt, scope: "Scope", path: Optional[tuple]) -> None:
        for alias in statement.names:
            local, full = _bound_name(alias, statement)
            if full:
                self.bindings.setdefault((id(scope), local), set()).add(full)
            hit = lookup(imported(alias, statement) or "")
            if hit is None:
                continue
            reach = self._reach(path)
            if _compatible(hit[0], reach):  # the import runs only where it succeeds, and so do its uses
                self.guarded.add((id(scope), local))
            else:
                self.uses.append(ApiUse(statement, hit[0], hit[1], scope, alias=alias, reach=reach))

    def _holds_a_row(self, node: ast.AST) -> bool:
        """Whether a node spans a row that holds one of the words (a node without a position may)."""
        first = getattr(node, "lineno", None)
        if first is None:
            return not isinstance(node, (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop))
        at = bisect.bisect_left(self.rows, first)
        return at < len(self.rows) and self.rows[at] <= (node.end_lineno or first)

    def _reference(self, node: ast.AST, scope: "Scope", path: Optional[tuple]) -> None:
        chain: list[ast.AST] = []
        base = node
        while isinstance(base, ast.Attribute):
            chain.append(base)
            base = base.value
        if not isinstance(base, ast.Name):
            return
        read_scope = self.names.read_scope.get(id(base), scope)
        owner = self.names.lookup(base.id, read_scope)
        if owner is None or base.id in owner.assigned or base.id in owner.defs or base.id in owner.params:
            return
        targets = self.bindings.get((id(owner), base.id))
        if not targets or len(targets) != 1 or (id(owner), base.id) in self.guarded:
            return  # not imported, or imported in two spellings (a compatibility fallback)
        (bound,) = targets
        chain.append(base)
        spelled = bound
        hits = []
        for part in reversed(chain):  # from the base name outwards
            if part is not base:
                spelled = f"{spelled}.{part.attr}"
            hit = lookup(spelled)
            if hit is not None:
                hits.append((part, hit))
        if not hits:
            return
        covered = lookup(bound) is not None
        exact = [(part, hit) for part, hit in hits if not hit[1] and not hit[0].module]
        if exact:
            part, (api, rest) = exact[-1]
            if covered and api.name == bound:
                return
        elif covered:
            return
        else:
            part, (api, rest) = hits[0]
        reach = self._reach(path)
        if _compatible(api, reach):
            return
        self.uses.append(
            ApiUse(part, api, rest, read_scope, base=base, bound_to=bound, call=self.calls.get(id(part)), reach=reach)
        )


_TRIES = (ast.Try, getattr(ast, "TryStar", ast.Try))
_TRY = object()  # a path step: the handler of a `try`, opaque where the body reaches for a name of JAX
_OPAQUE_STEP = (None, None, None)  # a path step: the body of a `try` that handles a name's absence


def _compatible(api: RemovedApi, reach: Reach) -> bool:
    """Whether code under `reach` runs only on the JAX releases where `api` is still there (and,
    for a deprecated one, not yet deprecated), or where a test no version span says decides it."""
    gone = api.removed or api.deprecated
    return reach.opaque or (gone is not None and reach.before(gone))


def _of_jax(name: str) -> bool:
    return name.split(".", 1)[0] in ("jax", "jaxlib")


def _body_ids(scope_node: ast.AST) -> set[int]:
    """The children of a def, lambda or class read in its own scope: its body (decorators, defaults,
    annotations and bases are read in the scope around it)."""
    body = scope_node.body
    return {id(body)} if isinstance(body, ast.AST) else {id(child) for child in body}


def _catches_absence(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(
        (kind.id if isinstance(kind, ast.Name) else kind.attr if isinstance(kind, ast.Attribute) else "")
        in _GUARD_ERRORS
        for kind in kinds
    )
