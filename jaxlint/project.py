"""What applies to one file in its project: its configuration, the rules selected, and the findings kept."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from jaxlint.config import (
    Config,
    known_codes,
    load_config,
    resolve_selection,
)
from jaxlint.cache import Cache, cache_directory
from jaxlint.callers import callers
from jaxlint.findings import Finding
from jaxlint.rules import all_rules, opt_in_codes
from jaxlint.runner import LintSettings, cache_key
from jaxlint.suppression import PerFileIgnores


# The results caches this process read, by folder and key.
_caches: dict[tuple[Path, str], Cache] = {}


@dataclass
class FileSettings:
    """The nearest configuration above a file, resolved as `jaxlint check` resolves it for that file."""

    config: Config
    selected: frozenset[str]
    lint: LintSettings
    ignores: PerFileIgnores

    @classmethod
    def for_path(cls, path: Path, fix: bool = False, unsafe_fixes: bool | None = None) -> "FileSettings":
        """ConfigError if the configuration is unreadable or names unknown rules."""
        config = load_config(None, search_from=path)
        rules = all_rules()
        codes = known_codes(rules)
        selected = resolve_selection(config.selections, codes, opt_in_codes())
        unsafe = config.unsafe_fixes if unsafe_fixes is None else unsafe_fixes
        fixable = resolve_selection([config.fixable], codes)
        lint = LintSettings(
            codes=frozenset(selected & rules.keys()),
            options=config.options,
            known=frozenset(rules),
            fix=fix,
            unsafe_fixes=unsafe,
            fixable=None if fixable == frozenset(codes) else fixable,
            extension=tuple(sorted(config.extension.items())),
        )
        return cls(config, selected, lint, PerFileIgnores(config.per_file_ignores, config.root, codes))

    def callers(self, path: Path, texts: Mapping[str, bytes] | None = None) -> list[str]:
        """The project's modules that may call into the file `path`, linted with it (`callers.py`);
        `texts` stand in for the contents of the files they name."""
        config = self.config
        return callers(
            [str(path)], excludes=config.excludes, root=config.root, respect_gitignore=config.respect_gitignore,
            texts=texts,
        )

    def cache(self, settings: LintSettings) -> Cache:
        """The project's results cache for what `settings` lint. A process that lints file after
        file (the server, flake8's workers) keeps each cache it read, and takes in what other
        processes saved since before each use."""
        where = (cache_directory(self.config.cache_dir, self.config.root).resolve(), cache_key(settings))
        cache = _caches.get(where)
        if cache is None:
            cache = _caches[where] = Cache(*where)
        else:
            cache.refresh()
        return cache

    def kept(self, findings: list[Finding]) -> list[Finding]:
        """The selected findings that no per-file ignore covers, in position order."""
        kept = [
            f
            for f in findings
            if f.code in self.selected and not (self.ignores and f.code in self.ignores.ignored(f.path))
        ]
        return sorted(kept, key=Finding.sort_key)
