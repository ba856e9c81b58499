"""Linting many files: each is read, linted, noqa-filtered (and fixed) in a worker process, through the cache."""

from __future__ import annotations

import gc
import io
import os
import stat
import sys
import tokenize
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Iterator, Union

from jaxlint.cache import Cache, digest
from jaxlint.files import read_bytes
from jaxlint.findings import Finding
from jaxlint.fixes import apply_fixes, fix_until_stable, unified_diff
from jaxlint.linter import lint_source, parse_error
from jaxlint.notebook import Notebook
from jaxlint.output import display_path
from jaxlint.source import SourceError, decode
from jaxlint.suppression import apply_noqa

# Below this much source, starting worker processes costs more than it saves.
_SERIAL_BYTES = 256 * 1024
# Chunks per worker: enough to balance uneven files, few enough to keep messages cheap.
_CHUNKS_PER_WORKER = 8


@dataclass(frozen=True)
class LintSettings:
    """What every worker needs to lint a file; sent once per worker, not once per file."""

    codes: frozenset[str]
    options: dict = field(default_factory=dict)
    known: frozenset[str] = frozenset()  # every rule's code: a `# noqa` code outside it is unknown
    hash_contents: bool = False  # for the cache
    fix: bool = False  # write fixes back
    diff: bool = False  # compute fixes, show them as a diff, write nothing
    unsafe_fixes: bool = False


@dataclass
class FileResult:
    """One file's outcome. `findings` is None when its content hash matched the cache's."""

    path: str
    findings: list[Finding] | None
    digest: str | None = None
    fixed: Counter = field(default_factory=Counter)
    diff: str = ""
    error: str = ""  # an internal error while linting this file
    write_error: str = ""  # why its fixes could not be written (its findings are then the unfixed file's)


class Module:
    """A Python file's text and encoding, as the fixer edits it."""

    def __init__(self, source: str, encoding: str = "utf-8"):
        self.source = source
        self.encoding = encoding

    def with_fixes(self, findings: list[Finding], unsafe_fixes: bool) -> tuple["Module", Counter]:
        text, fixed = apply_fixes(self.source, findings, unsafe_fixes)
        return Module(text, self.encoding), fixed

    def diff(self, fixed: "Module", name: str) -> str:
        return unified_diff(self.source, fixed.source, name) + "\n"

    def encode(self) -> bytes:
        return self.source.encode(self.encoding)


Document = Union[Module, Notebook]


def load_document(path: str, data: bytes) -> Document:
    """The module or notebook in a file's bytes; SourceError if it cannot be decoded."""
    if path.endswith(".ipynb"):
        return Notebook.parse(data)
    text = decode(data)
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return Module(text, encoding)


def lint_document(document: Document, path: str, settings: LintSettings) -> list[Finding]:
    """The unsuppressed findings in one module or notebook (notebook findings carry their cell)."""
    try:
        findings = lint_source(document.source, path, settings.codes, settings.options)
    except RecursionError:
        return [parse_error(path, SourceError("the file is too deeply nested to analyse"))]
    findings = apply_noqa(findings, document.source, settings.codes, settings.known, path)
    if isinstance(document, Notebook):
        findings = [document.relocate(f) for f in findings]
    return findings


def lint_file(path: str, settings: LintSettings, known_digest: str | None = None) -> FileResult:
    """Read, lint, suppress and (if asked) fix one file. Never raises for a bad file: JAX001 instead."""
    try:
        data = read_bytes(path)
    except OSError as exc:
        return FileResult(
            path, [parse_error(path, SourceError(f"cannot read the file: {exc.strerror or exc}"))]
        )
    content_digest = digest(data) if settings.hash_contents else None
    if known_digest is not None and content_digest == known_digest:
        return FileResult(path, None, content_digest)
    try:
        document = load_document(path, data)
    except SourceError as err:
        return FileResult(path, [parse_error(path, err)], content_digest)
    if not (settings.fix or settings.diff):
        return FileResult(path, lint_document(document, path, settings), content_digest)
    lint = partial(lint_document, path=path, settings=settings)  # the fixer re-lints after each pass
    fixed_document, findings, fixed = fix_until_stable(document, lint, settings.unsafe_fixes)
    result = FileResult(path, findings, fixed=fixed)
    if fixed and settings.diff:
        result.diff = document.diff(fixed_document, display_path(path))
    elif fixed:
        try:
            write_back(path, fixed_document, data)
        except WriteError as err:
            return FileResult(path, lint(document), write_error=str(err))
    return result


class WriteError(Exception):
    """Fixes that were not written, and why: the file is left exactly as it was."""


