"""Exact top-k of n-gram counts computed in pieces: a hash-partitioned map-reduce.

**Map.** Each input partition counts the n-grams of its documents
(:func:`crystal_lsp.metric.sset.count_ngrams`) and splits its count table into ``B`` buckets by a
*stable* hash of the n-gram (CRC-32 of its UTF-8 bytes; Python's ``hash()`` is salted per process,
so two workers would disagree about where an n-gram goes).

**Reduce.** The tables of bucket ``b`` from all partitions are summed. Every occurrence of an
n-gram ``g``, in whichever partition, went to the same bucket ``h(g)``, so after the reduce
bucket ``h(g)`` holds the *complete* corpus count ``C(g)`` and no other bucket holds ``g``.
Each bucket then keeps only its ``k`` best n-grams by the canonical rank key
``r(g) = (-C(g), len(g), g)`` (:func:`crystal_lsp.metric.sset.rank_key`) and its ``P`` largest counts.

**Merge.** S is the ``k`` best n-grams by ``r`` of the union of the buckets' lists; the
frequency curve is the ``P`` largest counts of the union of the buckets' counts.

**Why the merge is exact (not an approximation).** ``r`` is a strict total order on n-grams: two
different n-grams never have equal keys, because the n-gram itself is the last component. Let
``U`` be all n-grams of the corpus, ``T`` the ``k`` best of ``U`` (the set a single machine
computes with ``top_k``), and ``T_b`` the ``k`` best of bucket ``b``.

1. ``T`` is contained in the union of the ``T_b``: take ``g`` in ``T``, in bucket ``b``. Fewer
   than ``k`` n-grams of ``U`` rank before ``g``; the n-grams of bucket ``b`` that rank before
   ``g`` are among them, so fewer than ``k`` of them do, and ``g`` is in ``T_b``. This uses
   that ``C(g)`` in bucket ``b`` is the full count, which the stable hash guarantees.
2. The ``k`` best of the union are then ``T``: the union is a subset of ``U`` that contains
   ``T``, and the ``k`` best of ``U`` are better than every other element of ``U``, so in
   particular than every other element of the union.

Equal counts at the boundary of S ("ties") need no special care: the order is total, so the tie
is resolved by the order and then the tokens, the same way in every bucket and in the merge, and
the result equals the single-machine ``top_k`` n-gram for n-gram and rank for rank.

The curve is exact by the same argument with ``P`` for ``k``: the ``P`` best n-grams of ``U``
are among the union of the buckets' ``P`` best, their counts are the ``P`` largest counts of
``U`` (``r`` sorts by count first), and a bucket's ``P`` largest counts are the counts of its
``P`` best n-grams.

``tie_break="first-seen"`` (``Counter.most_common`` order) depends on the order documents were
read in, which a cluster does not preserve; it is available with one bucket (the local engine).
"""

from __future__ import annotations

import heapq
import sys
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.ngrams import Ngram
from crystal_lsp.metric.sset import (
    TriviallySharedSet,
    count_ngrams,
    frequency_curve,
    top_k,
)

CURVE_POINTS = 10_000
_SEPARATOR = "\x1f"


@dataclass
class PartCounts:
    """What the map step returns for one partition: its count table in buckets, and totals."""

    tables: list[dict[Ngram, int]]
    documents: int = 0
    tokens: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def stats(self) -> PartStats:
        """The totals without the (large) tables."""
        return PartStats(self.documents, self.tokens, self.skipped)


@dataclass
class PartStats:
    """Documents, tokens and skipped files of one partition."""

    documents: int = 0
    tokens: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class BucketTop:
    """What the reduce step keeps of one bucket: its k best n-grams and its largest counts."""

    top: dict[Ngram, int]
    curve: list[int]


