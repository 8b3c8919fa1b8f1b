"""The language server against hostile clients and files, round 2 (issue 24, rows 4, 11, 13, 15).

The real server in a subprocess over stdio (``RawServer``); numbers in the names are the rows.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import DUP_A, DUP_B, UNRELATED
from raw_client import RawServer

HOSTILE_NAMES = [b"\x1b]0;pwned\x07x.py", b"lat\xe9.py", "\u202egnp.py".encode()]
HOUR_NS = 3600 * 10**9


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


def _open(raw: RawServer, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    raw.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}},
    )
    return uri


def _clean(text: str) -> None:
    """Text shown to a person: no control character but newlines, no lone surrogate, no RLO."""
    bad = [c for c in text if (ord(c) < 32 and c != "\n") or 0x7F <= ord(c) < 0xA0]
    bad += [c for c in text if 0xD800 <= ord(c) <= 0xDFFF or c == "\u202e"]
    assert not bad, (bad, text)


# --- 4: sizes of the texts crystal/score scores ------------------------------------------------


def test_04_score_texts_are_bounded_as_in_the_mcp_server(raw: RawServer, workspace: Path) -> None:
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


# --- 11: names in hovers and code actions --------------------------------------------------------


def test_11_hostile_names_are_escaped_in_hovers_and_actions(
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
        _clean(diagnostic["message"])
    hover = raw.request(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": flagged["range"]["start"]},
    )
    markdown = hover["result"]["contents"]["value"]
    _clean(markdown)
    assert "lat\\xe9.py" in markdown and "\\x1b]0;pwned\\x07x.py" in markdown
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
        _clean(title)


# --- 13: header lines over stdio -------------------------------------------------------------------


def _peak_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_13_a_huge_header_line_is_dropped_in_bounded_memory(
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


# --- 15: a file that changes keeping size and mtime ----------------------------------------------


def test_15_a_rewrite_that_keeps_size_and_mtime_is_seen(raw: RawServer, workspace: Path) -> None:
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
