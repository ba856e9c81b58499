"""The results cache: each file's findings, keyed by its content, the jaxlint build, the selected codes and options.

A file's findings also depend on the project modules its analysis read (their size and
mtime are kept with the entry: editing one re-lints the file), on the paths where an import
was looked for and found nothing (kept as missing: a module created there re-lints the file)
and on the traced calls into it from other modules (kept as a key, compared with the calls
of this run).
"""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator

import click

import jaxlint
from jaxlint.analysis.project.project import IncomingCall, call_from_json, call_to_json
from jaxlint.findings import Edit, Finding, Fix, Position

DEFAULT_DIRECTORY = ".jaxlint_cache"  # in the project root, unless configured elsewhere
_GITIGNORE = "# Automatically created by jaxlint.\n*\n"
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by jaxlint.\n"
)


def cache_directory(configured: Path | None, root: Path, given: str | None = None) -> Path:
    """Where a project's results cache is: the folder `given` (`--cache-dir`), else `JAXLINT_CACHE_DIR`,
    else the configured `cache-dir`, else `.jaxlint_cache` in the project root `root`."""
    chosen = given or os.environ.get("JAXLINT_CACHE_DIR")
    return Path(chosen) if chosen else configured or root / DEFAULT_DIRECTORY


def made_by_jaxlint(directory: Path) -> bool:
    """Whether a folder is a results cache jaxlint made (its CACHEDIR.TAG says so)."""
    try:
        return (directory / "CACHEDIR.TAG").read_text(encoding="utf-8") == _CACHEDIR_TAG
    except (OSError, UnicodeDecodeError):
        return False


def digest(data: bytes) -> str:
    """The content hash a cache entry is keyed by."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def calls_key(calls: Iterable[IncomingCall]) -> str:
    """A key for a set of traced calls into a file ("" for none)."""
    rows = sorted(json.dumps(call_to_json(call)) for call in calls)
    if not rows:
        return ""
    return hashlib.blake2b("\n".join(rows).encode(), digest_size=16).hexdigest()


@dataclass
class Cached:
    """A file's results as the cache kept them."""

    findings: list[Finding]
    calls: set[IncomingCall]  # traced calls into other project modules
    deps: set[str]  # the project modules the findings depend on
    incoming: str  # `calls_key` of the traced calls into the file
    warnings: list[str]  # analyses cut short in the file


@lru_cache(maxsize=None)
def _build_fingerprint() -> str:
    """The version plus every jaxlint source file's size and mtime, so an edited rule never reads
    stale results (taken once per process: the process runs the code it imported)."""
    package = os.path.dirname(jaxlint.__file__)
    parts = [jaxlint.__version__]
    for directory, subdirs, names in os.walk(package):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                info = os.stat(os.path.join(directory, name))
                parts.append(
                    f"{os.path.relpath(directory, package)}/{name}:{info.st_size}:{info.st_mtime_ns}"
                )
    return "\n".join(parts)


def settings_key(codes: Iterable[str], options: dict[str, Any], **reading: Any) -> str:
    """One cache file per combination of build, selected codes, rule options and how files are read
    (`reading`: the fixable codes, whether `# noqa` counts, the extensions' languages)."""
    blob = json.dumps(
        {"build": _build_fingerprint(), "codes": sorted(codes), "options": options, **reading},
        sort_keys=True,
        default=repr,
    )
    return hashlib.blake2b(blob.encode(), digest_size=16).hexdigest()


def _dump_position(p: Position) -> list[int]:
    return [p.row, p.column]


def _dump(finding: Finding) -> list:
    fix = finding.fix
    return [
        finding.code,
        finding.name,
        finding.message,
        _dump_position(finding.start),
        _dump_position(finding.end),
        finding.noqa_row,
        finding.cell,
        finding.severity,
        None
        if fix is None
        else [
            fix.applicability,
            fix.message,
            [[e.content, _dump_position(e.start), _dump_position(e.end)] for e in fix.edits],
        ],
    ]


class _Corrupt(ValueError):
    """A cache entry that this build did not write: the file is linted afresh."""


def _check(ok: bool) -> None:
    if not ok:
        raise _Corrupt()


def _string(value: Any) -> str:
    _check(isinstance(value, str))
    return value


def _count(value: Any, optional: bool = False) -> int | None:
    """A positive int (rows, columns, cells), or None where `optional`."""
    if value is None and optional:
        return None
    _check(type(value) is int and value >= 1)
    return value


