"""The MCP server in a subprocess, driven by the official SDK's own client over stdio."""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult
from raw_client import Inbox

TIMEOUT = 120.0


PATIENT = {"CRYSTAL_LSP_MCP_WAIT": "600"}
"""Calls wait for the first index (a loaded CI machine may take longer than the default 5 s)."""


def server_params(root: Path, cache: Path, *extra: str) -> StdioServerParameters:
    """``python -m crystal_lsp mcp ROOT`` with a private cache."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "crystal_lsp", "mcp", str(root), "--jobs", "1", *extra],
        env={"CRYSTAL_LSP_CACHE_DIR": str(cache), **PATIENT},
    )


class Recorder:
    """Everything the client received besides responses: progress and stream errors."""

    def __init__(self) -> None:
        self.progress: list[tuple[float, float | None, str | None]] = []
        self.stream_errors: list[Exception] = []

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))

    async def on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.stream_errors.append(message)


@asynccontextmanager
async def session(
    root: Path, cache: Path, *extra: str
) -> AsyncIterator[tuple[ClientSession, Recorder]]:
    """An initialized client session with the server of ``root`` (``extra``: its options)."""
    recorder = Recorder()
    async with stdio_client(server_params(root, cache, *extra)) as (read, write):
        async with ClientSession(
            read, write, read_timeout_seconds=TIMEOUT, message_handler=recorder.on_message
        ) as client:
            await client.initialize()
            yield client, recorder
    assert not recorder.stream_errors, recorder.stream_errors


async def call(
    client: ClientSession, name: str, args: dict[str, Any], recorder: Recorder | None = None
) -> CallToolResult:
    """A tool call (progress recorded when a recorder is given)."""
    result = await client.call_tool(
        name, args, progress_callback=recorder.on_progress if recorder is not None else None
    )
    assert isinstance(result, CallToolResult)
    return result


def text_of(result: CallToolResult) -> str:
    """The text content of a result."""
    return "\n".join(getattr(block, "text", "") for block in result.content)


def raw_exchange(
    root: Path,
    cache: Path,
    messages: list[dict[str, Any]],
    last_id: int,
    env: dict[str, str] | None = None,
) -> list[str]:
    """Send JSON-RPC lines to a fresh server and return its stdout lines up to the answer of
    request ``last_id`` (then close its stdin and let it exit); ``env`` adds variables."""
    env = {**os.environ, "CRYSTAL_LSP_CACHE_DIR": str(cache), **PATIENT, **(env or {})}
    proc = subprocess.Popen(
        [sys.executable, "-m", "crystal_lsp", "mcp", str(root), "--jobs", "1", "-vv"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True)
    reader.start()
    out: list[str] = []
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        while True:
            line = lines.get(timeout=TIMEOUT)
            out.append(line.rstrip("\n"))
            if json.loads(line).get("id") == last_id:
                break
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    reader.join(timeout=10)
    while not lines.empty():
        out.append(lines.get().rstrip("\n"))
    return out


INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"},
}


class RawMcp(Inbox):
    """``crystal-lsp mcp ROOT`` in a subprocess, driven line by line: anything can be sent.

    A reader thread parses stdout line by line; a line that is not a JSON-RPC message is kept in
    ``junk`` (stdout must carry nothing but the protocol).
    """

    def __init__(self, root: Path, cache: Path) -> None:
        super().__init__()
        cache.mkdir(parents=True, exist_ok=True)
        self.stderr_path = cache / "mcp.stderr"
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "crystal_lsp", "mcp", str(root), "--jobs", "1", "-v"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env={**os.environ, "CRYSTAL_LSP_CACHE_DIR": str(cache), **PATIENT},
        )
        self.junk: list[bytes] = []
        self._ids = itertools.count(1000)
        self._taken: set[int] = set()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                message = json.loads(line)
                assert message["jsonrpc"] == "2.0"
                self.inbox.put(message)
            except (ValueError, KeyError, TypeError, AssertionError):
                self.junk.append(line)

    def send_line(self, data: bytes) -> None:
        """One line as it is (a newline appended)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_line(json.dumps(message).encode("utf-8"))

    def request(self, method: str, params: Any = None, timeout: float = TIMEOUT) -> dict[str, Any]:
        ident = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.answer(ident, timeout)

    def call(self, name: str, arguments: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        """A ``tools/call``; its response (``result`` or ``error``)."""
        return self.request("tools/call", {"name": name, "arguments": arguments}, timeout)

    def answer(self, ident: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next response with id ``ident`` not returned before (``None``: errors without id)."""

        def mine(message: dict[str, Any]) -> bool:
            if message.get("id") != ident or "method" in message or id(message) in self._taken:
                return False
            self._taken.add(id(message))
            return True

        return self.wait(mine, timeout)

    def initialize(self) -> None:
        assert "result" in self.request("initialize", INIT)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self) -> int:
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(timeout=30)
        finally:
            code = self.reap()
        return code
