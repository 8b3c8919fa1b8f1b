"""Every MCP tool is documented: in the README (with the client set-ups and the AGENTS.md
snippet), and in its own description, which says when to use it, with every parameter."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from crystal_lsp.mcp import Workspace, create_server

README = Path(__file__).resolve().parents[3] / "README.md"


def _tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    monkeypatch.setenv("CRYSTAL_LSP_CACHE_DIR", str(tmp_path / "cache"))
    workspace = Workspace(str(tmp_path))
    try:
        return list(asyncio.run(create_server(workspace).list_tools()))
    finally:
        workspace.close()


def _section(text: str, heading: str) -> str:
    """The README section starting at ``heading``, up to the next one of its level (headings
    inside fenced code, such as the AGENTS.md snippet's, do not end it)."""
    lines = text[text.index(heading) :].split("\n")
    fenced = False
    for number, line in enumerate(lines[1:], 1):
        fenced ^= line.startswith("```")
        if not fenced and line.startswith("## "):
            return "\n".join(lines[:number])
    return "\n".join(lines)


def test_every_tool_is_in_the_readme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tools = _tools(tmp_path, monkeypatch)
    section = _section(README.read_text(encoding="utf-8"), "## Coding agents")
    names = {tool.name for tool in tools}
    assert len(names) == 5
    assert [n for n in sorted(names) if f"| `{n}` |" not in section] == []
    for needle in ("claude mcp add", ".cursor/mcp.json", ".vscode/mcp.json", "AGENTS.md"):
        assert needle in section


def test_tools_say_when_to_use_them_and_document_every_parameter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = _tools(tmp_path, monkeypatch)
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
