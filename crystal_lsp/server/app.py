"""The language server: settings, workspace folders, background indexing and push diagnostics.

State lives on the event loop (open documents, settings, folders); all index and finder work runs
on each folder's worker thread (:mod:`crystal_lsp.server.workspace`). Checks are debounced per
document with asyncio tasks, and a result is published only if the document still has the
version it was computed for.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from lsprotocol import types
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from crystal_lsp.server.diagnostics import Flag, diagnostics_of, flags_of
from crystal_lsp.server.positions import TextIndex
from crystal_lsp.server.protocol import (
    CrystalProtocol,
    StreamReaderAdapter,
    serve,
)
from crystal_lsp.server.scoring import AutoReferences
from crystal_lsp.server.settings import SECTION, Settings, folder_config, parse_settings
from crystal_lsp.server.workspace import (
    BuildProgress,
    DocResult,
    DocumentSnapshot,
    Folder,
    IndexingCancelled,
    submit,
)
from crystal_lsp.version import __version__

log = logging.getLogger(__name__)

STATUS = "crystal/status"
PROGRESS_TITLE = "crystal: indexing"
WATCH_DEBOUNCE = 0.2


class ClientLogHandler(logging.Handler):
    """Forwards the core's warnings (a corrupt cache value, an unreadable file) to the client.

    The server's own modules tell the client themselves; pygls is never forwarded (it logs the
    messages it sends).
    """

    def __init__(self, server: CrystalServer) -> None:
        super().__init__(logging.WARNING)
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("crystal_lsp.server"):
            return
        try:
            kind = (
                types.MessageType.Error
                if record.levelno >= logging.ERROR
                else types.MessageType.Warning
            )
            self.server.log_to_client(f"crystal: {record.getMessage()}", kind)
        except Exception:  # pragma: no cover - logging must never raise
            self.handleError(record)


@dataclass
class DocState:
    """What the loop remembers of an open document."""

    uri: str
    task: asyncio.Task[None] | None = None
    result: DocResult | None = None
    flags: list[Flag] = field(default_factory=list)
    diagnostics: list[types.Diagnostic] | None = None
    version: int | None = None
    index: TextIndex | None = None
    logged: str | None = None


@dataclass
class BuildJob:
    """A running index build of one folder."""

    cancel: threading.Event
    task: asyncio.Task[None] | None = None
    superseded: bool = False


class CrystalServer(LanguageServer):
    """crystal-lsp's language server (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__("crystal-lsp", __version__, protocol_cls=CrystalProtocol)
        self.settings = Settings()
        self.init_settings: Any = None
        self.folder_settings: dict[str, Settings] = {}
        self.folders: dict[str, Folder] = {}
        self.detached: Folder | None = None
        self.docs: dict[str, DocState] = {}
        self.builds: dict[str, BuildJob] = {}
        self.auto = AutoReferences()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.reported: set[str] = set()
        self._watch_task: asyncio.Task[None] | None = None
        self._watched: dict[str, set[str]] = {}
        self._relist: set[str] = set()
        self._reconfigure: set[str] = set()
        self.started = time.monotonic()
        self._background: set[asyncio.Future[Any]] = set()
        self.initialized = asyncio.Event()
        """Set when the workspace folders exist (checks wait for it)."""
        self.stopping = False
        """Set by ``shutdown``: nothing more is sent after it."""

    # ------------------------------------------------------------------ transport
    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """Serve over stdio (the given binary streams, else the process's)."""
        self._stop_event = threading.Event()
        reader = StdinAsyncReader(stdin or sys.stdin.buffer, self.thread_pool)
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(self._serve(reader))
        except BrokenPipeError:
            log.error("the connection to the client is lost; exiting")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self._shutdown()

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one client over TCP."""
        self._stop_event = threading.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.protocol.set_writer(writer)  # type: ignore[arg-type]
            try:
                await self._serve(StreamReaderAdapter(reader))
            finally:
                if self._server is not None:
                    self._server.close()

        async def main() -> None:
            self._server = await asyncio.start_server(connection, host, port)
            log.info("listening on %s:%s", host, port)
            async with self._server:
                try:
                    await self._server.serve_forever()
                except asyncio.CancelledError:
                    pass

        try:
            asyncio.run(main())
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self._shutdown()

    def _shutdown(self) -> None:
        cast(Callable[[], None], self.shutdown)()

    async def _serve(self, reader: Any) -> None:
        self.loop = asyncio.get_running_loop()
        assert self._stop_event is not None
        handler = ClientLogHandler(self)
        logging.getLogger("crystal_lsp").addHandler(handler)
        try:
            await serve(reader, self.protocol, self._stop_event)  # type: ignore[arg-type]
        finally:
            logging.getLogger("crystal_lsp").removeHandler(handler)
            self._stop_all()

    def _stop_all(self) -> None:
        for job in self.builds.values():
            job.cancel.set()
        for folder in self._all_folders():
            folder.shutdown()

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Internal errors go to the log (and the client's log), never to pop-ups.

        A failed request was already answered with a JSON-RPC error: it is only logged here.
        """
        name = getattr(source, "__name__", str(source))
        if name == "FeatureRequestError":
            log.info("request failed: %s", error)
            return
        log.error("internal error (%s): %s", name, error)
        self.log_to_client(f"crystal: internal error: {error}", types.MessageType.Error)

    # ------------------------------------------------------------------ messages
    def log_to_client(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        """A ``window/logMessage`` (from any thread)."""
        params = types.LogMessageParams(type=kind, message=message)
        loop = self.loop
        if loop is None or loop.is_closed() or self.stopping:
            return
        try:
            if _running_loop() is loop:
                self.window_log_message(params)
            else:
                loop.call_soon_threadsafe(self.window_log_message, params)
        except Exception:  # pragma: no cover - the transport is gone
            log.debug("could not send a log message", exc_info=True)

    def tell_once(self, problem: str) -> None:
        """Log a configuration problem and show it to the user once."""
        log.warning("%s", problem)
        if problem in self.reported or self.stopping:
            return
        self.reported.add(problem)
        self.log_to_client(problem, types.MessageType.Warning)
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=f"crystal: {problem}")
        )

    def status(self, folder: Folder, state: str, message: str) -> None:
        """The ``crystal/status`` notification."""
        folder.state, folder.message = state, message
        if self.stopping:
            return
        files = sum(1 for s in folder.index.files.values() if not s.override)
        self.protocol.notify(
            STATUS,
            {
                "state": state,
                "message": message,
                "files": files,
                "folder": folder.uri,
            },
        )

    # ------------------------------------------------------------------ capabilities
    def _caps(self, *path: str) -> Any:
        value: Any = self.client_capabilities
        for name in path:
            value = getattr(value, name, None)
            if value is None:
                return None
        return value

    @property
    def supports_progress(self) -> bool:
        """Whether the client shows work-done progress."""
        return bool(self._caps("window", "work_done_progress"))

    # ------------------------------------------------------------------ settings
    async def pull_settings(self, folders: list[str] | None = None) -> None:
        """Read ``workspace/configuration`` (global and per folder) and apply it."""
        items = [types.ConfigurationItem(section=SECTION)]
        uris = list(self.folders) if folders is None else folders
        items += [types.ConfigurationItem(scope_uri=uri, section=SECTION) for uri in uris]
        values: list[Any] = [None] * len(items)
        if self._caps("workspace", "configuration"):
            try:
                values = list(
                    await self.workspace_configuration_async(types.ConfigurationParams(items=items))
                )
            except Exception as exc:
                log.warning("workspace/configuration failed: %s", exc)
        values += [None] * (len(items) - len(values))
        settings, problems = parse_settings(self.init_settings, values[0])
        for problem in problems:
            self.tell_once(problem)
        self.settings = settings
        for uri, value in zip(uris, values[1:]):
            scoped, problems = parse_settings(self.init_settings, values[0], value)
            for problem in problems:
                self.tell_once(problem)
            self.folder_settings[uri] = scoped

    def apply_settings_from(self, raw: Any) -> None:
        """Use ``didChangeConfiguration`` settings when the client cannot be asked."""
        section = raw.get(SECTION) if isinstance(raw, dict) else None
        settings, problems = parse_settings(self.init_settings, section)
        for problem in problems:
            self.tell_once(problem)
        self.settings = settings
        self.folder_settings = {uri: settings for uri in self.folders}

    def config_of(self, folder: Folder) -> Any:
        """The folder's ``ScanConfig`` for the current settings (problems told once)."""
        settings = self.folder_settings.get(folder.uri or "", self.settings)
        config, problems = folder_config(folder.root, settings)
        for problem in problems:
            self.tell_once(problem)
        return config

    # ------------------------------------------------------------------ folders
    def _all_folders(self) -> list[Folder]:
        return [*self.folders.values(), *([self.detached] if self.detached else [])]

    def add_folder(self, uri: str) -> Folder | None:
        """Create a folder (and start indexing it)."""
        root = to_fs_path(uri)
        if root is None or uri in self.folders:
            return self.folders.get(uri)
        settings = self.folder_settings.get(uri, self.settings)
        config, problems = folder_config(root, settings)
        for problem in problems:
            self.tell_once(problem)
        folder = Folder(uri, root, config)
        self.folders[uri] = folder
        self.start_build(folder)
        return folder

    def remove_folder(self, uri: str) -> None:
        """Drop a folder (its open documents move to another folder on their next check)."""
        folder = self.folders.pop(uri, None)
        if folder is None:
            return
        job = self.builds.pop(uri, None)
        if job is not None:
            job.superseded = True
            job.cancel.set()
        folder.shutdown()
        for state in self.docs.values():
            state.result = None

    def folder_for(self, uri: str) -> Folder:
        """The folder a document belongs to (the innermost one containing it)."""
        path = to_fs_path(uri)
        best: Folder | None = None
        for folder in self.folders.values():
            if folder.contains(path) and (
                best is None or len(folder.root or "") > len(best.root or "")
            ):
                best = folder
        if best is not None:
            return best
        if self.detached is None:
            from crystal_lsp.clones.settings import ScanConfig

            self.detached = Folder(
                None, None, ScanConfig().with_overrides(dict(self.settings.scan))
            )
        return self.detached

    # ------------------------------------------------------------------ indexing
    def start_build(self, folder: Folder) -> asyncio.Task[None]:
        """(Re)build a folder's index in the background, with progress."""
        key = folder.uri or ""
        previous = self.builds.get(key)
        if previous is not None:
            previous.superseded = True
            previous.cancel.set()
        job = BuildJob(threading.Event())
        self.builds[key] = job
        job.task = asyncio.ensure_future(self._build(folder, job, previous))
        return job.task

    async def _build(self, folder: Folder, job: BuildJob, previous: BuildJob | None) -> None:
        if previous is not None and previous.task is not None:
            try:
                await previous.task
            except Exception:  # pragma: no cover - logged by the task itself
                pass
        if job.cancel.is_set():
            return
        loop = asyncio.get_running_loop()
        token: str | None = None
        if self.supports_progress:
            token = f"crystal-indexing-{uuid.uuid4()}"
            try:
                await self.work_done_progress.create_async(token)
            except Exception as exc:
                log.info("no work-done progress: %s", exc)
                token = None
        if token is not None:
            self.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(
                    title=PROGRESS_TITLE,
                    message=folder.name,
                    percentage=0,
                    cancellable=True,
                ),
            )
            future = self.work_done_progress.tokens.get(token)

            def on_cancel(done: Any) -> None:
                if done.cancelled():
                    job.cancel.set()

            if future is not None:
                future.add_done_callback(on_cancel)

        def report(message: str, percentage: int) -> None:
            if token is None or self.stopping:
                return
            params = types.WorkDoneProgressReport(
                message=f"{folder.name}: {message}", percentage=percentage, cancellable=True
            )
            loop.call_soon_threadsafe(self.work_done_progress.report, token, params)

        self.status(folder, "indexing", f"indexing {folder.name}")
        config = self.config_of(folder)
        message = ""
        try:
            files = await submit(folder, folder.snapshot_files)
            built = await loop.run_in_executor(
                None, folder.build, config, files, BuildProgress(report, job.cancel)
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
            self.status(folder, "ready", message)
        except IndexingCancelled:
            if job.superseded:
                message = "restarted"
            else:
                message = "indexing cancelled (run the command crystal.rebuildIndex to index)"
                if not folder.built:
                    folder.abandon(message)
                self.status(folder, "error", message)
                self.log_to_client(f"crystal: {folder.name}: {message}", types.MessageType.Info)
        except Exception as exc:
            log.exception("indexing %s failed", folder.name)
            message = f"indexing failed: {exc}"
            if not folder.built:
                folder.abandon(message)
            self.status(folder, "error", message)
            self.log_to_client(f"crystal: {folder.name}: {message}", types.MessageType.Error)
        finally:
            if token is not None and not self.stopping:
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
            if self.builds.get(folder.uri or "") is job:
                del self.builds[folder.uri or ""]
            if not job.superseded:
                folder.ready.set()
                self.recheck(folder)

    async def ready(self, folder: Folder) -> None:
        """Wait until the folder's first index build finished (or was abandoned)."""
        await folder.ready.wait()

    # ------------------------------------------------------------------ documents
    def open_document(self, uri: str) -> TextDocument | None:
        """The open document of a URI, or None."""
        from urllib.parse import unquote

        doc: TextDocument | None = self.workspace.text_documents.get(unquote(uri))
        return doc

    def schedule(self, uri: str, delay: float | None = None) -> None:
        """(Re)start the debounced check of a document."""
        state = self.docs.setdefault(uri, DocState(uri))
        if state.task is not None and not state.task.done():
            state.task.cancel()
        state.task = asyncio.ensure_future(self._check(state, delay))

    def recheck(self, folder: Folder) -> None:
        """Check again every open document of a folder (publishing only changes)."""
        for uri in list(self.docs):
            if self.open_document(uri) is not None and self.folder_for(uri) is folder:
                self.schedule(uri, delay=0.0)

    async def _check(self, state: DocState, delay: float | None) -> None:
        uri = state.uri
        try:
            await asyncio.sleep(self.settings.debounce if delay is None else delay)
            doc = self.open_document(uri)
            if doc is None:
                return
            await self.initialized.wait()
            folder = self.folder_for(uri)
            await self.ready(folder)
            doc = self.open_document(uri)
            if doc is None:
                return
            if not self.settings.enable:
                self.publish(state, doc.version, [], None, [], None)
                return
            snapshot = DocumentSnapshot(
                uri,
                doc.version,
                doc.source,
                doc.language_id or "",
                to_fs_path(uri) if uri.startswith("file:") else None,
            )
            severity = self.settings.severity
            codec = self.workspace.position_codec
            started = time.perf_counter()
            result, index, flags, diagnostics = await submit(
                folder, _diagnose, folder, snapshot, severity, codec
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
            reason = result.skip.split(" (")[0] if result.skip is not None else None
            if reason is not None and not result.quiet and state.logged != reason:
                state.logged = reason
                line = f"crystal: no diagnostics for {uri}: {result.skip}"
                log.info("%s", line)
                self.log_to_client(line, types.MessageType.Info)
            elif result.skip is None:
                state.logged = None
            self.publish(state, snapshot.version, diagnostics, result, flags, index)
            if result.prepare:
                self.spawn(submit(folder, folder.prepare, uri, snapshot.text))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("checking %s failed", uri)
            self.log_to_client(f"crystal: checking {uri} failed: {exc}", types.MessageType.Error)

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
        if self.stopping or (state.diagnostics == diagnostics and state.version == version):
            return
        state.diagnostics, state.version = diagnostics, version
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=state.uri, diagnostics=diagnostics, version=version)
        )

    def close(self, uri: str) -> None:
        """A document was closed: stop its check, clear its diagnostics, forget its buffer."""
        state = self.docs.pop(uri, None)
        if state is not None and state.task is not None:
            state.task.cancel()
        if self.stopping:
            return
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )
        folder = self.folder_for(uri)
        self.spawn(self._close(folder, uri))

    async def _close(self, folder: Folder, uri: str) -> None:
        if await submit(folder, folder.close, uri):
            # other documents may have shown copies in the closed, unsaved buffer
            self.recheck(folder)

    def spawn(self, awaitable: Any) -> None:
        """Run a background task (kept referenced until it is done)."""
        self._background = {t for t in self._background if not t.done()}
        self._background.add(asyncio.ensure_future(awaitable))

    # ------------------------------------------------------------------ disk changes
    def disk_changed(self, uris: dict[str, set[types.FileChangeType]]) -> None:
        """Files changed on disk: refresh the folders' indexes (debounced), then re-check."""
        for uri, kinds in uris.items():
            path = to_fs_path(uri)
            for folder in self.folders.values():
                if not folder.contains(path):
                    continue
                key = folder.uri or ""
                self._watched.setdefault(key, set()).add(uri)
                if path is not None and path.endswith("pyproject.toml"):
                    self._reconfigure.add(key)
                if kinds - {types.FileChangeType.Changed}:
                    self._relist.add(key)
        if self._watch_task is None or self._watch_task.done():
            self._watch_task = asyncio.ensure_future(self._refresh_folders())

    async def _refresh_folders(self) -> None:
        await asyncio.sleep(WATCH_DEBOUNCE)
        while self._watched:
            key, _ = self._watched.popitem()
            folder = self.folders.get(key)
            if folder is None:
                continue
            await self.ready(folder)
            try:
                if key in self._reconfigure:
                    self._reconfigure.discard(key)
                    self._relist.discard(key)
                    self.start_build(folder)
                    continue
                relist = key in self._relist
                self._relist.discard(key)
                await submit(folder, folder.refresh, relist)
            except Exception as exc:
                log.exception("refreshing %s failed", folder.name)
                self.log_to_client(
                    f"crystal: refreshing the index failed: {exc}", types.MessageType.Error
                )
            self.recheck(folder)

    async def reconfigure(self) -> None:
        """Settings changed: rebuild folders whose configuration changed, re-check documents."""
        for folder in list(self.folders.values()):
            config = self.config_of(folder)
            if config != folder.config or config.signature() != folder.config.signature():
                self.start_build(folder)
            else:
                self.recheck(folder)
        if self.detached is not None:
            from crystal_lsp.clones.settings import ScanConfig

            self.detached.config = ScanConfig().with_overrides(dict(self.settings.scan))
            self.recheck(self.detached)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


CHECK_DELAY_ENV = "CRYSTAL_LSP_TEST_CHECK_DELAY"
"""Test seam: seconds every check waits on the worker (e2e tests of stale-result dropping)."""


def _diagnose(
    folder: Folder, snapshot: DocumentSnapshot, severity: str, codec: Any
) -> tuple[DocResult, TextIndex | None, list[Flag], list[types.Diagnostic]]:
    """Check a document and build its diagnostics (worker thread)."""
    delay = os.environ.get(CHECK_DELAY_ENV)
    if delay:
        time.sleep(float(delay))
    result = folder.check(snapshot)
    if result.skip is not None:
        return result, None, [], []
    index = TextIndex(snapshot.text, codec)
    flags = flags_of(result, index)
    return result, index, flags, diagnostics_of(folder, result, flags, severity, codec)
