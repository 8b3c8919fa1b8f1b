"""The narrow interface between the server's core and its features.

A feature (diagnostics, hover, code actions, inserted blocks, compare, scoring, indexing,
watching) is handed a :class:`Core` and asks nothing else of the server: the messages it may
send to the client, the client's capabilities, the session's lifecycle, and the few operations
of the other parts it needs (each a small protocol below). Features never import the server
class (:mod:`crystal_lsp.server.app`) and the core never imports a feature, so a feature runs on
any object that implements this interface: the real server, or a small fake core in a test.

Every member is read-only here (properties): a feature reads the session's state, the part that
owns a piece of state is the only one that changes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from lsprotocol import types
from pygls.progress import Progress
from pygls.workspace import TextDocument, Workspace

from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.server.buffers import DocResult
from crystal_lsp.server.settings import Settings
from crystal_lsp.server.workspace import Folder


class Client(Protocol):
    """The client end of the session: what may be sent to it, what it can do, the lifecycle."""

    @property
    def stopping(self) -> bool:
        """Set by ``shutdown``: nothing more is sent after it."""
        ...

    @property
    def initialized(self) -> asyncio.Event:
        """Set when the workspace folders exist (checks wait for it)."""
        ...

    @property
    def workspace(self) -> Workspace:
        """The client's open documents and its position encoding."""
        ...

    @property
    def work_done_progress(self) -> Progress:
        """Work-done progress tokens of the client (used only if ``supports_progress``)."""
        ...

    @property
    def supports_progress(self) -> bool:
        """Whether the client shows work-done progress."""
        ...

    def caps(self, *path: str) -> Any:
        """A client capability by attribute path (None if the client did not send it)."""
        ...

    def log_to_client(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        """A ``window/logMessage`` (from any thread)."""
        ...

    def tell_once(self, problem: str) -> None:
        """Log a configuration problem and show it to the user once."""
        ...

    def status(self, folder: Folder, state: str, message: str) -> None:
        """The ``crystal/status`` notification of a folder."""
        ...

    def text_document_publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None:
        """Send ``textDocument/publishDiagnostics``."""
        ...

    async def workspace_configuration_async(
        self, params: types.ConfigurationParams
    ) -> Sequence[Any | None]:
        """Ask ``workspace/configuration``."""
        ...

    async def workspace_code_lens_refresh_async(self, params: None) -> None:
        """Ask ``workspace/codeLens/refresh``."""
        ...


class ConfigurationPart(Protocol):
    """The settings (owned by :class:`crystal_lsp.server.configuration.Configuration`)."""

    @property
    def settings(self) -> Settings:
        """The global settings now."""
        ...

    def scan_config(self, uri: str | None, root: str | None) -> ScanConfig:
        """The ``ScanConfig`` of a folder for the current settings."""
        ...

    def detached_config(self) -> ScanConfig:
        """The ``ScanConfig`` of documents outside every workspace folder."""
        ...


class FoldersPart(Protocol):
    """The workspace folders (owned by :class:`crystal_lsp.server.folders.Folders`)."""

    @property
    def by_uri(self) -> Mapping[str, Folder]:
        """The workspace folders by URI (not the detached one)."""
        ...

    def folder_for(self, uri: str) -> Folder:
        """The folder a document belongs to."""
        ...


class DocumentsPart(Protocol):
    """Open documents and their checks (owned by :class:`crystal_lsp.server.documents.Documents`)."""

    def open_document(self, uri: str) -> TextDocument | None:
        """The open document of a URI, or None."""
        ...

    def result_of(self, uri: str) -> DocResult | None:
        """The last check's result of an open document (None: not checked yet)."""
        ...

    def recheck(self, folder: Folder) -> None:
        """Check again every open document of a folder."""
        ...

    def forget_results(self) -> None:
        """Drop every document's last result."""
        ...

    def republish(self, uri: str) -> None:
        """Publish a document's diagnostics again (only sent when they changed)."""
        ...


class IndexerPart(Protocol):
    """Index builds (owned by :class:`crystal_lsp.server.indexing.Indexer`)."""

    async def ready(self, folder: Folder) -> None:
        """Wait until the folder's first index build finished (or was abandoned)."""
        ...

    def start_build(self, folder: Folder) -> asyncio.Task[None]:
        """(Re)build a folder's index in the background."""
        ...

    def drop(self, uri: str) -> None:
        """Stop the build of a folder that is removed."""
        ...


class InsertionsPart(Protocol):
    """Inserted blocks (owned by :class:`crystal_lsp.server.insertions.Insertions`)."""

    def diagnostics(self, uri: str) -> list[types.Diagnostic]:
        """Diagnostics of a document's inserted blocks that are copies."""
        ...


class Core(Client, Protocol):
    """Everything a feature may use: the client end and the other parts' operations."""

    @property
    def configuration(self) -> ConfigurationPart:
        """The settings."""
        ...

    @property
    def folders(self) -> FoldersPart:
        """The workspace folders."""
        ...

    @property
    def documents(self) -> DocumentsPart:
        """Open documents and their checks."""
        ...

    @property
    def indexer(self) -> IndexerPart:
        """Index builds."""
        ...

    @property
    def insertions(self) -> InsertionsPart:
        """Inserted blocks."""
        ...
