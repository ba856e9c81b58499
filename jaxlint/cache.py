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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import click

import jaxlint
from jaxlint.analysis.project.project import IncomingCall, call_from_json, call_to_json
from jaxlint.findings import Edit, Finding, Fix, Position

_GITIGNORE = "# Automatically created by jaxlint.\n*\n"
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by jaxlint.\n"
)


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


def _build_fingerprint() -> str:
    """The version plus every jaxlint source file's size and mtime, so an edited rule never reads stale results."""
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
    """Entries by absolute path: [mtime_ns, size, content digest, findings, [[dependency, mtime_ns,
    size], ...], traced calls out, incoming calls key, warnings]; JSON, so a cache is never code."""

    def __init__(self, directory: Path, key: str):
        self.directory = directory
        self.file = directory / jaxlint.__version__ / f"{key}.json"
        self._entries: dict[str, list] = {}
        self._touched: set[str] = set()
        self._changed = False
        try:
            with open(self.file, encoding="utf-8") as handle:
                loaded = json.load(handle)
            if isinstance(loaded, dict):
                self._entries = loaded
        except (OSError, ValueError, RecursionError):
            pass  # no cache yet, or an unreadable one (even a hostile one): start afresh, and replace it

    def lookup(self, path: str, stat: os.stat_result) -> tuple[Cached | None, str | None]:
        """(results, None) when the file's and its dependencies' size and mtime are unchanged; else
        (None, the digest last seen when only the file itself may have changed, or None)."""
        entry = self._entries.get(path)
        try:
            if not all(_unchanged(dependency, mtime, size) for dependency, mtime, size in entry[4]):
                return None, None
            cached = self.cached(path)  # every field checked, even when only the digest is used
            if entry[0] == stat.st_mtime_ns and entry[1] == stat.st_size:
                self._touched.add(path)
                return cached, None
            return None, str(entry[2])
        except (TypeError, ValueError, IndexError, KeyError, AttributeError):
            return None, None  # no entry, or one this build cannot read: lint the file afresh

    def cached(self, path: str) -> Cached:
        _, _, _, rows, deps, calls, incoming, warnings = self._entries[path]
        return Cached(
            [_load(row, path) for row in rows],
            {call_from_json(call) for call in calls},
            {str(dependency) for dependency, _, _ in deps},
            str(incoming),
            [_string(warning) for warning in warnings],
        )

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
        """Record a file's results; `findings=None` keeps the old ones (the content hash matched, only mtime moved)."""
        if findings is None:
            entry = list(self._entries[path])
            entry[:3] = [stat.st_mtime_ns, stat.st_size, content_digest]
        else:
            entry = [
                stat.st_mtime_ns,
                stat.st_size,
                content_digest,
                [_dump(f) for f in findings],
                [[dependency, *_stamp(dependency)] for dependency in sorted(deps)],
                sorted((call_to_json(call) for call in calls), key=json.dumps),
                incoming,
                list(warnings),
            ]
        self._entries[path] = entry
        self._touched.add(path)
        self._changed = True

    def save(self) -> None:
        """Write the cache if it changed (entries of files that no longer exist are dropped); failure only warns."""
        if not self._changed or _read_only(self.directory):
            return
        entries = {p: e for p, e in self._entries.items() if p in self._touched or os.path.exists(p)}
        try:
            self._prepare()
            import tempfile  # only a run that writes pays for it

            fd, temporary = tempfile.mkstemp(dir=self.file.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(entries, handle, separators=(",", ":"))
            os.replace(temporary, self.file)
        except OSError as exc:
            click.echo(
                f"warning: cannot write the cache in {self.directory}: {exc.strerror or exc}", err=True
            )

    def _prepare(self) -> None:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            marker = self.directory / name
            if not marker.exists():
                marker.write_text(text, encoding="utf-8")


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