def _position(value: Any) -> Position:
    _check(isinstance(value, list) and len(value) == 2)
    return Position(_count(value[0]), _count(value[1]))


def _load(row: Any, path: str) -> Finding:
    """A finding from its cached row, every field checked: a cache is a file anyone could have edited."""
    _check(isinstance(row, list) and len(row) == 9)
    code, name, message, start, end, noqa_row, cell, severity, fix = row
    if fix is not None:
        _check(isinstance(fix, list) and len(fix) == 3 and fix[0] in ("safe", "unsafe") and isinstance(fix[2], list))
        edits = []
        for edit in fix[2]:
            _check(isinstance(edit, list) and len(edit) == 3)
            edits.append(Edit(_string(edit[0]), _position(edit[1]), _position(edit[2])))
        fix = Fix(fix[0], _string(fix[1]), tuple(edits))
    _check(isinstance(code, str) and len(code) == 6 and code.startswith("JAX") and code[3:].isdigit())
    return Finding(
        code=code,
        name=_string(name),
        message=_string(message),
        path=path,
        start=_position(start),
        end=_position(end),
        fix=fix,
        noqa_row=_count(noqa_row, optional=True),
        cell=_count(cell, optional=True),
        severity=_string(severity),
    )


class Cache:
    """Entries by absolute path: [mtime_ns, size, content digest, results], where `results` holds
    the file's results for each of the last few sets of traced calls into it, newest first:
    [incoming calls key, findings, [[dependency, mtime_ns, size], ...], traced calls out,
    warnings]. JSON, so a cache is never code.

    A run lints each file without calls first, then with the calls the others make into it; the
    cache answers each of those steps with the results it kept for the same calls. Checking one
    file lints its callers with the calls of the modules checked with it, checking its folder
    with all of them: both are answered, whichever ran last.

    Several processes may share a cache (flake8 lints files in several): each saves what it stored
    over what the others saved since it read the file, under a lock where the platform has one,
    and `refresh` takes in what they saved meanwhile."""

    def __init__(self, directory: Path, key: str):
        self.directory = directory
        self.file = directory / jaxlint.__version__ / f"{key}.json"
        self._touched: set[str] = set()
        self._stored: set[str] = set()  # paths whose entries this process wrote
        self._seen: tuple[int, int] | None = None  # the file's (mtime, size) when last read or written
        self._entries: dict[str, list] = self._read()

    def _read(self) -> dict[str, list]:
        try:
            with open(self.file, encoding="utf-8") as handle:
                info = os.fstat(handle.fileno())
                loaded = json.load(handle)
        except (OSError, ValueError, RecursionError):
            return {}  # no cache yet, or an unreadable one (even a hostile one): start afresh, and replace it
        self._seen = (info.st_mtime_ns, info.st_size)
        return loaded if isinstance(loaded, dict) else {}

    def refresh(self) -> None:
        """Take in the entries other processes saved since this one last read or wrote the file."""
        try:
            info = os.stat(self.file)
        except OSError:
            return
        if (info.st_mtime_ns, info.st_size) != self._seen:
            self._entries = self._merged(self._read())

    def lookup(self, path: str, stat: os.stat_result, incoming: str = "") -> tuple[Cached | None, str | None]:
        """(results, None) of the file linted with the traced calls whose key is `incoming` (none by
        default), when the file's and its dependencies' size and mtime are unchanged; else (None,
        the digest last seen when only the file itself may have changed, or None)."""
        entry = self._entries.get(path)
        try:
            results = _results(entry, incoming)
            if results is None or not all(_unchanged(*dependency) for dependency in results[2]):
                return None, None
            cached = _cached(results, path)  # every field checked, even when only the digest is used
            if entry[0] == stat.st_mtime_ns and entry[1] == stat.st_size:
                self._touched.add(path)
                return cached, None
            return None, str(entry[2])
        except (TypeError, ValueError, IndexError, KeyError, AttributeError):
            return None, None  # no entry, or one this build cannot read: lint the file afresh

    def cached(self, path: str, incoming: str = "") -> Cached:
        return _cached(_results(self._entries[path], incoming), path)

    def store(
        self,
        path: str,
        stat: os.stat_result,
        content_digest: str,
        findings: list[Finding] | None,
        calls: Iterable[IncomingCall] = (),
        deps: Iterable[str] = (),
        incoming: str = "",
        warnings: Iterable[str] = (),
    ) -> None:
        """Record a file's results with the traced calls `incoming` into it; `findings=None` keeps
        the old ones (the content hash matched, only mtime moved)."""
        old = self._entries.get(path)
        if findings is None:
            entry = [stat.st_mtime_ns, stat.st_size, content_digest, old[3]]
        else:
            results = [
                incoming,
                [_dump(f) for f in findings],
                [[dependency, *_stamp(dependency)] for dependency in sorted(deps)],
                sorted((call_to_json(call) for call in calls), key=json.dumps),
                list(warnings),
            ]
            entry = [stat.st_mtime_ns, stat.st_size, content_digest, _kept([results], old, content_digest)]
        self._entries[path] = entry
        self._touched.add(path)
        self._stored.add(path)

    def save(self) -> None:
        """Write the cache if this process stored anything (entries of files that no longer exist
        are dropped), over what other processes saved meanwhile; failure only warns."""
        if not self._stored or _read_only(self.directory):
            return
        try:
            self._prepare()
            with _locked(self.file.with_suffix(".lock")):
                entries = self._merged(self._read())
                entries = {p: e for p, e in entries.items() if p in self._touched or os.path.exists(p)}
                import tempfile  # only a run that writes pays for it

                fd, temporary = tempfile.mkstemp(dir=self.file.parent, suffix=".tmp")
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(entries, handle, separators=(",", ":"))
                    handle.flush()
                    info = os.fstat(handle.fileno())
                os.replace(temporary, self.file)
        except OSError as exc:
            click.echo(
                f"warning: cannot write the cache in {self.directory}: {exc.strerror or exc}", err=True
            )
            return
        self._entries = entries
        self._seen = (info.st_mtime_ns, info.st_size)
        self._stored.clear()

    def _merged(self, saved: dict[str, list]) -> dict[str, list]:
        """The entries other processes saved, with this process's own on top, each keeping the
        other's results for the same content with other calls into it."""
        merged = dict(saved)
        for path in self._stored:
            entry = self._entries[path]
            merged[path] = [*entry[:3], _kept(entry[3], saved.get(path), entry[2])]
        return merged

    def _prepare(self) -> None:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            marker = self.directory / name
            if not marker.exists():
                marker.write_text(text, encoding="utf-8")


