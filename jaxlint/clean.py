"""`jaxlint clean`: remove the results caches, as `ruff clean` removes ruff's."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterator

from jaxlint.cache import made_by_jaxlint

CACHE_NAME = ".jaxlint_cache"


def caches(top: Path, configured: Path | None) -> Iterator[Path]:
    """The caches to remove: the configured one, and every `.jaxlint_cache` folder under `top`.

    A configured folder is removed only if jaxlint made it (`cache-dir = "~"` must not cost the
    home folder); a folder named `.jaxlint_cache` is jaxlint's by its name, as ruff judges its own.
    """
    if configured is not None and configured.is_dir() and made_by_jaxlint(configured):
        yield configured
    for directory, subdirs, _ in os.walk(top):
        found = Path(directory) / CACHE_NAME
        if CACHE_NAME in subdirs and not found.is_symlink():
            yield found
        subdirs[:] = [d for d in subdirs if d not in (CACHE_NAME, ".git")]


def clean(top: Path, configured: Path | None) -> list[Path]:
    """Remove the caches; the folders removed."""
    removed = []
    for cache in dict.fromkeys(p.resolve() for p in caches(top, configured)):
        shutil.rmtree(cache)
        removed.append(cache)
    return removed
