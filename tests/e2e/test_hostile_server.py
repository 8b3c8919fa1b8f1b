"""The language server against hostile clients, files and settings (issues 14 and 24).

The real server in a subprocess, over stdio (``RawServer``) or TCP; numbers in the names are the
cases of the issues (``test_24_NN``: issue 24's rows).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import DUP_A, DUP_B
from raw_client import RawServer, assert_displayable

INVALID_REQUEST = -32600


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


HOSTILE_NAMES = [b"\x1b]0;pwned\x07x.py", b"lat\xe9.py", "\u202egnp.py".encode()]
HOUR_NS = 3600 * 10**9


def _open(raw: RawServer, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    raw.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}},
    )
    return uri


# --- issue 24, 4: sizes of the texts crystal/score scores ------------------------------------------------


def test_24_04_score_texts_are_bounded_as_in_the_mcp_server(
    raw: RawServer, workspace: Path
) -> None:
    raw.initialize(workspace)
    big = "x = 1\n" * 40_000  # 240,000 characters
    for params in (
        {"hypothesis": {"text": big}, "references": [{"text": DUP_A}]},
        {"hypothesis": {"text": DUP_B}, "references": [{"text": big}]},
        {"hypothesis": {"text": DUP_B}, "references": [{"text": DUP_A}] * 21},
    ):
        response = raw.request("crystal/score", {**params, "language": "python"})
        assert "error" in response, str(response)[:300]
        message = response["error"]["message"]
        assert "over the limit of 200,000" in message or "at most 20 references" in message
    # a range of a large text is within the bound
    ranged = {"text": big, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 9}}}
    ranged["range"]["end"]["character"] = 0  # type: ignore[index]
    fine = raw.request(
        "crystal/score",
        {"hypothesis": ranged, "references": [{"text": DUP_A}], "language": "python"},
    )
    assert "result" in fine, fine


# --- issue 24, 11: names in hovers and code actions --------------------------------------------------------


def test_24_11_hostile_names_are_escaped_in_hovers_and_actions(
    raw: RawServer, workspace: Path
) -> None:
    for name in HOSTILE_NAMES:
        with open(os.fsencode(workspace) + b"/" + name, "wb") as fh:
            fh.write(DUP_B.encode())
    raw.initialize(workspace)
    uri = _open(raw, workspace / "a.py", DUP_A)
    diagnostics = raw.diagnostics(uri, 1)
    assert diagnostics
    flagged = diagnostics[0]
    for diagnostic in diagnostics:
        assert_displayable(diagnostic["message"])
    hover = raw.request(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": flagged["range"]["start"]},
    )
    markdown = hover["result"]["contents"]["value"]
    assert_displayable(markdown)
    # escaped for Markdown too (issue 33): every punctuation character backslash-escaped
    assert "lat\\\\xe9\\.py" in markdown and "\\\\x1b\\]0\\;pwned\\\\x07x\\.py" in markdown
    actions = raw.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": flagged["range"],
            "context": {"diagnostics": [flagged]},
        },
    )["result"]
    titles = [a["title"] for a in actions]
    assert sum(t.startswith("Go to the other copy") for t in titles) == len(HOSTILE_NAMES)
    for title in titles:
        assert_displayable(title)


# --- issue 24, 13: header lines over stdio -------------------------------------------------------------------


def _peak_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_24_13_a_huge_header_line_is_dropped_in_bounded_memory(
    raw: RawServer, workspace: Path
) -> None:
    raw.initialize(workspace)
    before = _peak_kb(raw.proc.pid)
    chunk = b"X" * (1 << 20)
    for _ in range(300):  # 300 MB without a line break
        raw.send_bytes(chunk)
    raw.send_bytes(b"\r\n")
    params = {"hypothesis": {"text": DUP_B}, "references": "auto", "language": "python"}
    response = raw.request("crystal/score", params)
    assert "result" in response, response
    assert _peak_kb(raw.proc.pid) - before < 64_000, "the header line was held in memory"


# --- issue 24, 15: a file that changes keeping size and mtime ----------------------------------------------


def test_24_15_a_rewrite_that_keeps_size_and_mtime_is_seen(raw: RawServer, workspace: Path) -> None:
    other = workspace / "b.py"
    other.write_text(DUP_B, encoding="utf-8")
    old = time.time_ns() - HOUR_NS
    for path in workspace.iterdir():
        os.utime(path, ns=(old, old))  # old enough for the index to trust size and mtime
    raw.initialize(workspace)
    uri = _open(raw, workspace / "a.py", DUP_A)
    assert raw.diagnostics(uri, 1), "a.py is a copy of b.py"
    size = other.stat().st_size
    body = "\n".join(f"value_{i} = {i}" for i in range(size // 12))
    other.write_text((body + "\n#" + "#" * size)[: size - 1] + "\n", encoding="utf-8")
    os.utime(other, ns=(old, old))
    assert (other.stat().st_size, other.stat().st_mtime_ns) == (size, old)
    seen = len(raw.received)
    raw.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": other.as_uri(), "type": 2}]})

    def cleared(message: dict[str, Any]) -> bool:
        return (
            message.get("method") == "textDocument/publishDiagnostics"
            and message["params"]["uri"] == uri
            and message["params"]["diagnostics"] == []
            and raw.received.index(message) >= seen
        )

    raw.wait(cleared, timeout=30)
