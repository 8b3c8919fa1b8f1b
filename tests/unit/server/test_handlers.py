"""Unit tests of :mod:`crystal_lsp.server.handlers`: every server gets its own handlers."""

from __future__ import annotations

from crystal_lsp.server import create_server


def test_each_server_is_fresh_and_fully_registered() -> None:
    first, second = create_server(), create_server()
    assert first is not second and first.documents.docs is not second.documents.docs
    for server in (first, second):
        assert list(server.protocol.fm.commands) == [
            "crystal.showDocument",
            "crystal.compare",
            "crystal.insertions",
            "crystal.scoreSelection",
            "crystal.scoreText",
            "crystal.showTrivialNgrams",
            "crystal.rebuildIndex",
        ]
        assert list(server.protocol.fm.features) == [
            "initialize",
            "initialized",
            "shutdown",
            "textDocument/didOpen",
            "textDocument/didChange",
            "textDocument/didSave",
            "textDocument/didClose",
            "workspace/didChangeWatchedFiles",
            "workspace/didChangeConfiguration",
            "workspace/didChangeWorkspaceFolders",
            "textDocument/hover",
            "textDocument/codeAction",
            "textDocument/codeLens",
            "crystal/insertions",
            "crystal/score",
        ]
