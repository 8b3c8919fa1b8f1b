"""Seeds: where two files' normalized token streams agree on a run of non-trivial tokens.

A *seed* at normalized position ``i`` of a file is the hash of its normalized tokens
``i .. i+SEED-1`` (two consecutive 4-gram hashes of the index entry, see
:attr:`crystal_lsp.text.entries.Entry.h4`). Seeds starting on a 4-gram of the normalized S set are
left out: what every program shares cannot tell a copy. Two occurrences of the same seed hash are
a *match*; the clone finder chains matches into aligned regions (:mod:`crystal_lsp.clones.align.chains`).

A seed hash found at more than ``max_df`` positions is boilerplate of the repository: its
occurrences are not paired (that would be quadratic and says nothing), and a copy made only of such
seeds is still found through the digests of whole units (:mod:`crystal_lsp.clones.copies.classes`).
Seeds starting on a noise token (:mod:`crystal_lsp.text.noise`) are kept: a copied function is
aligned across its signature, which just does not count as copied code.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from crystal_lsp.text.entries import Entry
from crystal_lsp.text.fingerprints import U64

SEED = 8
"""Normalized tokens per seed (two 4-grams)."""
I64 = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
_MIX = np.uint64(0x9E3779B97F4A7C15)
_EMPTY_I64: I64 = np.empty(0, dtype=np.int64)
_LOW_BITS_SIZE = 1 << 20
_LOW_MASK = np.uint64(_LOW_BITS_SIZE - 1)
LOOKUPS_UNSORTED = 8
"""Lookups an unsorted table answers by filtering; then it sorts (a long-lived table)."""


def raw_noise_mask(entry: Entry, ignore: Collection[str] = ()) -> Bools:
    """Per raw token of an entry: whether it lies in a noise range (not of ``ignore``)."""
    raw = np.zeros(entry.token_count, dtype=bool)
    for start, end, kind in entry.noise:
        if kind not in ignore:
            raw[start:end] = True
    return raw


def noise_mask(entry: Entry, ignore: Collection[str] = (), raw: Bools | None = None) -> Bools:
    """Per normalized token of an entry: whether it lies in a noise range (not of ``ignore``).

    ``raw`` is the entry's :func:`raw_noise_mask`, when already computed.
    """
    if raw is None:
        raw = raw_noise_mask(entry, ignore)
    out: Bools = raw[entry.npos] if len(entry.npos) else np.zeros(0, dtype=bool)
    return out


@dataclass(frozen=True)
class FileSeeds:
    """The seeds of one file: positions (sorted) and hashes."""

    positions: I64
    hashes: U64

    @classmethod
    def of(cls, entry: Entry, trivial: U64) -> FileSeeds:
        """The seeds of an entry, without those starting on a 4-gram of ``trivial`` (sorted)."""
        h4 = entry.h4
        count = len(h4) - (SEED - 4)
        if count <= 0:
            return cls(_EMPTY_I64, np.empty(0, dtype=np.uint64))
        with np.errstate(over="ignore"):
            hashes = h4[:count] * _MIX + h4[SEED - 4 : SEED - 4 + count]
        keep = np.ones(count, dtype=bool)
        if len(trivial):
            at = np.minimum(np.searchsorted(trivial, h4[:count]), len(trivial) - 1)
            keep = trivial[at] != h4[:count]
        positions = np.flatnonzero(keep).astype(np.int64)
        return cls(positions, hashes[positions])


def seeds_of(entries: Sequence[Entry], trivial: U64) -> list[FileSeeds]:
    """:meth:`FileSeeds.of` of every entry (the same seeds), computed over all of them at once.

    One pass over the concatenated 4-gram hashes instead of a few small array operations per
    file: a language state of hundreds of files is built in a fraction of the time.
    """
    gap = SEED - 4
    counts = [max(len(e.h4) - gap, 0) for e in entries]
    if not any(counts):
        return [FileSeeds.of(e, trivial) for e in entries]
    first = np.concatenate([e.h4[:c] for e, c in zip(entries, counts) if c])
    second = np.concatenate([e.h4[gap : gap + c] for e, c in zip(entries, counts) if c])
    with np.errstate(over="ignore"):
        hashes = first * _MIX + second
    keep = np.ones(len(first), dtype=bool)
    if len(trivial):
        at = np.minimum(np.searchsorted(trivial, first), len(trivial) - 1)
        keep = trivial[at] != first
    kept = np.flatnonzero(keep).astype(np.int64)
    ends: I64 = np.cumsum(counts, dtype=np.int64)
    edges: I64 = np.concatenate((np.zeros(1, dtype=np.int64), ends))
    bounds: list[int] = np.searchsorted(kept, edges).tolist()
    out: list[FileSeeds] = []
    for k, count in enumerate(counts):
        if not count:
            out.append(FileSeeds(_EMPTY_I64, np.empty(0, dtype=np.uint64)))
            continue
        at_k = kept[bounds[k] : bounds[k + 1]]
        out.append(FileSeeds(at_k - int(ends[k] - count), hashes[at_k]))
    return out


@dataclass(frozen=True)
class Matches:
    """Pairs of equal seeds: file ``fa`` position ``pa`` and file ``fb`` position ``pb``.

    Each pair is ordered: ``(fa, pa) < (fb, pb)``.
    """

    fa: I64
    pa: I64
    fb: I64
    pb: I64

    def __len__(self) -> int:
        return len(self.fa)

    @classmethod
    def empty(cls) -> Matches:
        """No matches."""
        return cls(_EMPTY_I64, _EMPTY_I64, _EMPTY_I64, _EMPTY_I64)

    def without(self, keep: Bools) -> Matches:
        """The matches where ``keep`` is true."""
        return Matches(self.fa[keep], self.pa[keep], self.fb[keep], self.pb[keep])


class SeedTable:
    """Seed occurrences of a language's files, sorted by hash, paired on demand.

    File ids are positions in the ``files`` given to :meth:`of`; a file whose seeds are ``None``
    takes no part.

    A table made by :meth:`of` is sorted when first read whole (:attr:`hashes`,
    :meth:`matches` of every file): a one-file rescan asks only about the hashes of the files it
    aligns afresh (:meth:`lookup`), which a filter over the unsorted occurrences answers without
    sorting the whole language's seeds. Each answer is the sorted table's, row for row.
    """

    def __init__(
        self, hashes: U64, owners: I64, positions: I64, max_df: int, *, lazy: bool = False
    ) -> None:
        self.max_df = max_df
        self._unsorted: tuple[U64, I64, I64] | None = (hashes, owners, positions)
        self._low: I64 | None = None
        self._lookups = 0
        if not lazy:
            self._sort()

    def _sort(self) -> None:
        assert self._unsorted is not None
        hashes, owners, positions = self._unsorted
        order = np.argsort(hashes, kind="stable")
        self._hashes: U64 = hashes[order]
        self._owners: I64 = owners[order]
        self._positions: I64 = positions[order]
        if len(self._hashes):
            self._starts: I64 = np.flatnonzero(np.r_[True, self._hashes[1:] != self._hashes[:-1]])
        else:
            self._starts = _EMPTY_I64
        self._counts: I64 = np.diff(np.r_[self._starts, len(self._hashes)]).astype(np.int64)
        self._unsorted = self._low = None

    @property
    def hashes(self) -> U64:
        """Every occurrence's seed hash, sorted (stable: ties in file, then position, order)."""
        if self._unsorted is not None:
            self._sort()
        return self._hashes

    @property
    def owners(self) -> I64:
        """The file id of each occurrence (in :attr:`hashes` order)."""
        if self._unsorted is not None:
            self._sort()
        return self._owners

    @property
    def positions(self) -> I64:
        """The normalized position of each occurrence (in :attr:`hashes` order)."""
        if self._unsorted is not None:
            self._sort()
        return self._positions

    @property
    def starts(self) -> I64:
        """Where each distinct hash's occurrences start."""
        if self._unsorted is not None:
            self._sort()
        return self._starts

    @property
    def counts(self) -> I64:
        """How many occurrences each distinct hash has."""
        if self._unsorted is not None:
            self._sort()
        return self._counts

    @classmethod
    def of(cls, files: Sequence[FileSeeds | None], max_df: int) -> SeedTable:
        """The table of some files' seeds (file ids: positions in ``files``), sorted on demand."""
        parts = [(i, f) for i, f in enumerate(files) if f is not None and len(f.positions)]
        if not parts:
            return cls(np.empty(0, dtype=np.uint64), _EMPTY_I64, _EMPTY_I64, max_df)
        return cls(
            np.concatenate([f.hashes for _, f in parts]),
            np.concatenate([np.full(len(f.positions), i, dtype=np.int64) for i, f in parts]),
            np.concatenate([f.positions for _, f in parts]),
            max_df,
            lazy=True,
        )

    def lookup(self, keys: U64) -> SeedTable:
        """The occurrences of the hashes ``keys`` (a sorted table, rows in this table's order)."""
        keys = np.unique(keys)
        self._lookups += 1
        if self._unsorted is not None and self._lookups > LOOKUPS_UNSORTED:
            self._sort()  # a long-lived table asked again and again (the language server's)
        if self._unsorted is None:
            at = _ranges(
                np.searchsorted(self._hashes, keys, side="left"),
                np.searchsorted(self._hashes, keys, side="right"),
            )
            return SeedTable(self._hashes[at], self._owners[at], self._positions[at], self.max_df)
        hashes, owners, positions = self._unsorted
        if self._low is None:
            self._low = (hashes & _LOW_MASK).astype(np.int64)
        bits = np.zeros(_LOW_BITS_SIZE, dtype=bool)
        bits[(keys & _LOW_MASK).astype(np.int64)] = True
        maybe = np.flatnonzero(bits[self._low])
        if len(keys) and len(maybe):
            at = np.minimum(np.searchsorted(keys, hashes[maybe]), len(keys) - 1)
            rows = maybe[keys[at] == hashes[maybe]]
        else:
            rows = _EMPTY_I64
        # a subset in the original order, sorted stably: the sorted table's rows of these keys
        return SeedTable(hashes[rows], owners[rows], positions[rows], self.max_df)

    @property
    def boilerplate(self) -> int:
        """How many seed positions are not paired because their hash is too common."""
        return int(self.counts[self.counts > self.max_df].sum())

    def matches(self, among: Sequence[int] | None = None) -> Matches:
        """Every pair of equal seeds (clique per hash, up to ``max_df`` occurrences).

        With ``among``, only pairs with at least one side in those files.
        """
        starts, counts = self.starts, self.counts
        chosen = _chosen(among, self.owners)
        if chosen is not None:
            return self._matches_of(chosen)
        left: list[I64] = []
        right: list[I64] = []
        for size in range(2, self.max_df + 1):
            group_starts = starts[counts == size]
            if not len(group_starts):
                continue
            rows = group_starts[:, None] + np.arange(size)
            lo, hi = np.triu_indices(size, 1)
            left.append(rows[:, lo].ravel())
            right.append(rows[:, hi].ravel())
        if not left:
            return Matches.empty()
        return self._oriented(np.concatenate(left), np.concatenate(right))

    def _matches_of(self, chosen: Bools) -> Matches:
        """The pairs of equal seeds with a side in the chosen files (as :meth:`matches`).

        Each chosen occurrence is paired with the others of its hash (a pair of two chosen
        occurrences once); the pairs of hashes no chosen file has are never made.
        """
        group = np.repeat(np.arange(len(self.starts)), self.counts)
        mine = chosen[self.owners]
        pairable = (self.counts >= 2) & (self.counts <= self.max_df)
        x = np.flatnonzero(mine & pairable[group])
        if not len(x):
            return Matches.empty()
        size = self.counts[group[x]]
        first = np.repeat(self.starts[group[x]], size)
        y = first + np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size)
        x = np.repeat(x, size)
        keep = (y != x) & (~mine[y] | (y > x))
        return self._oriented(x[keep], y[keep])

    def _oriented(self, x: I64, y: I64) -> Matches:
        """The matches of occurrences ``x[k]`` and ``y[k]``, each pair in (file, position) order."""
        fa, pa, fb, pb = self.owners[x], self.positions[x], self.owners[y], self.positions[y]
        swap = (fa > fb) | ((fa == fb) & (pa > pb))
        return Matches(
            np.where(swap, fb, fa),
            np.where(swap, pb, pa),
            np.where(swap, fa, fb),
            np.where(swap, pa, pb),
        )

    def overlaid(self, keys: U64, extra: dict[int, FileSeeds], hidden: set[int]) -> SeedTable:
        """The occurrences of the hashes ``keys``, with ``extra`` files added, ``hidden`` left out.

        Matches of this small table for files whose hashes are all in ``keys`` are those of the
        whole table with those changes (the language server's unsaved buffers, which replace
        their files on disk).
        """
        keys = np.unique(keys)
        found = self.lookup(keys)
        hashes, owners, positions = found.hashes, found.owners, found.positions
        if hidden:
            keep = ~np.isin(owners, np.fromiter(hidden, dtype=np.int64))
            hashes, owners, positions = hashes[keep], owners[keep], positions[keep]
        parts = [(hashes, owners, positions)]
        for i, seeds in extra.items():
            inside = np.isin(seeds.hashes, keys)
            count = int(inside.sum())
            parts.append(
                (seeds.hashes[inside], np.full(count, i, np.int64), seeds.positions[inside])
            )
        return SeedTable(
            np.concatenate([p[0] for p in parts]),
            np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]),
            self.max_df,
        )


def _chosen(among: Sequence[int] | None, owners: I64) -> Bools | None:
    """A lookup ``file id -> wanted`` covering every owner, or None for all files."""
    if among is None:
        return None
    ids = np.asarray(list(among), dtype=np.int64)
    size = max(int(owners.max()) + 1 if len(owners) else 0, int(ids.max()) + 1 if len(ids) else 0)
    chosen = np.zeros(size, dtype=bool)
    chosen[ids] = True
    return chosen


def _ranges(lo: I64, hi: I64) -> I64:
    """The concatenation of ``range(lo[k], hi[k])`` for every k, without a Python loop."""
    counts = hi - lo
    total = int(counts.sum())
    if not total:
        return _EMPTY_I64
    out: I64 = np.repeat(lo - (np.cumsum(counts) - counts), counts) + np.arange(total)
    return out
