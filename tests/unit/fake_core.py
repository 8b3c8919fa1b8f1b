"""A fake core: a small, real implementation of :class:`crystal_lsp.server.core.interface.Core`.

Features are tested on it without a server, a transport or a client process. Its client end
records every message a feature sends (``sent``, in order) and answers what a feature asks from
what the test gave it; its parts are real small implementations too (:class:`Checks` records the
checks it is asked for), and a test swaps in the real part it exercises (``fake.indexer =
Indexer(fake)``). It implements the interface, nothing of pygls's server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace
from scan_samples import MERGE_INTERVALS

from crystal_lsp.server.buffers import DocResult
from crystal_lsp.server.configuration import Configuration
from crystal_lsp.server.references import AutoReferences
from crystal_lsp.server.workspace import Folder


class Progress:
    """Work-done progress of a client that shows it: tokens, and each step recorded."""

    def __init__(self, sent: list[tuple[str, Any]]) -> None:
        self.sent = sent
        self.tokens: dict[str, asyncio.Future[Any]] = {}

    async def create_async(self, token: str) -> None:
        self.tokens[token] = asyncio.get_running_loop().create_future()
        self.sent.append(("window/workDoneProgress/create", token))

    def begin(self, token: str, value: types.WorkDoneProgressBegin) -> None:
        self.sent.append(("$/progress begin", value.title))

    def report(self, token: str, value: types.WorkDoneProgressReport) -> None:
        self.sent.append(("$/progress report", value.message))

    def end(self, token: str, value: types.WorkDoneProgressEnd) -> None:
        self.sent.append(("$/progress end", value.message))

    def cancel(self, token: str) -> None:
        """The user cancels the progress in the client's UI."""
        self.tokens[token].cancel()


class Checks:
    """The documents part: documents open in the workspace, and the checks asked for."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.rechecked: list[Folder] = []
        self.republished: list[str] = []
        self.results: dict[str, DocResult] = {}

    def open_document(self, uri: str) -> TextDocument | None:
        return self.workspace.text_documents.get(uri)

    def result_of(self, uri: str) -> DocResult | None:
        return self.results.get(uri)

    def recheck(self, folder: Folder) -> None:
        self.rechecked.append(folder)

    def forget_results(self) -> None:
        self.results.clear()

    def republish(self, uri: str) -> None:
        self.republished.append(uri)


class NoBlocks:
    """The insertions part of a session where no block landed."""

    def diagnostics(self, uri: str) -> list[types.Diagnostic]:
        return []


class Folders:
    """The folders part: the folders a test made."""

    def __init__(self, *folders: Folder) -> None:
        self.by_uri = {folder.uri or "": folder for folder in folders}

    def folder_for(self, uri: str) -> Folder:
        return next(iter(self.by_uri.values()))


class Builds:
    """The indexer part when no build runs: every folder is ready, builds are only recorded."""

    def __init__(self) -> None:
        self.started: list[Folder] = []
        self.dropped: list[str] = []

    async def ready(self, folder: Folder) -> None:
        return None

    def start_build(self, folder: Folder) -> asyncio.Task[None]:
        self.started.append(folder)
        return asyncio.ensure_future(asyncio.sleep(0))

    def drop(self, uri: str) -> None:
        self.dropped.append(uri)


class FakeCore:
    """The core of a session with a client that has ``capabilities``.

    ``answer`` is the client's answer to ``workspace/configuration`` (an exception is raised as
    the request's failure).
    """

    def __init__(
        self, capabilities: types.ClientCapabilities | None = None, answer: Any = None
    ) -> None:
        self.client_capabilities = capabilities or types.ClientCapabilities()
        self.answer = answer
        self.sent: list[tuple[str, Any]] = []
        self.stopping = False
        self.initialized = asyncio.Event()
        self.workspace = Workspace(None)
        self.work_done_progress = Progress(self.sent)
        self._told: set[str] = set()
        self.configuration = Configuration(self)
        self.folders: Any = Folders()
        self.documents: Any = Checks(self.workspace)
        self.indexer: Any = Builds()
        self.insertions: Any = NoBlocks()
        self.auto = AutoReferences()
        """Scoring's reference search state (``score_request.ScoringCore``)."""

    @property
    def supports_progress(self) -> bool:
        return bool(self.caps("window", "work_done_progress"))

    def caps(self, *path: str) -> Any:
        value: Any = self.client_capabilities
        for name in path:
            value = getattr(value, name, None)
        return value

    def log_to_client(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self.sent.append(("window/logMessage", (kind, message)))

    def tell_once(self, problem: str) -> None:
        if problem not in self._told:
            self._told.add(problem)
            self.sent.append(("window/showMessage", problem))

    def status(self, folder: Folder, state: str, message: str) -> None:
        folder.state, folder.message = state, message
        self.sent.append(("crystal/status", (state, message)))

    def text_document_publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None:
        self.sent.append(("textDocument/publishDiagnostics", params))

    async def workspace_configuration_async(
        self, params: types.ConfigurationParams
    ) -> Sequence[Any | None]:
        self.sent.append(("workspace/configuration", [i.scope_uri for i in params.items]))
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer  # type: ignore[no-any-return]

    async def workspace_code_lens_refresh_async(self, params: None) -> None:
        self.sent.append(("workspace/codeLens/refresh", None))

    def methods(self) -> list[str]:
        """The methods sent so far, in order."""
        return [method for method, _ in self.sent]

    def of(self, method: str) -> list[Any]:
        """The parameters of every message of one method sent so far."""
        return [params for m, params in self.sent if m == method]


CODE = MERGE_INTERVALS


def project(root: Path, fake: FakeCore) -> Folder:
    """A workspace folder of two near-duplicate files, with the fake core's configuration."""
    (root / "a.py").write_text(CODE)
    (root / "b.py").write_text(CODE.replace("merge", "combine").replace("total", "size"))
    uri = root.as_uri()
    return Folder(uri, str(root), fake.configuration.scan_config(uri, str(root)))
