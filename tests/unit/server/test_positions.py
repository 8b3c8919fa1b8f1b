"""Unit tests of :mod:`crystal_lsp.server.positions`: offsets and LSP positions."""

from __future__ import annotations

from lsprotocol import types

from crystal_lsp.server.positions import TextIndex


def test_positions_in_utf16_with_crlf_and_lone_cr() -> None:
    text = "a😀b\r\nxy\rz\n\tq"
    index = TextIndex(text)
    assert index.position(text.index("b")) == types.Position(line=0, character=3)
    assert index.position(text.index("z")) == types.Position(line=2, character=0)
    assert index.position(len(text)) == types.Position(line=3, character=2)
    for offset in range(len(text) + 1):
        if text[offset - 1 : offset] in ("\r",) and text[offset : offset + 1] == "\n":
            continue
        assert index.offset_at(index.position(offset)) == offset
    assert index.offset_at(types.Position(line=99, character=0)) == len(text)
    assert index.offset_at(types.Position(line=0, character=99)) == text.index("\r")
    # the core's 1-based \n lines and inclusive end columns
    assert index.range(1, 1, 1, 3) == types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=0, character=4)
    )
