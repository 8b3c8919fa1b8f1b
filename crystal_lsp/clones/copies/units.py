"""Whole units as ranges: a copy that covers most of two functions is the two functions.

Alignment reports the lines that correspond; when a copy's first lines were edited (a renamed
signature and a changed first check), its ranges start mid-function with the signature
outside, and a reviewer reads "lines 384-395 of function getEntry" for what is a copy of the
function. A pair with a region that lies in a function and holds at least ``PAIRED_UNIT``
(:mod:`crystal_lsp.clones.align.regions`) of its body is decided again with that function whole
(signature included; on both sides when both qualify); the wider pair replaces it when it is
decided a copy, else the pair stays as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from crystal_lsp.clones.align.pairs import RegionPair
from crystal_lsp.clones.align.regions import Region, as_unit
from crystal_lsp.clones.copies.reads import reads_of
from crystal_lsp.text.entries import Entry
from crystal_lsp.text.snippets import FUNCTION, STATEMENTS
from crystal_lsp.text.tables import assigned_name, depth_at, is_table

if TYPE_CHECKING:
    from crystal_lsp.clones.align.workset import Workset

Decide = Callable[[Region, Region], "RegionPair | None"]
"""``(a, b) -> the pair of the two regions as they are`` if it is decided a copy, else None."""
Entries = Callable[[str], tuple[Entry, list[int]]]
"""The entry of a file, by path, and its :func:`~crystal_lsp.clones.align.regions.header_prefix`."""


def as_whole_units(
    pairs: Sequence[RegionPair], snippets: Entries, decide: Decide
) -> tuple[list[RegionPair], int]:
    """The pairs with those covering most of two functions widened to them, and how many were."""
    out: list[RegionPair] = []
    widened = 0
    for pair in pairs:
        wider = _widened(pair, snippets, decide)
        widened += wider is not None
        out.append(wider if wider is not None else pair)
    return out, widened


def _widened(pair: RegionPair, snippets: Entries, decide: Decide) -> RegionPair | None:
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


def function_around(entry: Entry, header: list[int], region: Region) -> Region | None:
    """The function a region lies in and holds ``PAIRED_UNIT`` of, as a whole region, or None.

    The share is of the function's body (:func:`~crystal_lsp.clones.align.regions.as_unit`):
    its signature and decorators (``header``, the file's ``header_prefix``) are what the region
    may miss.
    """
    if region.unit < 0 or region.whole or entry.snippets[region.unit].kind != FUNCTION:
        return None
    whole = as_unit(entry, region, header)
    return whole if whole.whole else None


def table_name(work: Workset, region: Region) -> str | None:
    """The name of the data table a region of top-level statements is (None: it is code).

    See :mod:`crystal_lsp.text.tables`; "" for a table assigned to no name. Kept by content
    (an unsaved buffer's is not), so a rescan that reuses the findings loads no tokens.
    """
    entry = work.entry(work.ids[region.path])
    if region.unit < 0 or entry.snippets[region.unit].kind != STATEMENTS:
        return None
    unit = entry.snippets[region.unit]
    file = work.finder.index.files[region.path]
    reads = None if file.override else reads_of(work)
    key = f"table\0{file.sha}\0{unit.start}\0{unit.end}\0{region.start}\0{region.end}"
    found = reads.get_digests(key) if reads is not None else None
    if found is None:
        heavy = work.side(work.ids[region.path]).heavy
        opened = depth_at(heavy.texts, heavy.cats, unit.start, region.start)
        table = is_table(heavy.texts, heavy.cats, region.start, region.end, opened)
        found = ["1" if table else "", assigned_name(heavy.texts, heavy.cats, unit.start, unit.end)]
        if reads is not None:
            reads.put_digests(key, found)
    return found[1] if found[0] else None
