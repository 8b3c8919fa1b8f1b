"""Unit tests of :mod:`crystal_lsp.server.actions`."""

from __future__ import annotations

from crystal_lsp.text.comments import comment_for


def test_comment_prefixes() -> None:
    assert comment_for("python") == ("#", "")
    assert comment_for("java") == ("//", "")
    assert comment_for("sql") == ("--", "")
    assert comment_for("css") == ("/*", " */")
