"""The project's modules that may call into given files: what a check of those files lints with them.

A file's findings depend on the traced calls made into it from the rest of its project (see
`analysis/project/project.py`), so a check of some files alone, of standard input or of an
editor's buffer lints the project's modules that may make such calls too, and reports only the
files it was given. A module can call into a file only by importing it, directly or through a
package that re-exports it. The search walks the Python modules under the files' project root
(the nearest folder with a project marker, with the configured excludes) and keeps those whose
import statements name one of the files' modules (the last part of its dotted name, as a word),
or a name a package's `__init__.py` re-exports from one; then, in a second step, the modules
importing those (`MAX_DEPTH`). The text test is a cheap pre-filter; the analysis decides which
calls are real.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path
from typing import Iterable, Mapping

from jaxlint.analysis.project.project import ProjectIndex
from jaxlint.files import discover, read_bytes

# Steps of importers followed from a file: its importers, and theirs (a traced entry point that
# reaches the file through one helper module). Further ones rarely trace it and would pull in most
# of a large project for a module that many import.
MAX_DEPTH = 2
# Import statements, a parenthesised name list included: what a module's imports name.
_IMPORTS = re.compile(r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+import[ \t]*(?:\([^)]*\)|[^\n]*)|import[ \t]+[^\n]*)", re.M)


def callers(
    paths: Iterable[str],
    *,
    excludes: Iterable[str],
    root: Path,
    respect_gitignore: bool = True,
    texts: Mapping[str, bytes] | None = None,
) -> list[str]:
    """The Python modules of the projects of `paths` (absolute) that may call into them, `paths`
    excluded; `texts` stand in for the contents of the files they name (an editor's buffers)."""
    paths = list(paths)
    if not any(p.endswith(".py") for p in paths):  # only a Python module can be imported
        return []
    modules = project_modules(paths, excludes=excludes, root=root, respect_gitignore=respect_gitignore)
    return importers(paths, modules, texts)


def project_modules(
    paths: Iterable[str], *, excludes: Iterable[str], root: Path, respect_gitignore: bool = True
) -> list[str]:
    """The Python modules under the project roots of `paths` (absolute), with the excludes: those a
    check of the project's folder lints. None for files outside any project."""
    index = ProjectIndex()
    roots = {r for r in (index.project_root(os.path.dirname(p)) for p in paths) if r}
    if not roots:
        return []
    found = discover(sorted(roots), root=root, excludes=excludes, respect_gitignore=respect_gitignore,
                     suffixes=(".py",))
    return found.files


def importers(paths: Iterable[str], modules: Iterable[str], texts: Mapping[str, bytes] | None = None) -> list[str]:
    """The `modules` that may call into the files `paths`, in two steps of importers."""
    given = {os.path.abspath(p) for p in paths}
    texts = texts or {}
    index = ProjectIndex()
    imports = {path: _imports(path, texts.get(path)) for path in modules if path not in given}
    names = {_last_name(index, p) for p in given if p.endswith(".py")}
    kept: list[str] = []
    for _ in range(MAX_DEPTH):
        names.discard("")
        if not names or not imports:
            break
        pattern = re.compile(r"\b(?:%s)\b" % "|".join(sorted(map(re.escape, names))))
        step = [path for path, text in imports.items() if pattern.search(text)]
        names = set()
        for path in step:
            names |= _reexported(imports.pop(path), pattern) if _is_init(path) else {_last_name(index, path)}
        kept += step
    return sorted(kept)


# The import statements of the files read, by path, with the (mtime, size) they were read at:
# a process that checks many files one by one (flake8's) reads each module once.
_read_imports: dict[str, tuple[tuple[int, int], str]] = {}


def _imports(path: str, text: bytes | None) -> str:
    """A module's import statements, from `text` when given, else from its file ("" if unreadable)."""
    if text is not None:
        return _import_statements(text)
    try:
        info = os.stat(path)
    except OSError:
        return ""
    stamp = (info.st_mtime_ns, info.st_size)
    known = _read_imports.get(path)
    if known is not None and known[0] == stamp:
        return known[1]
    try:
        statements = _import_statements(read_bytes(path))
    except OSError:
        return ""
    _read_imports[path] = (stamp, statements)
    return statements


def _import_statements(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    return "\n".join(m.group(0).lstrip() for m in _IMPORTS.finditer(text))


def _is_init(path: str) -> bool:
    return os.path.basename(path) == "__init__.py"


def _reexported(imports: str, pattern: re.Pattern) -> set[str]:
    """The names a package's `__init__.py` binds from the modules `pattern` names: its importers
    reach them as the package's (a package is named by nearly every module of its project, so the
    package's own name would keep them all)."""
    try:
        tree = ast.parse(imports)
    except SyntaxError:
        return set()
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and pattern.search(node.module or ""):
            bound |= {alias.asname or alias.name for alias in node.names if alias.name != "*"}
    return bound


def _last_name(index: ProjectIndex, path: str) -> str:
    """The last part of a module's dotted name."""
    return index.module_name(path)[0].rpartition(".")[2]
