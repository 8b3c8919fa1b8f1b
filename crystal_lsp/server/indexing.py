"""Background index builds of the workspace folders, with work-done progress.

A build runs in the default executor (it may start worker processes) and is installed on the
folder's worker thread. Starting a build supersedes the folder's running one; the client can
cancel a build from its progress UI. Open documents are checked again when a build ends.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.server.workspace import Folder, submit

if TYPE_CHECKING:
    from crystal_lsp.server.core.interface import Core

log = logging.getLogger(__name__)

PROGRESS_TITLE = "crystal: indexing"
CANCELLED = "indexing cancelled (run the command crystal.rebuildIndex to index)"


HOLD_ENV = "CRYSTAL_LSP_TEST_HOLD_INDEXING"
"""Test seam: when set, indexing waits at its start until it is cancelled (e2e tests)."""


_HELD = threading.Event()


class BuildProgress:
    """Turns the index's ``(phase, done, total)`` callbacks into throttled reports.

    ``report(message, percentage)`` is called at most every ``interval`` seconds (and for the
    first and last step); ``cancelled`` is checked at every callback.
    """

    WEIGHTS = (("listing", 0, 5), ("tokenizing", 5, 85), ("S sets", 85, 99), ("ready", 100, 100))

    def __init__(
        self,
        report: Callable[[str, int], None],
        cancelled: threading.Event,
        interval: float = 0.2,
    ) -> None:
        self.report = report
        self.cancelled = cancelled
        self.interval = interval
        self._last = 0.0

    def __call__(self, phase: str, done: int, total: int) -> None:
        if os.environ.get(HOLD_ENV) and not _HELD.is_set():
            _HELD.set()  # only the first build of the process waits
            self.cancelled.wait(60)
        if self.cancelled.is_set():
            raise IndexingCancelled
        lo, hi = 0, 100
        for prefix, start, end in self.WEIGHTS:
            if phase.startswith(prefix):
                lo, hi = start, end
                break
        percentage = lo + (hi - lo) * done // max(1, total)
        now = time.monotonic()
        if now - self._last >= self.interval or done in (0, total):
            self._last = now
            self.report(f"{phase} {done}/{total}" if total > 1 else phase, percentage)


class IndexingCancelled(Exception):
    """The client cancelled the indexing progress."""


@dataclass
class BuildJob:
    """A running index build of one folder."""

    cancel: threading.Event
    task: asyncio.Task[None] | None = None
    superseded: bool = False

    def supersede(self) -> None:
        """Stop the build because another one replaces it."""
        self.superseded = True
        self.cancel.set()


class IndexProgress:
    """The work-done progress of one build (silent if the client shows none)."""

    def __init__(self, server: Core, folder: Folder, token: str | None) -> None:
        self.server = server
        self.folder = folder
        self.token = token
        self.loop = asyncio.get_running_loop()

    @classmethod
    async def begin(cls, server: Core, folder: Folder, cancel: threading.Event) -> IndexProgress:
        """Create the progress token and show it (cancelling it from the client sets ``cancel``)."""
        token: str | None = None
        if server.supports_progress:
            token = f"crystal-indexing-{uuid.uuid4()}"
            try:
                await server.work_done_progress.create_async(token)
            except Exception as exc:
                log.info("no work-done progress: %s", exc)
                token = None
        progress = cls(server, folder, token)
        if token is not None:
            progress._show(token, cancel)
        return progress

    def _show(self, token: str, cancel: threading.Event) -> None:
        self.server.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title=PROGRESS_TITLE,
                message=self.folder.name,
                percentage=0,
                cancellable=True,
            ),
        )
        future = self.server.work_done_progress.tokens.get(token)

        def on_cancel(done: Any) -> None:
            if done.cancelled():
                cancel.set()

        if future is not None:
            future.add_done_callback(on_cancel)

    def report(self, message: str, percentage: int) -> None:
        """Report a build phase (from any thread)."""
        if self.token is None or self.server.stopping:
            return
        params = types.WorkDoneProgressReport(
            message=f"{self.folder.name}: {message}", percentage=percentage, cancellable=True
        )
        self.loop.call_soon_threadsafe(self.server.work_done_progress.report, self.token, params)

    def end(self, message: str) -> None:
        """End the progress with the build's outcome."""
        if self.token is not None and not self.server.stopping:
            self.server.work_done_progress.end(
                self.token, types.WorkDoneProgressEnd(message=message)
            )


class Indexer:
    """The running index builds, one per folder at most."""

    def __init__(self, server: Core) -> None:
        self.server = server
        self.builds: dict[str, BuildJob] = {}

    async def ready(self, folder: Folder) -> None:
        """Wait until the folder's first index build finished (or was abandoned)."""
        await folder.ready.wait()

    def start_build(self, folder: Folder) -> asyncio.Task[None]:
        """(Re)build a folder's index in the background, with progress."""
        key = folder.uri or ""
        previous = self.builds.get(key)
        if previous is not None:
            previous.supersede()
        job = BuildJob(threading.Event())
        self.builds[key] = job
        job.task = asyncio.ensure_future(self._build(folder, job, previous))
        return job.task

    def drop(self, uri: str) -> None:
        """Stop the build of a folder that is removed."""
        job = self.builds.pop(uri, None)
        if job is not None:
            job.supersede()

    def supersede_all(self) -> None:
        """Stop every build without marking its folder ready (the server shuts down)."""
        for job in self.builds.values():
            job.supersede()

    def cancel_all(self) -> None:
        """Stop every build (the connection is gone)."""
        for job in self.builds.values():
            job.cancel.set()

    async def _build(self, folder: Folder, job: BuildJob, previous: BuildJob | None) -> None:
        if previous is not None and previous.task is not None:
            try:
                await previous.task
            except Exception:  # pragma: no cover - logged by the task itself
                pass
        if job.cancel.is_set():
            return
        progress = await IndexProgress.begin(self.server, folder, job.cancel)
        self.server.status(folder, "indexing", f"indexing {folder.name}")
        config = self.server.configuration.scan_config(folder.uri, folder.root)
        message = ""
        try:
            message = await self._index(folder, config, job, progress)
        except IndexingCancelled:
            message = "restarted" if job.superseded else CANCELLED
            if not job.superseded:
                self._failed(folder, message, types.MessageType.Info)
        except Exception as exc:
            log.exception("indexing %s failed", folder.name)
            message = f"indexing failed: {exc}"
            self._failed(folder, message, types.MessageType.Error)
        finally:
            progress.end(message)
            if self.builds.get(folder.uri or "") is job:
                del self.builds[folder.uri or ""]
            if not job.superseded:
                folder.ready.set()
                self.server.documents.recheck(folder)

    async def _index(
        self, folder: Folder, config: ScanConfig, job: BuildJob, progress: IndexProgress
    ) -> str:
        files = await submit(folder, folder.snapshot_files)
        built = await asyncio.get_running_loop().run_in_executor(
            None, folder.build, config, files, BuildProgress(progress.report, job.cancel)
        )
        if job.cancel.is_set():
            raise IndexingCancelled
        await submit(folder, folder.install, built)
        count = len(built.index.files)
        message = (
            f"indexed {count} files of {folder.name} in {built.seconds:.1f} s "
            f"({built.reused} from the cache)"
        )
        log.info("%s", message)
        self.server.status(folder, "ready", message)
        return message

    def _failed(self, folder: Folder, message: str, kind: types.MessageType) -> None:
        if not folder.built:
            folder.abandon(message)
        self.server.status(folder, "error", message)
        self.server.log_to_client(f"crystal: {folder.name}: {message}", kind)
