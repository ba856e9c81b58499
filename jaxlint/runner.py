"""Linting many files: each is read, linted, noqa-filtered (and fixed) in a worker process, through the cache.

Files are linted alone first; the traced calls they make into each other are then handed to
their callees' modules, which are linted again with those calls until nothing new arrives
(see `analysis/project.py`). Every document goes this way: files named or found in a folder,
standard input, an editor's buffers (whose text stands in for the file's) and flake8's files,
each with the project's modules that may call into it (`callers.py`), linted in the same rounds
but neither reported nor fixed. The project modules outside the files that their traced calls
enter can be linted with those calls too, for what the calls cause there (`_Batch.elsewhere`).
"""

from __future__ import annotations

import gc
import importlib
import io
import os
import sys
import threading
import time
import tokenize
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Collection, Iterable, Iterator, Mapping, Optional, Tuple, Union

from jaxlint import timings
from jaxlint.analysis.project.project import IncomingCall, Project
from jaxlint.cache import Cache, Cached, calls_key, digest, settings_key
from jaxlint.files import read_bytes
from jaxlint.findings import Finding
from jaxlint.fixes import apply_fixes, fix_until_stable, unified_diff
from jaxlint.linter import Linted, io_error, lint_parsed, module_facts, parse_error, parse_module
from jaxlint.notebook import Notebook, NoqaWriter
from jaxlint.output import display_path
from jaxlint.analysis.engine.names import Names
from jaxlint.source import Source, SourceError, decode
from jaxlint.suppression import UNUSED_NOQA_CODE, apply_noqa

# Below this much source, starting worker processes costs more than it saves.
_SERIAL_BYTES = 256 * 1024
# Each chunk takes this share of what is left for every worker: large chunks first keep messages
# few, ever smaller ones at the end keep the workers finishing together.
_CHUNK_SHARE = 4
_MIN_CHUNK_BYTES = 16 * 1024
# Rounds of handing traced calls to the modules they enter: each file's own analysis already
# follows calls through the modules it enters, so the sets settle in a round or two.
_MAX_ROUNDS = 4


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
    fixable: Optional[frozenset] = None  # the codes whose fixes may apply (None: every code's)
    ignore_noqa: bool = False  # `# noqa` comments suppress nothing (they are still judged unused or not)
    extension: Tuple[Tuple[str, str], ...] = ()  # (file extension, language) beyond .py, .pyi, .ipynb
    timings: bool = False  # record the seconds each file spends in each phase (`FileResult.seconds`)

    def is_notebook(self, path: str) -> bool:
        """Whether the file at `path` is read as a Jupyter notebook."""
        return language(path, dict(self.extension)) == "ipynb"


def cache_key(settings: LintSettings) -> str:
    """The results cache's key for what `settings` lint and how they read files."""
    reading = {"fixable": sorted(settings.fixable or ()), "ignore_noqa": settings.ignore_noqa,
               "extension": settings.extension}
    return settings_key(settings.codes, settings.options, **reading)


def language(path: str, extension: dict[str, str]) -> str:
    """`python`, `pyi` or `ipynb`: how a file is read, by its extension (and the `extension` setting)."""
    suffix = os.path.splitext(path)[1][1:]
    if suffix in extension:
        return extension[suffix]
    return {"ipynb": "ipynb", "pyi": "pyi"}.get(suffix, "python")


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
    calls: set[IncomingCall] = field(default_factory=set)  # traced calls into other project modules
    deps: set[str] = field(default_factory=set)  # the project modules its findings depend on
    incoming: str = ""  # `calls_key` of the traced calls into it it was linted with
    received: tuple[IncomingCall, ...] = ()  # those calls (when linted in this run, not taken from the cache)
    warnings: list[str] = field(default_factory=list)  # analyses cut short in it
    seconds: dict[str, float] = field(default_factory=dict)  # per phase, when the settings ask for timings


