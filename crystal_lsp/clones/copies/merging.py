"""One pair per copy: aligned windows of the same two places merged, pairs inside pairs dropped.

Alignment may cut one copy into several windows: an edit longer than a chain's gap splits it, a
unit snapped whole overlaps the window next to it, a chain split at its widest gap gives two
parts. Windows of the same two files that follow each other on both sides in the same order --
overlapping, or apart by a few lines (an edit) -- are one copy: :func:`merged` decides the span
from the first window's start to the last one's end on both sides as one pair (through the
caller's ``decide``, which snaps and scores it as alignment does) and keeps it when it is a copy.

A pair whose both regions lie inside the two regions of another pair is the same copy seen
again (:func:`without_nested`), and is left out and counted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator

import numpy as np

from crystal_lsp.clones.align.pairs import RegionPair
from crystal_lsp.clones.align.regions import Region
from crystal_lsp.clones.copies.spans import Spans

Decide = Callable[[Region, Region, Region, Region], "RegionPair | None"]
"""``(a1, b1, a2, b2) -> the pair spanning a1..a2 and b1..b2`` if it is a copy, else None."""
GAP_LINES = 4
"""Windows this many lines apart (or closer) on both sides may be one copy..."""
GAP_SHARE = 0.5
"""...or apart by up to this share of the shorter window's lines."""
VECTOR_FROM = 32
"""Kept windows of one file pair from which a window is tested against all of them at once."""
INSIDE = 0.8
"""A region with this share of its tokens inside another region lies inside it."""


def oriented(pair: RegionPair) -> RegionPair:
    """The pair with its regions in path order (and in file order within one file)."""
    if (pair.a.path, pair.a.start) <= (pair.b.path, pair.b.start):
        return pair
    return RegionPair(pair.b, pair.a, pair.similarity, pair.crystalbleu, pair.copied)


def _gap(x: Region, y: Region) -> int:
    """Lines between two regions of one file (negative: they overlap)."""
    first, second = (x, y) if x.start <= y.start else (y, x)
    return second.first_line - first.last_line - 1


def _close(x: RegionPair, y: RegionPair) -> bool:
    """Whether two windows of one file pair follow each other closely, in the same order.

    The edit between them may be up to :data:`GAP_SHARE` of the larger window (an edit in a
    long copy leaves a short window after it).
    """
    if (y.a.start - x.a.start) * (y.b.start - x.b.start) < 0:
        return False
    larger = max(min(x.a.lines, x.b.lines), min(y.a.lines, y.b.lines))
    allowed = max(GAP_LINES, int(GAP_SHARE * larger))
    return _gap(x.a, y.a) <= allowed and _gap(x.b, y.b) <= allowed


def merged(pairs: Iterable[RegionPair], decide: Decide) -> tuple[list[RegionPair], int]:
    """The pairs with the windows of one copy merged (module docstring), and how many merged."""
    groups: dict[tuple[str, str], list[RegionPair]] = defaultdict(list)
    for pair in pairs:
        p = oriented(pair)
        groups[(p.a.path, p.b.path)].append(p)
    out: list[RegionPair] = []
    count = 0
    for key in sorted(groups):
        windows = sorted(groups[key], key=lambda p: (p.a.start, p.b.start))
        kept, n = merge_group(windows, decide)
        out += kept
        count += n
    return out, count


def merge_group(
    windows: list[RegionPair], decide: Decide, vector_from: int = VECTOR_FROM
) -> tuple[list[RegionPair], int]:
    """Merge the windows of one file pair, in order of their first region.

    Each window is tried against the kept windows close to it, the last kept first (with
    ``vector_from`` kept windows or more, all are tested at once: :meth:`_Kept.close_to`).
    """
    kept = _Kept(len(windows), vector_from)
    count = 0
    for window in windows:
        for k in kept.close_to(window):
            current = kept.pairs[k]
            a1, a2 = _order(current.a, window.a)
            b1, b2 = _order(current.b, window.b)
            if a1.path == b1.path and max(a1.end, a2.end) > min(b1.start, b2.start):
                continue  # within one file the two sides must stay apart
            joined = decide(a1, b1, a2, b2)
            if joined is not None:
                kept.put(k, oriented(joined))
                count += 1
                break
        else:
            kept.put(len(kept.pairs), window)
    return kept.pairs, count


