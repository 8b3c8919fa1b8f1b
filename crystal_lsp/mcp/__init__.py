"""crystal-lsp's Model Context Protocol server (``crystal-lsp mcp``), for coding agents.

Five tools over one repository root, on the official ``mcp`` SDK: ``check_duplication`` (what
the repository already has of a snippet, and what to reuse), ``score`` (BLEU and CrystalBLEU
against references), ``file_clones``, ``scan`` and ``trivially_shared``. The index, the clone
finder and the cache are the core's, shared with ``crystal-lsp scan``, ``serve`` and the hook
(:mod:`crystal_lsp.mcp.workspace`); the tools and their schemas are in
:mod:`crystal_lsp.mcp.tools`; :mod:`crystal_lsp.mcp.front` answers the handshake while the SDK
loads. Stdout carries only the protocol.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from crystal_lsp.mcp.tools import create_server
    from crystal_lsp.mcp.workspace import Workspace

__all__ = ["Workspace", "create_server"]


def __getattr__(name: str) -> Any:
    # lazily: crystal_lsp.mcp.front answers the handshake before the SDK is imported
    if name == "create_server":
        from crystal_lsp.mcp.tools import create_server

        return create_server
    if name == "Workspace":
        from crystal_lsp.mcp.workspace import Workspace

        return Workspace
    raise AttributeError(name)
