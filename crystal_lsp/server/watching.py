"""Files changed on disk (saved documents and watched files): debounced index refreshes.

Changes are collected per folder for a short while, then each folder's index is refreshed once:
re-listed if files were created or deleted, rebuilt if its ``pyproject.toml`` changed.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from crystal_lsp.server.uris import to_fs_path
from crystal_lsp.server.workspace import submit

if TYPE_CHECKING:
    from crystal_lsp.server.core.interface import Core

log = logging.getLogger(__name__)

WATCH_DEBOUNCE = 0.2


class DiskWatcher:
    """Pending disk changes by folder, and the task that applies them."""

    def __init__(self, server: Core) -> None:
        self.server = server
        self._task: asyncio.Task[None] | None = None
        self._watched: dict[str, set[str]] = {}
        self._relist: set[str] = set()
        self._reconfigure: set[str] = set()

    def changed(self, uris: dict[str, set[types.FileChangeType]]) -> None:
        """Files changed on disk: refresh the folders' indexes (debounced), then re-check."""
        for uri, kinds in uris.items():
            path = to_fs_path(uri)
            for folder in self.server.folders.by_uri.values():
                if not folder.contains(path):
                    continue
                key = folder.uri or ""
                self._watched.setdefault(key, set()).add(uri)
                if path is not None and path.endswith("pyproject.toml"):
                    self._reconfigure.add(key)
                if kinds - {types.FileChangeType.Changed}:
                    self._relist.add(key)
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._refresh_folders())

    async def _refresh_folders(self) -> None:
        await asyncio.sleep(WATCH_DEBOUNCE)
        while self._watched:
            key, _ = self._watched.popitem()
            folder = self.server.folders.by_uri.get(key)
            if folder is None:
                continue
            await self.server.indexer.ready(folder)
            try:
                if key in self._reconfigure:
                    self._reconfigure.discard(key)
                    self._relist.discard(key)
                    self.server.indexer.start_build(folder)
                    continue
                relist = key in self._relist
                self._relist.discard(key)
                await submit(folder, folder.refresh, relist)
            except Exception as exc:
                log.exception("refreshing %s failed", folder.name)
                self.server.log_to_client(
                    f"crystal: refreshing the index failed: {exc}", types.MessageType.Error
                )
            self.server.documents.recheck(folder)
