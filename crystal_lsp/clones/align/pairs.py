"""What alignment gives: accepted pairs of regions, and each file pair's outcome on record.

A :class:`RegionPair` is two regions the similarity seam accepted as copies; a
:class:`PairRecord` is everything aligning one pair of files gave (its copies, its candidates
left out on purpose by reason), kept so that a later search can reuse the pairs whose files did
not change (:mod:`crystal_lsp.clones.align.reuse`, whose parsed form is a :class:`Memo`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Set
from dataclasses import dataclass, field
from typing import Any

from crystal_lsp.clones.align.regions import Region

PairKey = tuple[str, str]
"""The paths of a pair of files, in order."""


@dataclass(frozen=True)
class RegionPair:
    """Two regions accepted as copies, with their scores and the copied code they share."""

    a: Region
    b: Region
    similarity: float
    crystalbleu: float
    copied: int
    """Copied non-trivial tokens (aligned, outside noise): what removing a copy saves."""

    @property
    def gain(self) -> float:
        """What a reviewer gains from this pair: copied tokens times similarity."""
        return self.copied * self.similarity


@dataclass
class PairRecord:
    """What aligning one pair of files gave."""

    accepted: list[RegionPair] = field(default_factory=list)
    filtered: Counter[str] = field(default_factory=Counter)
    candidates: int = 0


@dataclass
class Memo:
    """A full scan's pair records, parsed (kept in memory by the finder between searches).

    What searches read of all records -- which touch a file, every accepted pair, the totals --
    is gathered once (the records are not changed once kept).
    """

    files: dict[str, str]
    records: dict[PairKey, PairRecord]
    spans: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    """Per file, the normalized spans of over-copied units whose seeds it left out."""
    stored: dict[str, Any] = field(default_factory=dict, repr=False)
    """The stored (JSON) form of each record, by its stored key: a record taken over is saved
    again as it was read, not encoded anew."""
    _by_path: dict[str, list[PairKey]] | None = field(default=None, init=False, repr=False)
    _accepted: list[tuple[PairKey, RegionPair]] | None = field(default=None, init=False, repr=False)
    _totals: tuple[int, Counter[str]] | None = field(default=None, init=False, repr=False)
    _links: dict[str, list[tuple[PairKey, str]]] | None = field(
        default=None, init=False, repr=False
    )
    _firsts: dict[str, list[int]] | None = field(default=None, init=False, repr=False)

    def links(self, path: str) -> list[tuple[PairKey, str]]:
        """The accepted pairs with a region in ``path``: the record's key, the other path."""
        if self._links is None:
            self._links = {}
            for key, pair in self._all_accepted():
                a, b = pair.a.path, pair.b.path
                self._links.setdefault(a, []).append((key, b))
                self._links.setdefault(b, []).append((key, a))
        return self._links.get(path, [])

    def accepted_in(self, paths: Set[str], without: Set[PairKey]) -> list[RegionPair]:
        """:meth:`accepted` of the pairs whose first region lies in ``paths`` (in order)."""
        every = self._all_accepted()
        if self._firsts is None:
            self._firsts = {}
            for k, (_, pair) in enumerate(every):
                self._firsts.setdefault(pair.a.path, []).append(k)
        found = sorted(k for path in paths for k in self._firsts.get(path, ()))
        return [every[k][1] for k in found if every[k][0] not in without]

    def _all_accepted(self) -> list[tuple[PairKey, RegionPair]]:
        if self._accepted is None:
            self._accepted = [(k, p) for k, r in self.records.items() for p in r.accepted]
        return self._accepted

    def touching(self, paths: Iterable[str]) -> set[PairKey]:
        """The keys of the records of pairs with a file among ``paths``."""
        if self._by_path is None:
            self._by_path = {}
            for key in self.records:
                for path in set(key):
                    self._by_path.setdefault(path, []).append(key)
        return {key for path in paths for key in self._by_path.get(path, ())}

    def accepted(self, without: Set[PairKey] = frozenset()) -> list[RegionPair]:
        """Every accepted pair of the records (in their order), but those of ``without``."""
        return [p for key, p in self._all_accepted() if key not in without]

    def totals(self, without: Set[PairKey] = frozenset()) -> tuple[int, Counter[str]]:
        """Candidates and filtered candidates (by reason) of the records, but ``without``'s."""
        if self._totals is None:
            filtered: Counter[str] = Counter()
            for r in self.records.values():
                filtered.update(r.filtered)
            self._totals = (sum(r.candidates for r in self.records.values()), filtered)
        candidates, filtered = self._totals[0], Counter(self._totals[1])
        for key in without:
            record = self.records.get(key)
            if record is not None:
                candidates -= record.candidates
                filtered.subtract(record.filtered)
        return candidates, filtered
