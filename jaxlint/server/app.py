"""The language server: lints open documents off the event loop and answers code-action requests."""

from __future__ import annotations

import asyncio
import io
import logging
import tokenize
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from jaxlint import __version__
from jaxlint.buffers import lint_in_memory
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


def document_path(document: TextDocument) -> Path:
    """The file a document stands for; an unsaved buffer is taken to live in the working folder."""
    path = to_fs_path(document.uri) if document.uri.startswith("file:") else None
    return Path(path) if path else Path.cwd() / "untitled.py"


def lint_text(source: str, path: Path, fix: bool = False) -> tuple[list[Finding], str, bool, list[str]]:
    """The findings kept for `source` linted as the file `path` with its project's settings, and the fixed source.

    The third value says whether the project allows unsafe fixes; the fourth names the analyses
    cut short (findings may be missing there).
    """
    settings = FileSettings.for_path(path, fix=fix)
    module = Module(source, declared_encoding(source))
    findings, fixed, _, warnings = lint_in_memory(module, module.encode(), str(path), settings.lint, settings.callers(path))
    return settings.kept(findings), fixed.source, settings.config.unsafe_fixes, warnings


def declared_encoding(source: str) -> str:
    """The encoding a buffer's coding cookie declares, if it can hold the text (as its file would), else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source.encode("utf-8")).readline)
        source.encode(encoding)
    except (SyntaxError, LookupError, UnicodeEncodeError):
        return "utf-8"
    return "utf-8" if encoding == "utf-8-sig" else encoding


class JaxlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "jaxlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental
        )
        self.linted: dict[str, Linted] = {}
        self.warned: dict[str, list[str]] = {}  # the cut-short warnings last logged for each document
        self.pending: dict[str, asyncio.Task] = {}
        # One worker: analyses queue up instead of competing for the interpreter with the event loop.
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jaxlint-lint")

    def wants(self, document: TextDocument) -> bool:
        return document.language_id in _LANGUAGES or document.uri.endswith(_SUFFIXES)

    def schedule(self, uri: str, delay: float) -> None:
        """Lint the document after `delay` seconds, replacing an analysis not started yet."""
        pending = self.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(self._lint_later(uri, delay))

    async def _lint_later(self, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        document = self.workspace.get_text_document(uri)
        if not self.wants(document):
            return
        version, source = document.version, document.source
        loop = asyncio.get_running_loop()
        try:
            findings, _, unsafe, warnings = await loop.run_in_executor(
                self.worker, lint_text, source, document_path(document)
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
        self.linted[uri] = Linted(version, findings, unsafe)
        self._log_warnings(uri, document_path(current), warnings)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, version=version, diagnostics=[diagnostic(current, f) for f in findings]
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
    ls.schedule(params.text_document.uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: JaxlintServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, DEBOUNCE_SECONDS)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: JaxlintServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, 0)  # the project's configuration may have changed too


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: JaxlintServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    pending = ls.pending.pop(uri, None)
    if pending is not None:
        pending.cancel()
    ls.linted.pop(uri, None)
    ls.warned.pop(uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


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
        _, fixed, _, _ = await loop.run_in_executor(ls.worker, lint_text, document.source, path, True)
        action = actions.fix_all(document, fixed)
        if action is not None:
            result.append(action)
    return result


def serve() -> None:
    """Serve one editor over standard input and output until it says `exit`."""
    server.start_io()
