"""Reads of a name after a statement, until the name is rebound: what a donated buffer meets after the call.

`later_read(owner, statement, name)` walks forward from a statement through the rest of its
block and the blocks around it (a loop body wraps around to its own start when the loop does
not rebind the name), and returns the first read of the name that can see the value it had at
that statement.  Conservative: any rebinding of the name in a statement ends the search along
that block, and reads inside nested functions are not followed.

The name may be an attribute of the instance (`self.states`): then a statement that assigns
it, or that calls anything through the instance or hands the instance on (`self.update()`,
`log(self)`), which may assign it, ends the search as a rebinding does.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jaxlint.analysis.engine.walk import attribute_path, calls_reaching, children, target_names

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


@dataclass(frozen=True)
class Read:
    node: ast.expr  # the read (a name, or an attribute of the instance)
    next_iteration: ast.AST | None = None  # the loop whose next iteration reads it again, if that is how


def statement_path(owner: ast.AST, target: ast.AST) -> list[tuple[list[ast.stmt], int]] | None:
    """The chain of (block, index) from the owner's body down to the statement that contains `target`."""
    body = owner.body if not isinstance(owner, ast.Lambda) else []
    return _find(body, target)


def _find(block: list[ast.stmt], target: ast.AST):
    for index, stmt in enumerate(block):
        if _contains(stmt, target):
            for inner in _blocks(stmt):
                path = _find(inner, target)
                if path is not None:
                    return [(block, index), *path]
            return [(block, index)]
    return None


def _contains(node: ast.AST, target: ast.AST) -> bool:
    if node is target:
        return True
    stack = [node]
    while stack:
        current = stack.pop()
        for child in children(current):
            if child is target:
                return True
            if not isinstance(child, _FUNCTIONS):
                stack.append(child)
    return False


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    blocks = []
    for name in ("body", "orelse", "finalbody"):
        value = getattr(stmt, name, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            blocks.append(value)
    for handler in getattr(stmt, "handlers", []) or []:
        blocks.append(handler.body)
    for case in getattr(stmt, "cases", []) or []:
        blocks.append(case.body)
    return blocks


def rebinds(stmt: ast.AST, name: str, made: ast.AST | None = None) -> bool:
    """The statement assigns the name as a whole (not an item or attribute of it); for an
    attribute of the instance, or may assign it through a call that reaches the instance
    (other than the call `made`, whose own effect is known)."""
    if "." in name and _reaches_owner(stmt, name.split(".", 1)[0], made):
        return True
    targets: list[ast.AST] = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target] if getattr(stmt, "value", None) is not None or isinstance(stmt, ast.AugAssign) else []
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in stmt.items if item.optional_vars is not None]
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stmt.name == name
    elif isinstance(stmt, ast.Delete):
        targets = stmt.targets
    return any(_binds(t, name) for t in targets)


def _binds(target: ast.AST, name: str) -> bool:
    if "." in name:
        return any(attribute_path(node) == name for node in ast.walk(target) if isinstance(node, ast.Attribute))
    return name in target_names(target)


def _reads(node: ast.AST, name: str) -> bool:
    if "." in name:
        return isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and attribute_path(node) == name
    return isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)


# Builtins that look at an object without setting its attributes.
_LOOKING = frozenset({"print", "hasattr", "getattr", "isinstance", "len", "repr", "str", "id", "type", "vars"})


def _reaches_owner(stmt: ast.AST, owner: str, made: ast.AST | None = None) -> bool:
    """A call in the statement made through the object (`self.update()`) or handed it (`log(self)`)."""
    return any(
        call is not made and not (isinstance(call.func, ast.Name) and call.func.id in _LOOKING)
        for call in calls_reaching(stmt, owner)
    )


