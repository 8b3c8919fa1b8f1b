"""The indexed steps of the findings equal their all-pairs scans (random regions: fast == naive).

Each step of :mod:`crystal_lsp.clones.copies.build` that asks "which kept pair, class or finding
lies on these tokens" uses :class:`~crystal_lsp.clones.copies.spans.Spans` instead of comparing
with every kept one; on random regions crowded into few files (many overlaps, equal gains and
sizes: ties) the answers are those of the scans they replace, in the same order.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from crystal_lsp.clones.align.pairs import RegionPair
from crystal_lsp.clones.align.regions import Region
from crystal_lsp.clones.copies.build import (
    top_unit_at,
    top_unit_naive,
    top_units,
    without_repeats,
    without_repeats_naive,
)
from crystal_lsp.clones.copies.classes import (
    CloneClass,
    clone_classes,
    distinct_pairs,
    distinct_pairs_naive,
    drop_nested,
    drop_nested_naive,
    locations,
    locations_naive,
)
from crystal_lsp.clones.copies.families import family_links, links_naive
from crystal_lsp.clones.copies.merging import (
    Decide,
    merge_group,
    oriented,
    without_nested,
    without_nested_naive,
)
from crystal_lsp.clones.copies.spans import Spans
from crystal_lsp.clones.findings import COPY, LINES, SIMILAR, Finding, Location, Pair
from crystal_lsp.text.entries import SnippetMeta

PATHS = ("a.py", "b.py", "c.py")
SPAN = 3000
"""Tokens of a file: regions of up to the whole file, so every level of the bins is used."""


@st.composite
def regions(draw: st.DrawFn, min_tokens: int = 1) -> Region:
    path = draw(st.sampled_from(PATHS))
    start = draw(st.integers(0, SPAN))
    length = draw(st.one_of(st.integers(min_tokens, 80), st.integers(min_tokens, SPAN)))
    end = start + length
    return Region(path, start, end, start // 10 + 1, 1, max(end - 1, start) // 10 + 1, 9, -1, False)


@st.composite
def region_pairs(draw: st.DrawFn, min_tokens: int = 1) -> RegionPair:
    a, b = draw(regions(min_tokens)), draw(regions(min_tokens))
    score = draw(st.sampled_from((0.5, 0.8, 1.0)))
    return RegionPair(a, b, score, score, draw(st.sampled_from((10, 50, 100))))


PAIRS = st.lists(region_pairs(), max_size=60)
ANY_PAIRS = st.lists(region_pairs(min_tokens=0), max_size=30)


@given(st.lists(st.tuples(st.sampled_from(PATHS), st.integers(-5, 5000), st.integers(0, 5000))))
@settings(max_examples=100, deadline=None)
def test_spans_find_every_overlapping_item(items: list[tuple[str, int, int]]) -> None:
    index: Spans[int] = Spans()
    for k, (path, lo, size) in enumerate(items):
        index.add(path, lo, lo + size, k)
    for path, lo, size in items:
        near = index.near(path, lo, lo + size)
        assert len(near) == len(set(near))  # each item once
        overlapping = {
            k
            for k, (p, lo2, size2) in enumerate(items)
            if p == path and max(lo, lo2) < min(lo + max(size, 1), lo2 + max(size2, 1))
        }
        assert overlapping <= set(near)


@given(ANY_PAIRS | PAIRS, st.sampled_from((0.5, 0.0, 0.9)))
@settings(max_examples=80, deadline=None)
def test_distinct_pairs_equal_the_scan(pairs: list[RegionPair], overlap: float) -> None:
    assert distinct_pairs(pairs, overlap) == distinct_pairs_naive(pairs, overlap)


@given(ANY_PAIRS | PAIRS)
@settings(max_examples=80, deadline=None)
def test_without_nested_equals_the_scan(pairs: list[RegionPair]) -> None:
    assert without_nested(pairs) == without_nested_naive(pairs)


@given(ANY_PAIRS | PAIRS)
@settings(max_examples=80, deadline=None)
def test_locations_equal_the_scan(pairs: list[RegionPair]) -> None:
    assert locations(pairs) == locations_naive(pairs)


@st.composite
def clone_class_lists(draw: st.DrawFn) -> list[CloneClass]:
    pairs = draw(st.lists(region_pairs(min_tokens=draw(st.sampled_from((0, 1)))), max_size=50))
    return clone_classes(pairs) + [
        CloneClass(p.a, [(p.b, p)]) for p in pairs[: draw(st.integers(0, len(pairs)))]
    ]


@given(clone_class_lists())
@settings(max_examples=80, deadline=None)
def test_drop_nested_equals_the_scan(classes: list[CloneClass]) -> None:
    fast, slow = drop_nested(classes), drop_nested_naive(classes)
    assert fast[1] == slow[1]
    assert [id(c) for c in fast[0]] == [id(c) for c in slow[0]]


@given(clone_class_lists(), st.data())
@settings(max_examples=80, deadline=None)
def test_family_links_equal_the_scan(classes: list[CloneClass], data: st.DataObject) -> None:
    seeds = data.draw(st.lists(st.booleans(), min_size=len(classes), max_size=len(classes)))
    assert family_links(classes, seeds) == links_naive(classes, seeds)


@st.composite
def findings(draw: st.DrawFn) -> Finding:
    def location(_: int) -> Location:
        path = draw(st.sampled_from(PATHS))
        first = draw(st.integers(1, 300))
        last = first + draw(st.one_of(st.integers(-2, 20), st.integers(0, 300)))
        kind = draw(st.sampled_from((LINES, "function", "file")))
        return Location(path, first, 1, last, 9, kind, "", 10, "", "")

    count = draw(st.integers(0, 4) if draw(st.integers(0, 9)) == 0 else st.integers(1, 4))
    places = [location(k) for k in range(count)]
    level = draw(st.sampled_from((COPY, SIMILAR)))
    return Finding("python", places, [Pair(0, k, 1.0, 1.0) for k in range(1, count)], level=level)


@given(st.lists(findings(), max_size=40))
@settings(max_examples=100, deadline=None)
def test_without_repeats_equals_the_scan(found: list[Finding]) -> None:
    fast, slow = without_repeats(found), without_repeats_naive(found)
    assert fast[1] == slow[1]
    assert [id(f) for f in fast[0]] == [id(f) for f in slow[0]]


@st.composite
def snippet_lists(draw: st.DrawFn) -> list[SnippetMeta]:
    out: list[SnippetMeta] = []
    at = 0
    for _ in range(draw(st.integers(0, 12))):
        # mostly units one after another (bisection), sometimes overlapping or nested (a scan)
        start = at + draw(st.integers(-30, 20)) if draw(st.booleans()) else draw(st.integers(0, 99))
        end = start + draw(st.integers(-2, 40))
        at = max(at, end)
        depth = draw(st.sampled_from((0, 0, 0, 1)))
        out.append(SnippetMeta(start, end, "function", "f", depth, 1, 1, 1, 1, "", ""))
    return out


@given(snippet_lists(), st.lists(st.integers(-5, 400), max_size=20))
@settings(max_examples=200, deadline=None)
def test_top_unit_equals_the_scan(snippets: list[SnippetMeta], tokens: list[int]) -> None:
    units = top_units(snippets)
    assert [top_unit_at(units, t) for t in tokens] == [top_unit_naive(snippets, t) for t in tokens]


@st.composite
def file_windows(draw: st.DrawFn) -> list[RegionPair]:
    # lines drawn apart from tokens: the test holds without lines growing with tokens
    def region(path: str) -> Region:
        start = draw(st.integers(0, 400))
        end = start + draw(st.integers(1, 60))
        first = draw(st.integers(1, 60))
        return Region(path, start, end, first, 1, first + draw(st.integers(-1, 25)), 9, -1, False)

    same = draw(st.booleans())
    pairs = [
        oriented(RegionPair(region("a.py"), region("a.py" if same else "b.py"), 1.0, 1.0, 50))
        for _ in range(draw(st.integers(0, 70)))
    ]
    return sorted(pairs, key=lambda p: (p.a.start, p.b.start))


@given(file_windows(), st.integers(0, 6))
@settings(max_examples=100, deadline=None)
def test_merging_on_arrays_equals_the_scan(windows: list[RegionPair], refuse: int) -> None:
    def deciding(log: list[tuple[Region, ...]]) -> Decide:
        def decide(a1: Region, b1: Region, a2: Region, b2: Region) -> RegionPair | None:
            log.append((a1, b1, a2, b2))
            if (a1.start + b2.end + refuse) % 3 == 0:
                return None  # not a copy
            a = Region(a1.path, a1.start, a2.end, a1.first_line, 1, a2.last_line, 9, -1, False)
            b = Region(b1.path, b1.start, b2.end, b1.first_line, 1, b2.last_line, 9, -1, False)
            return RegionPair(a, b, 1.0, 1.0, 50)

        return decide

    log_arrays: list[tuple[Region, ...]] = []
    log_scan: list[tuple[Region, ...]] = []
    on_arrays = merge_group(windows, deciding(log_arrays), vector_from=0)
    scanned = merge_group(windows, deciding(log_scan), vector_from=10**9)
    assert on_arrays == scanned
    assert log_arrays == log_scan
