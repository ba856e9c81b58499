"""What a function's syntax tells the key flow: whether it returns what a call returns, the calls
inside its loops, whether it only declares an interface, which parameters a caller's value is
never replaced in, and its literal defaults."""

from __future__ import annotations

import ast
import operator

from jaxlint.analysis.engine.names import FUNCTION_TYPES, FunctionNode, Names, Scope
from jaxlint.analysis.engine.walk import children, own_statements, walk
from jaxlint.analysis.keys.key_transfer import COMPARED, SETTING, keyless_test
from jaxlint.analysis.tracing.parameters import default_of
from jaxlint.analysis.tracing.tracing import positional_params


def returned(fn: FunctionNode, call: ast.Call) -> bool:
    """Whether what `call` returns reaches what `fn` returns: the call is in a lambda's body, in
    a `return` of it, or assigned to a name a `return` of it reads."""
    if isinstance(fn, ast.Lambda):
        return True
    bound: set[str] = set()
    for stmt in own_statements(fn.body):
        if isinstance(stmt, ast.Assign) and any(inner is call for inner in walk(stmt.value)):
            bound.update(n.id for t in stmt.targets for n in walk(t) if isinstance(n, ast.Name))
    for stmt in own_statements(fn.body):
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            for inner in walk(stmt.value):
                if inner is call or (isinstance(inner, ast.Name) and inner.id in bound):
                    return True
    return False


def calls_in_loops(owner: ast.AST):
    """(call, innermost enclosing loop) for every call inside a loop of a function's own body."""
    body = [owner.body] if isinstance(owner, ast.Lambda) else list(owner.body)
    stack: list[tuple[ast.AST, ast.AST | None]] = [(node, None) for node in body]
    while stack:
        node, loop = stack.pop()
        if isinstance(node, (*FUNCTION_TYPES, ast.ClassDef)):
            continue
        if isinstance(node, ast.Call) and loop is not None:
            yield node, loop
        inner = node if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) else loop
        for child in children(node):
            if isinstance(node, (ast.For, ast.AsyncFor)) and child is node.iter:
                stack.append((child, loop))
            else:
                stack.append((child, inner))


