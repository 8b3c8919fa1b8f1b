"""The MCP handshake answered before the SDK is loaded (:mod:`crystal_lsp.mcp.front`).

``crystal_lsp/mcp/handshake.json`` must be the SDK server's own answers: recorded here from the
real server with the front switched off (``CRYSTAL_LSP_MCP_FRONT=0``) and compared, for every
protocol version a client may ask for. ``CRYSTAL_UPDATE_HANDSHAKE=1`` rewrites the file (after
a change of a tool, its description or schema, or of the SDK).
"""

from __future__ import annotations

import json
import os
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import DUP_A, DUP_B, UNRELATED
from mcp_harness import raw_exchange
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from crystal_lsp.mcp.front import HANDSHAKE_FILE, REPLAY_ID, load_handshake
from crystal_lsp.version import __version__

HANDSHAKE = Path(__file__).resolve().parents[2] / "crystal_lsp" / "mcp" / HANDSHAKE_FILE
SDK_ONLY = {"CRYSTAL_LSP_MCP_FRONT": "0"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text(DUP_A, encoding="utf-8")
    (root / "c.py").write_text(UNRELATED, encoding="utf-8")
    return root


def _initialize(version: str) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


def _handshake(repo: Path, cache: Path, version: str, env: dict[str, str] | None) -> dict[Any, Any]:
    """The answers to initialize, tools/list and ping, by id."""
    messages = [
        _initialize(version),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
    ]
    lines = raw_exchange(repo, cache, messages, last_id=3, env=env)
    answers = {json.loads(x).get("id"): json.loads(x) for x in lines}
    assert set(answers) >= {1, 2, 3} and REPLAY_ID not in answers, lines
    return answers


def test_the_recorded_handshake_is_the_sdks_own(repo: Path, tmp_path: Path) -> None:
    answers = _handshake(repo, tmp_path / "cache", LATEST_HANDSHAKE_VERSION, SDK_ONLY)
    initialize = dict(answers[1]["result"])
    initialize.pop("protocolVersion")
    recorded = {
        "crystal_lsp": __version__,
        "mcp": metadata.version("mcp"),
        "versions": list(HANDSHAKE_PROTOCOL_VERSIONS),
        "latest": LATEST_HANDSHAKE_VERSION,
        "initialize": initialize,
        "tools": answers[2]["result"],
    }
    if os.environ.get("CRYSTAL_UPDATE_HANDSHAKE") == "1":
        HANDSHAKE.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n")
    assert json.loads(HANDSHAKE.read_text()) == recorded, (
        "crystal_lsp/mcp/handshake.json is stale: CRYSTAL_UPDATE_HANDSHAKE=1 pytest "
        "tests/e2e/test_mcp_front.py rewrites it"
    )
    assert load_handshake() == recorded


# one the front echoes, one of the per-request era and one unknown (both: the latest handshake)
@pytest.mark.parametrize("version", [HANDSHAKE_PROTOCOL_VERSIONS[0], "2026-07-28", "1999-01-01"])
def test_the_front_answers_as_the_sdk_does(repo: Path, tmp_path: Path, version: str) -> None:
    sdk = _handshake(repo, tmp_path / "cache", version, SDK_ONLY)
    front = _handshake(repo, tmp_path / "cache", version, None)
    for ident in (1, 2, 3):
        assert front[ident] == sdk[ident], ident


def test_after_the_handshake_the_sdk_answers_in_order(repo: Path, tmp_path: Path) -> None:
    bad_init = {"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {"capabilities": {}}}
    messages: list[Any] = [
        bad_init,  # not answered by the front: the SDK's own error
        _initialize("2025-06-18"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        "not json",
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "check_duplication", "arguments": {"code": DUP_B}},
        },
        {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"cursor": "x"}},
    ]
    both = [
        raw_exchange(repo, tmp_path / "cache", messages, last_id=4, env=env)
        for env in (SDK_ONLY, None)
    ]
    for lines in both:
        for line in lines:
            assert json.loads(line)["jsonrpc"] == "2.0", line
    sdk, front = ({json.loads(x).get("id"): json.loads(x) for x in lines} for lines in both)
    assert front[9] == sdk[9] and "error" in front[9]
    assert front[1] == sdk[1]
    assert front[4]["result"]["structuredContent"]["duplicates"]
    assert front[4]["result"]["structuredContent"] == sdk[4]["result"]["structuredContent"]
