"""The language server, driven over stdio by a real LSP client: diagnostics, code actions, edits, shutdown."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pygls")
from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402

SOURCE = textwrap.dedent(
    """\
    import jax


    @jax.jit
    def step(x):
        if x > 0:
            return x
        return -x
    """
)


class Editor:
    """A language client standing in for an editor: it keeps each document's latest diagnostics."""

    def __init__(self, root: Path):
        self.root = root
        self.client = LanguageClient("test-editor", "1")
        self.published: asyncio.Queue = asyncio.Queue()
        self.logged: list[types.LogMessageParams] = []

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.published.put_nowait(params)

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params: types.LogMessageParams) -> None:
            self.logged.append(params)

    async def start(self) -> types.InitializeResult:
        await self.client.start_io(sys.executable, "-m", "jaxlint", "server", cwd=str(self.root))
        result = await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=self.root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=self.root.as_uri(), name="project")],
            )
        )
        self.client.initialized(types.InitializedParams())
        return result

    def open(self, path: Path) -> None:
        """Open the file as the editor does, its text as the buffer's (version 1)."""
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=path.as_uri(), language_id="python", version=1, text=path.read_text()
                )
            )
        )

    async def diagnostics(self, uri: str, version: int) -> list[types.Diagnostic]:
        while True:
            params = await asyncio.wait_for(self.published.get(), timeout=60)
            if params.uri == uri and params.version == version:
                return list(params.diagnostics)

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await asyncio.wait_for(self.client.stop(), timeout=30)


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP edits (ASCII text, so code units are characters) to `text`."""
    lines = text.splitlines(keepends=True)

    def offset(p: types.Position) -> int:
        return sum(len(line) for line in lines[: p.line]) + p.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
        lines = text.splitlines(keepends=True)
    return text


def only_edits(action: types.CodeAction) -> list[types.TextEdit]:
    (change,) = action.edit.document_changes
    return list(change.edits)


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, timeout=180))


def test_a_session(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nextend-ignore = ["JAX404"]\n')
    path = tmp_path / "step.py"
    path.write_text(SOURCE)
    uri = path.as_uri()

    async def session():
        editor = Editor(tmp_path)
        result = await editor.start()
        assert result.server_info.name == "jaxlint"
        client = editor.client
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=SOURCE)
            )
        )
        (found,) = await editor.diagnostics(uri, 1)
        assert (found.code, found.source) == ("JAX101", "jaxlint")
        assert (found.range.start.line, found.range.start.character) == (5, 7)
        assert found.code_description.href.endswith("/rules/JAX101.md")

        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=found.range,
                context=types.CodeActionContext(diagnostics=[found]),
            )
        )
        titles = [a.title for a in actions]
        assert titles == ["Suppress JAX101 with `# noqa: JAX101`"]
        suppressed = apply(SOURCE, only_edits(actions[0]))
        assert "    if x > 0:  # noqa: JAX101\n" in suppressed

        # the editor applies the edit and says so: the finding goes away
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=suppressed)],
            )
        )
        assert await editor.diagnostics(uri, 2) == []

        # an in-place update has a safe fix, offered as a quick fix and as source.fixAll.jaxlint
        buggy = (
            suppressed
            + "\n\ndef fill(n):\n    counts = jax.numpy.zeros(n)\n    counts[0] = 1.0\n    return counts\n"
        )
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=buggy)],
            )
        )
        diagnostics = await editor.diagnostics(uri, 3)
        assert [d.code for d in diagnostics] == ["JAX401"]
        in_place = diagnostics[0]
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=in_place.range,
                context=types.CodeActionContext(diagnostics=[in_place]),
            )
        )
        kinds = [(a.kind, a.title) for a in actions]
        assert kinds[0][0] == types.CodeActionKind.QuickFix and "JAX401" in kinds[0][1]
        assert kinds[-1][0] == "source.fixAll.jaxlint"
        fixed = apply(buggy, only_edits(actions[0]))
        assert "    counts = counts.at[0].set(1.0)\n" in fixed

        fix_all = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(
                    start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
                ),
                context=types.CodeActionContext(diagnostics=[], only=["source.fixAll.jaxlint"]),
            )
        )
        (action,) = fix_all
        assert apply(buggy, only_edits(action)) == fixed

        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        await editor.stop()

    run(session())


def test_settings_come_from_the_workspace_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nignore = ["JAX101"]\n')
    uri = (tmp_path / "step.py").as_uri()

    async def session():
        editor = Editor(tmp_path)
        await editor.start()
        editor.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=SOURCE)
            )
        )
        assert await editor.diagnostics(uri, 1) == []
        # saving lints again, with the project's settings read afresh
        (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
        editor.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        assert [d.code for d in await editor.diagnostics(uri, 1)] == ["JAX101"]
        await editor.stop()

    run(session())


def test_server_without_its_extra_is_exit_2(cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "jaxlint.server.app", None)  # as if pygls were not installed
    outcome = cli("server")
    assert outcome.code == 2
    assert "server` extra" in outcome.stderr


def test_positions_are_in_utf16_code_units(tmp_path):
    source = SOURCE.replace("    if x > 0:", "    s = '😀😀'; t = x > 0\n    if t:")
    uri = (tmp_path / "emoji.py").as_uri()

    async def session():
        editor = Editor(tmp_path)
        await editor.start()
        editor.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=source)
            )
        )
        (found,) = await editor.diagnostics(uri, 1)
        assert found.code == "JAX101"
        assert (found.range.start.line, found.range.start.character) == (6, 7)
        await editor.stop()

    run(session())


DEEP = "import jax\n\n\n@jax.jit\ndef deep(x):\n    y = x" + "[0]" * 600 + "\n    if y > 0:\n        return y\n    return x\n"


def test_an_analysis_cut_short_is_named_in_the_editors_log_once(tmp_path):
    path = tmp_path / "deep.py"
    path.write_text(DEEP)
    uri = path.as_uri()

    async def session():
        editor = Editor(tmp_path)
        await editor.start()
        client = editor.client
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=DEEP)
            )
        )
        await editor.diagnostics(uri, 1)
        client.text_document_did_change(  # the same warning again: not logged twice
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=DEEP + "\n")],
            )
        )
        await editor.diagnostics(uri, 2)
        await editor.stop()
        return [(m.type, m.message) for m in editor.logged if m.message.startswith("jaxlint:")]

    assert run(session()) == [
        (
            types.MessageType.Warning,
            "jaxlint: deep.py: the analysis of `deep` (line 5) was cut short (an expression in it is nested too "
            "deeply to follow); findings in it may be missing",
        )
    ]


def test_no_noqa_is_offered_where_a_noqa_cannot_suppress(tmp_path):
    """A file that does not parse (JAX001) and an unused directive (JAX002): a `# noqa` would change
    nothing there, so the only actions offered are the unused directive's removal (unless the
    project's `unfixable` says otherwise)."""
    cases = {
        "broken.py": ("import jax\ndef f(:\n", "JAX001", []),
        "unused.py": ("import jax\n\ny = 1  # noqa: JAX101\n", "JAX002", ["Remove the unused `noqa` directive (JAX002)"]),
        # a project that makes the rule unfixable: not even its fix is offered
        "strict/unused.py": ("import jax\n\ny = 1  # noqa: JAX101\n", "JAX002", []),
    }
    (tmp_path / "strict").mkdir()
    (tmp_path / "strict" / "pyproject.toml").write_text('[tool.jaxlint]\nunfixable = ["JAX002"]\n')

    async def session():
        editor = Editor(tmp_path)
        await editor.start()
        for name, (text, code, expected) in cases.items():
            uri = (tmp_path / name).as_uri()
            editor.client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
                )
            )
            (found,) = await editor.diagnostics(uri, 1)
            assert found.code == code
            actions = await editor.client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=found.range,
                    context=types.CodeActionContext(diagnostics=[found], only=[types.CodeActionKind.QuickFix]),
                )
            )
            assert [a.title for a in actions or []] == expected
        await editor.stop()

    run(session())


