"""The text Pygments lexes for a source, and how its offsets map back to the source.

``lexer.get_tokens(code)`` -- what the reference implementation of CrystalBLEU and its
evaluation scripts call, with Pygments' default lexer options -- first prepares the input
(``Lexer._preprocess_lexer_input``): it drops a leading byte-order mark, turns ``\\r\\n`` and
then lone ``\\r`` into ``\\n``, strips line ends from both ends of the text (``stripnl``) and
appends one ``\\n`` (``ensurenl``). Several lexers depend on that: a ``//`` comment on a last line
without a line end lexes as two operators and code, a ``#define`` continued with ``\\`` before
``\\r\\n`` stops at the first line. :func:`lex_input` gives the same text, plus what is needed to
map an offset in it back to the raw source (offsets of tokens index the raw text, for editors and
the clone finder); token *texts* stay Pygments' own.

For most files (``\\n`` line ends, no byte-order mark, no leading blank line) the prepared text
is the source itself, or the source with its trailing line ends made one, and offsets are equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from crystal_lsp.text.lineends import unify_line_ends

__all__ = ["BOM", "LexInput", "lex_input", "raw_end", "unify_line_ends"]

BOM = "\ufeff"
Offsets = npt.NDArray[np.int64]
_NONE: Offsets = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class LexInput:
    """The prepared text of one source and the map of its offsets to the source's.

    An offset ``q`` of ``text`` is the source offset ``q + shift + (collapsed line ends before
    q)``: ``shift`` counts what was dropped in front (a byte-order mark, leading line ends),
    ``collapsed`` holds the offsets (in ``text``) of each ``\\n`` that stands for a ``\\r\\n``.
    """

    text: str
    size: int
    """Length of the raw source."""
    shift: int = 0
    collapsed: Offsets = field(default_factory=lambda: _NONE)
    verbatim: bool = True
    """Whether ``text`` is the source but for its trailing line ends (no ``\\r`` was changed)."""

    @property
    def identity(self) -> bool:
        """Whether every offset of ``text`` is the same offset of the source."""
        return not self.shift and not len(self.collapsed)

    @property
    def same_prefix(self) -> bool:
        """Whether the text before any offset of ``text`` is the source's (offsets equal too)."""
        return self.verbatim and self.identity

    def raw_offset(self, offset: int) -> int:
        """The source offset of an offset of ``text`` (an end offset too), at most the size."""
        raw = offset + self.shift + int(np.searchsorted(self.collapsed, offset))
        return raw if raw < self.size else self.size

    def raw_starts(self, starts: list[int]) -> list[int]:
        """Source offsets of token starts (``starts`` itself when offsets are equal)."""
        if self.identity:
            return starts
        if not len(self.collapsed):
            shift = self.shift
            return [s + shift for s in starts]
        lexed = np.fromiter(starts, dtype=np.int64, count=len(starts))
        moved = lexed + self.shift + np.searchsorted(self.collapsed, lexed)
        return moved.tolist()  # type: ignore[no-any-return]


def lex_input(source: str) -> LexInput:
    """The text ``lexer.get_tokens(source)`` lexes, with Pygments' default options (module doc)."""
    bom = 1 if source.startswith(BOM) else 0
    if "\r" not in source:
        body = source[1:] if bom else source
        if body.endswith("\n") and not body.endswith("\n\n") and not body.startswith("\n"):
            return LexInput(body, len(source), bom)
        stripped = body.strip("\n")
        lead = len(body) - len(body.lstrip("\n"))
        return LexInput(stripped + "\n", len(source), bom + lead)
    body = source[bom:]
    # each \r\n becomes one \n: the k-th sits after the first k + 1 pieces and k line ends
    pieces = body.split("\r\n")
    lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    collapsed = np.cumsum(lengths[:-1] + 1) - 1
    unified = "\n".join(pieces).replace("\r", "\n")
    stripped = unified.strip("\n")
    lead = len(unified) - len(unified.lstrip("\n"))
    inside = collapsed - lead
    before = int(np.searchsorted(inside, 0))  # line ends stripped from the front
    return LexInput(stripped + "\n", len(source), bom + lead + before, inside[before:], False)


def raw_end(source: str, start: int, text: str) -> int:
    """The source offset just past a token's text that starts at source offset ``start``.

    A token's text is Pygments' (line ends made ``\\n``); where its line ends were ``\\r\\n``
    in the source, the token spans more of the source than its length.
    """
    if "\n" not in text:
        return min(start + len(text), len(source))
    pos = start
    for line in text.split("\n")[:-1]:
        pos += len(line)
        pos += 2 if source.startswith("\r\n", pos) else 1
    return min(pos + len(text) - text.rfind("\n") - 1, len(source))