class Module:
    """A Python file's text and encoding, as the fixer edits it."""

    def __init__(self, source: str, encoding: str = "utf-8"):
        self.source = source
        self.encoding = encoding

    def with_fixes(self, findings: list[Finding], unsafe_fixes: bool) -> tuple["Module", Counter]:
        text, fixed = apply_fixes(self.source, findings, unsafe_fixes)
        return Module(text, self.encoding), fixed

    def with_noqa(self, findings: list[Finding], with_noqa: NoqaWriter) -> tuple["Module", int]:
        text, added = with_noqa(self.source, findings, None)
        return Module(text, self.encoding), added

    def diff(self, fixed: "Module", name: str) -> str:
        return unified_diff(self.source, fixed.source, name) + "\n"

    def encode(self) -> bytes:
        return self.source.encode(self.encoding)


Document = Union[Module, Notebook]


def load_document(path: str, data: bytes, notebook: bool | None = None) -> Document:
    """The module or notebook in a file's bytes (a notebook if `notebook`, by default if it ends in
    `.ipynb`); SourceError if it cannot be decoded."""
    if notebook if notebook is not None else path.endswith(".ipynb"):
        return Notebook.parse(data)
    text = decode(data)
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return Module(text, encoding)


def lint_document(
    document: Document,
    path: str,
    settings: LintSettings,
    project: Project | None = None,
    incoming: tuple[IncomingCall, ...] = (),
) -> Linted:
    """The unsuppressed findings in one module or notebook (notebook findings carry their cell)."""
    try:
        try:
            source, names = _parse(document.source, path, project)
        except SourceError as err:
            linted = Linted([parse_error(path, err)])
        else:
            linted = lint_parsed(source, names, path, settings.codes, settings.options, project, incoming)
    except RecursionError:
        return Linted([parse_error(path, SourceError("the file is too deeply nested to analyse"))])
    findings = timings.run(
        "noqa", apply_noqa, linted.findings, document.source, settings.codes, settings.known, path,
        settings.ignore_noqa,
    )
    if settings.fixable is not None:  # as ruff: a rule that may not be fixed shows no fix at all
        findings = [f if f.fix is None or f.code in settings.fixable else f.with_(fix=None) for f in findings]
    if isinstance(document, Notebook):
        findings = [document.relocate(f) for f in findings]
    linted.findings = findings
    return linted


def lint_file(
    path: str,
    settings: LintSettings,
    known_digest: str | None = None,
    project: Project | None = None,
    incoming: tuple[IncomingCall, ...] = (),
    text: bytes | None = None,
) -> FileResult:
    """Read, lint, suppress and (if asked) fix one file. Never raises for a bad file: JAX001 instead.

    With the `project`, traced calls into its other modules are followed, and the `incoming`
    ones from them are analysed here. `text`, when given, is linted as the file's contents."""
    try:
        data = timings.run("read", read_bytes, path) if text is None else text
    except OSError as exc:
        return FileResult(path, [io_error(path, f"cannot read the file: {exc.strerror or exc}")])
    content_digest = digest(data) if settings.hash_contents else None
    if known_digest is not None and content_digest == known_digest:
        return FileResult(path, None, content_digest)
    try:
        document = timings.run("read", load_document, path, data, settings.is_notebook(path))
    except SourceError as err:
        return FileResult(path, [parse_error(path, err)], content_digest)
    key = calls_key(incoming)
    if not (settings.fix or settings.diff):
        linted = lint_document(document, path, settings, project, incoming)
        return FileResult(
            path, linted.findings, content_digest, calls=linted.calls, deps=linted.deps, incoming=key,
            received=incoming, warnings=linted.warnings,
        )
    runs: list[Linted] = []

    def lint(document: Document) -> list[Finding]:  # the fixer re-lints after each pass
        runs.append(lint_document(document, path, settings, project, incoming))
        return runs[-1].findings

    fixed_document, findings, fixed = fix_until_stable(document, lint, settings.unsafe_fixes)
    result = FileResult(
        path, findings, fixed=fixed, calls=runs[-1].calls, deps=runs[-1].deps, incoming=key, received=incoming,
        warnings=runs[-1].warnings,
    )
    if fixed and settings.diff:
        result.diff = document.diff(fixed_document, display_path(path))
    elif fixed:
        from jaxlint.write import WriteError, write_back  # only a run that writes pays for its imports

        try:
            write_back(path, fixed_document, data)
        except WriteError as err:
            return FileResult(path, lint(document), write_error=str(err))
    return result


