"""The language server: the core with its features composed on it.

:class:`CrystalServer` is the :class:`~crystal_lsp.server.core.base.CoreServer` (transport,
messages to the client, lifecycle) plus the parts that hold the session's state, each owned by
one feature module: :mod:`~crystal_lsp.server.configuration` (settings),
:mod:`~crystal_lsp.server.folders` (workspace folders), :mod:`~crystal_lsp.server.indexing`
(background index builds with progress), :mod:`~crystal_lsp.server.documents` (debounced checks
and push diagnostics), :mod:`~crystal_lsp.server.watching` (files changed on disk),
:mod:`~crystal_lsp.server.insertions` (inserted blocks and their lenses) and the automatic
references of :mod:`~crystal_lsp.server.references`. The parts see the server only through
:class:`~crystal_lsp.server.core.interface.Core`. All index and finder work runs on each folder's
worker thread (:mod:`crystal_lsp.server.workspace`). The LSP handlers are in
:mod:`crystal_lsp.server.handlers`. See docs/server.md.
"""

from __future__ import annotations

from crystal_lsp.server.configuration import Configuration
from crystal_lsp.server.core.base import CoreServer
from crystal_lsp.server.documents import Documents
from crystal_lsp.server.folders import Folders
from crystal_lsp.server.indexing import Indexer
from crystal_lsp.server.insertions import Insertions
from crystal_lsp.server.references import AutoReferences
from crystal_lsp.server.watching import DiskWatcher

__all__ = ["CrystalServer"]


class CrystalServer(CoreServer):
    """crystal-lsp's language server (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.configuration = Configuration(self)
        self.folders = Folders(self)
        self.indexer = Indexer(self)
        self.documents = Documents(self)
        self.watcher = DiskWatcher(self)
        self.auto = AutoReferences()
        self.insertions = Insertions(self)

    def _stop_all(self) -> None:
        super()._stop_all()
        self.indexer.cancel_all()
        for folder in self.folders.all():
            folder.shutdown()
