"""Items on intervals of one file, found by overlap: what replaces all-pairs scans of findings.

The steps of :mod:`.build` ask, for each pair, region or finding, whether one already kept lies
on the same lines (overlaps, covers, contains it). Scanning every kept one makes a scan with
many findings quadratic. :class:`Spans` answers "which items may overlap ``[lo, hi)`` of this
file" from a hierarchy of bins (the binning scheme of genome browsers): an item lies in the
smallest bin holding its whole interval, a query visits the bins its interval touches at each
level. The answer is a *superset* of the items that overlap (never one missing); callers
apply their exact predicate to it, so the result is the one of a full scan.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T")

SHIFTS = (5, 8, 11, 14, 17, 20, 23, 26, 29)
"""Bin sizes (powers of two) of the levels, smallest first; one more level holds the rest."""


class Spans(Generic[T]):
    """Items on half-open intervals ``[lo, hi)`` of integers, by key (a file's path)."""

    def __init__(self) -> None:
        self._bins: dict[Hashable, list[dict[int, list[T]]]] = {}

    def add(self, key: Hashable, lo: int, hi: int, item: T) -> None:
        """Put ``item`` on ``[lo, hi)`` of ``key`` (an empty interval counts as ``[lo, lo + 1)``)."""
        level, at = _place(lo, max(hi, lo + 1))
        levels = self._bins.get(key)
        if levels is None:
            levels = self._bins[key] = [defaultdict(list) for _ in range(len(SHIFTS) + 1)]
        levels[level][at].append(item)

    def near(self, key: Hashable, lo: int, hi: int) -> list[T]:
        """Every item whose interval overlaps ``[lo, hi)`` of ``key``, and maybe others."""
        levels = self._bins.get(key)
        if levels is None:
            return []
        hi = max(hi, lo + 1)
        out: list[T] = []
        for shift, bins in zip(SHIFTS, levels):
            if not bins:
                continue
            first, last = lo >> shift, (hi - 1) >> shift
            if last - first + 1 <= len(bins):
                for at in range(first, last + 1):
                    found = bins.get(at)
                    if found:
                        out += found
            else:
                for at, found in bins.items():
                    if first <= at <= last:
                        out += found
        for found in levels[-1].values():
            out += found
        return out


def _place(lo: int, hi: int) -> tuple[int, int]:
    """The level and bin of the smallest bin holding ``[lo, hi)``."""
    for level, shift in enumerate(SHIFTS):
        if lo >> shift == (hi - 1) >> shift:
            return level, lo >> shift
    return len(SHIFTS), 0
