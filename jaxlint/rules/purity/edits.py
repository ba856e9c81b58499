"""Text edits the purity rules offer as fixes, built from `ast` positions (no concrete syntax tree).

- `functional_update`: `x[i] = v` / `x[i] += v` / `x.at[i] = v` -> `x = x.at[i].set(v)` / `.add(v)`;
- `rebind`: a discarded `x.at[i].set(v)` -> `x = x.at[i].set(v)`;
- `debug_print`: `print("loss", loss)` -> `jax.debug.print("loss {}", loss)`, with `import jax` added
  when the module does not bind it.
"""

from __future__ import annotations

import ast
import weakref
from typing import TYPE_CHECKING

from jaxlint.analysis.knowledge import jax_api
from jaxlint.analysis.engine.walk import own_statements, target_names
from jaxlint.findings import Edit, Fix, Position

if TYPE_CHECKING:
    from jaxlint.analysis.module import ModuleFacts
    from jaxlint.analysis.engine.names import Names


def text(module: "ModuleFacts", node: ast.AST) -> str:
    """The source text of a node, line endings as written."""
    return module.source.segment(node)


def rebinding_applicability(module: "ModuleFacts", name: ast.Name) -> str | None:
    """How safe it is to rebind `name` where it is read: "safe", "unsafe" (a parameter: the
    caller will not see the new value), or None (bound in an enclosing scope: rebinding
    would make it local)."""
    names = module.names
    scope = names.read_scope.get(id(name))
    if scope is None or name.id in scope.globals or name.id in scope.nonlocals:
        return None
    if names.lookup(name.id, scope) is not scope:
        return None
    if scope.kind == "function" and name.id in scope.params:
        return "unsafe"
    if _loop_target(scope, name.id):
        return "unsafe"  # an item of what the loop iterates: rebinding it updates nothing there
    return "safe"


def _loop_target(scope, name: str) -> bool:
    node = scope.node
    if isinstance(node, ast.Lambda):
        return False
    return any(
        isinstance(stmt, (ast.For, ast.AsyncFor)) and name in target_names(stmt.target)
        for stmt in own_statements(node.body)
    )


def functional_update(
    module: "ModuleFacts", stmt: ast.stmt, name: ast.Name, index: ast.Subscript, method: str, value: ast.expr
) -> Fix | None:
    """Replace `stmt` by `name = name.at[...].method(value)`; `index` is the subscript whose brackets are kept."""
    applicability = rebinding_applicability(module, name)
    if applicability is None or isinstance(value, (ast.Starred, ast.Yield, ast.YieldFrom, ast.Await)):
        return None
    source = module.source
    whole = text(module, index)
    base = text(module, index.value)
    if not whole or not base or not whole.startswith(base):
        return None
    brackets = whole[len(base):]
    argument = text(module, value)
    if not argument:
        return None
    if isinstance(value, ast.Tuple):
        argument = f"({argument})"
    content = f"{name.id} = {name.id}.at{brackets}.{method}({argument})"
    edit = Edit(content, source.start(stmt), source.end(stmt))
    return Fix(applicability, f"Replace with `{name.id} = {name.id}.at[...].{method}(...)`", (edit,))


def in_place_fix(module: "ModuleFacts", stmt: ast.stmt, index: ast.Subscript, name: ast.AST) -> Fix | None:
    """The functional form of `name[...] = v` or `name[...] op= v`, when `name` is a plain name."""
    if not isinstance(name, ast.Name):
        return None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is not None:
        return functional_update(module, stmt, name, index, "set", stmt.value)
    if isinstance(stmt, ast.AugAssign):
        method = jax_api.AT_METHOD_OF_OPERATOR.get(type(stmt.op).__name__)
        if method is not None:
            return functional_update(module, stmt, name, index, method, stmt.value)
    return None


def rebind(module: "ModuleFacts", stmt: ast.Expr, name: ast.AST) -> Fix | None:
    """`x.at[i].set(v)` as a statement -> `x = x.at[i].set(v)` (unsafe: the program did nothing before)."""
    if not isinstance(name, ast.Name) or rebinding_applicability(module, name) is None:
        return None
    at = module.source.start(stmt)
    return Fix("unsafe", f"Assign the result back to `{name.id}`", (Edit(f"{name.id} = ", at, at),))


# ---- print -> jax.debug.print -----------------------------------------------------------------
_CONVERSIONS = {-1: "", 115: "!s", 114: "!r", 97: "!a"}


def debug_print(module: "ModuleFacts", call: ast.Call, shows_traced) -> Fix | None:
    """`print(...)` -> `jax.debug.print(...)`: traced values become runtime `{}` fields, static
    values are formatted while tracing (as `print` did) through an f-string."""
    sep = " "
    for keyword in call.keywords:
        if keyword.arg == "sep" and isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, str):
            sep = keyword.value.value
        elif keyword.arg == "end" and isinstance(keyword.value, ast.Constant) and keyword.value.value == "\n":
            continue
        elif keyword.arg == "flush":
            continue
        else:
            return None  # file=, a custom end, **kwargs: not what jax.debug.print does
    # Each argument is a list of parts: ("text", literal), ("field", conversion+spec) formatted
    # at run time, or ("static", expression+conversion+spec) formatted while tracing.
    arguments: list[list[tuple[str, str]]] = []
    runtime: list[str] = []  # the traced expressions, in order
    source = module.source
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            return None
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            arguments.append([("text", arg.value)])
        elif isinstance(arg, ast.JoinedStr):
            parts = []
            for value in arg.values:
                if isinstance(value, ast.Constant):
                    parts.append(("text", str(value.value)))
                    continue
                spec = _format_spec(value)
                if spec is None:
                    return None
                conversion = _CONVERSIONS.get(value.conversion, "")
                if shows_traced(value.value):
                    if not _runtime_value(value.value):
                        return None
                    parts.append(("field", conversion + spec))
                    runtime.append(ast.unparse(value.value))
                elif _brace_free(value.value):
                    parts.append(("static", ast.unparse(value.value) + conversion + spec))
                else:
                    return None
            arguments.append(parts)
        elif shows_traced(arg):
            if not _runtime_value(arg):
                return None
            arguments.append([("field", "")])
            runtime.append(text(module, arg) or ast.unparse(arg))
        elif _brace_free(arg):
            arguments.append([("static", ast.unparse(arg))])
        else:
            return None
    literal = _format_literal(arguments, sep)
    if literal is None:
        return None
    prefix, import_edit = _jax_debug(module, call)
    if prefix is None:
        return None
    passed = "".join(f", {expr}" for expr in runtime)
    edits = [Edit(f"{prefix}({literal}{passed})", source.start(call), source.end(call))]
    if import_edit is not None:
        edits.insert(0, import_edit)
    return Fix("unsafe", "Replace with `jax.debug.print`, which prints on every call", tuple(edits))