# Results kept per file for sets of traced calls into it, besides those without any (which every
# run asks for first): the folder's, and those of the few checks of one file that bring it.
_KEPT_RESULTS = 8


def _results(entry: Any, incoming: str) -> list | None:
    """An entry's results with the calls whose key is `incoming`, if it has them."""
    return next((results for results in entry[3] if results[0] == incoming), None)


def _kept(newest: list, other: Any, content_digest: str) -> list:
    """The results to keep for a file: `newest`, then those of `other` (an earlier or another
    process's entry for it) if its content is the same, one per set of calls, newest first."""
    candidates = list(newest)
    try:
        if other is not None and other[2] == content_digest:
            candidates += other[3]
    except (TypeError, IndexError, KeyError):
        pass  # an entry this build cannot read: nothing of it is kept
    kept, seen = [], set()
    for results in candidates:
        if not (isinstance(results, list) and len(results) == 5 and isinstance(results[0], str)):
            continue
        if results[0] not in seen and (not results[0] or len(seen - {""}) < _KEPT_RESULTS):
            seen.add(results[0])
            kept.append(results)
    return kept


def _cached(results: list, path: str) -> Cached:
    """A file's results from their cached rows: [incoming key, findings, dependencies, calls out, warnings]."""
    incoming, rows, deps, calls, warnings = results
    return Cached(
        [_load(row, path) for row in rows],
        {call_from_json(call) for call in calls},
        {str(dependency) for dependency, _, _ in deps},
        _string(incoming),
        [_string(warning) for warning in warnings],
    )


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` for the time of a save, where the platform offers `fcntl`."""
    try:
        import fcntl
    except ImportError:  # Windows: saves may overwrite each other, which costs only a re-lint
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _read_only(directory: Path) -> bool:
    """A folder (or its nearest existing parent) with no write bits: a read-only checkout.

    Checked on the mode bits rather than with `os.access`, which says yes to root.
    """
    for candidate in (directory, *directory.parents):
        if candidate.exists():
            return not candidate.stat().st_mode & 0o222
    return False


def _stamp(path: str) -> list[int]:
    try:
        info = os.stat(path)
    except OSError:
        return [-1, -1]
    return [info.st_mtime_ns, info.st_size]


def _unchanged(path: str, mtime: int, size: int) -> bool:
    return _stamp(path) == [mtime, size]