# (path, content digest last seen, traced calls into it, whether its fixes may be written)
_Task = Tuple[str, Optional[str], Tuple[IncomingCall, ...], bool]


def _guarded(task: _Task, settings: LintSettings, project: Project) -> FileResult:
    # A bug in a rule must not stop the other files: report it for this file and carry on.
    path, known_digest, incoming, writes = task
    if not writes and (settings.fix or settings.diff):
        settings = replace(settings, fix=False, diff=False)
    try:
        if not settings.timings:
            with _collected_after():
                return lint_file(path, settings, known_digest, project, incoming, project.texts.get(path))
        with timings.recording() as seconds:
            with _collected_after():
                result = lint_file(path, settings, known_digest, project, incoming, project.texts.get(path))
        result.seconds = seconds
        return result
    except Exception as exc:  # reported, and the run exits 2
        import traceback

        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{frame.filename}:{frame.lineno}"
        return FileResult(path, [], error=f"{type(exc).__name__}: {exc} (at {where})")


# A module's facts refer to each other in cycles, and through them to its tree, so only the
# collector frees them; every collection walks all it tracks, and a module's tree is most of
# that. So the tree is parsed with the young generation empty and frozen at once: no collection
# walks it, and it is freed by reference counting once the collection after the file frees the
# facts around it, having walked only them. Collecting while a file is linted would walk its
# growing facts again and again; it waits for the end of the file.
_freezing = False  # inside `_collected_after`, where what `_parse` freezes is unfrozen again


def _parse(text: str, path: str, project: Project | None) -> tuple[Source, Names | None]:
    if not _freezing:  # a buffer linted on its own, outside the batch: the collector as usual
        return parse_module(text, path, project)
    # What an earlier pass over the file left unreachable is freed now, not frozen.
    timings.run("collect", gc.collect, 0)
    parsed = parse_module(text, path, project)
    gc.freeze()
    return parsed


@contextmanager
def _collected_after() -> Iterator[None]:
    global _freezing
    enabled, freezing = gc.isenabled(), _freezing
    gc.disable()
    _freezing = True
    try:
        yield
    finally:
        _freezing = freezing
        timings.run("collect", gc.collect, 0)
        gc.unfreeze()  # the module's tree is freed by now: unfreezing moves only what lives on
        if enabled:
            gc.enable()


_worker_settings: LintSettings | None = None
_worker_project: Project | None = None


def _start_worker(settings: LintSettings, texts: dict[str, bytes]) -> None:
    global _worker_settings, _worker_project
    _worker_settings = settings
    _worker_project = Project(settings.options, facts=module_facts, texts=texts)


def _lint_chunk(chunk: list[_Task]) -> list[FileResult]:
    return [_guarded(task, _worker_settings, _worker_project) for task in chunk]