def first_read(node: ast.AST, name: str) -> ast.expr | None:
    """The first read of `name` in a statement or expression, in source order (nested functions excluded)."""
    found = []
    stack = [node]
    while stack:
        current = stack.pop()
        if _reads(current, name):
            found.append(current)
        if isinstance(current, ast.Delete):
            stack.extend(_deleted_from(current, name))
            continue
        for child in children(current):
            if not isinstance(child, _FUNCTIONS):
                stack.append(child)
    if not found:
        return None
    return min(found, key=lambda n: (n.lineno, n.col_offset))


def _deleted_from(stmt: ast.Delete, name: str) -> list[ast.AST]:
    """What a `del` reads: `del d[k]` and `del d.attr` remove an entry of the container `d`
    names, reading none of its buffers, so of those only the index counts."""
    read: list[ast.AST] = []
    for target in stmt.targets:
        if isinstance(target, (ast.Subscript, ast.Attribute)) and _reads(target.value, name):
            if isinstance(target, ast.Subscript):
                read.append(target.slice)
        else:
            read.append(target)
    return read


def _reads_before_rebinding(stmt: ast.stmt, name: str) -> ast.expr | None:
    """A read of the name in a statement that happens before the statement rebinds it."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        value = stmt.value
        if isinstance(stmt, ast.AugAssign) and _binds(stmt.target, name):
            return stmt.target if isinstance(stmt.target, (ast.Name, ast.Attribute)) else None
        return first_read(value, name) if value is not None else None
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        read = first_read(stmt.iter, name)
        if read is not None or _binds(stmt.target, name):
            return read
    return first_read(stmt, name)


def later_read(owner: ast.AST, name: str, skip_call: ast.AST) -> Read | None:
    """The first read of `name` after the statement that contains `skip_call`, before `name` is rebound."""
    path = statement_path(owner, skip_call)
    if path is None:
        return None
    block, index = path[-1]
    stmt = block[index]
    if rebinds(stmt, name, skip_call):
        return None
    # reads later in the same statement (after the call) are not followed: evaluation order
    for depth in range(len(path) - 1, -1, -1):
        block, index = path[depth]
        for later in block[index + 1:]:
            read = _reads_before_rebinding(later, name)
            if read is not None:
                return Read(read)
            if rebinds(later, name):
                return None
            if isinstance(later, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
                return None
        if depth > 0:
            parent = path[depth - 1][0][path[depth - 1][1]]
            if isinstance(parent, _LOOPS) and block is parent.body:
                if not _rebound_anywhere(parent, name):
                    return Read(_call_read(skip_call, name), next_iteration=parent)
                return None
    return None


def _rebound_anywhere(loop: ast.AST, name: str) -> bool:
    stack = list(loop.body)
    if isinstance(loop, (ast.For, ast.AsyncFor)) and _binds(loop.target, name):
        return True
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt) and rebinds(node, name):
            return True
        if isinstance(node, ast.NamedExpr) and _binds(node.target, name):
            return True
        for child in children(node):
            if not isinstance(child, _FUNCTIONS):
                stack.append(child)
    return False


def _call_read(call: ast.AST, name: str) -> ast.expr:
    read = first_read(call, name)
    assert read is not None
    return read


def copied_from(owner: ast.AST, name: str, call: ast.AST) -> str | None:
    """The name that `name` is a plain copy of where `call` is made (`k = m`, earlier in the
    same block, neither name bound again in between): both hold the same object there."""
    path = statement_path(owner, call)
    if path is None:
        return None
    between: list[ast.stmt] = []
    for depth in range(len(path) - 1, -1, -1):  # the call's block, then the blocks around it
        block, index = path[depth]
        if depth < len(path) - 1 and isinstance(block[index], _LOOPS):
            return None  # a loop's later passes may have rebound either name
        for stmt in reversed(block[:index]):
            if (
                isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == name
            ):
                source = stmt.value.id if isinstance(stmt.value, ast.Name) else None
                if source is None or any(rebinds(later, source) for later in between):
                    return None
                return source
            if rebinds(stmt, name) or not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)):
                return None  # bound otherwise, or a block or statement whose effect on it is not followed
            between.append(stmt)
    return None
