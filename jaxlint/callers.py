"""The project's modules that may call into given files: what a check of those files lints with them.

A file's findings depend on the traced calls made into it from the rest of its project (see
`analysis/project/project.py`), so a check of some files alone, of standard input or of an
editor's buffer lints the project's modules that may make such calls too, and reports only the
files it was given. A module can call into a file only by importing it, directly or through a
package that re-exports it: the search keeps every Python module under the files' project root
(the nearest folder with a project marker, walked with the configured excludes) whose text names
one of the files' modules (the last part of its dotted name, as a word), then the modules naming
those, up to `MAX_DEPTH` steps of importers. The text test is a cheap pre-filter; the analysis
decides which calls are real.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable

from jaxlint.analysis.project.project import ProjectIndex
from jaxlint.files import discover, read_bytes

# Steps of importers followed from a file: its importers, and theirs (a traced entry point that
# reaches the file through one helper module). Further ones rarely trace it and would pull in most
# of a large project for a module every other one imports.
MAX_DEPTH = 2


def callers(
    paths: Iterable[str], *, excludes: Iterable[str], root: Path, respect_gitignore: bool = True
) -> list[str]:
    """The Python modules of the projects of `paths` (absolute) that may call into them, `paths` excluded."""
    given = {os.path.abspath(p) for p in paths}
    index = ProjectIndex()
    roots = {r for r in (index.project_root(os.path.dirname(p)) for p in given if p.endswith(".py")) if r}
    if not roots:
        return []
    found = discover(sorted(roots), root=root, excludes=excludes, respect_gitignore=respect_gitignore,
                     suffixes=(".py",))
    texts: dict[str, str] = {}
    for path in found.files:
        if path in given:
            continue
        try:
            texts[path] = read_bytes(path).decode("utf-8", "replace")
        except OSError:
            continue
    names = {_last_name(index, p) for p in given if p.endswith(".py")}
    kept: list[str] = []
    for _ in range(MAX_DEPTH):
        names.discard("")
        if not names or not texts:
            break
        pattern = re.compile(r"\b(?:%s)\b" % "|".join(sorted(map(re.escape, names))))
        step = [path for path, text in texts.items() if pattern.search(text)]
        for path in step:
            del texts[path]
        kept += step
        names = {_last_name(index, p) for p in step}
    return sorted(kept)


def _last_name(index: ProjectIndex, path: str) -> str:
    """The last part of a module's dotted name (its package's, for an `__init__.py`)."""
    return index.module_name(path)[0].rpartition(".")[2]
