"""Candidate retrieval: an inverted index of non-trivial shingles, in sorted numpy arrays.

Scoring every pair of snippets is quadratic; instead each snippet is indexed under its shingles
(hashes of normalized 4-grams, see :mod:`fingerprints`) minus those in the normalized view's S
set and minus any shingle found in more than ``max_df`` snippets (those are boilerplate that
cannot single out a copy). Two snippets become a candidate pair when they share at least
``min_share`` of the smaller one's remaining shingles; each snippet keeps its ``top`` candidates
with the most shared shingles. Only candidates are scored with CrystalBLEU.

The index is two parallel arrays sorted by shingle (``hashes``, ``owners``), so building it is
one ``argsort`` and a lookup is a ``searchsorted``; all-pairs retrieval enumerates, per shingle,
the pairs of its owners with vectorised index arithmetic.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from crystal_lsp.text.fingerprints import U64

I64 = npt.NDArray[np.int64]
_CHUNK = 4_000_000


class Postings:
    """Shingle → snippet postings of one language."""

    def __init__(self, shingles: Sequence[U64], excluded: U64, max_df: int) -> None:
        lengths = np.array([len(s) for s in shingles], dtype=np.int64)
        owners = np.repeat(np.arange(len(shingles), dtype=np.int64), lengths)
        hashes = np.concatenate(shingles) if len(shingles) else np.empty(0, dtype=np.uint64)
        self._excluded: U64 = np.sort(excluded) if len(excluded) else np.empty(0, dtype=np.uint64)
        keep = self._not_excluded(hashes)
        hashes, owners = hashes[keep], owners[keep]
        order = np.argsort(hashes)  # order within one shingle does not matter
        self.hashes: U64 = hashes[order]
        self.owners: I64 = owners[order]
        self.max_df = max_df
        starts = (
            np.flatnonzero(np.r_[True, self.hashes[1:] != self.hashes[:-1]])
            if len(self.hashes)
            else np.empty(0, np.int64)
        )
        counts = np.diff(np.r_[starts, len(self.hashes)])
        self._starts = starts
        self._counts = counts
        useful = (counts >= 1) & (counts <= max_df)
        per_owner = np.zeros(len(shingles), dtype=np.int64)
        useful_rows = np.repeat(useful, counts)
        np.add.at(per_owner, self.owners[useful_rows], 1)
        self.sizes: I64 = per_owner
        self.count = len(shingles)

    def all_pairs(self, min_share: float, top: int) -> tuple[I64, I64, I64]:
        """Candidate pairs ``(a, b, shared)`` with ``a < b`` among all snippets."""
        starts, counts = self._starts, self._counts
        keys_parts: list[I64] = []
        acc_keys = np.empty(0, dtype=np.int64)
        acc_counts = np.empty(0, dtype=np.int64)
        pending = 0
        n = np.int64(max(1, self.count))
        for size in range(2, self.max_df + 1):
            group_starts = starts[counts == size]
            if not len(group_starts):
                continue
            members = self.owners[group_starts[:, None] + np.arange(size)]
            left, right = np.triu_indices(size, 1)
            a = members[:, left].ravel()
            b = members[:, right].ravel()
            keys_parts.append(np.minimum(a, b) * n + np.maximum(a, b))
            pending += len(a)
            if pending > _CHUNK:
                acc_keys, acc_counts = _accumulate(acc_keys, acc_counts, keys_parts)
                keys_parts, pending = [], 0
        acc_keys, acc_counts = _accumulate(acc_keys, acc_counts, keys_parts)
        if not len(acc_keys):
            empty = np.empty(0, dtype=np.int64)
            return empty, empty, empty
        keys, shared = acc_keys, acc_counts
        a = keys // n
        b = keys % n
        return self._filter(a, b, shared, min_share, top)

    def _not_excluded(self, hashes: U64) -> npt.NDArray[np.bool_]:
        ex = self._excluded
        if not len(ex):
            return np.ones(len(hashes), dtype=bool)
        at = np.minimum(np.searchsorted(ex, hashes), len(ex) - 1)
        keep: npt.NDArray[np.bool_] = ex[at] != hashes
        return keep

    def query(
        self, shingles: U64, min_share: float, top: int, exclude: int = -1
    ) -> tuple[I64, I64]:
        """Candidates ``(owner, shared)`` for one snippet's shingles.

        ``exclude`` is the snippet's own owner id when it is in the index. A snippet outside the
        index counts as if it were indexed too (its shingles' document frequencies include it),
        so that a query gives the pairs :meth:`all_pairs` would give with the snippet indexed.
        """
        empty = np.empty(0, dtype=np.int64)
        shingles = shingles[self._not_excluded(shingles)]
        if not len(shingles):
            return empty, empty
        left = np.searchsorted(self.hashes, shingles, side="left")
        right = np.searchsorted(self.hashes, shingles, side="right")
        df = right - left
        outside = 1 if exclude < 0 else 0
        counted = df + outside <= self.max_df
        size = int(counted.sum())
        useful = counted & (df >= 1)
        if not size or not useful.any():
            return empty, empty
        # the owners of every useful shingle, gathered without a Python loop
        lo, df = left[useful], df[useful]
        total = int(df.sum())
        at = np.repeat(lo - (np.cumsum(df) - df), df) + np.arange(total)
        counts = np.bincount(self.owners[at], minlength=self.count)
        if exclude >= 0:
            counts[exclude] = 0
        candidates = np.flatnonzero(counts)
        shared = counts[candidates]
        smaller = np.minimum(self.sizes[candidates], size)
        ok = shared >= np.maximum(1, np.ceil(min_share * smaller))
        candidates, shared = candidates[ok], shared[ok]
        if len(candidates) > top:
            best = np.argsort(-shared, kind="stable")[:top]
            candidates, shared = candidates[best], shared[best]
        return candidates.astype(np.int64), shared.astype(np.int64)

    def _filter(
        self, a: I64, b: I64, shared: I64, min_share: float, top: int
    ) -> tuple[I64, I64, I64]:
        smaller = np.minimum(self.sizes[a], self.sizes[b])
        ok = shared >= np.maximum(1, np.ceil(min_share * smaller))
        a, b, shared = a[ok], b[ok], shared[ok]
        if not len(a):
            return a, b, shared
        # keep, for every snippet, its `top` partners with most shared shingles
        both = np.concatenate([a, b])
        other = np.concatenate([b, a])
        weight = np.concatenate([shared, shared])
        order = np.lexsort((other, -weight, both))
        both, other = both[order], other[order]
        first = np.r_[True, both[1:] != both[:-1]]
        group_start = np.maximum.accumulate(np.where(first, np.arange(len(both)), 0))
        rank = np.arange(len(both)) - group_start
        chosen = rank < top
        lo = np.minimum(both[chosen], other[chosen])
        hi = np.maximum(both[chosen], other[chosen])
        n = np.int64(max(1, self.count))
        keys = np.unique(lo * n + hi)
        index = {
            int(k): i for i, k in enumerate((np.minimum(a, b) * n + np.maximum(a, b)).tolist())
        }
        rows = np.array([index[int(k)] for k in keys.tolist()], dtype=np.int64)
        return a[rows], b[rows], shared[rows]


def _accumulate(keys: I64, counts: I64, parts: list[I64]) -> tuple[I64, I64]:
    """Add the pair keys in ``parts`` (each occurrence counts 1) to a (keys, counts) table."""
    if not parts:
        return keys, counts
    new_keys, new_counts = _count_keys(np.concatenate(parts))
    if not len(keys):
        return new_keys.astype(np.int64), new_counts.astype(np.int64)
    merged, inverse = np.unique(np.concatenate([keys, new_keys]), return_inverse=True)
    totals = np.bincount(
        inverse, weights=np.concatenate([counts, new_counts]), minlength=len(merged)
    )
    return merged.astype(np.int64), totals.astype(np.int64)


def _count_keys(keys: I64) -> tuple[I64, I64]:
    """The distinct values of ``keys`` (non-negative), sorted, with their multiplicities.

    ``np.unique(..., return_counts=True)`` with the sort done on 32-bit values when they fit,
    which is about twice as fast; the pair keys of a repository below 65,536 snippets do.
    """
    if not len(keys):
        return keys, keys
    work = keys.astype(np.uint32) if int(keys.max()) <= 0xFFFFFFFF else keys.copy()
    work.sort()
    first = np.flatnonzero(np.r_[True, work[1:] != work[:-1]])
    counts = np.diff(np.r_[first, len(work)]).astype(np.int64)
    return work[first].astype(np.int64), counts


class MemoizedPostings:
    """A retrieval index that remembers its answers (by the query's shingles).

    While someone types, the clone finder asks the same questions for every unchanged snippet
    of the buffer; the answers depend only on the shingles and on the index, which is replaced
    (not changed) when the disk changes.
    """

    LIMIT = 8192

    def __init__(self, postings: Postings) -> None:
        self.postings = postings
        self._answers: OrderedDict[tuple[bytes, float, int, int], tuple[I64, I64]] = OrderedDict()

    def query(
        self, shingles: U64, min_share: float, top: int, exclude: int = -1
    ) -> tuple[I64, I64]:
        """:meth:`Postings.query`, memoized."""
        key = (shingles.tobytes(), min_share, top, exclude)
        found = self._answers.get(key)
        if found is None:
            found = self._answers[key] = self.postings.query(shingles, min_share, top, exclude)
            if len(self._answers) > self.LIMIT:
                self._answers.popitem(last=False)
        else:
            self._answers.move_to_end(key)
        return found

    def all_pairs(self, min_share: float, top: int) -> tuple[I64, I64, I64]:
        """:meth:`Postings.all_pairs` (not memoized: it is asked once per index)."""
        return self.postings.all_pairs(min_share, top)


def share(a: U64, b: U64) -> float:
    """The share of the smaller shingle set that both sets hold."""
    smaller = min(len(a), len(b))
    if not smaller:
        return 0.0
    return len(np.intersect1d(a, b, assume_unique=True)) / smaller
