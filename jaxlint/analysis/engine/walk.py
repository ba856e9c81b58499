"""Fast traversal of `ast` trees: the analysis walks every module, so this is its hot loop.

`ast.iter_child_nodes` is a generator over every field, including the `Load`/`Store`
context and operator singletons; skipping those and caching each node type's fields
halves the cost of a walk.
"""

from __future__ import annotations

import ast
from typing import Iterator

# The node types that open a function scope (`names.FUNCTION_TYPES`, which imports this module).
_FUNCTION_CLASSES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda})
_SCOPE_CLASSES = _FUNCTION_CLASSES | {ast.ClassDef}

_AST = ast.AST
_FIELDS: dict[type, tuple[str, ...]] = {}
_LEAF_FIELDS = frozenset({"ctx", "op"})
# Fields that hold only names, numbers, flags or constants, never a node: a walk need not look.
_VALUE_FIELDS_BY_NAME: dict[str, frozenset[str]] = {
    "Name": frozenset({"id"}), "Attribute": frozenset({"attr"}), "Constant": frozenset({"value", "kind"}),
    "FunctionDef": frozenset({"name", "type_comment"}), "AsyncFunctionDef": frozenset({"name", "type_comment"}),
    "ClassDef": frozenset({"name"}), "arg": frozenset({"arg", "type_comment"}), "keyword": frozenset({"arg"}),
    "alias": frozenset({"name", "asname"}), "ImportFrom": frozenset({"module", "level"}),
    "ExceptHandler": frozenset({"name"}), "FormattedValue": frozenset({"conversion"}),
    "comprehension": frozenset({"is_async"}), "AnnAssign": frozenset({"simple"}),
    "Assign": frozenset({"type_comment"}), "For": frozenset({"type_comment"}), "AsyncFor": frozenset({"type_comment"}),
    "With": frozenset({"type_comment"}), "AsyncWith": frozenset({"type_comment"}),
    "Global": frozenset({"names"}), "Nonlocal": frozenset({"names"}),
}
_VALUE_FIELDS: dict[type, frozenset[str]] = {getattr(ast, cls): fields for cls, fields in _VALUE_FIELDS_BY_NAME.items()}
# The only list fields that hold anything but nodes: `None` for `{**d}` and a keyword-only
# parameter without default, names for `global`, `nonlocal` and a class pattern's keywords.
_MIXED_LISTS: dict[type, str] = {
    getattr(ast, cls): field
    for cls, field in (
        ("Dict", "keys"), ("arguments", "kw_defaults"), ("Global", "names"), ("Nonlocal", "names"), ("MatchClass", "kwd_attrs")
    )
    if hasattr(ast, cls)  # no pattern matching before Python 3.10
}
_NOT_NODES = (type(None), str)


def node_fields(cls: type) -> tuple[str, ...]:
    """The fields of a node type that can hold child nodes (context and operator singletons, and
    fields that hold only names or constants, left out)."""
    fields = _FIELDS.get(cls)
    if fields is None:
        values = _VALUE_FIELDS.get(cls, ())
        fields = _FIELDS[cls] = tuple(f for f in cls._fields if f not in _LEAF_FIELDS and f not in values)
    return fields


def children(node: ast.AST) -> list[ast.AST]:
    """The child nodes of `node` (context and operator singletons left out)."""
    cls = node.__class__
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = node_fields(cls)
    mixed = _MIXED_LISTS.get(cls)
    out: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if value.__class__ is list:
            if name == mixed:
                out.extend(x for x in value if isinstance(x, _AST))
            else:
                out.extend(value)
        elif isinstance(value, _AST):
            out.append(value)
    return out


def own_nodes(fn: ast.AST) -> list[ast.AST]:
    """Every node of a function's body, not descending into nested functions or lambdas.

    A nested def's decorators and default values are evaluated by the enclosing function,
    so they are included.
    """
    return nodes_run_with([fn.body] if isinstance(fn, ast.Lambda) else fn.body)


