"""JSON-RPC robustness and the document model, on top of pygls.

pygls 2.1 leaves a client waiting when a request's parameters do not validate (the error is
logged, no response is sent) and ignores bodies that are not JSON. Here every request that can be
answered gets a JSON-RPC error: invalid parameters (-32602) with the request's id, unparsable
bodies (-32700) and non-request JSON (-32600) with a null id. Notifications are never answered.

Documents split into lines at ``\\r\\n``, ``\\r`` and ``\\n`` only, as the LSP specifies
(pygls uses :meth:`str.splitlines`, which also breaks at form feeds and Unicode separators and
then applies a client's edits at the wrong place).

pygls 2.1 also keeps the future of every notification whose handler is a generator (its built-in
``didOpen``/``didChange``/``didClose`` are) in its table of requests in flight, under an id of
its own, for good: one future per keystroke. They are dropped here once done.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import threading
from collections.abc import Sequence
from typing import Any

import attrs
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
)
from pygls.protocol import JsonRPCRequestMessage, LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.workspace import TextDocument, Workspace

log = logging.getLogger(__name__)

MAX_CONTENT_LENGTH = 256 * 1024 * 1024
MAX_HEADER_BYTES = 64 * 1024
"""The longest header line read (asyncio's line limit, which bounds them over TCP)."""
_DROPPED = b"X-Dropped: oversized\r\n"
_CONTENT_LENGTH = re.compile(rb"^Content-Length: *(\d+)\r?\n$", re.IGNORECASE)
_LSP_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


class RefusalFilter(logging.Filter):
    """Drops pygls' traceback of a request refused on purpose (a JSON-RPC error it answered).

    The server logs such a refusal as one line (``request failed: ...``); a traceback for each
    refused request is noise. Internal errors keep theirs.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """False for the traceback record of a deliberate refusal or of an unreadable message."""
        if str(record.msg).startswith("Unable to deserialize message"):
            return False  # told in one line: "invalid request" or "... could not be read"
        exc = record.exc_info[1] if record.exc_info else None
        return not (isinstance(exc, JsonRpcException) and not isinstance(exc, JsonRpcInternalError))


def quiet_refusals() -> None:
    """Install :class:`RefusalFilter` on pygls' JSON-RPC logger (once)."""
    logger = logging.getLogger("pygls.protocol.json_rpc")
    if not any(isinstance(f, RefusalFilter) for f in logger.filters):
        logger.addFilter(RefusalFilter())


@attrs.define
class InvalidRequest:
    """A request that could not be read: answered with ``error`` and its id."""

    id: int | str | None
    error: JsonRpcException


class LspTextDocument(TextDocument):
    """A text document whose lines end at LSP line terminators only."""

    @property
    def lines(self) -> Sequence[str]:
        """The lines, with their terminators."""
        return tuple(_LSP_LINE.findall(self.source))


class LspWorkspace(Workspace):
    """A workspace of :class:`LspTextDocument`."""

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return LspTextDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )


def _request_id(data: Any) -> int | str | None:
    if isinstance(data, dict):
        value = data.get("id")
        if isinstance(value, (int, str)) and not isinstance(value, bool):
            return value
    return None


class CrystalProtocol(LanguageServerProtocol):
    """pygls' protocol with JSON-RPC errors for every malformed request and LSP lines."""

    shut_down = False
    """Set once ``shutdown`` was received: later requests are answered with errors."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:
        """The ``initialize`` of pygls, with a workspace that splits lines as the LSP does."""
        inner = super().lsp_initialize(params)
        try:
            request = next(inner)
        except StopIteration as stop:
            self._use_lsp_lines()
            return stop.value
        self._use_lsp_lines()
        while True:
            value = yield request
            try:
                request = inner.send(value)
            except StopIteration as stop:
                return stop.value

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: Any = None,
        kwargs: Any = None,
    ) -> None:
        """Dispatch as pygls does; forget the future of anything but a client's request when done."""
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        if isinstance(callback, functools.partial) and callback.func == self._send_handler_result:
            return  # a client's request: pygls removes it once answered (or cancelled)
        future = self._request_futures.get(msg_id)
        if future is not None:
            future.add_done_callback(functools.partial(self._forget, msg_id))

    def _forget(self, msg_id: Any, future: Any) -> None:
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]

    def _use_lsp_lines(self) -> None:
        old = self.workspace
        self._workspace = LspWorkspace(
            old.root_uri,
            types.TextDocumentSyncKind.Incremental,
            list(old.folders.values()),
            old.position_encoding,
        )

    RAW_METHODS = frozenset({"crystal/score", "crystal/insertions"})
    """Custom requests whose parameters reach the handler as plain JSON (pygls would turn
    objects into named tuples, renaming keys that are not identifiers)."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Structure a message; a malformed request becomes an :class:`InvalidRequest`."""
        if (
            isinstance(data, dict)
            and data.get("method") in self.RAW_METHODS
            and data.get("jsonrpc") == self.VERSION
            and _request_id(data) is not None
        ):
            return JsonRPCRequestMessage(
                id=data["id"],
                method=data["method"],
                jsonrpc=data["jsonrpc"],
                params=data.get("params"),
            )
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "method" in data and _request_id(data) is not None:
                return InvalidRequest(_request_id(data), exc)
            if isinstance(data, dict) and "id" in data and "method" not in data:
                # a client's answer of the wrong shape (``workspace/configuration`` -> null):
                # the request fails with an error its caller handles, instead of never ending
                result = f"{data.get('result')!r:.100}"
                log.debug("unreadable answer to request %r: %s", data["id"], result)
                return types.ResponseErrorMessage(
                    id=data["id"],
                    error=types.ResponseError(
                        code=JsonRpcInvalidParams.CODE,
                        message=f"the client's answer could not be read (result {result})",
                    ),
                )
            raise

    def send_error(self, msg_id: int | str | None, error: JsonRpcException) -> None:
        """A JSON-RPC error response (``"id": null`` when the id could not be read)."""
        self._send_data(
            {
                "jsonrpc": self.VERSION,
                "id": msg_id,
                "error": {"code": error.code, "message": error.message},
            }
        )

    def handle_message(self, message: Any) -> None:
        """Dispatch a message; answer what cannot be dispatched."""
        if isinstance(message, InvalidRequest):
            log.warning("invalid request %r: %s", message.id, message.error)
            self.send_error(message.id, message.error)
            return
        if not hasattr(message, "jsonrpc"):
            log.warning("ignoring a message that is not a JSON-RPC object: %.200r", message)
            self.send_error(_request_id(message), JsonRpcInvalidRequest("not a JSON-RPC message"))
            return
        if message.jsonrpc != self.VERSION:
            log.warning("ignoring a message of JSON-RPC version %r", message.jsonrpc)
            if getattr(message, "method", None) is not None and hasattr(message, "id"):
                self.send_error(message.id, JsonRpcInvalidRequest("unsupported JSON-RPC version"))
            return
        method = getattr(message, "method", None)
        is_request = method is not None and getattr(message, "id", None) is not None
        if self.shut_down and is_request:
            # the LSP: requests after shutdown error with InvalidRequest (pygls drops them,
            # and the client would wait forever)
            self.send_error(message.id, JsonRpcInvalidRequest("the server is shutting down"))
            return
        super().handle_message(message)
        if is_request and method == types.SHUTDOWN:
            self.shut_down = True