def is_abstract(fn: ast.FunctionDef | ast.AsyncFunctionDef, names: Names) -> bool:
    """A method that only declares an interface: its body (past a docstring) raises
    `NotImplementedError`, or is `...`/`pass` (or the docstring alone) under
    `@abc.abstractmethod` or in a `typing.Protocol` (what runs is a class that implements it)."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    if len(body) > 1:
        return False
    stmt = body[0] if body else None
    if isinstance(stmt, ast.Raise) and stmt.exc is not None:
        raised = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
        return names.qualname(raised) == "builtins.NotImplementedError"
    empty = stmt is None or isinstance(stmt, ast.Pass) or (
        isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and stmt.value.value is Ellipsis
    )
    return empty and (
        any(names.qualname(d) == "abc.abstractmethod" for d in fn.decorator_list) or _in_protocol(fn, names)
    )


_PROTOCOLS = frozenset({"typing.Protocol", "typing_extensions.Protocol"})


def _in_protocol(fn: ast.FunctionDef | ast.AsyncFunctionDef, names: Names) -> bool:
    """A method of a class that names `Protocol` among its bases (`class Loss(Protocol):`,
    `Protocol[T]`): a declaration of what implementations accept."""
    cls = names.parent_class.get(id(fn))
    if cls is None:
        return False
    scope = names.scopes[id(cls)].parent or names.module
    return any(
        names.qualname(base.value if isinstance(base, ast.Subscript) else base, scope) in _PROTOCOLS
        for base in cls.bases
    )


def rebound_only_when_keyless(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str, keyed: bool = False) -> bool:
    """Every binding of `param` in the function's own body lies in the body of an
    `if param is None:`, or keeps it where it is not None (`param = param if param is not None
    else default`): a caller that passes a value sees it never rebound. For a key parameter
    (`keyed`), also in the body of `if isinstance(param, int):` (a seed given for a key). A
    binding after the last test, in no loop around a test, comes too late to change what the
    tests find (`while True: key, sub = split(key)` after `if isinstance(key, int): ...`); for
    a parameter that is no key, only one past the tests' branches, which both outcomes reach
    (`mask = jnp.pad(mask, 1)` after `if mask is None: mask = ...`): one in the branch for a
    value (`if mask is not None: mask = mask[None]`) says values are taken as they come."""
    guarded: set[int] = set()
    tests: list[ast.AST] = []
    branches: list[ast.AST] = []  # the statements and expressions that test it
    loops: list[ast.AST] = []
    for node in walk(fn):
        tested = keyless_test(node.test) if isinstance(node, (ast.If, ast.IfExp)) else None
        if tested is not None and tested[0] == param and (keyed or tested[2].endswith(" is None")):
            tests.append(node.test)
            branches.append(node)
            if isinstance(node, ast.If) and tested[1]:
                guarded.update(id(n) for stmt in node.body for n in walk(stmt))
        if isinstance(node, ast.Assign) and _kept_unless_none(node, param):
            guarded.add(id(node.targets[0]))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            loops.append(node)
    last = max((t.end_lineno or t.lineno for t in tests), default=0)
    looping = [loop for loop in loops if any(_within(t, loop) for t in tests)]
    for node in walk(fn):
        if node is fn or id(node) in guarded:
            continue
        if isinstance(node, ast.Name) and node.id == param and not isinstance(node.ctx, ast.Load):
            if node.lineno > last and not any(_within(node, loop) for loop in looping) and (
                keyed or not any(_within(node, branch) for branch in branches)
            ):
                continue
            return False
        if isinstance(node, (ast.Global, ast.Nonlocal)) and param in node.names:
            return False
    return True


def _within(node: ast.AST, outer: ast.AST) -> bool:
    """Whether `node` lies in the lines `outer` spans."""
    return outer.lineno <= node.lineno <= (outer.end_lineno or outer.lineno)


def _kept_unless_none(node: ast.Assign, param: str) -> bool:
    """`param = param if param is not None else ...` (or `... if param is None else param`)."""
    value = node.value
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name) or node.targets[0].id != param:
        return False
    tested = keyless_test(value.test) if isinstance(value, ast.IfExp) else None
    if tested is None or tested[0] != param:
        return False
    kept = value.orelse if tested[1] else value.body
    return isinstance(kept, ast.Name) and kept.id == param


def keyless_tested(fn: FunctionNode) -> frozenset[str]:
    """The names the function tests for a key not given (`if key is None:`, `key if key is not
    None else ...`, `if isinstance(key, int):`)."""
    return frozenset(
        tested[0] for node in walk(fn)
        if isinstance(node, (ast.If, ast.IfExp)) and (tested := keyless_test(node.test)) is not None
    )


def literal_defaults(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.Constant]:
    """Parameters whose default is a literal, by name."""
    defaults = ((p.arg, default_of(fn, p)) for p in (*positional_params(fn), *fn.args.kwonlyargs))
    return {name: d for name, d in defaults if isinstance(d, ast.Constant)}


def setting_tests(fn: FunctionNode, scope: Scope) -> frozenset[str]:
    """The branch tests of the function that read only names it neither takes nor binds
    (`if config.system.exploration_noise != 0:`, a setting of the code around it): no caller
    decides them, every call takes the same branch while the setting holds. As flags, by text."""
    if isinstance(fn, ast.Lambda):
        return frozenset()
    found = set()
    for node in own_statements(fn.body):
        if not isinstance(node, (ast.If, ast.While)):
            continue
        read = [n for n in ast.walk(node.test) if isinstance(n, ast.Name)]
        if read and not any(scope.binds(n.id) for n in read):
            found.add(SETTING + ast.unparse(node.test))
    return frozenset(found)


_COMPARISONS = {
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}


def compared_parameters(fn: FunctionNode) -> list[tuple[str, ast.Compare]]:
    """The comparisons of a name with a number in the branch tests of the function's own body
    (`if alpha > 0:`), with the name: a call that gives that parameter a literal decides them
    (`compared_flags`)."""
    if isinstance(fn, ast.Lambda):
        return []
    found = []
    for node in own_statements(fn.body):
        if not isinstance(node, (ast.If, ast.While)):
            continue
        for test in walk(node.test):
            if (
                isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _COMPARISONS
                and isinstance(test.left, ast.Name) and _number(test.comparators[0]) is not None
            ):
                found.append((test.left.id, test))
    return found


def compared_flags(compared: list[tuple[str, ast.Compare]], values: dict[str, object]) -> dict[str, bool]:
    """The truth of each comparison of a parameter the call gives a number (`values`), by text."""
    flags = {}
    for name, test in compared:
        value = values.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            flags[COMPARED + ast.unparse(test)] = _COMPARISONS[type(test.ops[0])](value, _number(test.comparators[0]))
    return flags


def _number(node: ast.expr) -> int | float | None:
    """The number a literal (or its negation) writes, else None."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
