"""Source facts the dynamic check needs: scopes, statement spans, jit options, entry points."""

from __future__ import annotations

import ast
from dataclasses import dataclass

FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
STATIC_KEYWORDS = ("static_argnums", "static_argnames")
JIT_WRAPPERS = frozenset({"jit", "pjit"})
# Wrappers whose effect on a probe's arguments is known; anything else may bind or make static
# arguments in ways the probe cannot see, so such callables are only run by the program itself.
KNOWN_WRAPPERS = JIT_WRAPPERS | frozenset({
    "partial", "vmap", "grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "checkpoint", "remat",
    "custom_jvp", "custom_vjp", "named_call", "wraps", "staticmethod", "classmethod",
})
# Methods that mutate the object they are called on.
MUTATORS = frozenset(
    "append extend insert add update setdefault pop popitem remove discard clear sort reverse "
    "__setitem__ __delitem__ put put_nowait write".split()
)
# Names of calls that write output or log (`print`, `logger.info`, `wandb.log`, ...).
OUTPUT_CALLS = frozenset({"print", "debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"})


def first_line(node: ast.AST) -> int:
    """The first line of a node, counting decorators (as `co_firstlineno` does)."""
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno] + [d.lineno for d in decorators])


def code_key(node: ast.AST) -> tuple[str, int]:
    """The (co_name, co_firstlineno) pair the compiled code object of a def or lambda will have."""
    name = "<lambda>" if isinstance(node, ast.Lambda) else node.name
    return name, first_line(node)


