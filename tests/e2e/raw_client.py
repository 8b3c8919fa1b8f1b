"""A raw JSON-RPC client over the server's stdio: it can send anything, bytes included.

A reader thread splits stdout into ``Content-Length`` frames; every byte that is not part of a
frame is kept in ``junk`` (stdout must carry nothing but the protocol).
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any


def assert_displayable(text: str) -> None:
    """Text shown to a person or an agent: no control character but newlines, no lone surrogate,
    no bidi override (untrusted names escaped)."""
    bad = [c for c in text if (ord(c) < 32 and c != "\n") or 0x7F <= ord(c) < 0xA0]
    bad += [c for c in text if 0xD800 <= ord(c) <= 0xDFFF or c == "\u202e"]
    assert not bad, (bad, text)


class Inbox:
    """Messages a reader thread puts in ``inbox``, waited for in arrival order."""

    proc: subprocess.Popen[bytes]
    stderr_path: Path
    _stderr: Any

    def __init__(self) -> None:
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.received: list[dict[str, Any]] = []

    def wait(self, predicate: Any, timeout: float = 60) -> dict[str, Any]:
        """The first message (received before, or within ``timeout``) that ``predicate`` takes."""
        for message in self.received:
            if predicate(message):
                return message
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.proc.poll() is not None:
                raise AssertionError(
                    f"no such message (server exit code {self.proc.poll()}); stderr:\n"
                    + self.stderr_path.read_text(errors="replace")[-3000:]
                )
            try:
                message = self.inbox.get(timeout=min(remaining, 0.5))
            except queue.Empty:
                continue
            self.on_message(message)
            self.received.append(message)
            if predicate(message):
                return message

    def on_message(self, message: dict[str, Any]) -> None:
        """Called for each message as it arrives (nothing by default)."""

    def reap(self) -> int:
        """Kill the process if it is still running, close its log; its exit code."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._stderr.close()
        return int(self.proc.returncode)


class RawServer(Inbox):
    """``python -m crystal_lsp serve`` in a subprocess, driven byte by byte."""

    def __init__(self, cache: Path, env: dict[str, str] | None = None) -> None:
        super().__init__()
        self.stderr_path = cache / "server.stderr"
        cache.mkdir(parents=True, exist_ok=True)
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "crystal_lsp", "serve", "-v"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env={**os.environ, "CRYSTAL_LSP_CACHE_DIR": str(cache), **(env or {})},
        )
        self.junk: list[bytes] = []
        self._ids = itertools.count(1000)
        self.settings: dict[str, Any] = {"debounceMs": 0}
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    if length is not None:
                        break
                    self.junk.append(line)
                    continue
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
                elif name.strip().lower() != b"content-type":
                    self.junk.append(line)
            body = out.read(length)
            try:
                self.inbox.put(json.loads(body))
            except ValueError:
                self.junk.append(body)

    # ------------------------------------------------------------------ sending
    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send_body(self, body: bytes) -> None:
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def send(self, message: Any) -> None:
        self.send_body(json.dumps(message).encode("utf-8"))

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def request(self, method: str, params: Any = None, timeout: float = 60) -> dict[str, Any]:
        ident = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.wait(lambda m: m.get("id") == ident and "method" not in m, timeout)

    # ------------------------------------------------------------------ receiving
    def on_message(self, message: dict[str, Any]) -> None:
        """Answer the server's requests (configuration, registration, progress)."""
        if "method" not in message or "id" not in message:
            return
        result: Any = None
        if message["method"] == "workspace/configuration":
            result = [self.settings for _ in message["params"]["items"]]
        self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def initialize(self, root: Path) -> dict[str, Any]:
        response = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": {
                    "workspace": {"configuration": True},
                    "window": {"workDoneProgress": True},
                    "general": {"positionEncodings": ["utf-16"]},
                },
            },
        )
        self.notify("initialized", {})
        self.wait(
            lambda m: (
                m.get("method") == "crystal/status" and m["params"]["state"] in ("ready", "error")
            )
        )
        return response

    def diagnostics(self, uri: str, version: int) -> list[dict[str, Any]]:
        message = self.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and m["params"].get("version") == version
            )
        )
        return list(message["params"]["diagnostics"])

    def close(self) -> int:
        try:
            if self.proc.poll() is None:
                self.request("shutdown", timeout=30)
                self.notify("exit")
                self.proc.wait(timeout=30)
        finally:
            code = self.reap()
        return code
