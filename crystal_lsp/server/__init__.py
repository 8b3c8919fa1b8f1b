"""crystal-lsp's language server (pygls 2): near-duplicate diagnostics and CrystalBLEU scoring.

``create_server()`` builds a server with every handler registered; ``crystal-lsp serve`` runs it
over stdio or TCP. The protocol (diagnostics, ``crystal/score``, commands) is documented in
docs/language-server.md, the settings in docs/settings.md.
"""

from __future__ import annotations

from crystal_lsp.server.app import CrystalServer


def create_server() -> CrystalServer:
    """A new language server with all features registered."""
    from crystal_lsp.server.handlers import register

    server = CrystalServer()
    register(server)
    return server


__all__ = ["CrystalServer", "create_server"]