def header_span(stmt: ast.stmt) -> tuple[int, int]:
    """Lines of a statement that are not nested statements: a def's decorators and signature, an if's test."""
    start = first_line(stmt)
    body = getattr(stmt, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        return start, max(stmt.lineno, body[0].lineno - 1)
    return start, stmt.end_lineno or stmt.lineno


@dataclass
class JitOptions:
    """Whether a binding is jit-compiled, its literal static arguments, and whether it is opaque."""

    static_argnums: tuple[int, ...] = ()
    static_argnames: tuple[str, ...] = ()
    is_jit: bool = False
    opaque: bool = False  # an unknown wrapper or a non-literal option: probing could mislead

    def static_names(self, params: list[str]) -> set[str]:
        names = set(self.static_argnames)
        for i in self.static_argnums:
            if -len(params) <= i < len(params):
                names.add(params[i])
        return names


def module_text(path: str) -> str:
    """The Python that a file is run as: a notebook's code cells, one after another, with IPython's
    magics and shell lines made `pass` (as the static pass reads them), else the file itself.
    Raises OSError, or ValueError for a file that is not text or not a notebook."""
    if path.endswith(".ipynb"):
        from jaxlint.notebook import Notebook
        from jaxlint.source import SourceError

        with open(path, "rb") as f:
            data = f.read()
        try:
            return Notebook.parse(data).source
        except SourceError as exc:
            raise ValueError(str(exc)) from None
    with open(path, encoding="utf-8") as f:
        return f.read()


@dataclass
class Source:
    """A parsed file and the questions the dynamic check asks about it."""

    path: str
    tree: ast.Module

    @classmethod
    def parse(cls, path: str) -> Source:
        return cls(path, ast.parse(module_text(path), filename=path))

    # -- positions -------------------------------------------------------------------------

    def statement_at(self, row: int) -> ast.stmt | None:
        """The innermost statement whose header (not nested body) covers `row`."""
        best = None
        for node in ast.walk(self.tree):
            if isinstance(node, ast.stmt):
                lo, hi = header_span(node)
                if lo <= row <= hi and (best is None or lo >= first_line(best)):
                    best = node
        return best

    def span(self, row: int, end_row: int | None = None) -> set[int]:
        """Rows that count as "the same place" as a finding: its rows and its statement's header."""
        rows = set(range(row, (end_row or row) + 1))
        for r in list(rows):
            stmt = self.statement_at(r)
            if stmt is not None:
                lo, hi = header_span(stmt)
                rows.update(range(lo, hi + 1))
        return rows

    def scopes(self, row: int) -> list[ast.AST]:
        """Enclosing defs, lambdas and classes of `row`, innermost first."""
        found = []
        for node in ast.walk(self.tree):
            if isinstance(node, SCOPES) and first_line(node) <= row <= (node.end_lineno or node.lineno):
                found.append(node)
        return sorted(found, key=lambda n: (first_line(n), -(n.end_lineno or 0)), reverse=True)

    def top_level(self, row: int) -> ast.AST | None:
        """The module-level def or class containing `row`."""
        for node in self.tree.body:
            if isinstance(node, FUNCS + (ast.ClassDef,)) and first_line(node) <= row <= node.end_lineno:
                return node
        return None

    def method_at(self, cls: ast.ClassDef, row: int) -> ast.AST | None:
        for node in cls.body:
            if isinstance(node, FUNCS) and first_line(node) <= row <= node.end_lineno:
                return node
        return None

    # -- functions and their jit wrappers --------------------------------------------------

    def module_function(self, name: str) -> ast.AST | None:
        for node in self.tree.body:
            if isinstance(node, FUNCS) and node.name == name:
                return node
        return None

    def qualified_def(self, names: list[str]) -> tuple[ast.ClassDef | None, ast.AST] | None:
        """(class, def) of a module-level function (`[name]`, class None) or method (`[class, name]`)."""
        found = next((n for n in self.tree.body if isinstance(n, FUNCS + (ast.ClassDef,)) and n.name == names[0]),
                     None)
        if len(names) == 1 and isinstance(found, FUNCS):
            return None, found
        if len(names) == 2 and isinstance(found, ast.ClassDef):
            method = next((n for n in found.body if isinstance(n, FUNCS) and n.name == names[1]), None)
            return (found, method) if method is not None else None
        return None

    def function_names(self) -> set[str]:
        """Names JAX reports for this file's functions when it traces them."""
        names = {"<lambda>"}
        for node in ast.walk(self.tree):
            if isinstance(node, FUNCS):
                names.add(node.name)
        return names

    def jit_options(self, name: str) -> JitOptions:
        """Options of the module-level binding `name`: its decorators, or the call it is assigned from."""
        node = self.module_function(name)
        exprs: list[ast.AST] = list(node.decorator_list) if node is not None else []
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in stmt.targets
            ):
                exprs = [stmt.value]
        return _options_in(exprs)

    def has_static_arguments(self, func_name: str) -> bool:
        """Whether a function of that name is jit-compiled with static arguments, by decorator or wrapper."""
        for node in ast.walk(self.tree):
            if isinstance(node, FUNCS) and node.name == func_name:
                opts = self.decorator_options(node)
                if opts.static_argnums or opts.static_argnames:
                    return True
            if isinstance(node, ast.Call) and any(isinstance(a, ast.Name) and a.id == func_name for a in node.args):
                opts = _options_in([node])
                if opts.static_argnums or opts.static_argnames:
                    return True
        return False

    def decorator_options(self, node: ast.AST) -> JitOptions:
        """Options of a def's own decorators (a method, or a function defined inside another)."""
        return _options_in(list(getattr(node, "decorator_list", [])))

    def module_lambda(self, row: int) -> ast.Lambda | None:
        """The innermost lambda containing `row` in a module-level assignment (`f = jit(lambda x: ...)`)."""
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Assign) and first_line(stmt) <= row <= stmt.end_lineno:
                found = [
                    n for n in ast.walk(stmt.value)
                    if isinstance(n, ast.Lambda) and n.lineno <= row <= n.end_lineno
                ]
                if found:
                    return max(found, key=lambda n: (n.lineno, -n.end_lineno))
        return None

    def callers_of(self, name: str) -> list[ast.AST]:
        """Module-level functions that mention `name`, jit-compiled ones first."""
        found = [
            node for node in self.tree.body
            if isinstance(node, FUNCS) and node.name != name
            and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))
        ]
        return sorted(found, key=lambda n: not self.jit_options(n.name).is_jit)

    # -- entry points ----------------------------------------------------------------------

    def main_block(self) -> ast.If | None:
        """The `if __name__ == "__main__":` block, if any."""
        for stmt in self.tree.body:
            if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare):
                parts = [stmt.test.left, *stmt.test.comparators]
                names = {p.id for p in parts if isinstance(p, ast.Name)}
                consts = {p.value for p in parts if isinstance(p, ast.Constant)}
                if names == {"__name__"} and consts == {"__main__"}:
                    return stmt
        return None

    def main_function(self) -> ast.AST | None:
        """A module-level `main()` that needs no arguments."""
        node = self.module_function("main")
        if node is None:
            return None
        args = node.args
        required = len(args.posonlyargs) + len(args.args) - len(args.defaults)
        required += sum(1 for d in args.kw_defaults if d is None)
        return node if required == 0 else None

    # -- what a line does ------------------------------------------------------------------

    def declared_codes(self, rows: set[int]) -> set[tuple[str, int]]:
        """Code identities a line declares or wraps: a def's decorators or signature, the function
        handed to a wrapper as in `f = jax.jit(g)`, lambdas. Functions merely called do not count."""
        keys = set()
        for node in ast.walk(self.tree):
            if isinstance(node, FUNCS):
                lo, hi = header_span(node)
                if rows & set(range(lo, hi + 1)):
                    keys.add(code_key(node))
        for row in rows:
            stmt = self.statement_at(row)
            if stmt is None or isinstance(stmt, FUNCS + (ast.ClassDef,)):
                continue
            lo, hi = header_span(stmt)
            for node in ast.walk(stmt):
                if not lo <= getattr(node, "lineno", lo) <= hi:
                    continue
                if isinstance(node, ast.Lambda):
                    keys.add(code_key(node))
                elif isinstance(node, ast.Call):
                    for arg in node.args:
                        target = self.resolve_def(arg.id, row) if isinstance(arg, ast.Name) else None
                        if target is not None:
                            keys.add(code_key(target))
        return keys

    def rebound_between(self, name: str, start: int, stop: int) -> bool:
        """Whether `name` is assigned on lines start..stop-1 of the scope around `start`."""
        scope = next((s for s in self.scopes(start) if isinstance(s, FUNCS)), self.tree)
        return any(
            isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
            and start <= n.lineno < stop
            for n in ast.walk(scope)
        )

    def resolve_def(self, name: str, row: int) -> ast.AST | None:
        """The def that `name` refers to at `row`: in an enclosing function first, then the module."""
        for scope in self.scopes(row):
            if isinstance(scope, FUNCS):
                for node in ast.walk(scope):
                    if isinstance(node, FUNCS) and node.name == name and node is not scope:
                        return node
        return self.module_function(name)

    def calls_at(self, row: int) -> list[ast.Call]:
        """Calls made by the statement at `row` (not inside nested defs)."""
        stmt = self.statement_at(row)
        if stmt is None:
            return []
        lo, hi = header_span(stmt)
        return [
            n for n in ast.walk(stmt)
            if isinstance(n, ast.Call) and lo <= n.lineno <= hi
        ]

    def writes_outer_state(self, row: int) -> bool:
        """Whether the statement at `row` writes state that outlives its function call."""
        stmt = self.statement_at(row)
        func = next((s for s in self.scopes(row) if isinstance(s, FUNCS + (ast.Lambda,))), None)
        if stmt is None or func is None:
            return False
        owned = _owned_names(func)
        declared = _declared_outer(func)
        for t in _store_targets(stmt):
            if isinstance(t, ast.Name) and t.id in declared:
                return True
            if isinstance(t, (ast.Attribute, ast.Subscript)) and _root(t) not in owned:
                return True
        for call in self.calls_at(row):
            f = call.func
            if isinstance(f, ast.Attribute) and f.attr in MUTATORS and _root(f.value) not in owned:
                return True
        return False

    def stores_at(self, row: int) -> list[tuple]:
        """The writes the statement at `row` makes to objects outside its own values, as the objects
        can be found once it ran: ("attribute", base, name) for `base.name = ...`; ("container",
        base, None) for `base[...] = ...`, `del base[...]` and `base.append(...)` (a mutating
        method); ("global", name, None) and ("nonlocal", name, None) for a name declared so."""
        stmt = self.statement_at(row)
        func = next((s for s in self.scopes(row) if isinstance(s, FUNCS + (ast.Lambda,))), None)
        if stmt is None or func is None:
            return []
        stores = []
        for t in _store_targets(stmt):
            if isinstance(t, ast.Attribute):
                stores.append(("attribute", t.value, t.attr))
            elif isinstance(t, ast.Subscript):
                stores.append(("container", t.value, None))
            elif isinstance(t, ast.Name) and t.id in _declared_outer(func, ast.Global):
                stores.append(("global", t.id, None))
            elif isinstance(t, ast.Name) and t.id in _declared_outer(func, ast.Nonlocal):
                stores.append(("nonlocal", t.id, None))
        for call in self.calls_at(row):
            if isinstance(call.func, ast.Attribute) and call.func.attr in MUTATORS:
                stores.append(("container", call.func.value, None))
        return stores

    def output_calls_at(self, row: int) -> list[ast.expr]:
        """The callees of the statement's calls that write output or log, by name (OUTPUT_CALLS)."""
        return [call.func for call in self.calls_at(row) if _last_name(call.func) in OUTPUT_CALLS]


