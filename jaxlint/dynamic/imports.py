"""Where the code that `--dynamic` runs imports from: the user's own import path, then the project's.

In order: the folder jaxlint was started from and the entries of `PYTHONPATH` (made absolute, as
`python` itself would read them there), then the project root, its `src/` folder, and the folder
above the file's top-level package (so an unpacked wheel or a package outside any project
imports as `pkg.module`). The worker process itself runs from the project root and puts the file's
own folder in front, as `python path/to/file.py` does.
"""

from __future__ import annotations

import os


def import_path(path: str, root: str) -> list[str]:
    """The folders the code in `path` imports from, first wins, without duplicates."""
    entries = [os.getcwd()]
    entries += [os.path.abspath(e) for e in os.environ.get("PYTHONPATH", "").split(os.pathsep) if e]
    entries += [root, os.path.join(root, "src"), package_parent(path)]
    seen: list[str] = []
    for entry in entries:
        if entry not in seen and os.path.isdir(entry):
            seen.append(entry)
    return seen


def package_parent(path: str) -> str:
    """The folder above the outermost package (`__init__.py` folder) holding `path`."""
    directory = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return directory


def with_import_path(env: dict[str, str], path: str, root: str) -> dict[str, str]:
    """`env` with PYTHONPATH set to the import path for `path`."""
    return {**env, "PYTHONPATH": os.pathsep.join(import_path(path, root))}
