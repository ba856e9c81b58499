"""Code that never runs: the statements after one that never lets control fall through to the next.

`return`, `raise`, `continue` and `break` never complete; nor does an `if` whose branches both
end so (`if a: return x` / `else: raise ...`). Every statement after one of them in the same
block is dead (`raise NotImplementedError` above a half-written implementation), and so is
every node inside it: a call there is never made, a def there defines nothing. A `with` body
is not followed past (its context manager may swallow the exception: `contextlib.suppress`),
nor is a loop or a `try`: this reads the text, as a reader does, not the values.
"""

from __future__ import annotations

import ast

from jaxlint.analysis.engine.walk import walk

_ENDS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
# Statements with no block of the same scope in them: most of a body, passed over by class.
_OWN_SIMPLE = frozenset({
    ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return, ast.Raise, ast.Assert, ast.Pass,
    ast.Delete, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Break, ast.Continue,
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
})


def dead_nodes(scope: ast.AST) -> frozenset[int]:
    """The ids of every node in a statement of `scope`'s own body (a module's, a def's or a
    class's; nested defs and classes are scopes of their own) that never runs."""
    body = getattr(scope, "body", None)
    if body.__class__ is not list:
        return frozenset()  # a lambda: one expression
    dead: set[int] = set()
    blocks = [body]
    while blocks:
        block = blocks.pop()
        for index, statement in enumerate(block):
            if statement.__class__ not in _OWN_SIMPLE:
                push_blocks(statement, blocks)
            if never_completes(statement):
                for unreached in block[index + 1:]:
                    dead.update(id(node) for node in walk(unreached))
                break
    return frozenset(dead)


def never_completes(statement: ast.stmt) -> bool:
    """A `return`, `raise`, `continue` or `break`, or an `if` whose branches both end in one."""
    if isinstance(statement, _ENDS):
        return True
    return (
        isinstance(statement, ast.If)
        and bool(statement.orelse)
        and any(never_completes(s) for s in statement.body)
        and any(never_completes(s) for s in statement.orelse)
    )


def push_blocks(statement: ast.stmt, blocks: list) -> None:
    """The statement lists of a compound statement (`if`, a loop, `with`, `try`, `match`)."""
    for name in ("body", "orelse", "finalbody"):
        value = getattr(statement, name, None)
        if value.__class__ is list and value and isinstance(value[0], ast.stmt):
            blocks.append(value)
    for handler in getattr(statement, "handlers", ()):
        blocks.append(handler.body)
    for case in getattr(statement, "cases", ()):
        blocks.append(case.body)