def _format_literal(arguments: list[list[tuple[str, str]]], sep: str) -> str | None:
    """The format string: a plain literal, or an f-string when static values are formatted while tracing."""
    parts = [part for i, arg in enumerate(arguments) for part in ([("text", sep)] if i else []) + arg]
    if any(kind == "text" and ("{" in value or "}" in value) for kind, value in parts):
        return None  # jax.debug.print mistakes a format string with literal braces for one without fields
    if not any(kind == "static" for kind, _ in parts):
        text = "".join(_escape(v) if kind == "text" else "{" + v + "}" for kind, v in parts)
        literal = repr(text)
        if literal.startswith("'") and '"' not in text:
            literal = '"' + literal[1:-1].replace("\\'", "'") + '"'
        return literal
    out = []
    for kind, value in parts:
        if kind == "text":
            if any(c in value for c in "\"'\\\n\r"):
                return None
            out.append(_escape(_escape(value)))  # once for the f-string, once for the format
        elif kind == "field":
            out.append("{{" + _escape(value) + "}}")
        else:
            if any(c in value for c in "\"\\\n"):
                return None
            out.append("{" + value + "}")
    return 'f"' + "".join(out) + '"'


def _runtime_value(expr: ast.AST) -> bool:
    """An expression whose value (not a string made from it while tracing) can be passed on."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod) and isinstance(expr.left, (ast.Constant, ast.JoinedStr)):
        return False
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Attribute) and func.attr == "format":
            return False
        if isinstance(func, ast.Name) and func.id in ("str", "repr", "format"):
            return False
    return True


def _brace_free(expr: ast.AST) -> bool:
    """A static value whose text has no braces (it becomes part of the runtime format string)."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float)) or (isinstance(expr.value, str) and "{" not in expr.value and "}" not in expr.value)
    if isinstance(expr, ast.Attribute):
        return expr.attr in jax_api.STATIC_ATTRIBUTES
    if isinstance(expr, ast.Subscript):
        return isinstance(expr.value, ast.Attribute) and expr.value.attr == "shape"
    if isinstance(expr, ast.Call):
        return isinstance(expr.func, ast.Name) and expr.func.id == "len"
    return False


def _escape(text: str) -> str:
    """Literal text inside a format string: braces doubled."""
    return text.replace("{", "{{").replace("}", "}}")


def _format_spec(value: ast.FormattedValue) -> str | None:
    if value.format_spec is None:
        return ""
    parts = []
    for part in value.format_spec.values:
        if not isinstance(part, ast.Constant):
            return None  # a nested field in the spec
        parts.append(str(part.value))
    return ":" + "".join(parts)


# Per module (its Names), gathered once rather than once per print: a file of many prints stays linear.
_JAX_IMPORTS: "weakref.WeakKeyDictionary[Names, list[tuple[str, str]]]" = weakref.WeakKeyDictionary()


def _jax_imports(names: "Names") -> list[tuple[str, str]]:
    """(alias, target) of every import of `jax` or `jax.debug` in any scope, `import jax` first."""
    found = _JAX_IMPORTS.get(names)
    if found is None:
        found = [
            (alias, target)
            for each in names.scopes.values()
            for alias, target in each.imports.items()
            if target in ("jax", "jax.debug")
        ]
        found.sort(key=lambda c: (c[0] != "jax", c[1] != "jax"))
        _JAX_IMPORTS[names] = found
    return found


def _jax_debug(module: "ModuleFacts", call: ast.Call) -> tuple[str | None, Edit | None]:
    """What to write for `jax.debug.print` where `call` is, and an `import jax` edit if needed."""
    names = module.names
    scope = names.read_scope.get(id(call.func)) if isinstance(call.func, ast.Name) else None
    if scope is None:
        return None, None
    for alias, target in _jax_imports(names):
        owner = names.lookup(alias, scope)
        if owner is not None and owner.imports.get(alias) == target and alias not in owner.assigned and alias not in owner.defs:
            return (f"{alias}.debug.print" if target == "jax" else f"{alias}.print"), None
    if names.lookup("jax", scope) is not None:
        return None, None  # `jax` means something else here
    where = _import_position(module)
    if where is None:
        return None, None
    return "jax.debug.print", Edit("import jax\n", where, where)


def _import_position(module: "ModuleFacts") -> Position | None:
    """The start of the first top-level import (after `from __future__`), where `import jax` goes."""
    for stmt in module.tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) and stmt.col_offset == 0:
            return Position(stmt.lineno, 1)
    return None