def test_each_document_has_the_findings_of_its_file_checked_on_the_command_line(tmp_path, cli):
    """The editor's buffer goes the way `jaxlint check` takes its file, with the project's modules
    that call into it: a helper that goes wrong only under another module's jit is reported there."""
    import shutil

    root = tmp_path / "callers"
    shutil.copytree(Path(__file__).parent / "projects" / "callers", root)
    paths = sorted(root.rglob("*.py"))
    expected = {}
    for path in paths:
        findings = cli("check", "--no-cache", "--output-format", "json", str(path)).json
        expected[path] = sorted(
            (f["location"]["row"] - 1, f["location"]["column"] - 1, f["code"]) for f in findings if f["filename"] == str(path)
        )
    assert any(expected.values())
    assert {path: [(row - 1, column - 1, code) for row, column, code, _ in found] for path, found in shown_in_the_editor(root, paths).items()} == expected


def shown_in_the_editor(root: Path, paths: list[Path]) -> dict[Path, list[tuple]]:
    """Each file opened in turn: its diagnostics as (row, column, code, message), 1-based, sorted."""

    async def session():
        editor = Editor(root)
        await editor.start()
        shown = {}
        for path in paths:
            editor.open(path)
            found = await editor.diagnostics(path.as_uri(), 1)
            shown[path] = sorted(
                (d.range.start.line + 1, d.range.start.character + 1, d.code, d.message) for d in found
            )
        await editor.stop()
        return shown

    return run(session())