def nodes_run_with(roots: list[ast.AST]) -> list[ast.AST]:
    """`roots` and every node below them that runs with them: as `own_nodes`, from any nodes."""
    stack: list = list(roots)
    out: list[ast.AST] = []
    pop, push, extend, append = stack.pop, stack.append, stack.extend, out.append
    fields_of, functions, not_nodes = _FIELDS, _FUNCTION_CLASSES, _NOT_NODES
    while stack:
        node = pop()
        cls = node.__class__
        if cls in not_nodes:
            continue  # a `None` or a name from a list field (see _MIXED_LISTS)
        append(node)
        if cls in functions:
            if cls is not ast.Lambda:
                extend(node.decorator_list)
            extend(d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None)
            continue
        fields = fields_of.get(cls)
        if fields is None:
            fields = node_fields(cls)
        for name in fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                extend(value)
            elif isinstance(value, _AST):
                push(value)
    return out


def body_nodes(fn: ast.AST) -> list[ast.AST]:
    """The nodes of a function's (or module's) own body, nested functions and classes excluded.

    The statements of the body are walked whatever they are, and so are a nested def's
    decorators; below them a def or lambda stands for its decorators only and a class for nothing.
    """
    roots: list = [fn.body] if isinstance(fn, ast.Lambda) else list(fn.body)
    stack = list(roots)
    walked = {id(n) for n in roots if n.__class__ in _SCOPE_CLASSES}  # scopes walked all the same
    out: list[ast.AST] = []
    pop, push, extend, append = stack.pop, stack.append, stack.extend, out.append
    scopes, not_nodes, fields_of = _SCOPE_CLASSES, _NOT_NODES, _FIELDS
    while stack:
        node = pop()
        cls = node.__class__
        if cls in not_nodes:
            continue  # a `None` or a name from a list field
        if cls in scopes and id(node) not in walked:
            if cls is not ast.Lambda and cls is not ast.ClassDef:
                extend(node.decorator_list)
                walked.update(id(d) for d in node.decorator_list if d.__class__ in scopes)
            continue
        append(node)
        fields = fields_of.get(cls)
        if fields is None:
            fields = node_fields(cls)
        for name in fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                extend(value)
            elif isinstance(value, _AST):
                push(value)
    return out


def contains(roots: list[ast.AST], classes: frozenset[type], opaque: frozenset[type]) -> bool:
    """Whether a node of one of `classes` lies in `roots` or below them, not looking inside
    nodes of the `opaque` classes."""
    return next(_of_classes(roots, classes, opaque), None) is not None


def nodes_of_classes(roots: list[ast.AST], classes: frozenset[type], opaque: frozenset[type]) -> list[ast.AST]:
    """The nodes of `classes` in `roots` or below them, not looking inside nodes of the `opaque` classes."""
    return list(_of_classes(roots, classes, opaque))


def _of_classes(roots: list[ast.AST], classes: frozenset[type], opaque: frozenset[type]) -> Iterator[ast.AST]:
    stack: list = list(roots)
    pop, push, extend = stack.pop, stack.append, stack.extend
    fields_of, not_nodes = _FIELDS, _NOT_NODES
    while stack:
        node = pop()
        cls = node.__class__
        if cls in classes:
            yield node
        if cls in opaque or cls in not_nodes:
            continue
        fields = fields_of.get(cls)
        if fields is None:
            fields = node_fields(cls)
        for name in fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                extend(value)
            elif isinstance(value, _AST):
                push(value)


def target_names(target: ast.AST) -> list[str]:
    """The plain names an assignment target binds (`a`, `a, (b, *c)`)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in target_names(elt)]
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    return []


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node below `node` (itself included), as `ast.walk` but faster and without context singletons."""
    stack: list = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    fields_of, not_nodes = _FIELDS, _NOT_NODES
    while stack:
        current = pop()
        cls = current.__class__
        if cls in not_nodes:
            continue  # a `None` or a name from a list field (see _MIXED_LISTS)
        yield current
        fields = fields_of.get(cls)
        if fields is None:
            fields = node_fields(cls)
        for name in fields:
            value = getattr(current, name, None)
            if value.__class__ is list:
                extend(value)
            elif isinstance(value, _AST):
                push(value)


