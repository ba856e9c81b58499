"""Fixes the upgrade rules offer: a removed name rewritten to its replacement, where it is used
and where it is imported.

- a reference (`jax.tree_map`, `jnp.product`) becomes the replacement spelled through a name the
  module already imports (`jax.tree.map`, `jnp.prod`), or through `jax` with `import jax` added
  when nothing else spells it and the name `jax` is free;
- a call that changes shape: `jax.ops.index_update(x, i, v)` -> `x.at[i].set(v)`,
  `jax.random.shuffle(k, x)` -> `jax.random.permutation(k, x, independent=True)`;
- an import (`from jax import tree_map`, `import jax.experimental.stax as stax`) imports the
  replacement under the same local name, so the code that uses it is untouched. The statement is
  rebuilt with libcst, which keeps the comments, parentheses and other names of an import list.

Every edit covers only the flagged text (and, for `import jax`, inserts a line): nothing else in
the file changes.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

from jaxlint.jax_versions import Version
from jaxlint.analysis.knowledge.removed_apis import CONSTANTS, LOADED_WITH_JAX
from jaxlint.analysis.removed_api_uses import ApiUse, imported, removed_api_uses
from jaxlint.findings import Edit, Fix, Position

if TYPE_CHECKING:
    from jaxlint.analysis.module import ModuleFacts

# Expressions that need no parentheses before `.at[...]`.
_ATOMS = (ast.Name, ast.Attribute, ast.Subscript, ast.Call)


def fix_for(module: "ModuleFacts", use: ApiUse, target: Version) -> Optional[Fix]:
    """The fix for one use under the target JAX, or None where no edit is exact."""
    api = use.api
    applicability = "safe" if api.safe else "unsafe"
    if use.statement is not None:
        return _import_fix(module, use, target)
    if api.call.startswith("at."):
        return _at_update(module, use)
    replacement = api.replacement(target)
    if replacement is None:
        return None
    edits = _reference_edits(module, use, replacement.name + use.rest)
    if edits is None:
        return None
    call = use.call
    if api.call.startswith("keyword:"):
        if call is None or call.func is not use.node:
            return None
        added = _added_keyword(module, call, api.call[len("keyword:"):])
        if added is None:
            return None
        edits.append(added)
    if api.keywords_only and not _passes_function_only(use):
        return None
    return Fix(applicability, f"Replace with `{replacement.name + use.rest}`", tuple(edits))


# ---- references ---------------------------------------------------------------------------------
def _reference_edits(module: "ModuleFacts", use: ApiUse, new: str) -> Optional[list[Edit]]:
    """Edits that make the reference read `new`: through its own base name when `new` lies under
    what that name is bound to, else through a name bound to a module `new` lies under, else
    through `jax`. The module that holds `new` must be loaded: one the file imports, or one
    `import jax` loads (`LOADED_WITH_JAX`); another is imported (`import jax.extend.backend`)."""
    source = module.source
    span = (source.start(use.node), source.end(use.node))
    if new in CONSTANTS:
        return [Edit(new, *span)]
    loaded = _loaded_modules(module)
    holder = new.rpartition(".")[0]
    if use.api.module:  # a module renamed: the file's import of the old one imports the new one (`_import_fix`)
        holder = new[: len(new) - len(use.rest)]
        loaded = loaded | {holder} if use.api.name in loaded else loaded
    if holder in LOADED_WITH_JAX or holder in loaded:
        if use.base is not None and new.startswith(use.bound_to + "."):
            return [Edit(use.base.id + new[len(use.bound_to):], *span)]
        for local, target in _module_imports(module):
            if new.startswith(target + ".") and _visible(module.names, local, target, use):
                return [Edit(local + new[len(target):], *span)]
        needed = "jax"
    else:
        needed = holder
    owner = module.names.lookup("jax", use.scope)
    if not new.startswith("jax."):
        return None
    if owner is not None and not _visible(module.names, "jax", "jax", use):
        return None  # the name `jax` means something else here
    where = _import_position(module)
    if where is None:
        return None
    added = [] if owner is not None and needed == "jax" else [Edit(f"import {needed}\n", where, where)]
    return [*added, Edit(new, *span)]


def _loaded_modules(module: "ModuleFacts") -> frozenset:
    """The modules the file's top-level imports load (`import a.b` loads `a` and `a.b`)."""
    found = set()
    for statement in module.tree.body:
        if isinstance(statement, ast.Import):
            dotted = [alias.name for alias in statement.names]
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
            dotted = [f"{statement.module}.{alias.name}" for alias in statement.names]
        else:
            continue
        for name in dotted:
            parts = name.split(".")
            found.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    return frozenset(found)


