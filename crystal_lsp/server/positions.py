"""Positions: code-point offsets and the core's 1-based lines and columns to LSP positions.

The core numbers lines by ``\\n`` and columns in code points; LSP lines end at ``\\r\\n``, ``\\r``
or ``\\n`` and columns count code units of the negotiated encoding (UTF-16 unless the client
chose otherwise). Both are handled here, once per text version.
"""

from __future__ import annotations

import bisect
from typing import Protocol

from lsprotocol import types

from crystal_lsp.text.lexinput import unify_line_ends
from crystal_lsp.text.snippets import line_starts


class Codec(Protocol):
    """What is needed of pygls' ``PositionCodec``."""

    def client_num_units(self, string: str) -> int:
        """Code units of ``string`` in the client's position encoding."""
        ...


class Utf16:
    """The LSP default encoding (for callers without a pygls codec)."""

    def client_num_units(self, string: str) -> int:
        """UTF-16 code units of ``string``."""
        return len(string) + sum(1 for c in string if ord(c) > 0xFFFF)


class TextIndex:
    """Position conversions for one text."""

    def __init__(self, text: str, codec: Codec | None = None) -> None:
        self.text = text
        self.codec: Codec = codec if codec is not None else Utf16()
        # the core's lines are the LSP's: one list of line starts serves both
        self.newline_starts = line_starts(unify_line_ends(text))
        self.lsp_starts = self.newline_starts

    def offset(self, line: int, column: int) -> int:
        """Offset of a core position (1-based line, 1-based code-point column), clamped."""
        starts = self.newline_starts
        line = min(max(line, 1), len(starts))
        return min(starts[line - 1] + max(column, 1) - 1, len(self.text))

    def end_offset(self, line: int, column: int) -> int:
        """Offset just after a core end position (1-based line, inclusive 1-based column)."""
        starts = self.newline_starts
        line = min(max(line, 1), len(starts))
        return min(starts[line - 1] + max(column, 0), len(self.text))

    def position(self, offset: int) -> types.Position:
        """The LSP position of a code-point offset."""
        offset = min(max(offset, 0), len(self.text))
        line = bisect.bisect_right(self.lsp_starts, offset) - 1
        prefix = self.text[self.lsp_starts[line] : offset]
        column = len(prefix) if prefix.isascii() else self.codec.client_num_units(prefix)
        return types.Position(line=line, character=column)

    def range(self, first_line: int, first_col: int, last_line: int, last_col: int) -> types.Range:
        """The LSP range of a snippet given by the core's inclusive 1-based coordinates."""
        start = self.offset(first_line, first_col)
        end = max(start, self.end_offset(last_line, last_col))
        return types.Range(start=self.position(start), end=self.position(end))

    def offset_at(self, position: types.Position) -> int:
        """The code-point offset of an LSP position (clamped to the text)."""
        if position.line < 0:
            return 0
        if position.line >= len(self.lsp_starts):
            return len(self.text)
        begin = self.lsp_starts[position.line]
        end = (
            self.lsp_starts[position.line + 1]
            if position.line + 1 < len(self.lsp_starts)
            else len(self.text)
        )
        line = self.text[begin:end].rstrip("\r\n")
        wanted = max(position.character, 0)
        if line.isascii():
            return begin + min(wanted, len(line))
        units = 0
        for i, char in enumerate(line):
            if units >= wanted:
                return begin + i
            units += self.codec.client_num_units(char)
        return begin + len(line)

    def line_text(self, line: int) -> str:
        """The text of an LSP line without its line break."""
        if not 0 <= line < len(self.lsp_starts):
            return ""
        begin = self.lsp_starts[line]
        end = self.lsp_starts[line + 1] if line + 1 < len(self.lsp_starts) else len(self.text)
        return self.text[begin:end].rstrip("\r\n")

    def core_line(self, offset: int) -> int:
        """The core's 1-based line number of an offset."""
        return bisect.bisect_right(self.newline_starts, offset)