@dataclass
class Counted:
    """The exact top-k and frequency curve of a corpus, with its totals."""

    top: dict[Ngram, int]
    curve: list[int]
    documents: int
    tokens: int
    skipped: list[tuple[str, str]]

    def to_sset(
        self,
        k: int,
        max_n: int,
        *,
        language: str = "",
        tie_break: str = "canonical",
        tokenizer: str = "",
    ) -> TriviallySharedSet:
        """The S set, exactly as :func:`crystal_lsp.metric.sset.build_sset` builds it."""
        check_sizes(k, max_n)
        return TriviallySharedSet(
            self.top,
            k,
            max_n,
            language,
            self.documents,
            self.tokens,
            tie_break,
            tokenizer,
            {"curve": self.curve},
        )


def check_sizes(k: int, max_n: int) -> None:
    """The checks :func:`crystal_lsp.metric.sset.build_sset` makes, with its messages."""
    if k < 0:
        raise CrystalError(f"k must be at least 0, not {k}")
    if max_n < 1:
        raise CrystalError(f"max n must be at least 1, not {max_n}")


def stable_bucket(gram: Ngram, buckets: int) -> int:
    """The bucket of an n-gram: the same in every process and on every machine."""
    key = _SEPARATOR.join(t if isinstance(t, str) else repr(t) for t in gram)
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % buckets


def split_counts(counts: Counter[Ngram], buckets: int) -> list[dict[Ngram, int]]:
    """A count table split into ``buckets`` tables by :func:`stable_bucket`."""
    if buckets <= 1:
        return [counts]
    tables: list[dict[Ngram, int]] = [{} for _ in range(buckets)]
    crc, sep = zlib.crc32, _SEPARATOR
    for gram, count in counts.items():
        try:
            key = sep.join(gram).encode("utf-8", "surrogatepass")
        except TypeError:  # tokens that are not strings
            tables[stable_bucket(gram, buckets)][gram] = count
            continue
        tables[crc(key) % buckets][gram] = count
    return tables


def count_documents(documents: Iterable[Sequence[Any]], max_n: int, buckets: int) -> PartCounts:
    """The map step over token sequences (see the module docstring)."""
    counts, docs, tokens = count_ngrams(documents, max_n)
    return PartCounts(split_counts(counts, buckets), docs, tokens)


def count_token_part(docs: list[list[str]], buckets: int, *, max_n: int) -> PartCounts:
    """The map step over token sequences already in hand (an engine's ``count_part``)."""
    return count_documents((interned(doc) for doc in docs), max_n, buckets)


def interned(tokens: Sequence[str]) -> list[str]:
    """The tokens as interned strings: n-grams then share them, in memory and when pickled."""
    return list(map(sys.intern, tokens))


def merge_tables(*tables: Mapping[Ngram, int]) -> dict[Ngram, int]:
    """The sum of count tables (the reduce step); inputs are not modified."""
    if not tables:
        return {}
    largest = max(range(len(tables)), key=lambda i: len(tables[i]))
    out = dict(tables[largest])
    get = out.get
    for i, table in enumerate(tables):
        if i == largest:
            continue
        for gram, count in table.items():
            out[gram] = get(gram, 0) + count
    return out


def bucket_top(counts: dict[Ngram, int], k: int, points: int = CURVE_POINTS) -> BucketTop:
    """A bucket's ``k`` best n-grams by the canonical rank key and its ``points`` largest counts."""
    return BucketTop(top_k(counts, k, "canonical"), heapq.nlargest(points, counts.values()))


def merge_tops(tops: Iterable[BucketTop], k: int, points: int = CURVE_POINTS) -> BucketTop:
    """The exact top-k and curve of the whole corpus from its buckets' (see the docstring)."""
    union: dict[Ngram, int] = {}
    curves: list[list[int]] = []
    for part in tops:
        union.update(part.top)
        curves.append(part.curve)
    curve = sorted(heapq.nlargest(points, chain(*curves)), reverse=True)
    return BucketTop(top_k(union, k, "canonical"), curve)


def single_table_top(
    counts: Counter[Ngram], k: int, tie_break: str = "canonical", points: int = CURVE_POINTS
) -> BucketTop:
    """Top-k and curve of one complete table (what :func:`crystal_lsp.metric.sset.build_sset` does)."""
    return BucketTop(top_k(counts, k, tie_break), frequency_curve(counts, points))