HELPER = "def clip(x):\n    if x > 0:\n        return x\n    return -x\n"
PLAIN_CALLER = "import jax\n\nimport helper\n\n\ndef step(x):\n    return helper.clip(x) * 2\n"
JITTED_CALLER = PLAIN_CALLER.replace("def step", "@jax.jit\ndef step")


def test_a_document_is_linted_again_when_a_document_its_findings_read_changes(tmp_path):
    """The helper's findings come from the caller's traced call: editing, saving and closing the
    caller updates the helper's diagnostics, and the caller's unsaved buffer counts over its file."""
    (tmp_path / "pyproject.toml").write_text("")
    helper, caller = tmp_path / "helper.py", tmp_path / "caller.py"
    helper.write_text(HELPER)
    caller.write_text(PLAIN_CALLER)

    async def session():
        editor = Editor(tmp_path)
        await editor.start()
        client = editor.client
        for path in (helper, caller):
            editor.open(path)
            assert await editor.diagnostics(path.as_uri(), 1) == []

        async def helper_shows():
            return [(d.range.start.line, d.code, d.message[-22:]) for d in await editor.diagnostics(helper.as_uri(), 1)]

        def edit(version: int, text: str) -> None:
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=caller.as_uri(), version=version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                )
            )

        traced = [(1, "JAX101", "(traced via `caller.step`)"[-22:])]
        edit(2, JITTED_CALLER)  # not saved: the buffer stands in for the file
        assert await helper_shows() == traced
        caller.write_text(JITTED_CALLER)
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=caller.as_uri()))
        )
        assert await helper_shows() == traced
        edit(3, PLAIN_CALLER)  # the jit removed in the buffer, still in the file
        assert await helper_shows() == []
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=caller.as_uri()))
        )
        assert await helper_shows() == traced  # closed unsaved: the file stands for it again
        await editor.stop()

    run(session())


def test_a_document_that_starts_calling_an_open_one_lints_it_again(tmp_path):
    """A module that did not import the helper becomes a caller when its buffer imports it and traces it."""
    (tmp_path / "pyproject.toml").write_text("")
    helper, other = tmp_path / "helper.py", tmp_path / "other.py"
    helper.write_text(HELPER)
    other.write_text("import jax\n")

    async def session():
        editor = Editor(tmp_path)
        await editor.start()
        client = editor.client
        for path in (helper, other):
            editor.open(path)
            assert await editor.diagnostics(path.as_uri(), 1) == []
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=other.as_uri(), version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=JITTED_CALLER)],
            )
        )
        (found,) = await editor.diagnostics(helper.as_uri(), 1)
        assert (found.code, found.range.start.line) == ("JAX101", 1)
        assert found.message.endswith("(traced via `other.step`)")
        await editor.stop()

    run(session())
