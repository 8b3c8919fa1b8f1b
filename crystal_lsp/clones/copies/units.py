"""Whole units as ranges: a copy that covers most of two functions is the two functions.

Alignment reports the lines that correspond; when a copy's first lines were edited (a renamed
signature and a changed first check), its ranges start mid-function with the signature
outside, and a reviewer reads "lines 384-395 of function getEntry" for what is a copy of the
function. A pair whose two regions each lie in a function and hold at least
:data:`WIDEN_SHARE` of its tokens is decided again as the two functions whole (signatures
included); the wider pair replaces it when it is decided a copy, else the pair stays as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from crystal_lsp.clones.align.pairs import RegionPair
from crystal_lsp.clones.align.regions import Region
from crystal_lsp.text.entries import SnippetMeta
from crystal_lsp.text.snippets import FUNCTION

WIDEN_SHARE = 0.6
"""The share of a function's tokens a region needs to be widened to the function."""

Decide = Callable[[Region, Region], "RegionPair | None"]
"""``(a, b) -> the pair of the two regions as they are`` if it is decided a copy, else None."""
Snippets = Callable[[str], tuple[Sequence[SnippetMeta], Sequence[int]]]
"""The snippets of a file, by path, and its :func:`~crystal_lsp.clones.align.regions.header_prefix`."""


def as_whole_units(
    pairs: Sequence[RegionPair], snippets: Snippets, decide: Decide
) -> tuple[list[RegionPair], int]:
    """The pairs with those covering most of two functions widened to them, and how many were."""
    out: list[RegionPair] = []
    widened = 0
    for pair in pairs:
        wider = _widened(pair, snippets, decide)
        widened += wider is not None
        out.append(wider if wider is not None else pair)
    return out, widened


def _widened(pair: RegionPair, snippets: Snippets, decide: Decide) -> RegionPair | None:
    """The pair as the two functions it mostly covers, if that is a copy."""
    if pair.a.whole or pair.b.whole:
        return None
    unit_a = function_around(*snippets(pair.a.path), pair.a)
    unit_b = function_around(*snippets(pair.b.path), pair.b)
    if unit_a is None and unit_b is None:
        return None
    a, b = unit_a or pair.a, unit_b or pair.b
    if a.overlap(b):
        return None
    return decide(a, b)


def function_around(
    snippets: Sequence[SnippetMeta], header: Sequence[int], region: Region
) -> Region | None:
    """The function a region lies in and holds ``WIDEN_SHARE`` of, as a whole region, or None.

    The share is of the function's body: its signature and decorators (``header``, the file's
    :func:`~crystal_lsp.clones.align.regions.header_prefix`) are what the region may miss.
    """
    k = region.unit
    if k < 0 or region.whole:
        return None
    m = snippets[k]
    if m.kind != FUNCTION or not (m.start <= region.start and region.end <= m.end):
        return None
    covered = region.tokens - (header[region.end] - header[region.start])
    body = m.tokens - (header[m.end] - header[m.start])
    if covered < WIDEN_SHARE * body:
        return None
    return Region(
        region.path, m.start, m.end, m.first_line, m.first_col, m.last_line, m.last_col, k, True
    )
