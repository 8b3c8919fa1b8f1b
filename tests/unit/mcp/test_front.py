"""The MCP front in-process: what it answers, what it relays to the SDK and back, in order.

The comparison with the real SDK server is end to end (``tests/e2e/test_mcp_front.py``).
"""

from __future__ import annotations

import io
import json
from typing import Any

from crystal_lsp.mcp.front import REPLAY_ID, Front, _protocol

HANDSHAKE = {
    "versions": ["2025-03-26", "2025-06-18"],
    "latest": "2025-06-18",
    "initialize": {"capabilities": {"tools": {}}, "serverInfo": {"name": "x", "version": "1"}},
    "tools": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]},
}
CLIENT = {"capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _request(ident: int, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        message["params"] = params
    return _line(message)


def _run(client: list[bytes], sdk_answers: list[bytes]) -> tuple[list[Any], list[Any]]:
    """What the client received and what the SDK was sent."""
    out = io.BytesIO()
    out.close = lambda: None  # type: ignore[method-assign]
    front = Front(io.BytesIO(b"".join(client)), out, HANDSHAKE)  # type: ignore[arg-type]
    front.start()
    sent = [json.loads(x) if x.strip().startswith("{") else x for x in front.sdk_stdin]
    with front.sdk_stdio():
        for answer in sdk_answers:
            front.sdk_stdout.write(answer.decode())
            front.sdk_stdout.flush()
    received = [json.loads(x) for x in out.getvalue().splitlines()]
    return received, sent


def test_the_handshake_is_answered_and_everything_else_relayed_in_order() -> None:
    init = {"protocolVersion": "2025-03-26", **CLIENT}
    client = [
        _request(1, "initialize", init),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _request(2, "tools/list"),
        _request(3, "ping"),
        b"not json\n",
        _request(4, "tools/call", {"name": "t", "arguments": {}}),
    ]
    sdk = [
        _line({"jsonrpc": "2.0", "id": REPLAY_ID, "result": {"protocolVersion": "2025-03-26"}}),
        b"stray print\n",
        b'debug: {"jsonrpc": "2.0", "id": 4, "result": {"content": []}}\n',
    ]
    received, sent = _run(client, sdk)
    assert received == [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"protocolVersion": "2025-03-26", **HANDSHAKE["initialize"]},
        },
        {"jsonrpc": "2.0", "id": 2, "result": HANDSHAKE["tools"]},
        {"jsonrpc": "2.0", "id": 3, "result": {}},
        {"jsonrpc": "2.0", "id": 4, "result": {"content": []}},
    ]
    assert sent[0] == {**json.loads(client[0]), "id": REPLAY_ID}
    assert sent[1:] == [json.loads(client[1]), "not json\n", json.loads(client[5])]


def test_an_unknown_version_gets_the_latest_and_bad_params_go_to_the_sdk() -> None:
    received, sent = _run(
        [_request(1, "initialize", {"protocolVersion": "1999-01-01", **CLIENT})], []
    )
    assert received[0]["result"]["protocolVersion"] == "2025-06-18"
    bad = _request(1, "initialize", {"capabilities": {}})
    early = _request(2, "tools/list")  # before initialize: the SDK's to answer
    received, sent = _run([early, bad], [])
    assert received == [] and sent == [json.loads(early), json.loads(bad)]


def test_without_a_handshake_everything_goes_to_the_sdk() -> None:
    out = io.BytesIO()
    line = _request(1, "initialize", {"protocolVersion": "2025-06-18", **CLIENT})
    front = Front(io.BytesIO(line), out, None)
    front.start()
    assert list(front.sdk_stdin) == [line.decode()]
    with front.sdk_stdio():
        pass
    assert out.getvalue() == b""


def test_stray_output_is_cut_off_the_protocol() -> None:
    message, line = _protocol(b'oops{"jsonrpc": "2.0", "id": 1, "result": {}}\n')
    assert message == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert line == b'{"jsonrpc": "2.0", "id": 1, "result": {}}\n'
    assert _protocol(b"hello\n")[0] is None
    assert _protocol(b'{"no": "protocol"}\n')[0] is None
