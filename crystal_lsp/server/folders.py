"""The workspace folders of the server, and the detached folder of documents outside them.

Each folder has its own index, worker thread and ``ScanConfig``; a document belongs to the
innermost folder containing it. Documents outside every folder (untitled buffers, other files)
share one detached folder, created on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crystal_lsp.server.uris import to_fs_path
from crystal_lsp.server.workspace import Folder

if TYPE_CHECKING:
    from crystal_lsp.server.core.interface import Core


class Folders:
    """The server's folders by URI, plus the detached one."""

    def __init__(self, server: Core) -> None:
        self.server = server
        self.by_uri: dict[str, Folder] = {}
        self.detached: Folder | None = None

    def all(self) -> list[Folder]:
        """Every folder, the detached one last."""
        return [*self.by_uri.values(), *([self.detached] if self.detached else [])]

    def add(self, uri: str) -> Folder | None:
        """Create a folder (and start indexing it)."""
        root = to_fs_path(uri)
        if root is None or uri in self.by_uri:
            return self.by_uri.get(uri)
        folder = Folder(uri, root, self.server.configuration.scan_config(uri, root))
        self.by_uri[uri] = folder
        self.server.indexer.start_build(folder)
        return folder

    def remove(self, uri: str) -> None:
        """Drop a folder (its open documents move to another folder on their next check)."""
        folder = self.by_uri.pop(uri, None)
        if folder is None:
            return
        self.server.indexer.drop(uri)
        folder.shutdown()
        self.server.documents.forget_results()

    def folder_for(self, uri: str) -> Folder:
        """The folder a document belongs to (the innermost one containing it)."""
        path = to_fs_path(uri)
        best: Folder | None = None
        for folder in self.by_uri.values():
            if folder.contains(path) and (
                best is None or len(folder.root or "") > len(best.root or "")
            ):
                best = folder
        if best is not None:
            return best
        if self.detached is None:
            self.detached = Folder(None, None, self.server.configuration.detached_config())
        return self.detached

    def reconfigure(self) -> None:
        """Settings changed: rebuild folders whose configuration changed, re-check documents."""
        configuration = self.server.configuration
        for folder in list(self.by_uri.values()):
            config = configuration.scan_config(folder.uri, folder.root)
            if config != folder.config or config.signature() != folder.config.signature():
                self.server.indexer.start_build(folder)
            else:
                self.server.documents.recheck(folder)
        if self.detached is not None:
            self.detached.config = configuration.detached_config()
            self.server.documents.recheck(self.detached)
