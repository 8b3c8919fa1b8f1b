"""Two copies side by side: which of their lines correspond, and which tokens differ.

Lines are compared by *shape* (:func:`crystal_lsp.clones.align.regions.line_shapes`: the line's tokens
with names as ``ID`` and literals as ``LIT``), so a renamed line still corresponds to its
original; lines of equal shape but different tokens are marked as renamed. Lines without tokens
(blank, comments only) are left out. When a copy's tokens are not at hand or do not match its
text (the file changed since it was indexed), its lines are compared by their text instead
(:func:`text_lines`).

This is the one aligner of copies: the language server's hover (:mod:`crystal_lsp.server.alignment`)
and the HTML report (:mod:`crystal_lsp.clones.reports.htmlreport`) both show its rows.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from difflib import SequenceMatcher

from crystal_lsp.clones.align.regions import line_shapes
from crystal_lsp.clones.findings import Location
from crystal_lsp.text.entries import Heavy
from crystal_lsp.text.lexinput import unify_line_ends

SAME, RENAMED, CHANGED, HERE_ONLY, THERE_ONLY = " ", "~", "!", "+", "-"
ALIKE = 0.5
"""Lines of a differing stretch are paired as changed when their shapes are this alike."""


@dataclass(frozen=True)
class Line:
    """A line of a copy that holds tokens."""

    number: int
    """1-based line number in its file."""
    shape: str
    tokens: str
    """Its tokens (or, without tokens, its whitespace-normalized text): equal means identical."""
    cells: tuple[tuple[int, str], ...] = ()
    """``(offset in the line, text)`` of each token (empty when compared by text)."""


@dataclass(frozen=True)
class Row:
    """One row of the alignment: a line of this copy, of the other, or of both."""

    mark: str
    here: int | None
    there: int | None


def token_span(heavy: Heavy, location: Location) -> tuple[int, int] | None:
    """The tokens ``[start, end)`` of ``heavy`` (its file's tokens) that a location covers."""
    offsets = heavy.line_offsets
    if not heavy.starts or not 1 <= location.first_line <= location.last_line <= len(offsets):
        return None
    begin = offsets[location.first_line - 1] + location.first_col - 1
    end = offsets[location.last_line - 1] + location.last_col
    start, stop = bisect.bisect_left(heavy.starts, begin), bisect.bisect_left(heavy.starts, end)
    return (start, stop) if start < stop else None


def shaped_lines(heavy: Heavy, start: int, end: int) -> list[Line]:
    """The lines of tokens ``[start, end)`` with their shapes and tokens."""
    out = []
    shapes = line_shapes(heavy, start, end)
    offsets = heavy.line_offsets
    for k, (first, shape) in enumerate(shapes):
        last = shapes[k + 1][0] if k + 1 < len(shapes) else end
        line = heavy.lines[first]
        base = offsets[line] if line < len(offsets) else 0
        cells = tuple((heavy.starts[i] - base, heavy.texts[i]) for i in range(first, last))
        out.append(Line(line + 1, shape, "\0".join(heavy.texts[first:last]), cells))
    return out


def text_lines(text: str, first: int, last: int) -> list[Line]:
    """Lines ``first..last`` of a text compared by their words (when tokens are not at hand)."""
    lines = unify_line_ends(text).split("\n")
    out = []
    for number in range(first, min(last, len(lines)) + 1):
        words = " ".join(lines[number - 1].split())
        if words:
            out.append(Line(number, words, words))
    return out


def align(here: list[Line], there: list[Line]) -> list[Row]:
    """The rows of two copies' lines matched by shape (this copy is ``a``, the other ``b``)."""
    matcher = SequenceMatcher(None, [x.shape for x in here], [x.shape for x in there], False)
    rows: list[Row] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            for x, y in zip(here[a0:a1], there[b0:b1]):
                mark = SAME if x.tokens == y.tokens else RENAMED
                rows.append(Row(mark, x.number, y.number))
            continue
        paired = min(a1 - a0, b1 - b0) if op == "replace" else 0
        for x, y in zip(here[a0 : a0 + paired], there[b0 : b0 + paired]):
            if _alike(x.shape, y.shape):
                rows.append(Row(CHANGED, x.number, y.number))
            else:
                rows += [Row(HERE_ONLY, x.number, None), Row(THERE_ONLY, None, y.number)]
        rows += [Row(HERE_ONLY, x.number, None) for x in here[a0 + paired : a1]]
        rows += [Row(THERE_ONLY, None, y.number) for y in there[b0 + paired : b1]]
    return rows


def _alike(a: str, b: str) -> bool:
    """Whether two line shapes are alike enough to be shown as one changed line."""
    return SequenceMatcher(None, a.split(), b.split(), False).ratio() >= ALIKE


def differing(here: Line, there: Line) -> tuple[set[int], set[int]]:
    """The indices of the cells of each line that the other line does not have (by token)."""
    a = [text for _, text in here.cells]
    b = [text for _, text in there.cells]
    left, right = set(range(len(a))), set(range(len(b)))
    for block in SequenceMatcher(None, a, b, False).get_matching_blocks():
        left.difference_update(range(block.a, block.a + block.size))
        right.difference_update(range(block.b, block.b + block.size))
    return left, right