class _Kept:
    """The windows of one file pair kept so far, with their places as columns of an array."""

    def __init__(self, size: int, vector_from: int) -> None:
        self.pairs: list[RegionPair] = []
        self.vector_from = vector_from
        # per window: a.start, b.start, a.first_line, a.last_line, b.first_line, b.last_line
        self.cols = np.zeros((6, size), dtype=np.int64)

    def put(self, k: int, pair: RegionPair) -> None:
        """Keep ``pair`` as window ``k`` (a new one when ``k`` is the count so far)."""
        if k == len(self.pairs):
            self.pairs.append(pair)
        else:
            self.pairs[k] = pair
        a, b = pair.a, pair.b
        self.cols[:, k] = (a.start, b.start, a.first_line, a.last_line, b.first_line, b.last_line)

    def close_to(self, y: RegionPair) -> Iterator[int]:
        """The kept windows ``x`` with ``_close(x, y)``, last first (:func:`_close` on arrays)."""
        n = len(self.pairs)
        if n < self.vector_from:
            return (k for k in range(n - 1, -1, -1) if _close(self.pairs[k], y))
        a_start, b_start, a_first, a_last, b_first, b_last = self.cols[:, :n]
        same_order = (y.a.start - a_start) * (y.b.start - b_start) >= 0
        own = np.minimum(a_last - a_first + 1, b_last - b_first + 1)
        larger = np.maximum(own, min(y.a.lines, y.b.lines))
        allowed = np.maximum(GAP_LINES, (GAP_SHARE * larger).astype(np.int64))
        gap_a = np.where(
            a_start <= y.a.start, y.a.first_line - a_last - 1, a_first - y.a.last_line - 1
        )
        gap_b = np.where(
            b_start <= y.b.start, y.b.first_line - b_last - 1, b_first - y.b.last_line - 1
        )
        hits = np.flatnonzero(same_order & (gap_a <= allowed) & (gap_b <= allowed))
        return (int(k) for k in hits[::-1])


def _order(x: Region, y: Region) -> tuple[Region, Region]:
    """The region that starts first, then the one that ends last (of one file)."""
    first = x if x.start <= y.start else y
    last = x if x.end >= y.end else y
    return first, last


def inside(small: Region, big: Region) -> bool:
    """Whether most of ``small`` (:data:`INSIDE` of its tokens) lies in ``big``."""
    return small.path == big.path and small.overlap(big) >= INSIDE * small.tokens


def without_nested(pairs: list[RegionPair]) -> tuple[list[RegionPair], int]:
    """The pairs that do not lie inside a larger pair (both regions each in one of its regions).

    A pair's rivals are the kept pairs with a region on its first region's tokens
    (:class:`.spans.Spans`): a region lies inside only what it overlaps.
    """
    ordered = sorted(
        pairs, key=lambda p: (-(p.a.tokens + p.b.tokens), p.a.path, p.a.start, p.b.path)
    )
    if any(p.a.tokens <= 0 or p.b.tokens <= 0 for p in ordered):
        return without_nested_naive(ordered)
    kept: list[RegionPair] = []
    on_tokens: Spans[RegionPair] = Spans()
    for pair in ordered:
        a = pair.a
        if any(_nested(pair, big) for big in on_tokens.near(a.path, a.start, a.end)):
            continue
        kept.append(pair)
        on_tokens.add(a.path, a.start, a.end, pair)
        on_tokens.add(pair.b.path, pair.b.start, pair.b.end, pair)
    return kept, len(ordered) - len(kept)


def without_nested_naive(pairs: list[RegionPair]) -> tuple[list[RegionPair], int]:
    """:func:`without_nested` comparing each pair with every kept pair on its first file."""
    ordered = sorted(
        pairs, key=lambda p: (-(p.a.tokens + p.b.tokens), p.a.path, p.a.start, p.b.path)
    )
    kept: list[RegionPair] = []
    by_path: dict[str, list[RegionPair]] = defaultdict(list)
    dropped = 0
    for pair in ordered:
        rivals = by_path[pair.a.path]
        if any(_nested(pair, big) for big in rivals):
            dropped += 1
            continue
        kept.append(pair)
        by_path[pair.a.path].append(pair)
        if pair.b.path != pair.a.path:
            by_path[pair.b.path].append(pair)
    return kept, dropped


def _nested(small: RegionPair, big: RegionPair) -> bool:
    if small is big:
        return False
    straight = inside(small.a, big.a) and inside(small.b, big.b)
    crossed = inside(small.a, big.b) and inside(small.b, big.a)
    return straight or crossed
