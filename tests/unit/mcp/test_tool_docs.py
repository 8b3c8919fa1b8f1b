"""Every MCP tool says when to use it, and every parameter what it is, in plain words."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from crystal_lsp.mcp import Workspace, create_server


def test_tools_say_when_to_use_them_and_document_every_parameter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRYSTAL_LSP_CACHE_DIR", str(tmp_path / "cache"))
    workspace = Workspace(str(tmp_path))
    try:
        tools = asyncio.run(create_server(workspace).list_tools())
    finally:
        workspace.close()
    assert len(tools) == 5
    for tool in tools:
        description = tool.description or ""
        assert description.startswith("Use it "), (tool.name, description)
        assert "\n " not in description, tool.name  # dedented
        for name, schema in tool.input_schema["properties"].items():
            assert len(schema.get("description", "")) >= 10, (tool.name, name)
        # words of the implementation stay out of what the agent reads
        for word in ("normalized view", "lower direction", "the set S", "clone class"):
            assert word not in description, (tool.name, word)
