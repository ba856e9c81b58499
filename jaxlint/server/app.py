"""The language server: lints open documents off the event loop and answers code-action requests.

Each document is linted as `jaxlint check` lints its file, with the project modules that may call
into it, the open documents' texts standing in for their files (an unsaved edit counts). A
document's findings depend on the other modules its analysis read: when one of those changes,
is saved or closed, the document is linted again, as it is when a document's imports make it a
new caller.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from jaxlint import __version__
from jaxlint.buffers import declared_encoding, encoded, lint_in_memory
from jaxlint.callers import importers
from jaxlint.config import ConfigError
from jaxlint.findings import Finding
from jaxlint.fixes import applicable
from jaxlint.project import FileSettings
from jaxlint.runner import Module
from jaxlint.server import actions
from jaxlint.server.diagnostics import diagnostic

# Typing pauses shorter than this do not start a new analysis.
DEBOUNCE_SECONDS = 0.3
_LANGUAGES = ("python",)
_SUFFIXES = (".py", ".pyi")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Linted:
    """A document version's findings, kept to answer code actions without linting again."""

    version: int | None
    findings: list[Finding]
    unsafe_fixes: bool


@dataclass
class Checked:
    """A document's findings, as `jaxlint check` finds them in its file, and what they depend on."""

    findings: list[Finding]
    fixed: str  # the source with every applicable fix (itself when not fixing)
    unsafe_fixes: bool  # whether the project allows unsafe fixes
    warnings: list[str]  # the analyses cut short (findings may be missing there)
    read: set[str]  # the files whose text the findings may depend on
    callers: list[str]  # the project's modules that may call into it


def uri_path(uri: str) -> Path:
    """The file a document stands for; an unsaved buffer is taken to live in the working folder."""
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(path) if path else Path.cwd() / "untitled.py"


def document_path(document: TextDocument) -> Path:
    return uri_path(document.uri)


def lint_text(source: str, path: Path, fix: bool = False, buffers: dict[str, bytes] | None = None) -> Checked:
    """`source` linted as the file `path`, with its project's settings, through its results cache;
    `buffers` (the editor's documents, by path) stand in for their files' contents."""
    settings = FileSettings.for_path(path, fix=fix)
    module = Module(source, declared_encoding(source))
    callers = settings.callers(path, buffers)
    cache = settings.cache(settings.lint)
    linted = lint_in_memory(module, module.encode(), str(path), settings.lint, callers, texts=buffers, cache=cache)
    cache.save()
    return Checked(
        settings.kept(linted.findings), linted.document.source, settings.config.unsafe_fixes, linted.warnings,
        linted.read, callers,
    )


class JaxlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "jaxlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental
        )
        self.linted: dict[str, Linted] = {}
        self.warned: dict[str, list[str]] = {}  # the cut-short warnings last logged for each document
        self.checked: dict[str, Checked] = {}  # each document's last analysis, with what it depends on
        self.pending: dict[str, asyncio.Task] = {}
        # One worker: analyses queue up instead of competing for the interpreter with the event loop.
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jaxlint-lint")

    def wants(self, document: TextDocument) -> bool:
        return document.language_id in _LANGUAGES or document.uri.endswith(_SUFFIXES)

    def buffers(self) -> dict[str, bytes]:
        """The open documents' texts by path: each stands in for its file in every analysis."""
        return {
            str(document_path(document)): encoded(document.source)
            for document in self.workspace.text_documents.values()
            if document.uri.startswith("file:") and self.wants(document)
        }

    def schedule(self, uri: str, delay: float) -> None:
        """Lint the document after `delay` seconds, replacing an analysis not started yet."""
        pending = self.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(self._lint_later(uri, delay))

    def schedule_dependents(self, uri: str, delay: float) -> None:
        """Lint again the other open documents whose findings may depend on the text of `uri`: those
        whose last analysis read it, and those it may call into now (its imports name the document
        or one of the modules that may call into it)."""
        path = str(uri_path(uri))
        text = self.buffers().get(path)
        for other, checked in list(self.checked.items()):
            if other == uri:
                continue
            targets = [str(uri_path(other)), *checked.callers]
            if path in checked.read or importers(targets, [path], None if text is None else {path: text}):
                self.schedule(other, delay)

    async def _lint_later(self, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        document = self.workspace.get_text_document(uri)
        if not self.wants(document):
            return
        version, source = document.version, document.source
        loop = asyncio.get_running_loop()
        try:
            checked = await loop.run_in_executor(
                self.worker, lint_text, source, document_path(document), False, self.buffers()
            )
        except ConfigError as exc:
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=f"jaxlint: {exc}")
            )
            return
        except Exception:  # a bug must not take the editor's server down: log it, keep serving
            log.exception("jaxlint failed on %s", uri)
            return
        current = self.workspace.get_text_document(uri)
        if current.version != version:
            return  # edited meanwhile: the newer version's analysis will publish
        self.linted[uri] = Linted(version, checked.findings, checked.unsafe_fixes)
        self.checked[uri] = checked
        self._log_warnings(uri, document_path(current), checked.warnings)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, version=version, diagnostics=[diagnostic(current, f) for f in checked.findings]
            )
        )

    def _log_warnings(self, uri: str, path: Path, warnings: list[str]) -> None:
        """Name the analyses cut short in the editor's log, as `check` does on standard error:
        once when they appear or change, not on every keystroke."""
        if self.warned.get(uri, []) == warnings:
            return
        self.warned[uri] = warnings
        for warning in warnings:
            self.window_log_message(
                types.LogMessageParams(type=types.MessageType.Warning, message=f"jaxlint: {path.name}: {warning}")
            )


