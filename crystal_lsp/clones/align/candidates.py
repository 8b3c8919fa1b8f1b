"""Candidate copies: a chain's two regions, how much copied code they share, and what to skip.

A chain (:mod:`crystal_lsp.clones.align.chains`) becomes a :class:`Candidate`: both regions snapped to
lines and units (:mod:`crystal_lsp.clones.align.regions`), and the number of *copied* tokens -- aligned
normalized tokens outside noise (:mod:`crystal_lsp.text.noise`) on both sides. A candidate smaller
than the size settings is not a copy; one whose copied tokens are too few is convention, not
copying, and is filtered under the noise kind that filled it (the caller counts it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from crystal_lsp.clones.align.chains import Chain
from crystal_lsp.clones.align.lines import entry_facts
from crystal_lsp.clones.align.regions import (
    Region,
    as_unit,
    corresponding,
    extended,
    finish,
    matched_lines,
    raw_span,
    trimmed,
    unit_bounds,
    whole_lines,
)
from crystal_lsp.clones.align.seeds import Bools
from crystal_lsp.text.entries import Entry, Heavy
from crystal_lsp.text.fingerprints import text_sha
from crystal_lsp.text.views import normalized


@dataclass(frozen=True)
class Side:
    """What a candidate needs of one file."""

    path: str
    entry: Entry
    heavy: Heavy
    noise: Bools
    """Per normalized token: inside a noise range."""
    header: list[int]
    """:func:`crystal_lsp.clones.align.regions.header_prefix` of the entry."""
    noise_raw: Bools
    """Per raw token: inside a noise range."""


@dataclass(frozen=True)
class Candidate:
    """Two regions a chain aligned, with the digests that key their scores.

    What is read of the regions' tokens (copied tokens, digests) is computed on first use: most
    candidates are too small to be copies, which their regions alone tell.
    """

    a: Region
    b: Region
    side_a: Side = field(repr=False, compare=False)
    side_b: Side = field(repr=False, compare=False)

    @cached_property
    def matched(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """Token spans of the lines of each region that correspond to lines of the other."""
        a, b = self.a, self.b
        return matched_lines(
            self.side_a.heavy, (a.start, a.end), self.side_b.heavy, (b.start, b.end)
        )

    @cached_property
    def copied(self) -> int:
        """Tokens outside noise on the lines of both regions that correspond (the fewer)."""
        lines_a, lines_b = self.matched
        return min(_clean(self.side_a, lines_a), _clean(self.side_b, lines_b))

    @cached_property
    def sha_a(self) -> str:
        """The digest of region ``a``'s raw tokens."""
        return region_sha(self.side_a.heavy, self.a)

    @cached_property
    def sha_b(self) -> str:
        """The digest of region ``b``'s raw tokens."""
        return region_sha(self.side_b.heavy, self.b)

    def noise_kind(self) -> str:
        """The noise kind that fills the corresponding lines of ``a`` most (``trivial``: none)."""
        return main_noise_kind(self.side_a.entry, self.matched[0])


def copied_tokens(chain: Chain, a: Side, b: Side) -> tuple[int, Callable[[], str]]:
    """Aligned normalized tokens outside noise on both sides (the fewer), and the noise kind.

    The kind -- what fills the aligned tokens that do not count (``trivial`` if nothing) -- comes
    as a function: only a candidate filtered for it needs it.
    """
    covered_a = np.zeros(chain.a1 - chain.a0, dtype=bool)
    covered_b = np.zeros(chain.b1 - chain.b0, dtype=bool)
    for i0, i1, j0 in chain.runs:
        covered_a[i0 - chain.a0 : i1 - chain.a0] = True
        covered_b[j0 - chain.b0 : j0 + i1 - i0 - chain.b0] = True
    noisy_a = a.noise[chain.a0 : chain.a1] if len(a.noise) else np.zeros(len(covered_a), bool)
    noisy_b = b.noise[chain.b0 : chain.b1] if len(b.noise) else np.zeros(len(covered_b), bool)
    copied = min(int((covered_a & ~noisy_a).sum()), int((covered_b & ~noisy_b).sum()))

    def kind() -> str:
        raw = a.entry.npos[chain.a0 + np.flatnonzero(covered_a & noisy_a)]
        return main_noise_kind(a.entry, [(int(t), int(t) + 1) for t in raw])

    return copied, kind


def main_noise_kind(entry: Entry, spans: Sequence[tuple[int, int]]) -> str:
    """The noise kind covering most raw tokens of the spans (``trivial`` if none does)."""
    return entry_facts(entry).main_noise_kind(spans)


def candidate(chain: Chain, a: Side, b: Side) -> tuple[Candidate, Callable[[], str]]:
    """The candidate of a chain: whole lines that correspond, whole units, their digests.

    Its copied tokens are those outside noise on the lines of both regions that correspond;
    with it comes how to tell the noise kind that fills those lines most (``trivial`` if none).
    """
    span_a = whole_lines(a.heavy.lines, *raw_span(a.entry, a.heavy, chain.a0, chain.a1))
    span_b = whole_lines(b.heavy.lines, *raw_span(b.entry, b.heavy, chain.b0, chain.b1))
    return of_spans(span_a, span_b, a, b)


def of_spans(
    span_a: tuple[int, int], span_b: tuple[int, int], a: Side, b: Side
) -> tuple[Candidate, Callable[[], str]]:
    """The candidate of two spans of whole lines (see :func:`candidate`)."""
    span_a, span_b = corresponding(a.heavy, span_a, b.heavy, span_b)
    limit_a = unit_bounds(a.entry, a.heavy, *span_a)
    limit_b = unit_bounds(b.entry, b.heavy, *span_b)
    if a.path == b.path:  # the two sides of a copy within one file must stay apart
        limit_a = (limit_a[0], min(limit_a[1], span_b[0]))
        limit_b = (max(limit_b[0], span_a[1]), limit_b[1])
    span_a, span_b = extended(a.heavy, span_a, limit_a, b.heavy, span_b, limit_b)
    cut_a = trimmed(a.entry, a.heavy, *span_a)
    cut_b = trimmed(b.entry, b.heavy, *span_b)
    if (cut_a, cut_b) != (span_a, span_b):  # what is left of the other side must correspond
        span_a, span_b = corresponding(a.heavy, cut_a, b.heavy, cut_b)
    ra = finish(a.path, a.entry, a.heavy, *span_a, a.header)
    rb = finish(b.path, b.entry, b.heavy, *span_b, b.header)
    if ra.whole and not rb.whole:
        rb = as_unit(b.entry, rb, b.header)
    elif rb.whole and not ra.whole:
        ra = as_unit(a.entry, ra, a.header)
    cand = Candidate(ra, rb, a, b)
    return cand, cand.noise_kind


def _clean(side: Side, spans: list[tuple[int, int]]) -> int:
    """Tokens outside noise in the given token spans."""
    return sum(int((~side.noise_raw[lo:hi]).sum()) for lo, hi in spans)


def region_sha(heavy: Heavy, region: Region) -> str:
    """Digest of a region's raw tokens (keys its scores)."""
    return text_sha(heavy.texts[region.start : region.end])


def region_norm_sha(heavy: Heavy, region: Region) -> str:
    """Digest of a region's normalized tokens (stable across renamings)."""
    return text_sha(
        normalized(heavy.texts[region.start : region.end], heavy.cats[region.start : region.end])
    )
