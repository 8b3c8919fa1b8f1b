"""Open documents: debounced checks and push diagnostics.

Each open document has one check at a time, an asyncio task restarted on every edit. The check
runs on the folder's worker thread, and its result is published only if the document still has
the version it was computed for, and only if it differs from what the client already has.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument

from crystal_lsp.server.buffers import DocResult, DocumentSnapshot
from crystal_lsp.server.diagnostics import Flag, diagnostics_of, flags_of, more_note
from crystal_lsp.server.positions import TextIndex
from crystal_lsp.server.settings import Settings
from crystal_lsp.server.uris import to_fs_path
from crystal_lsp.server.workspace import Folder, submit

if TYPE_CHECKING:
    from crystal_lsp.server.core.interface import Core

log = logging.getLogger(__name__)

CHECK_DELAY_ENV = "CRYSTAL_LSP_TEST_CHECK_DELAY"
"""Test seam: seconds every check waits on the worker (e2e tests of stale-result dropping)."""


@dataclass
class DocState:
    """What the loop remembers of an open document."""

    uri: str
    task: asyncio.Task[None] | None = None
    result: DocResult | None = None
    flags: list[Flag] = field(default_factory=list)
    diagnostics: list[types.Diagnostic] | None = None
    checked: list[types.Diagnostic] = field(default_factory=list)
    """The check's own diagnostics (those published may add inserted blocks')."""
    version: int | None = None
    index: TextIndex | None = None
    logged: str | None = None


class Documents:
    """The checks and published diagnostics of open documents."""

    def __init__(self, server: Core) -> None:
        self.server = server
        self.docs: dict[str, DocState] = {}
        self._background: set[asyncio.Future[Any]] = set()

    def open_document(self, uri: str) -> TextDocument | None:
        """The open document of a URI, or None."""
        doc: TextDocument | None = self.server.workspace.text_documents.get(unquote(uri))
        return doc

    def result_of(self, uri: str) -> DocResult | None:
        """The last check's result of an open document (None: not checked yet)."""
        state = self.docs.get(uri)
        return state.result if state is not None else None

    def schedule(self, uri: str, delay: float | None = None) -> None:
        """(Re)start the debounced check of a document."""
        state = self.docs.setdefault(uri, DocState(uri))
        if state.task is not None and not state.task.done():
            state.task.cancel()
        state.task = asyncio.ensure_future(self._check(state, delay))

    def recheck(self, folder: Folder) -> None:
        """Check again every open document of a folder (publishing only changes)."""
        for uri in list(self.docs):
            if (
                self.open_document(uri) is not None
                and self.server.folders.folder_for(uri) is folder
            ):
                self.schedule(uri, delay=0.0)

    def recheck_open(self) -> None:
        """Check again every open document (its folder may have changed)."""
        for uri in list(self.docs):
            if self.open_document(uri) is not None:
                self.schedule(uri, delay=0.0)

    def cancel_all(self) -> None:
        """Stop every pending check."""
        for state in self.docs.values():
            if state.task is not None:
                state.task.cancel()

    def forget_results(self) -> None:
        """Drop every document's last result (its folder went away)."""
        for state in self.docs.values():
            state.result = None

    async def _check(self, state: DocState, delay: float | None) -> None:
        uri = state.uri
        configuration = self.server.configuration
        try:
            await asyncio.sleep(configuration.settings.debounce if delay is None else delay)
            doc = self.open_document(uri)
            if doc is None:
                return
            await self.server.initialized.wait()
            folder = self.server.folders.folder_for(uri)
            await self.server.indexer.ready(folder)
            doc = self.open_document(uri)
            if doc is None:
                return
            if not configuration.settings.enable:
                self.publish(state, doc.version, [], None, [], None)
                return
            await self._run_check(state, folder, doc)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("checking %s failed", uri)
            self.server.log_to_client(
                f"crystal: checking {uri} failed: {exc}", types.MessageType.Error
            )

    async def _run_check(self, state: DocState, folder: Folder, doc: TextDocument) -> None:
        uri = state.uri
        snapshot = DocumentSnapshot(
            uri,
            doc.version,
            doc.source,
            doc.language_id or "",
            to_fs_path(uri) if uri.startswith("file:") else None,
        )
        settings = self.server.configuration.settings
        codec = self.server.workspace.position_codec
        started = time.perf_counter()
        result, index, flags, diagnostics = await submit(
            folder, _diagnose, folder, snapshot, settings, codec
        )
        log.debug(
            "checked %s v%s in %.1f ms",
            uri,
            snapshot.version,
            (time.perf_counter() - started) * 1000,
        )
        current = self.open_document(uri)
        if current is None or current.version != snapshot.version:
            log.debug("dropped a stale result for %s (version %s)", uri, snapshot.version)
            return
        self._log_skip(state, result)
        self.publish(state, snapshot.version, diagnostics, result, flags, index)
        if result.prepare:
            self._spawn(submit(folder, folder.prepare, uri, snapshot.text))

    def _log_skip(self, state: DocState, result: DocResult) -> None:
        """Tell the client once why a document gets no diagnostics."""
        reason = result.skip.split(" (")[0] if result.skip is not None else None
        if reason is not None and not result.quiet and state.logged != reason:
            state.logged = reason
            line = f"crystal: no diagnostics for {state.uri}: {result.skip}"
            log.info("%s", line)
            self.server.log_to_client(line, types.MessageType.Info)
        elif result.skip is None:
            state.logged = None

    def publish(
        self,
        state: DocState,
        version: int | None,
        diagnostics: list[types.Diagnostic],
        result: DocResult | None,
        flags: list[Flag],
        index: TextIndex | None,
    ) -> None:
        """Publish a document's diagnostics unless the client already has exactly these."""
        state.result, state.flags, state.index = result, flags, index
        state.checked = diagnostics
        diagnostics = diagnostics + self.server.insertions.diagnostics(state.uri)
        if self.server.stopping or (state.diagnostics == diagnostics and state.version == version):
            return
        state.diagnostics, state.version = diagnostics, version
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=state.uri, diagnostics=diagnostics, version=version)
        )

    def republish(self, uri: str) -> None:
        """Publish again with the current diagnostics of inserted blocks (if checked in time)."""
        state = self.docs.get(uri)
        doc = self.open_document(uri)
        if state is None or doc is None or state.version is None or doc.version != state.version:
            return  # the pending check publishes them
        self.publish(state, state.version, state.checked, state.result, state.flags, state.index)

    def close(self, uri: str) -> None:
        """A document was closed: stop its check, clear its diagnostics, forget its buffer."""
        state = self.docs.pop(uri, None)
        if state is not None and state.task is not None:
            state.task.cancel()
        if self.server.stopping:
            return
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )
        folder = self.server.folders.folder_for(uri)
        self._spawn(self._close(folder, uri))

    async def _close(self, folder: Folder, uri: str) -> None:
        if await submit(folder, folder.close, uri):
            # other documents may have shown copies in the closed, unsaved buffer
            self.recheck(folder)

    def _spawn(self, awaitable: Any) -> None:
        """Run a background task (kept referenced until it is done)."""
        self._background = {t for t in self._background if not t.done()}
        self._background.add(asyncio.ensure_future(awaitable))


def _diagnose(
    folder: Folder, snapshot: DocumentSnapshot, settings: Settings, codec: Any
) -> tuple[DocResult, TextIndex | None, list[Flag], list[types.Diagnostic]]:
    """Check a document and build its diagnostics (worker thread)."""
    delay = os.environ.get(CHECK_DELAY_ENV)
    if delay:
        time.sleep(float(delay))
    result = folder.check(snapshot)
    if result.skip is not None:
        return result, None, [], []
    index = TextIndex(snapshot.text, codec)
    limit = settings.max_diagnostics
    flags, more = flags_of(result, index, settings.underline, folder.config.show_similar, limit)
    diagnostics = diagnostics_of(folder, result, flags, settings.severity, codec)
    if more:
        diagnostics.append(more_note(more, limit))
    return result, index, flags, diagnostics
