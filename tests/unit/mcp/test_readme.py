"""Every MCP tool is documented in the README, with the client set-ups and the AGENTS.md snippet."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from crystal_lsp.mcp import Workspace, create_server

README = Path(__file__).resolve().parents[3] / "README.md"


def test_every_tool_is_in_the_readme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRYSTAL_LSP_CACHE_DIR", str(tmp_path / "cache"))
    workspace = Workspace(str(tmp_path))
    try:
        tools = asyncio.run(create_server(workspace).list_tools())
    finally:
        workspace.close()
    readme = README.read_text(encoding="utf-8")
    section = readme[readme.index("## Coding agents") : readme.index("## Pre-commit hook")]
    names = {tool.name for tool in tools}
    assert len(names) == 5
    assert [n for n in sorted(names) if f"| `{n}` |" not in section] == []
    for needle in ("claude mcp add", ".cursor/mcp.json", ".vscode/mcp.json", "AGENTS.md"):
        assert needle in section