def _module_imports(module: "ModuleFacts") -> list[tuple[str, str]]:
    """(local name, module) of every `import x` / `import x.y as z` at the top of the module, longest module first."""
    found = []
    for statement in module.tree.body:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                found.append((alias.asname, alias.name) if alias.asname else (alias.name.split(".")[0],) * 2)
    return sorted(found, key=lambda pair: -len(pair[1]))


def _visible(names, local: str, target: str, use: ApiUse) -> bool:
    """Whether `local`, read where the use is, is still the module-level import of `target`."""
    owner = names.lookup(local, use.scope)
    return owner is names.module and local not in owner.assigned and local not in owner.defs and owner.imports.get(local) == target


def _import_position(module: "ModuleFacts") -> Optional[Position]:
    """The start of the first top-level import (after `from __future__`), where `import jax` goes."""
    for statement in module.tree.body:
        if isinstance(statement, ast.ImportFrom) and statement.module == "__future__":
            continue
        if isinstance(statement, (ast.Import, ast.ImportFrom)) and statement.col_offset == 0:
            return Position(statement.lineno, 1)
    return None


def _passes_function_only(use: ApiUse) -> bool:
    """`pjit(f, in_shardings=...)` or a bare `@pjit`: every argument after the function is a keyword."""
    call = use.call
    if call is None or call.func is not use.node:
        return _decorates(use)
    return (
        len(call.args) == 1
        and not isinstance(call.args[0], ast.Starred)
        and all(keyword.arg is not None for keyword in call.keywords)
    )


def _decorates(use: ApiUse) -> bool:
    node = use.scope.node
    for statement in ast.walk(node):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            decorator is use.node for decorator in statement.decorator_list
        ):
            return True
    return False


def _added_keyword(module: "ModuleFacts", call: ast.Call, keyword: str) -> Optional[Edit]:
    """`, keyword` inserted after the call's last argument, when it has arguments and no `**`."""
    name = keyword.split("=", 1)[0]
    if any(k.arg is None or k.arg == name for k in call.keywords):
        return None
    last = max([*call.args, *call.keywords], key=lambda node: (node.end_lineno, node.end_col_offset), default=None)
    if last is None:
        return None
    at = module.source.end(last)
    return Edit(f", {keyword}", at, at)


# ---- jax.ops.index_update(x, i, v) -> x.at[i].set(v) ---------------------------------------------
def _at_update(module: "ModuleFacts", use: ApiUse) -> Optional[Fix]:
    call = use.call
    if call is None or call.func is not use.node or call.keywords or len(call.args) != 3:
        return None
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        return None
    array, index, value = call.args
    source = module.source
    texts = [source.segment(node) for node in (array, index, value)]
    if not all(texts):
        return None
    array_text, index_text, value_text = texts
    if not isinstance(array, _ATOMS):
        array_text = f"({array_text})"
    if isinstance(index, ast.Subscript) and _spells(module, use, index.value, "jax.ops.index"):
        index_text = source.segment(index.slice)  # `jax.ops.index[0, :]` is the index `0, :`
        if not index_text:
            return None
    method = use.api.call[len("at."):]
    content = f"{array_text}.at[{index_text}].{method}({value_text})"
    edit = Edit(content, source.start(call), source.end(call))
    # `index_update` took any array-like; `.at` is a JAX array's: safe only where `x` is shown to be one.
    applicability = "safe" if module.arrays.is_array(array) else "unsafe"
    return Fix(applicability, f"Replace with `x.at[i].{method}(v)`", (edit,))


def _spells(module: "ModuleFacts", use: ApiUse, node: ast.AST, name: str) -> bool:
    return any(other.node is node and other.name == name for other in removed_api_uses(module.names, module.source.text, module.project))


# ---- imports ------------------------------------------------------------------------------------
def _import_fix(module: "ModuleFacts", use: ApiUse, target: Version) -> Optional[Fix]:
    """Import the replacement under the same local name; the other names of the statement stay."""
    statement = use.statement
    if not _alone_on_its_lines(module, statement):
        return None
    own = _moved(use, target)
    if own is None:
        return None
    applicability = "safe" if use.api.safe else "unsafe"
    # Every fixable name of the statement moves in one edit, so that fixes of one statement agree.
    moves = {}
    for other in removed_api_uses(module.names, module.source.text, module.project):
        if other.statement is statement and ("safe" if other.api.safe else "unsafe") == applicability:
            moved = _moved(other, target)
            if moved is not None:
                moves[id(other.alias)] = moved
    content = _rewritten(module, statement, moves)
    if content is None:
        return None
    source = module.source
    start, end = source.start(statement), source.end(statement)
    if not content and not source.line(end.row)[end.column - 1 :].strip():
        start, end = Position(start.row, 1), Position(end.row + 1, 1)  # the statement's lines go
    return Fix(
        applicability,
        f"Import `{own[1]}` from `{own[0]}`" if own[0] else f"Import `{own[1]}`",
        (Edit(content, start, end),),
    )


