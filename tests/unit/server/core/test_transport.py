"""Unit tests of :mod:`crystal_lsp.server.core.transport`: what the server keeps per message."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest
from pygls.io_ import StdoutWriter

from crystal_lsp.server import create_server


def _message(method: str, params: dict[str, Any], msg_id: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if msg_id is not None:
        out["id"] = msg_id
    return out


@pytest.mark.asyncio
async def test_notifications_leave_no_future_behind(tmp_path: Any) -> None:
    server = create_server()
    protocol = server.protocol
    protocol.set_writer(StdoutWriter(io.BytesIO()))
    server.loop = asyncio.get_running_loop()
    uri = (tmp_path / "a.py").as_uri()

    def handle(data: dict[str, Any]) -> None:
        protocol.handle_message(protocol.structure_message(data))

    handle(_message("initialize", {"capabilities": {}, "processId": None, "rootUri": None}, 1))
    handle(
        _message(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x\n"}},
        )
    )
    for version in range(2, 202):
        change = {
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
        }
        handle(
            _message(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{**change, "text": "y"}],
                },
            )
        )
    await asyncio.sleep(0)
    assert server.workspace.get_text_document(uri).version == 201
    # pygls 2.1 kept the future of every notification: 200 keystrokes, 200 futures
    assert len(protocol._request_futures) < 5
    server.documents.cancel_all()