server = JaxlintServer()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: JaxlintServer, params: types.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.schedule(uri, 0)
    if not _as_on_disk(uri, params.text_document.text):  # an unsaved buffer reopened stands in for its file
        ls.schedule_dependents(uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: JaxlintServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.schedule(uri, DEBOUNCE_SECONDS)
    ls.schedule_dependents(uri, DEBOUNCE_SECONDS)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: JaxlintServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.schedule(uri, 0)  # the project's configuration may have changed too
    ls.schedule_dependents(uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: JaxlintServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    pending = ls.pending.pop(uri, None)
    if pending is not None:
        pending.cancel()
    ls.linted.pop(uri, None)
    ls.warned.pop(uri, None)
    ls.checked.pop(uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
    ls.schedule_dependents(uri, 0)  # its file stands for it again


def _as_on_disk(uri: str, text: str) -> bool:
    """Whether a document's text is its file's."""
    try:
        return uri_path(uri).read_bytes() == encoded(text)
    except OSError:
        return False


def _same(finding_diagnostic: types.Diagnostic, asked: types.Diagnostic) -> bool:
    return (
        finding_diagnostic.code == asked.code
        and finding_diagnostic.range == asked.range
        and asked.source == finding_diagnostic.source
    )


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, actions.FIX_ALL]
    ),
)
async def code_action(ls: JaxlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    document = ls.workspace.get_text_document(params.text_document.uri)
    if not ls.wants(document):
        return []
    only = params.context.only
    result: list[types.CodeAction] = []
    linted = ls.linted.get(document.uri)
    wants_quick_fixes = not only or any(
        k == types.CodeActionKind.QuickFix or k.startswith("quickfix") for k in only
    )
    if wants_quick_fixes and linted is not None and linted.version == document.version:
        for finding in linted.findings:
            finding_diagnostic = diagnostic(document, finding)
            for asked in params.context.diagnostics:
                if _same(finding_diagnostic, asked):
                    fix = actions.quick_fix(document, finding, asked, linted.unsafe_fixes)
                    if fix is not None:
                        result.append(fix)
                    suppress = actions.suppression(document, finding, asked)
                    if suppress is not None:
                        result.append(suppress)
    # Asked for by name (on save, say), or offered with the quick fixes when there is something to fix.
    asked_fix_all = any(k.startswith("source") and actions.FIX_ALL.startswith(k) for k in (only or []))
    fixable = linted is not None and any(applicable(f.fix, linted.unsafe_fixes) for f in linted.findings)
    if asked_fix_all or (not only and fixable):
        loop = asyncio.get_running_loop()
        path = document_path(document)
        checked = await loop.run_in_executor(ls.worker, lint_text, document.source, path, True, ls.buffers())
        action = actions.fix_all(document, checked.fixed)
        if action is not None:
            result.append(action)
    return result


def serve() -> None:
    """Serve one editor over standard input and output until it says `exit`."""
    server.start_io()