def import_replacement(use: ApiUse, target: Version) -> Optional[str]:
    """What an import of a removed name imports instead: of the replacements the target JAX has,
    the one whose last name is the imported one (`from jax import tree_map` -> `jax.tree_util.tree_map`)."""
    available = [r.name + use.rest for r in use.api.replacements if r.since <= target]
    if isinstance(use.statement, ast.ImportFrom):
        available.sort(key=lambda name: name.rsplit(".", 1)[-1] != use.alias.name)
    return available[0] if available else None


def _moved(use: ApiUse, target: Version) -> Optional[tuple[str, str]]:
    """(module, name) to import instead, for a `from` import; ("", module) for a plain import."""
    api = use.api
    if api.call or api.keywords_only:
        return None  # the calls that use the name would need rewriting too
    full = imported(use.alias, use.statement) or ""
    new = import_replacement(use, target)
    if new is None or not full:
        return None
    if isinstance(use.statement, ast.Import):
        if not use.alias.asname and new.split(".")[0] != full.split(".")[0]:
            return None  # `import a.b` binds `a`: the replacement must bind the same name
        return "", new
    if use.alias.name == "*":
        return None
    parent, _, last = new.rpartition(".")
    return (parent, last) if parent else None


def _alone_on_its_lines(module: "ModuleFacts", statement: ast.stmt) -> bool:
    """A statement that shares no line with another (`import a; import b`): it can become several lines."""
    source = module.source
    before = source.line(statement.lineno)[: source.start(statement).column - 1]
    after = source.line(statement.end_lineno or statement.lineno)[source.end(statement).column - 1 :]
    return not before.strip() and (not after.strip() or after.strip().startswith("#"))


def _rewritten(module: "ModuleFacts", statement: ast.stmt, moves: dict[int, tuple[str, str]]) -> Optional[str]:
    """The statement with the moved names taken out, followed by the imports of their replacements.

    Every comment stays: one on a moved name's line goes with its new import, the others stay where
    they were. A name the statement's block already imports under the same local name is not
    imported twice. One name left in parentheses loses them (`from jax import (vmap)`)."""
    import libcst

    text = module.source.segment(statement)
    try:
        line = libcst.parse_statement(text)
    except libcst.ParserSyntaxError:
        return None
    node = line.body[0] if isinstance(line, libcst.SimpleStatementLine) and len(line.body) == 1 else None
    if not isinstance(node, (libcst.Import, libcst.ImportFrom)) or isinstance(node.names, libcst.ImportStar):
        return None
    aliases = [alias for alias in statement.names]
    if len(aliases) != len(node.names):
        return None
    indent = " " * statement.col_offset if module.source.line(statement.lineno)[: statement.col_offset].isspace() else ""
    block = _block(module, statement)
    imported_already = _block_imports(block, statement)
    names = list(node.names)
    last = len(names) - 1
    rpar = getattr(node, "rpar", None)
    kept: list = []
    added: list[tuple[str, str]] = []  # (statement, the comment of the moved name's line)
    held: list = []  # own-line comments inside the parentheses that were a moved name's to carry
    for index, (ast_alias, cst_alias) in enumerate(zip(aliases, names)):
        moved = moves.get(id(ast_alias))
        if moved is None:
            if held:
                kept, node = _hand_on(kept, node, held, libcst)
                held = []
            kept.append(cst_alias)
            continue
        after = cst_alias.comma.whitespace_after if isinstance(cst_alias.comma, libcst.Comma) else None
        if index == last and rpar is not None and after is None:
            after = rpar.whitespace_before  # `tree_map  # mapping` then `)` on the next line
            if isinstance(after, libcst.ParenthesizedWhitespace):
                node = node.with_changes(rpar=rpar.with_changes(whitespace_before=after.with_changes(
                    first_line=libcst.TrailingWhitespace(), empty_lines=[]
                )))
        comment = after.first_line.comment.value if isinstance(after, libcst.ParenthesizedWhitespace) and after.first_line.comment else ""
        if isinstance(after, libcst.ParenthesizedWhitespace):
            held.extend(after.empty_lines)
        local = ast_alias.asname or ast_alias.name
        parent, name = moved
        if isinstance(statement, ast.Import):
            new = f"import {name}" + (f" as {ast_alias.asname}" if ast_alias.asname else "")
            full = name  # `import a.b` loads `a.b`: only the same import makes it a repeat
        else:
            new = f"from {parent} import {name}" + (f" as {local}" if local != name else "")
            full = f"{parent}.{name}"
        if (local, full) not in imported_already:
            added.append((new, comment))
    if held:
        kept, node = _hand_on(kept, node, held, libcst)
    lines = []
    if kept:
        node = _closed(kept, names[last], node, libcst)
        if len(kept) == 1 and rpar is not None and not _has_comment(libcst.Module([]).code_for_node(node)):
            node = node.with_changes(lpar=None, rpar=None, names=[kept[0].with_changes(comma=libcst.MaybeSentinel.DEFAULT)])
        lines.append(libcst.Module([]).code_for_node(node))
    lines.extend(_merged([new for new, comment in added if not comment]))
    lines.extend(f"{new}  {comment}" for new, comment in added if comment)
    if not lines:  # every name was imported already: the statement goes
        return "" if len(block) > 1 else "pass"
    return ("\n" + indent).join(lines)