# Statements with no block of statements in them, or whose blocks belong to another scope.
_NO_BLOCKS = frozenset(
    getattr(ast, name) for name in (
        "FunctionDef", "AsyncFunctionDef", "ClassDef", "Assign", "AnnAssign", "AugAssign", "Expr", "Return",
        "Raise", "Assert", "Pass", "Delete", "Import", "ImportFrom", "Global", "Nonlocal", "Break", "Continue",
        "TypeAlias",
    )
    if hasattr(ast, name)  # no `type` statement before Python 3.12
)


# ... and those whose blocks, when they have any, are another scope's.
_NO_OWN_BLOCKS = _NO_BLOCKS - _SCOPE_CLASSES


def own_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of one scope, nested blocks included, nested function and class bodies excluded."""
    return _statements(body, _NO_BLOCKS)


def all_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement in `body` or below it, nested function and class bodies included: no
    statement sits in an expression, so the walk never enters one."""
    return _statements(body, _NO_OWN_BLOCKS)


def _statements(body: list[ast.stmt], leaves: frozenset[type]) -> Iterator[ast.stmt]:
    stack = list(body)
    while stack:
        stmt = stack.pop()
        yield stmt
        if stmt.__class__ in leaves:
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if type(block) is list:
                stack.extend(block)
        for handler in getattr(stmt, "handlers", ()) or ():
            stack.extend(handler.body)
        for case in getattr(stmt, "cases", ()) or ():
            stack.extend(case.body)


def returned_name(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The one name every `return` of a def returns (`return update`); None when it has no
    `return`, or one returns anything else."""
    returns = [s for s in own_statements(fn.body) if isinstance(s, ast.Return)]
    named = {s.value.id for s in returns if isinstance(s.value, ast.Name)}
    if not returns or len(named) != 1 or any(not isinstance(s.value, ast.Name) for s in returns):
        return None
    return next(iter(named))


def calls_reaching(node: ast.AST, name: str) -> Iterator[ast.Call]:
    """The calls in `node` made through the object `name` (`name.update()`) or handed it
    (`log(name)`, `f(key=name)`): each may change what the object holds."""
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == name:
            yield call
        elif any(isinstance(a, ast.Name) and a.id == name for a in (*call.args, *(k.value for k in call.keywords))):
            yield call


def runs_parameter(fn: ast.AST, name: str) -> bool:
    """Whether a function may run what its parameter `name` holds: it calls it (`loss_fn(p)`) or
    hands it to a call (`jax.value_and_grad(loss_fn)`, `lax.scan(body, ...)`, `helper(fn)`),
    in its own body or a function nested in it. Storing it (`self.fn = fn`) is not running it."""
    for call in ast.walk(fn):
        if not isinstance(call, ast.Call):
            continue
        if isinstance(call.func, ast.Name) and call.func.id == name:
            return True
        if any(isinstance(a, ast.Name) and a.id == name for a in (*call.args, *(k.value for k in call.keywords))):
            return True
    return False


def start_of(node: ast.AST) -> tuple[int, int]:
    """Where a node's source starts: (line, column)."""
    return node.lineno, node.col_offset  # type: ignore[attr-defined]


def end_of(node: ast.AST) -> tuple[int, int]:
    """Where a node's source ends: (line, column)."""
    return node.end_lineno or node.lineno, node.end_col_offset or 0  # type: ignore[attr-defined]


def spans(outer: ast.AST, node: ast.AST) -> bool:
    """Whether `node`'s source span lies within `outer`'s."""
    start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
    return (outer.lineno, outer.col_offset) <= start and end <= (outer.end_lineno, outer.end_col_offset)


def attribute_path(node: ast.AST) -> str | None:
    """`state.key` for the attribute `key` of the bare name `state`: an attribute kept on an
    object (the instance, a state record), followed within one function; None otherwise."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None
