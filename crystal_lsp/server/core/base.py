"""The server's core: transport, messages to the client, capabilities and the lifecycle.

:class:`CoreServer` is a pygls ``LanguageServer`` that serves one client over stdio or TCP
(:mod:`.transport` hardens pygls's JSON-RPC), forwards the core's warnings to the client's log,
and sends what every feature may send: log messages, a configuration problem shown once, the
``crystal/status`` of a folder. It knows no feature: :class:`crystal_lsp.server.app.CrystalServer`
adds them, and features see it only through :class:`~.interface.Core`.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Callable
from typing import Any, cast

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from crystal_lsp.server.core.transport import (
    BoundedStdinReader,
    CrystalProtocol,
    StreamReaderAdapter,
    quiet_refusals,
    serve,
)
from crystal_lsp.server.workspace import Folder
from crystal_lsp.version import __version__

log = logging.getLogger(__name__)

STATUS = "crystal/status"


class ClientLogHandler(logging.Handler):
    """Forwards the core's warnings (a corrupt cache value, an unreadable file) to the client.

    The server's own modules tell the client themselves; pygls is never forwarded (it logs the
    messages it sends).
    """

    def __init__(self, server: CoreServer) -> None:
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


class CoreServer(LanguageServer):
    """The transport, the messages to the client and the session's lifecycle (no feature)."""

    def __init__(self) -> None:
        super().__init__("crystal-lsp", __version__, protocol_cls=CrystalProtocol)
        quiet_refusals()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.reported: set[str] = set()
        self.initialized = asyncio.Event()
        """Set when the workspace folders exist (checks wait for it)."""
        self.stopping = False
        """Set by ``shutdown``: nothing more is sent after it."""

    # ------------------------------------------------------------------ transport
    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """Serve over stdio (the given binary streams, else the process's)."""
        self._stop_event = threading.Event()
        reader = BoundedStdinReader(stdin or sys.stdin.buffer, self.thread_pool)
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
        """Serve one client over TCP (no authentication: bind it to loopback).

        A second connection while one is served is closed at once; it must not take over the
        first client's session.
        """
        self._stop_event = threading.Event()
        busy = False

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal busy
            if busy:
                log.warning("refusing a second connection: one client at a time")
                writer.close()
                return
            busy = True
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
        """The connection is gone: stop the work in progress (the server's parts add theirs)."""

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
    def caps(self, *path: str) -> Any:
        """A client capability by attribute path (None if the client did not send it)."""
        value: Any = self.client_capabilities
        for name in path:
            value = getattr(value, name, None)
            if value is None:
                return None
        return value

    @property
    def supports_progress(self) -> bool:
        """Whether the client shows work-done progress."""
        return bool(self.caps("window", "work_done_progress"))


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
