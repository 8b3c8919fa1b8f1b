"""The stdio transport of ``crystal-lsp mcp``: the SDK's own, with every request answered.

The SDK's stdio transport reads one JSON-RPC message per line, of any length, and drops a line
that is not a valid message (it is logged; a client waiting for that request waits forever), and
an answer that cannot be encoded stops its writer (every later call gets "Connection closed").
Around it:

* :class:`FrameGuard` hands the SDK's reader only lines that are valid messages, at most
  :data:`MAX_FRAME_BYTES` long (a longer line is skipped without being held in memory); a request
  the SDK would drop -- parameters that are not an object, another JSON-RPC version, text that is
  not valid Unicode -- gets a JSON-RPC error with its id, a line that is not JSON a parse error
  with a null id (JSON-RPC 2.0, section 5.1). Notifications and responses are never answered.
* :func:`encodable_answers`, a middleware of the server, turns an answer that cannot be sent
  (text that is not valid Unicode) into a JSON-RPC error of that request.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator
from typing import Any, BinaryIO, cast

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

from crystal_lsp.text.datafiles import loads

log = logging.getLogger(__name__)

MAX_FRAME_BYTES = 32 << 20
"""The longest message line read: 20 references of 200,000 characters each, JSON-escaped."""
_DISCARD_CHUNK = 1 << 20
_TOO_LONG = object()


class FrameGuard:
    """The lines of ``stream`` that are JSON-RPC messages; the others answered (module docstring).

    An async iterable of lines, as the SDK's stdio reader consumes its ``stdin``; errors go out on
    the transport's write stream once :meth:`attach` gave it.
    """

    def __init__(self, stream: BinaryIO, max_bytes: int = MAX_FRAME_BYTES) -> None:
        self.stream = stream
        self.max_bytes = max_bytes
        self._replies: Any = None
        self._attached = anyio.Event()

    def attach(self, replies: Any) -> None:
        """The write stream errors are sent on."""
        self._replies = replies
        self._attached.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while True:
            frame = await anyio.to_thread.run_sync(self._read, abandon_on_cancel=True)
            if frame is None:
                return
            if frame is _TOO_LONG:
                log.warning("skipped a message line over %d bytes", self.max_bytes)
                await self._answer(
                    None, types.INVALID_REQUEST, f"message over {self.max_bytes:,} bytes"
                )
                continue
            data = cast(bytes, frame)
            problem = _problem(data)
            if problem is None:
                yield data.decode("utf-8")
                continue
            code, message, request_id = problem
            log.warning("invalid message (%s): %.200r", message, data)
            if code is not None:
                await self._answer(request_id, code, message)

    def _read(self) -> bytes | object | None:
        """One line (None at the end of the stream; :data:`_TOO_LONG` when skipped)."""
        line = self.stream.readline(self.max_bytes + 1)
        if not line:
            return None
        if len(line) <= self.max_bytes or line.endswith(b"\n"):
            return line
        while line and not line.endswith(b"\n"):
            line = self.stream.readline(_DISCARD_CHUNK)
        return _TOO_LONG

    async def _answer(self, request_id: int | str | None, code: int, message: str) -> None:
        await self._attached.wait()
        error = types.JSONRPCError(
            jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
        )
        try:
            await self._replies.send(SessionMessage(error))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the session is over: nobody to answer


def _problem(data: bytes) -> tuple[int | None, str, int | str | None] | None:
    """Why a line is not a message the SDK takes: ``(error code or None, reason, request id)``.

    ``None``: the line is a valid message. The code is None when nothing may be answered (a
    notification, a response).
    """
    if not data.strip():
        return None, "empty line", None
    try:
        types.jsonrpc_message_adapter.validate_json(data, by_name=False)
        return None
    except ValidationError as exc:
        reason = str(exc.errors()[0].get("msg", "invalid message"))[:200]
    try:
        message = loads(data)
    except ValueError:
        return types.PARSE_ERROR, "parse error: not JSON", None
    if not isinstance(message, dict):
        return types.INVALID_REQUEST, "not a JSON-RPC message object", None
    request_id = message.get("id")
    if not isinstance(request_id, (int, str)) or isinstance(request_id, bool):
        request_id = None
    if "method" not in message:
        # a response of the client, or an object without a method: answered only with no id
        return (types.INVALID_REQUEST if request_id is None else None), reason, None
    if request_id is None:
        return None, reason, None  # a notification: never answered
    if message.get("jsonrpc") != "2.0":
        reason = f"unsupported JSON-RPC version {message.get('jsonrpc')!r:.40}"
    return types.INVALID_REQUEST, f"invalid request: {reason}", request_id


async def encodable_answers(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """A middleware: an answer that cannot be encoded becomes a JSON-RPC error of its request."""
    result = await call_next(ctx)
    try:
        if isinstance(result, BaseModel):
            result.model_dump_json(by_alias=True)
        elif result is not None:
            json.dumps(result, ensure_ascii=False).encode("utf-8")
    except (PydanticSerializationError, UnicodeError, TypeError, ValueError) as exc:
        log.error("the answer to %s cannot be sent: %s", ctx.method, exc)
        raise MCPError(types.INTERNAL_ERROR, f"the answer cannot be encoded ({exc})") from None
    return result


async def serve_stdio(server: MCPServer[Any]) -> None:
    """Serve ``server`` over stdin and stdout until stdin ends (module docstring)."""
    guard = FrameGuard(sys.stdin.buffer)
    server.middleware.append(encodable_answers)
    # the SDK claims stdout (fd 1 points at stderr while it serves); stdin is read by the guard
    async with stdio_server(stdin=cast(Any, guard)) as (read_stream, write_stream):
        guard.attach(write_stream)
        # MCPServer runs only on the SDK's own stdio_server(): its low-level server serves the
        # guarded streams (as the SDK's in-memory transport and client do)
        lowlevel = server._lowlevel_server
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