def _options_in(exprs: list[ast.AST]) -> JitOptions:
    """Options of decorators or a wrapping call; opaque when a wrapper or an option is not understood."""
    opts = JitOptions()
    for expr in exprs:
        names = _wrappers(expr)
        opts.is_jit |= any(n in JIT_WRAPPERS for n in names)
        opts.opaque |= any(n not in KNOWN_WRAPPERS for n in names)
        for node in ast.walk(expr):
            for kw in node.keywords if isinstance(node, ast.Call) else ():
                if kw.arg is None:  # **options: cannot tell what is static
                    opts.opaque = True
                if kw.arg not in STATIC_KEYWORDS:
                    continue
                try:
                    value = ast.literal_eval(kw.value)
                except ValueError:
                    opts.opaque = True
                    continue
                values = tuple(value) if isinstance(value, (tuple, list)) else (value,)
                setattr(opts, kw.arg, getattr(opts, kw.arg) + values)
    return opts


def _wrappers(expr: ast.AST) -> list[str]:
    """Names of what an expression wraps a function in: callees, what partial() binds, nested wrappers."""
    if isinstance(expr, (ast.Name, ast.Attribute)):
        return [_last_name(expr)]
    if not isinstance(expr, ast.Call):
        return ["?"]
    names = [_last_name(expr.func) if isinstance(expr.func, (ast.Name, ast.Attribute)) else "?"]
    if names[0] == "partial" and expr.args:
        names += _wrappers(expr.args[0])
    for arg in expr.args[1 if names[0] == "partial" else 0:]:
        if isinstance(arg, ast.Call):
            names += _wrappers(arg)
    return names


def _last_name(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _store_targets(stmt: ast.stmt):
    """What an assignment, augmented assignment or `del` statement stores to, unpacked."""
    targets: list[ast.AST] = []
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    elif isinstance(stmt, ast.Delete):
        targets = stmt.targets
    for target in targets:
        yield from _unpack(target)


def _unpack(target: ast.AST):
    if isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from _unpack(elt)
    elif isinstance(target, ast.Starred):
        yield from _unpack(target.value)
    else:
        yield target


def _own_body(func: ast.AST):
    """Nodes of a function, not descending into nested defs or classes."""
    stack = list(func.body) if isinstance(func.body, list) else [func.body]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def _declared_outer(func: ast.AST, kinds=(ast.Global, ast.Nonlocal)) -> set[str]:
    """Names the function declares `global` or `nonlocal` (or only those of `kinds`)."""
    names = set()
    for node in _own_body(func):
        if isinstance(node, kinds):
            names.update(node.names)
    return names


def _owned_names(func: ast.AST) -> set[str]:
    """Names bound inside the function to objects it created (parameters are the caller's)."""
    declared = _declared_outer(func)
    owned = set()
    for node in _own_body(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in declared:
            owned.add(node.id)
    return owned