def _closed(kept: list, last, node, libcst):
    """The statement with the kept names, the last one ending as the list ended: a trailing comma
    stays before `)`, a last name without one leaves none, and each kept name keeps its comment."""
    final = kept[-1]
    if final is last:
        return node.with_changes(names=kept)
    own = final.comma.whitespace_after if isinstance(final.comma, libcst.Comma) else None
    if isinstance(last.comma, libcst.Comma):
        ending = last.comma.whitespace_after
        if isinstance(own, libcst.ParenthesizedWhitespace) and isinstance(ending, libcst.ParenthesizedWhitespace):
            comma = final.comma.with_changes(whitespace_after=own.with_changes(last_line=ending.last_line))
        else:
            comma = last.comma
        return node.with_changes(names=kept[:-1] + [final.with_changes(comma=comma)])
    node = node.with_changes(names=kept[:-1] + [final.with_changes(comma=libcst.MaybeSentinel.DEFAULT)])
    rpar = getattr(node, "rpar", None)
    if rpar is not None and isinstance(own, libcst.ParenthesizedWhitespace):
        # its comment now ends the list, where the moved last name's comment was
        ending = rpar.whitespace_before
        last_line = ending.last_line if isinstance(ending, libcst.ParenthesizedWhitespace) else own.last_line
        node = node.with_changes(rpar=rpar.with_changes(whitespace_before=own.with_changes(last_line=last_line)))
    return node


def _hand_on(kept: list, node, held: list, libcst):
    """Put the own-line comments a moved name's line led into after the name kept before it (or
    after `(`): they stay where they were."""
    if kept and isinstance(kept[-1].comma, libcst.Comma) and isinstance(
        kept[-1].comma.whitespace_after, libcst.ParenthesizedWhitespace
    ):
        space = kept[-1].comma.whitespace_after
        kept = kept[:-1] + [kept[-1].with_changes(comma=kept[-1].comma.with_changes(
            whitespace_after=space.with_changes(empty_lines=[*space.empty_lines, *held])
        ))]
    elif getattr(node, "lpar", None) is not None and isinstance(node.lpar.whitespace_after, libcst.ParenthesizedWhitespace):
        space = node.lpar.whitespace_after
        node = node.with_changes(lpar=node.lpar.with_changes(
            whitespace_after=space.with_changes(empty_lines=[*space.empty_lines, *held])
        ))
    return kept, node


def _has_comment(code: str) -> bool:
    import io
    import tokenize

    try:
        return any(token.type == tokenize.COMMENT for token in tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return True


def _block(module: "ModuleFacts", statement: ast.stmt) -> list:
    """The statements of the block the statement is in."""
    parent = module.names.parents.get(id(statement), module.tree)
    for field in ("body", "orelse", "finalbody"):
        value = getattr(parent, field, None)
        if isinstance(value, list) and statement in value:
            return value
    return [statement]


def _block_imports(block: list, statement: ast.stmt) -> set[tuple[str, str]]:
    """(local name, dotted name) bound by the other import statements of the block."""
    found = set()
    for other in block:
        if other is statement or not isinstance(other, (ast.Import, ast.ImportFrom)):
            continue
        for alias in other.names:
            full = imported(alias, other)
            if full:
                local = alias.asname or (alias.name.split(".")[0] if isinstance(other, ast.Import) else alias.name)
                found.add((local, full))
    return found


def _merged(statements: list[str]) -> list[str]:
    """`from m import a` and `from m import b` as `from m import a, b`; other statements as they are."""
    merged: dict[str, list[str]] = {}
    plain: list[str] = []
    for statement in statements:
        if statement.startswith("from "):
            head, _, names = statement.partition(" import ")
            merged.setdefault(head, []).append(names)
        else:
            plain.append(statement)
    return plain + [f"{head} import {', '.join(names)}" for head, names in merged.items()]
