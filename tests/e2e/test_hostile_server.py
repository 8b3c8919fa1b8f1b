"""The language server against hostile clients, files and settings (issue 14).

The real server in a subprocess, over stdio (``RawServer``) or TCP; numbers in the names are the
cases of the issue.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import DUP_A, DUP_B, UNRELATED
from raw_client import RawServer

INVALID_REQUEST = -32600


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text(DUP_A, encoding="utf-8")
    (root / "c.py").write_text(UNRELATED, encoding="utf-8")
    return root


@pytest.fixture
def raw(workspace: Path, tmp_path: Path) -> Iterator[RawServer]:
    server = RawServer(tmp_path / "cache")
    try:
        yield server
    finally:
        server.close()
        assert server.junk == [], "stdout carried something that is not protocol"


def _score(raw: RawServer, reference: dict[str, Any]) -> dict[str, Any]:
    return raw.request(
        "crystal/score",
        {"hypothesis": {"text": DUP_B}, "references": [reference], "language": "python"},
    )


def _error(response: dict[str, Any]) -> str:
    assert "error" in response, response
    return str(response["error"]["message"])


def test_02_06_references_are_read_only_inside_the_workspace(
    raw: RawServer, workspace: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text(DUP_A, encoding="utf-8")
    os.symlink("/dev/zero", workspace / "z.py")
    os.symlink(secret, workspace / "leak.py")
    raw.initialize(workspace)
    assert "outside the workspace" in _error(_score(raw, {"uri": "file:///dev/zero"}))
    assert "outside the workspace" in _error(_score(raw, {"uri": secret.as_uri()}))
    # symlinks inside the folder that lead out of it, or to a device
    assert "outside the" in _error(_score(raw, {"uri": (workspace / "z.py").as_uri()}))
    assert "outside the" in _error(_score(raw, {"uri": (workspace / "leak.py").as_uri()}))
    inside = _score(raw, {"uri": (workspace / "a.py").as_uri()})
    assert inside["result"]["crystalbleu"] > 0, inside


def test_06_reading_outside_the_workspace_is_a_setting(
    raw: RawServer, workspace: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "other.py"
    secret.write_text(DUP_A, encoding="utf-8")
    raw.settings["referencesOutsideWorkspace"] = True
    raw.initialize(workspace)
    assert "result" in _score(raw, {"uri": secret.as_uri()})
    # devices stay refused whatever the setting
    assert "not a regular file" in _error(_score(raw, {"uri": "file:///dev/zero"}))


def test_04_non_utf8_file_names_keep_the_server_reporting(raw: RawServer, workspace: Path) -> None:
    with open(os.fsencode(workspace) + b"/lat\xe9.py", "wb") as fh:
        fh.write(DUP_B.encode())
    raw.initialize(workspace)
    uri = (workspace / "a.py").as_uri()
    raw.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": DUP_A}},
    )
    diagnostics = raw.diagnostics(uri, 1)
    assert diagnostics, "the copy in lat\\xe9.py is reported"
    related = [r["location"]["uri"] for d in diagnostics for r in d["relatedInformation"]]
    assert any(u.endswith("/lat%E9.py") for u in related), related


def test_15_requests_after_shutdown_are_errors(raw: RawServer, workspace: Path) -> None:
    raw.initialize(workspace)
    assert "result" in raw.request("shutdown")
    late = raw.request(
        "textDocument/hover",
        {"textDocument": {"uri": "file:///x.py"}, "position": {"line": 0, "character": 0}},
        timeout=20,
    )
    assert late["error"]["code"] == INVALID_REQUEST
    raw.notify("exit")
    assert raw.proc.wait(timeout=30) == 0


@pytest.mark.parametrize("value", [1e12, -1, "soon", True])
def test_15_out_of_range_settings_are_refused(raw: RawServer, workspace: Path, value: Any) -> None:
    raw.settings["debounceMs"] = value
    raw.initialize(workspace)
    warning = raw.wait(
        lambda m: m.get("method") == "window/showMessage" and "debounceMs" in m["params"]["message"]
    )
    assert "using the default" in warning["params"]["message"]
    uri = (workspace / "a.py").as_uri()
    raw.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": DUP_A}},
    )
    raw.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"text": DUP_A + "\n# edited\n"}],
        },
    )
    raw.diagnostics(uri, 2)  # the default debounce applies: diagnostics do update


# --- 7: TCP ------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read_message(sock: socket.socket, want_id: int, timeout: float = 60) -> dict[str, Any]:
    sock.settimeout(timeout)
    buffer = b""
    while True:
        while b"\r\n\r\n" in buffer:
            head, _, rest = buffer.partition(b"\r\n\r\n")
            fields = dict(line.split(b":", 1) for line in head.split(b"\r\n"))
            length = int(fields[b"Content-Length"])
            while len(rest) < length:
                chunk = sock.recv(65536)
                assert chunk, "connection closed"
                rest += chunk
            message = json.loads(rest[:length])
            buffer = rest[length:]
            if message.get("id") == want_id and "method" not in message:
                return message
        chunk = sock.recv(65536)
        assert chunk, "connection closed"
        buffer += chunk


def _connect(port: int) -> socket.socket:
    deadline = time.monotonic() + 60
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_07_tcp_serves_one_client_and_survives_oversized_headers(
    workspace: Path, tmp_path: Path
) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "crystal_lsp", "serve", "--tcp", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "CRYSTAL_LSP_CACHE_DIR": str(tmp_path / "cache")},
    )
    try:
        first = _connect(port)
        init = {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
        first.sendall(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
        assert "result" in _read_message(first, 1)
        second = _connect(port)
        second.settimeout(30)
        assert second.recv(100) == b"", "a second client must not take over the session"
        second.close()
        first.sendall(b"X-Long: " + b"a" * 200_000 + b"\r\n")
        score = {
            "hypothesis": {"text": "x = 1"},
            "references": [{"text": "x = 2"}],
            "language": "python",
        }
        first.sendall(
            _frame({"jsonrpc": "2.0", "id": 2, "method": "crystal/score", "params": score})
        )
        assert "result" in _read_message(first, 2)
        assert proc.poll() is None
        first.sendall(_frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}))
        _read_message(first, 3)
        first.sendall(_frame({"jsonrpc": "2.0", "method": "exit"}))
        first.close()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert proc.stdout is not None and proc.stdout.read() == b""
