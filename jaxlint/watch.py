"""`--watch`: notice changes by polling the modification times of the files a run depends on."""

from __future__ import annotations

import os
from typing import Iterable

from jaxlint.config import CONFIG_NAMES, DEFAULT_EXCLUDE
from jaxlint.files import SUFFIXES

WATCH_INTERVAL = 0.5  # seconds between looks: fast enough to feel immediate, cheap enough to leave running

_WATCHED_NAMES = frozenset(CONFIG_NAMES) | {".gitignore"}


def watched_state(paths: Iterable[str]) -> frozenset[tuple[str, int, int]]:
    """(path, mtime, size) of every Python file, notebook, config file and .gitignore under `paths`.

    Two states differ when a file was added, removed or changed. The default excluded folders
    (.git, .venv, caches) are not walked: they change without the project changing.
    """
    state = set()
    for given in paths:
        for path in _walk(os.path.abspath(given)):
            try:
                info = os.stat(path)
            except OSError:
                continue
            state.add((path, info.st_mtime_ns, info.st_size))
    return frozenset(state)


def _walk(top: str) -> Iterable[str]:
    if not os.path.isdir(top):
        yield top
        return
    for directory, folders, files in os.walk(top):
        folders[:] = [f for f in folders if f not in DEFAULT_EXCLUDE]
        for name in files:
            if name.endswith(SUFFIXES) or name in _WATCHED_NAMES:
                yield os.path.join(directory, name)
