"""Whole units as ranges: a copy that covers most of two functions is the two functions.

Alignment reports the lines that correspond; when a copy's first lines were edited (a renamed
signature and a changed first check), its ranges start mid-function with the signature
outside, and a reviewer reads "lines 384-395 of function getEntry" for what is a copy of the
function. A pair with a region that lies in a function and holds at least ``PAIRED_UNIT``
(:mod:`crystal_lsp.clones.align.regions`) of its body is decided again with that function whole
(signature included; on both sides when both qualify); the wider pair replaces it when it is
decided a copy, else the pair stays as it was.

Ranges start and end where statements do (:func:`as_whole_statements`): a pair whose region
starts or ends inside a statement (``bases=self.bases,`` among a call's keyword arguments, a
signature's second line) is decided again with its regions grown to whole statements, else
shrunk to the statements they hold; the pair stays as it was when neither is a copy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from crystal_lsp.clones.align.lines import entry_facts
from crystal_lsp.clones.align.pairs import RegionPair
from crystal_lsp.clones.align.regions import Region, as_unit
from crystal_lsp.clones.align.statements import (
    Span,
    function_extents,
    whole_statements,
    within_units,
)
from crystal_lsp.clones.copies.merging import without_nested
from crystal_lsp.clones.copies.reads import reads_of
from crystal_lsp.clones.findings import COPY
from crystal_lsp.text.entries import Entry, Heavy, span_position
from crystal_lsp.text.keywords import INDENT_LANGUAGES
from crystal_lsp.text.snippets import FUNCTION, STATEMENTS
from crystal_lsp.text.tables import assigned_name, depth_at, is_table

if TYPE_CHECKING:
    from crystal_lsp.clones.align.workset import Workset

Decide = Callable[[Region, Region], "RegionPair | None"]
"""``(a, b) -> the pair of the two regions as they are`` if it is decided a copy, else None."""
Entries = Callable[[str], tuple[Entry, list[int]]]
"""The entry of a file, by path, and its :func:`~crystal_lsp.clones.align.regions.header_prefix`."""
Bounds = Callable[[Region], "tuple[Region | None, Region | None]"]
"""Two other forms of a region (:func:`statement_bounds`, :func:`unit_edges`; None: none)."""
Keeps = Callable[[RegionPair, RegionPair], bool]
"""``(pair, other form of it) -> whether the other form may replace it`` (it reads as a copy
no less: :func:`crystal_lsp.clones.copies.build` keeps a copy's evidence above the copy rules'
floor)."""
GROWN_LINES = 2.0
"""A region grown to whole statements may be this many times its lines (else it is shrunk)."""


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


def as_whole_statements(
    pairs: Sequence[RegionPair], bounds: Bounds, decide: Decide, keeps: Keeps | None = None
) -> tuple[list[RegionPair], int]:
    """The pairs with regions on statement edges where that is a copy, and how many changed."""
    out: list[RegionPair] = []
    changed = 0
    for pair in pairs:
        better = _on_statements(pair, bounds, decide, keeps)
        changed += better is not None
        out.append(better if better is not None else pair)
    return out, changed


def _on_statements(
    pair: RegionPair, bounds: Bounds, decide: Decide, keeps: Keeps | None
) -> RegionPair | None:
    """The pair grown to whole statements, else shrunk to them, if that is a copy (else None)."""
    grown_a, shrunk_a = bounds(pair.a)
    grown_b, shrunk_b = bounds(pair.b)
    if grown_a is None and grown_b is None:
        return None
    tries: list[tuple[Region | None, Region | None]] = []
    wide_a, wide_b = grown_a or pair.a, grown_b or pair.b
    if wide_a.lines <= GROWN_LINES * pair.a.lines and wide_b.lines <= GROWN_LINES * pair.b.lines:
        tries.append((wide_a, wide_b))
    tries.append((shrunk_a if grown_a else pair.a, shrunk_b if grown_b else pair.b))
    return _first_copy(pair, tries, decide, keeps)


def _first_copy(
    pair: RegionPair,
    tries: list[tuple[Region | None, Region | None]],
    decide: Decide,
    keeps: Keeps | None,
) -> RegionPair | None:
    """The first region pair tried that is a copy and may replace ``pair`` (else None).

    Its two sides apart; ``keeps`` (when given) lets it replace ``pair``.
    """
    for a, b in tries:
        if a is None or b is None or a.overlap(b):
            continue
        if a.path == b.path and (a.within(b) or b.within(a)):
            continue
        found = decide(a, b)
        if found is not None and (keeps is None or keeps(pair, found)):
            return found
    return None


def as_within_units(
    pairs: Sequence[RegionPair], edges: Bounds, decide: Decide, keeps: Keeps | None = None
) -> tuple[list[RegionPair], int]:
    """The pairs with regions that enter or leave a unit made not to, where that is a copy.

    ``edges`` gives a region's *best* form (each unit it enters or leaves taken whole where it
    holds most of it, else the part inside left out) and its *cut* form (every such part left
    out), see :func:`~crystal_lsp.clones.align.statements.within_units`; the first decided a
    copy replaces the pair, which else stays as it was. Returns the pairs and how many changed.
    """
    out: list[RegionPair] = []
    changed = 0
    for pair in pairs:
        best_a, cut_a = edges(pair.a)
        best_b, cut_b = edges(pair.b)
        better = None
        if best_a is not None or best_b is not None:
            tries: list[tuple[Region | None, Region | None]] = [
                (best_a or pair.a, best_b or pair.b),
                (cut_a if best_a else pair.a, cut_b if best_b else pair.b),
            ]
            better = _first_copy(pair, tries, decide, keeps)
        changed += better is not None
        out.append(better if better is not None else pair)
    return out, changed


def statement_bounds(work: Workset, region: Region) -> tuple[Region | None, Region | None]:
    """``region`` grown to whole statements, and shrunk to them (None, None: on their edges).

    See :func:`~crystal_lsp.clones.align.statements.whole_statements`.
    """

    def spans(heavy: Heavy, indent: bool) -> tuple[Span | None, Span | None]:
        grown, shrunk = whole_statements(heavy, indent, region.start, region.end)
        return (None, None) if grown == (region.start, region.end) else (grown, shrunk)

    return _kept_regions(work, region, "statements1", spans)


def unit_edges(work: Workset, region: Region) -> tuple[Region | None, Region | None]:
    """``region`` made not to enter or leave a unit: best and cut (None, None: it does not).

    See :func:`~crystal_lsp.clones.align.statements.within_units`.
    """

    def spans(heavy: Heavy, indent: bool) -> tuple[Span | None, Span | None]:
        extents = function_extents(work.entry(work.ids[region.path]), heavy, indent)
        found = within_units(extents, heavy.lines, region.start, region.end)
        return (None, None) if found is None else found

    return _kept_regions(work, region, "units1", spans)


def _kept_regions(
    work: Workset,
    region: Region,
    kind: str,
    spans: Callable[[Heavy, bool], tuple[Span | None, Span | None]],
) -> tuple[Region | None, Region | None]:
    """Two spans of a region's file computed on its tokens, as regions.

    Kept by content (an unsaved buffer's are not), so a rescan that reuses the findings loads
    no tokens. A whole unit gives (None, None).
    """
    if region.whole:
        return None, None
    fid = work.ids[region.path]
    entry = work.entry(fid)
    file = work.finder.index.files[region.path]
    reads = None if file.override else reads_of(work)
    indent = entry.language in INDENT_LANGUAGES
    key = f"{kind}\0{file.sha}\0{indent}\0{region.start}\0{region.end}"
    found = reads.get_digests(key) if reads is not None else None
    if found is None:  # two strings, as the memo keeps a region's digests
        heavy = work.side(fid).heavy
        found = [
            " ".join(str(x) for x in (*span, *span_position(*span, heavy))) if span else ""
            for span in spans(heavy, indent)
        ]
        if reads is not None:
            reads.put_digests(key, found)
    out = [
        _region(entry, region.path, [int(x) for x in at.split()]) if at else None for at in found
    ]
    return out[0], out[1]


def _region(entry: Entry, path: str, numbers: list[int]) -> Region:
    """The region of ``(start, end, first line, first column, last line, last column)``."""
    start, end, first_line, first_col, last_line, last_col = numbers
    unit = entry_facts(entry).enclosing(start, end)
    whole = unit >= 0 and (entry.snippets[unit].start, entry.snippets[unit].end) == (start, end)
    return Region(path, start, end, first_line, first_col, last_line, last_col, unit, whole)


def on_edges(
    work: Workset,
    pairs: list[RegionPair],
    decide: Decide,
    level_of: Callable[[RegionPair], str],
) -> tuple[list[RegionPair], int]:
    """The pairs within units and on statement edges, without those now nested (and how many).

    After the filter of repetitive windows: a pair it kept stays a finding, its range changed.
    A new range replaces a pair's only when the pair keeps its level (``level_of``: a copy
    stays a copy), so that no finding leaves the default view for its range.
    """

    def keeps(old: RegionPair, new: RegionPair) -> bool:
        return level_of(new) == COPY or level_of(old) != COPY

    pairs, _ = as_within_units(pairs, lambda r: unit_edges(work, r), decide, keeps)
    pairs, _ = as_whole_statements(pairs, lambda r: statement_bounds(work, r), decide, keeps)
    return without_nested(pairs)
