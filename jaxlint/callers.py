"""The project's modules that may call into given files: what a check of those files lints with them.

A file's findings depend on the traced calls made into it from the rest of its project (see
`analysis/project/project.py`), so a check of some files alone, of standard input or of an
editor's buffer lints the project's modules that may make such calls too, and reports only the
files it was given. A module can call into a file only by importing it, directly or through a
package that re-exports it. The search walks the Python modules under the files' project root
(the nearest folder with a project marker, with the configured excludes) and keeps those whose
import statements name one of the files' modules (the last part of its dotted name, as a word),
or a name a package's `__init__.py` re-exports from one, and can find it where the analysis
looks names up (`_Reach`); then, in a second step, the modules importing those (`MAX_DEPTH`).
These tests are cheap pre-filters; the analysis decides which calls are real.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path
from typing import Iterable, Mapping

from jaxlint.analysis.project.project import ProjectIndex, opaque
from jaxlint.files import discover, read_bytes

# Steps of importers followed from a file: its importers, and theirs (a traced entry point that
# reaches the file through one helper module). Further ones rarely trace it and would pull in most
# of a large project for a module that many import.
MAX_DEPTH = 2
# Import statements, a parenthesised name list included: what a module's imports name.
_FROM = re.compile(r"from[ \t]+[\w.]+")
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
    targets = {p for p in given if p.endswith(".py")}
    names = {_last_name(index, p) for p in targets}
    kept: list[str] = []
    for _ in range(MAX_DEPTH):
        names.discard("")
        if not names or not imports:
            break
        pattern = _Words(names)
        reach = _Reach(index, targets)
        step = [path for path, text in imports.items() if pattern.search(text) and reach.imports(path, text)]
        names = set()
        for path in step:
            statements = imports.pop(path)  # kept once: not matched again in the next step
            names |= _reexported(statements, pattern) if _is_init(path) else {_last_name(index, path)}
        kept += step
        targets = set(step)
    return sorted(kept)


class _Reach:
    """Whether a module's imports can lead to one of some files, as the analysis follows them.

    A traced call is followed into a module found under the folders the caller's absolute
    imports are looked up in (`ProjectIndex.import_roots`), never into a modelled library
    (`opaque`). So a module whose imported top-level packages and modules lie in none of the
    files' folders cannot call into them, whatever its imports name: in a repository holding
    several projects, those that import a library of the same name from elsewhere."""

    def __init__(self, index: ProjectIndex, files: Iterable[str]):
        self.index = index
        self.files = set(files)
        self.folders: set[str] = set()  # every folder that holds one of the files, at any depth
        for path in self.files:
            folder, parent = os.path.dirname(path), ""
            while folder not in self.folders and folder != parent:
                self.folders.add(folder)
                folder, parent = os.path.dirname(folder), folder

    def imports(self, path: str, imports: str) -> bool:
        """Whether a top-level package or module that `imports` (the module's import statements)
        name is one of the files or holds one, where the module at `path` looks it up."""
        for top in _top_levels(_parsed(imports), self.index.module_name(path)[1]):
            if opaque(top):
                continue
            for root in self.index.import_roots(path, top):
                base = os.path.join(root, top)
                if base in self.folders or base + ".py" in self.files:
                    return True
        return False


def _parsed(imports: str) -> ast.Module:
    """The import statements `_import_statements` found, as one module. Where they do not parse
    together, each on its own: the text test also finds a docstring's lines that start with
    `import` (prose, left out) and statements it cuts short (`from m import a, \\`), whose
    module is kept."""
    try:
        return ast.parse(imports)
    except SyntaxError:
        pass
    body: list[ast.stmt] = []
    for match in _IMPORTS.finditer(imports):
        statement = match.group(0)
        head = _FROM.match(statement)
        for text in (statement, f"{head.group(0)} import _" if head else statement.rstrip(" \t\\,")):
            try:
                body += ast.parse(text).body
                break
            except SyntaxError:
                continue
    return ast.Module(body=body, type_ignores=[])


def _top_levels(tree: ast.Module, package: str) -> set[str]:
    """The top-level packages (or modules) import statements read, relative ones within `package`."""
    tops = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            tops |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops.add(node.module.partition(".")[0])
        elif isinstance(node, ast.ImportFrom) and package and node.level <= package.count(".") + 1:
            tops.add(package.partition(".")[0])
    return tops


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


def _reexported(imports: str, pattern: _Words) -> set[str]:
    """The names a package's `__init__.py` binds from the modules `pattern` names: its importers
    reach them as the package's (a package is named by nearly every module of its project, so the
    package's own name would keep them all)."""
    bound = set()
    for node in ast.walk(_parsed(imports)):
        if isinstance(node, ast.ImportFrom) and pattern.search(node.module or ""):
            bound |= {alias.asname or alias.name for alias in node.names if alias.name != "*"}
    return bound


_WORD = re.compile(r"\w+")


class _Words:
    """Whether a text spells one of some names as a word of its own: each word of the text looked
    up in a set (a pattern alternating a project's hundreds of module names tries each of them at
    every position); a name that is no plain word (`my-module`) is matched by the pattern."""

    def __init__(self, names: set[str]):
        self.names = frozenset(names)
        plain = all(_WORD.fullmatch(name) for name in names)
        self.pattern = None if plain else re.compile(r"\b(?:%s)\b" % "|".join(sorted(map(re.escape, names))))

    def search(self, text: str) -> bool:
        if self.pattern is not None:
            return self.pattern.search(text) is not None
        return not self.names.isdisjoint(_WORD.findall(text))


def _last_name(index: ProjectIndex, path: str) -> str:
    """The last part of a module's dotted name."""
    return index.module_name(path)[0].rpartition(".")[2]