async def serve(reader: Any, protocol: CrystalProtocol, stop: threading.Event) -> None:
    """The message loop (pygls' ``run_async`` plus parse errors and a body-size limit)."""
    content_length = 0
    while not stop.is_set():
        header = await reader.readline()
        if not header:
            break
        if not content_length:
            match = _CONTENT_LENGTH.fullmatch(header)
            if match:
                content_length = int(match.group(1))
                if content_length > MAX_CONTENT_LENGTH:
                    log.warning("ignoring a message header of %d bytes", content_length)
                    content_length = 0
            continue
        if header.strip():
            continue  # another header (Content-Type)
        body = await reader.readexactly(content_length)
        content_length = 0
        if not body:
            break
        try:
            message = json.loads(body, object_hook=protocol.structure_message)
        except JsonRpcException as exc:  # a notification whose parameters do not validate
            log.warning("ignoring a malformed notification: %s", exc)
            continue
        except (ValueError, RecursionError) as exc:
            log.warning("unparsable message (%s): %.200r", exc, body)
            protocol.send_error(None, JsonRpcParseError(f"parse error: {exc}"))
            continue
        try:
            protocol.handle_message(message)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception:  # the loop must go on whatever a message does
            log.exception("failed to handle a message")


class BoundedStdinReader:
    """Reads the messages of a binary stream (stdin) on a thread, header lines bounded.

    pygls' stdin reader reads a header line of any length into memory; a line longer than
    :data:`MAX_HEADER_BYTES` is dropped here as it is read, as over TCP (asyncio's line limit).
    """

    def __init__(self, stream: Any, executor: Any = None) -> None:
        self.stream = stream
        self.executor = executor

    async def readline(self) -> bytes:
        """One header line (empty at end of stream); an oversized one is dropped, not fatal."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, self._readline)

    def _readline(self) -> bytes:
        line: bytes = self.stream.readline(MAX_HEADER_BYTES + 1)
        if len(line) <= MAX_HEADER_BYTES or line.endswith(b"\n"):
            return line
        while line and not line.endswith(b"\n"):
            line = self.stream.readline(MAX_HEADER_BYTES)
        log.warning("ignoring a header line over the size limit")
        return _DROPPED

    async def readexactly(self, n: int) -> bytes:
        """A body (empty at end of stream)."""
        data: bytes = await asyncio.get_running_loop().run_in_executor(
            self.executor, self.stream.read, n
        )
        return data if len(data) == n else b""


class StreamReaderAdapter:
    """Gives an ``asyncio.StreamReader`` the reader interface of :func:`serve`."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    async def readline(self) -> bytes:
        """One header line (empty at end of stream); an oversized one is dropped, not fatal."""
        try:
            return await self._reader.readline()
        except ValueError:  # asyncio's LimitOverrunError: a line over the reader's 64 KiB
            log.warning("ignoring a header line over the size limit")
            return _DROPPED

    async def readexactly(self, n: int) -> bytes:
        """A body (empty at end of stream)."""
        try:
            return await self._reader.readexactly(n)
        except asyncio.IncompleteReadError:
            return b""


def position_encoding(workspace: Workspace) -> types.PositionEncodingKind | str | None:
    """The negotiated position encoding."""
    return workspace.position_encoding