def worker_count() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _chunks(tasks: list[tuple[_Task, int]], workers: int) -> list[list[_Task]]:
    """Largest files first, cut into chunks that shrink as the work left does (guided scheduling),
    so no worker is left with a big file or a big chunk last."""
    tasks = sorted(tasks, key=lambda t: -t[1])
    left = sum(t[1] for t in tasks)
    chunks, current, size = [], [], 0
    target = max(left // (workers * _CHUNK_SHARE), _MIN_CHUNK_BYTES)
    for task, nbytes in tasks:
        current.append(task)
        size += nbytes
        if size >= target:
            chunks.append(current)
            left -= size
            current, size = [], 0
            target = max(left // (workers * _CHUNK_SHARE), _MIN_CHUNK_BYTES)
    if current:
        chunks.append(current)
    return chunks


def _daemonic() -> bool:
    """Whether this process is a worker of another tool's pool (flake8's), which may start none."""
    import multiprocessing  # only a run with work for several processes pays for these imports

    return bool(multiprocessing.current_process().daemon)


# Libraries that start threads when imported: a process forked after that may inherit a lock some
# other thread held, and hang (Python 3.12 warns of it, and JAX says it is multithreaded).
_THREADED_MODULES = ("jax", "jaxlib", "torch", "tensorflow", "numba", "grpc")
# What a worker needs, none of which imports a threaded library: imported before the workers
# start (preloaded in the fork server), so that each does not import the analysis again.
_STATIC_MODULES = ["jaxlint.runner", "jaxlint.analysis.module"]


def start_method() -> str | None:
    """How worker processes start on Linux: by fork, so that they start with jaxlint and the rules
    already imported, unless another thread may be running; then from a fresh server process
    (forkserver). Elsewhere, the platform's default (spawn)."""
    if sys.platform != "linux":
        return None
    threaded = threading.active_count() > 1 or any(name in sys.modules for name in _THREADED_MODULES)
    return "forkserver" if threaded else "fork"


class _Linters:
    """Lints batches of files: in this process when there is little to lint, else in worker
    processes, started on first need and kept for the later batches."""

    def __init__(self, settings: LintSettings, texts: dict[str, bytes]):
        self.settings = settings
        self.texts = texts
        self.project = Project(settings.options, facts=module_facts, texts=texts)
        self.pool = None  # a ProcessPoolExecutor once there is enough to lint
        self.workers = 0

    def lint(self, tasks: list[tuple[_Task, int]]) -> list[FileResult]:
        workers = min(worker_count(), len(tasks))
        if self.pool is None and (workers <= 1 or sum(t[1] for t in tasks) < _SERIAL_BYTES or _daemonic()):
            return [_guarded(task, self.settings, self.project) for task, _ in tasks]
        if self.pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            method = start_method()
            context = multiprocessing.get_context(method)
            if method == "forkserver":  # its workers start with the linter imported, as forked ones do
                context.set_forkserver_preload(_STATIC_MODULES)
            elif method == "fork":
                for name in _STATIC_MODULES:
                    importlib.import_module(name)
            self.workers = workers
            self.pool = ProcessPoolExecutor(
                workers, mp_context=context, initializer=_start_worker, initargs=(self.settings, self.texts)
            )
        chunks = _chunks(tasks, self.workers)
        return [result for chunk in self.pool.map(_lint_chunk, chunks) for result in chunk]

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()


def lint_files(
    files: list[str],
    settings: LintSettings,
    cache: Cache | None = None,
    *,
    callers: Iterable[str] = (),
    texts: Mapping[str, bytes] | None = None,
) -> list[FileResult]:
    """Every file's result (cache hits included), linted in parallel when there is enough to lint.

    `callers` are linted with them for the traced calls they make into them, and neither reported
    nor fixed; `texts` stand in for the contents of the files they name (never fixed on disk, nor
    cached, nor are the results of files that read them)."""
    return lint_run(files, settings, cache, callers=callers, texts=texts).reported()


@dataclass
class Stage:
    """What one stage of a run (`_Batch.first`, `settle`, `elsewhere`) took, when timed."""

    wall: float = 0.0  # seconds from its start to its end
    files: int = 0  # the files it linted (not taken from the cache)
    seconds: dict[str, float] = field(default_factory=dict)  # per phase, summed over its files


@dataclass
class Run:
    """What one run linted: the files asked for, and every module's result (the callers' too)."""

    files: list[str]
    results: dict[str, FileResult]
    # The findings the files' traced calls cause in other modules, one result per module (`lint_run`'s
    # `elsewhere`).
    elsewhere: list[FileResult] = field(default_factory=list)
    stages: dict[str, Stage] = field(default_factory=dict)  # by name, when the settings ask for timings

    def reported(self) -> list[FileResult]:
        return [self.results[path] for path in dict.fromkeys(self.files) if path in self.results]

    def read(self) -> set[str]:
        """The modules the files' findings may depend on: every module linted, and every module
        their analyses read."""
        return set(self.results).union(*(result.deps for result in self.results.values()))


def lint_run(
    files: list[str],
    settings: LintSettings,
    cache: Cache | None = None,
    *,
    callers: Iterable[str] = (),
    texts: Mapping[str, bytes] | None = None,
    elsewhere: Collection[str] = (),
) -> Run:
    """`lint_files`, with every module's result, and the findings the files' traced calls cause in
    those of the modules `elsewhere` that they enter (see `_Batch.elsewhere`)."""
    batch = _Batch(settings, cache, dict(texts or {}), set(files))
    try:
        with batch.stage("first"):
            batch.first([*files, *callers])
        with batch.stage("settle"):
            batch.settle()
        with batch.stage("elsewhere"):
            caused = batch.elsewhere(set(elsewhere) - batch.reported) if elsewhere else []
    finally:
        batch.linters.close()
    return Run(list(files), batch.results, caused, batch.stages)


class _Batch:
    """One run's modules: their latest results, their stats, and the cache that keeps them.

    Files are linted alone first (or taken from the cache); then the traced calls they make into
    each other are handed to the modules they enter, which are linted again with those calls
    (or taken from the cache, which keeps a file's results for several sets of calls into it)
    until nothing new arrives."""

    def __init__(self, settings: LintSettings, cache: Cache | None, texts: dict[str, bytes], reported: set[str]):
        self.settings = settings
        self.cache = cache
        self.texts = texts
        self.reported = reported
        self.results: dict[str, FileResult] = {}
        self.stats: dict[str, os.stat_result] = {}
        self.linters = _Linters(settings, texts)
        self.stages: dict[str, Stage] = {}
        self._stage: Stage | None = None  # the stage running, when timed

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """A stage of the run, timed when the settings ask: its wall time, and its files' phases."""
        if not self.settings.timings:
            yield
            return
        self._stage = self.stages[name] = Stage()
        started = time.perf_counter()
        try:
            yield
        finally:
            self._stage.wall = time.perf_counter() - started
            self._stage = None

    def writes(self, path: str) -> bool:
        """Whether fixes to the file may be written: it is reported, and its text is the file's."""
        return path in self.reported and path not in self.texts

    def first(self, paths: Iterable[str]) -> None:
        """Each module's result without calls from the others."""
        tasks: list[tuple[_Task, int]] = []
        for path in dict.fromkeys(paths):
            if path in self.texts:
                tasks.append(((path, None, (), False), len(self.texts[path])))
                continue
            try:
                stat = os.stat(path)
            except OSError:
                tasks.append(((path, None, (), self.writes(path)), 0))  # the worker reports why it cannot be read
                continue
            self.stats[path] = stat
            known = None
            if self.cache is not None:
                hit, known = self.cache.lookup(path, stat)
                if hit is not None and self._usable(hit.deps):
                    self.results[path] = _from_cache(path, hit)
                    continue
                if hit is not None:
                    known = None  # its results read a file whose text is replaced: lint it again
            tasks.append(((path, known, (), self.writes(path)), stat.st_size))
        self._collect(self.linters.lint(tasks), self.results)

    def settle(self) -> None:
        """Hand each module the traced calls the others make into it, until none changes."""
        for _ in range(_MAX_ROUNDS):
            changed = _changed_incoming(self.results)
            if not changed:
                break
            self._collect(self.linters.lint(self._with_calls(changed, self.results)), self.results)

    def _with_calls(
        self, modules: list[tuple[str, tuple[IncomingCall, ...]]], results: dict[str, FileResult]
    ) -> list[tuple[_Task, int]]:
        """The tasks that lint each module with its traced calls; those the cache has results for
        go straight into `results`."""
        tasks = []
        for path, calls in modules:
            cached = self._cached_with(path, calls)
            if cached is not None:
                results[path] = cached
            else:
                tasks.append(((path, None, calls, self.writes(path)), self._size(path)))
        return tasks

    def elsewhere(self, modules: set[str]) -> list[FileResult]:
        """The findings the reported files' traced calls cause in those of `modules` they enter:
        each such module is linted with those calls and without any, and the findings only the
        first has are those calls' (each names the entry point that traces it). Nothing there is
        fixed, and its `# noqa` comments are not judged (the calls of the rest of the project are
        missing)."""
        calls: dict[str, set[IncomingCall]] = {}
        for path in self.reported:
            for call in self.results[path].calls if path in self.results else ():
                if call.path in modules:
                    calls.setdefault(call.path, set()).add(call)
        if not calls:
            return []
        alone: dict[str, FileResult] = {}
        traced: dict[str, FileResult] = {}
        modules = []
        for path, into in sorted(calls.items()):
            if path not in self.stats and path not in self.texts:
                try:
                    self.stats[path] = os.stat(path)
                except OSError:
                    continue
            modules.append((path, tuple(sorted(into, key=repr))))
        for received, results in (([(path, ()) for path, _ in modules], alone), (modules, traced)):
            self._collect(self.linters.lint(self._with_calls(received, results)), results)
        caused = []
        for path in sorted(traced):
            result, eager = traced[path], {_identity(f) for f in alone[path].findings or ()}
            findings = [
                f for f in result.findings or () if _identity(f) not in eager and f.code != UNUSED_NOQA_CODE
            ]
            if findings or result.error:
                caused.append(FileResult(path, findings, error=result.error))
        return caused

    def _usable(self, deps: set[str]) -> bool:
        """Whether cached results stand: they read no module whose text is replaced."""
        return not deps & self.texts.keys()

    def _cached_with(self, path: str, calls: tuple[IncomingCall, ...]) -> FileResult | None:
        """The cache's results of a module linted with the traced calls `calls` into it, if it has them."""
        if self.cache is None or path not in self.stats or path in self.texts:
            return None
        hit, _ = self.cache.lookup(path, self.stats[path], calls_key(calls))
        return _from_cache(path, hit) if hit is not None and self._usable(hit.deps) else None

    def _size(self, path: str) -> int:
        if path in self.texts:
            return len(self.texts[path])
        return self.stats[path].st_size if path in self.stats else 0

    def _collect(self, fresh: list[FileResult], results: dict[str, FileResult]) -> None:
        settings, cache = self.settings, self.cache
        for result in fresh:
            path = result.path
            if self._stage is not None:
                self._stage.files += 1
                timings.add(self._stage.seconds, result.seconds)
            previous = results.get(path)
            if previous is not None and settings.fix and not settings.diff:
                result.fixed = previous.fixed + result.fixed  # the earlier round's fixes are written already
            stored = path in self.stats and not result.error and self._usable(result.deps)
            if cache is not None and result.digest is not None and stored:
                cache.store(
                    path, self.stats[path], result.digest, result.findings, result.calls, result.deps,
                    result.incoming, result.warnings,
                )
                if result.findings is None:  # the content matched the cache's: its old results stand
                    kept = cache.cached(path, result.incoming)
                    result.findings, result.calls, result.deps, result.incoming, result.warnings = (
                        kept.findings, kept.calls, kept.deps, kept.incoming, kept.warnings
                    )
            results[path] = result


def _from_cache(path: str, hit: Cached) -> FileResult:
    return FileResult(path, hit.findings, calls=hit.calls, deps=hit.deps, incoming=hit.incoming, warnings=hit.warnings)


def _identity(finding: Finding) -> tuple:
    return (finding.code, finding.cell, finding.start, finding.end)


def _changed_incoming(results: dict[str, FileResult]) -> list[tuple[str, tuple[IncomingCall, ...]]]:
    """The files whose traced calls from the others differ from those they were linted with, and those calls."""
    incoming: dict[str, set[IncomingCall]] = {}
    for result in results.values():
        for call in result.calls:
            if call.path in results and call.path != result.path:
                incoming.setdefault(call.path, set()).add(call)
    changed = []
    for path, result in sorted(results.items()):
        calls = tuple(sorted(incoming.get(path, ()), key=repr))
        if calls_key(calls) != result.incoming and not result.error:
            changed.append((path, calls))
    return changed