def write_back(path: str, document: Document, original: bytes) -> None:
    """Replace the file with the fixed document, all at once, unless it changed since it was read as `original`.

    The new content goes to a temporary file in the same folder, which then replaces the
    file: a full disk or a crash leaves either the old file or the new one, never half of
    one. A symbolic link is kept and its target replaced; the file's mode is kept.
    """
    target = os.path.realpath(path)
    folder, name = os.path.split(target)
    try:
        data = document.encode()
    except UnicodeEncodeError as exc:
        raise WriteError(f"the fixed text cannot be written in the file's encoding: {exc.reason}") from None
    try:
        info = os.stat(target)
        if not os.access(target, os.W_OK):
            raise PermissionError(13, "Permission denied")
        with open(target, "rb") as handle:
            if handle.read() != original:
                raise WriteError("the file changed while it was being fixed, so the fixes were not written")
        import tempfile  # only a run that writes pays for it

        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".jaxlint-tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, stat.S_IMODE(info.st_mode))
            if hasattr(os, "chown") and (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
                try:
                    os.chown(temporary, info.st_uid, info.st_gid)
                except OSError:
                    pass  # only a privileged user can give a file away; the content still goes in
            os.replace(temporary, target)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise
    except OSError as exc:
        raise WriteError(f"cannot write the fixes: {exc.strerror or exc}") from None


def _guarded(path: str, settings: LintSettings, known_digest: str | None) -> FileResult:
    # A bug in a rule must not stop the other files: report it for this file and carry on.
    try:
        return lint_file(path, settings, known_digest)
    except Exception as exc:  # reported, and the run exits 2
        import traceback

        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{frame.filename}:{frame.lineno}"
        return FileResult(path, [], error=f"{type(exc).__name__}: {exc} (at {where})")


# Parsing allocates millions of short-lived, acyclic nodes: collecting every 700 allocations costs
# about a tenth of the run, and on one large file each full collection walks every node again, so
# the time grows faster than the file. Collect far less often.
_THRESHOLDS = (50_000, 20, 100)


@contextmanager
def _fewer_collections() -> Iterator[None]:
    previous = gc.get_threshold()
    gc.set_threshold(*_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*previous)


_worker_settings: LintSettings | None = None


def _start_worker(settings: LintSettings) -> None:
    global _worker_settings
    _worker_settings = settings
    gc.freeze()  # what is imported is never garbage: keep it out of every collection
    gc.set_threshold(*_THRESHOLDS)


def _lint_chunk(chunk: list[tuple[str, str | None]]) -> list[FileResult]:
    return [_guarded(path, _worker_settings, known) for path, known in chunk]


def worker_count() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _chunks(tasks: list[tuple[str, str | None, int]], workers: int) -> list[list[tuple[str, str | None]]]:
    """Largest files first, cut into chunks of about equal size, so no worker is left with the big file last."""
    tasks = sorted(tasks, key=lambda t: -t[2])
    target = max(sum(t[2] for t in tasks) // (workers * _CHUNKS_PER_WORKER), 1)
    chunks, current, size = [], [], 0
    for path, known, nbytes in tasks:
        current.append((path, known))
        size += nbytes
        if size >= target:
            chunks.append(current)
            current, size = [], 0
    if current:
        chunks.append(current)
    return chunks


def lint_files(files: list[str], settings: LintSettings, cache: Cache | None = None) -> list[FileResult]:
    """Every file's result (cache hits included), linted in parallel when there is enough to lint."""
    results: list[FileResult] = []
    tasks: list[tuple[str, str | None, int]] = []
    stats: dict[str, os.stat_result] = {}
    for path in files:
        try:
            stat = os.stat(path)
        except OSError:
            tasks.append((path, None, 0))  # the worker reports why it cannot be read
            continue
        known = None
        if cache is not None:
            stats[path] = stat
            findings, known = cache.lookup(path, stat)
            if findings is not None:
                results.append(FileResult(path, findings))
                continue
        tasks.append((path, known, stat.st_size))

    workers = min(worker_count(), len(tasks))
    if workers <= 1 or sum(t[2] for t in tasks) < _SERIAL_BYTES:
        with _fewer_collections():
            fresh = [_guarded(path, settings, known) for path, known, _ in tasks]
    else:
        fresh = _run_pool(_chunks(tasks, workers), settings, workers)

    for result in fresh:
        if cache is not None and result.digest is not None and result.path in stats and not result.error:
            cache.store(result.path, stats[result.path], result.digest, result.findings)
            if result.findings is None:
                result.findings = cache.cached_findings(result.path)
        results.append(result)
    return results


def _run_pool(
    chunks: list[list[tuple[str, str | None]]], settings: LintSettings, workers: int
) -> list[FileResult]:
    import multiprocessing  # only a run with work for several processes pays for these imports
    from concurrent.futures import ProcessPoolExecutor

    # fork (where it is safe) starts workers with jaxlint and the rules already imported.
    context = multiprocessing.get_context("fork") if sys.platform == "linux" else None
    with ProcessPoolExecutor(
        workers, mp_context=context, initializer=_start_worker, initargs=(settings,)
    ) as pool:
        return [result for chunk in pool.map(_lint_chunk, chunks) for result in chunk]
