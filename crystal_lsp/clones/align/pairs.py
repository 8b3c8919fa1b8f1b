"""What alignment gives: accepted pairs of regions, and each file pair's outcome on record.

A :class:`RegionPair` is two regions the similarity seam accepted as copies; a
:class:`PairRecord` is everything aligning one pair of files gave (its copies, its candidates
left out on purpose by reason), kept so that a later search can reuse the pairs whose files did
not change (:mod:`crystal_lsp.clones.align.reuse`, whose parsed form is a :class:`Memo`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

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
    """A full scan's pair records, parsed (kept in memory by the finder between searches)."""

    files: dict[str, str]
    records: dict[PairKey, PairRecord]
