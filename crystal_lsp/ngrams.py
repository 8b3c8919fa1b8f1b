"""N-grams and the per-sequence n-gram statistics every BLEU variant is computed from.

A :class:`Profile` holds, for each order ``n``, the distinct n-grams of a token sequence, the
counts of those that occur more than once, and the total number of n-grams, after dropping an
optional set of ignored n-grams (CrystalBLEU's trivially shared set). The clipped count of BLEU's
modified precision is then

    sum_g min(h_g, r_g) = |distinct_h & distinct_r| + sum_{g repeated in both} (min(h_g, r_g) - 1)

because ``min(h, r) = 1 + min(h - 1, r - 1)`` for counts of at least one. Both terms are set
operations that CPython runs in C, which is what makes scoring fast without a compiled
extension; the profile of a sequence is built once and reused against any number of others.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence, Set
from itertools import compress
from typing import Any

Ngram = tuple[Any, ...]


def ngrams(tokens: Sequence[Any], n: int) -> list[Ngram]:
    """All contiguous n-grams of ``tokens`` as tuples, in order (empty if too short)."""
    if n == 1:
        return list(zip(tokens))
    return list(zip(*[tokens[i:] for i in range(n)]))


def as_sequence(tokens: Iterable[Any]) -> Sequence[Any]:
    """A sliceable sequence of the tokens (lists and tuples are used as they are)."""
    texts = getattr(tokens, "texts", None)
    if texts is not None:
        return texts  # type: ignore[no-any-return]
    if isinstance(tokens, (list, tuple)):
        return tokens
    return list(tokens)


class Profile:
    """Sufficient n-gram statistics of one token sequence (orders 1..max_n)."""

    __slots__ = ("distinct", "length", "repeated", "totals")

    def __init__(
        self,
        length: int,
        distinct: tuple[set[Ngram], ...],
        repeated: tuple[dict[Ngram, int], ...],
        totals: tuple[int, ...],
    ) -> None:
        self.length = length
        self.distinct = distinct
        self.repeated = repeated
        self.totals = totals

    @property
    def max_n(self) -> int:
        """The highest n-gram order held."""
        return len(self.totals)

    def count(self, gram: Ngram) -> int:
        """How often ``gram`` occurs (0 if absent or ignored)."""
        n = len(gram)
        if n > self.max_n or gram not in self.distinct[n - 1]:
            return 0
        return self.repeated[n - 1].get(gram, 1)

    def counts(self, n: int) -> dict[Ngram, int]:
        """All n-grams of order ``n`` with their counts."""
        out = dict.fromkeys(self.distinct[n - 1], 1)
        out.update(self.repeated[n - 1])
        return out


def build_profile(
    tokens: Sequence[Any], max_n: int = 4, ignore: Set[Ngram] | None = None
) -> Profile:
    """Count the n-grams of ``tokens`` up to ``max_n``, leaving out those in ``ignore``."""
    distinct_all: list[set[Ngram]] = []
    repeated_all: list[dict[Ngram, int]] = []
    totals: list[int] = []
    for n in range(1, max_n + 1):
        grams = ngrams(tokens, n)
        total = len(grams)
        distinct = set(grams)
        repeated: dict[Ngram, int]
        if len(distinct) < total:
            counts = Counter(grams)
            repeated = dict(compress(counts.items(), map((1).__lt__, counts.values())))
        else:
            repeated = {}
        if ignore:
            hit = distinct & ignore
            if hit:
                distinct -= hit
                pop = repeated.pop
                total -= sum([pop(g, 1) for g in hit])
        distinct_all.append(distinct)
        repeated_all.append(repeated)
        totals.append(total)
    return Profile(len(tokens), tuple(distinct_all), tuple(repeated_all), tuple(totals))


def clipped_counts(hyp: Profile, ref: Profile) -> list[int]:
    """BLEU's clipped n-gram counts of ``hyp`` against ``ref``, one per order."""
    out = []
    for hd, hr, rd, rr in zip(hyp.distinct, hyp.repeated, ref.distinct, ref.repeated):
        clipped = len(hd & rd)
        if hr and rr:
            for g in hr.keys() & rr.keys():
                clipped += min(hr[g], rr[g]) - 1
        out.append(clipped)
    return out


def merge_max(profiles: Sequence[Profile]) -> Profile:
    """One profile whose counts are the maximum over ``profiles`` (BLEU's multi-reference max).

    Only ``distinct`` and ``repeated`` are meaningful in the result; ``totals`` are the maxima.
    """
    if len(profiles) == 1:
        return profiles[0]
    max_n = min(p.max_n for p in profiles)
    distinct: list[set[Ngram]] = []
    repeated: list[dict[Ngram, int]] = []
    for i in range(max_n):
        distinct.append(set().union(*(p.distinct[i] for p in profiles)))
        merged: dict[Ngram, int] = {}
        for p in profiles:
            for g, c in p.repeated[i].items():
                if c > merged.get(g, 0):
                    merged[g] = c
        repeated.append(merged)
    totals = tuple(max(p.totals[i] for p in profiles) for i in range(max_n))
    return Profile(max(p.length for p in profiles), tuple(distinct), tuple(repeated), totals)
