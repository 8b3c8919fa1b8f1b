"""What a full scan aligns afresh and what it takes over from the previous scan's pair records.

Made by :func:`crystal_lsp.clones.align.reuse.plan`; read by the workset and the search.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from crystal_lsp.clones.align.pairs import Memo, PairKey, PairRecord, RegionPair
from crystal_lsp.clones.align.seeds import I64, Bools


@dataclass
class Plan:
    """What a full scan aligns afresh, and the pair records it takes over.

    Those are the memo's records but the ``dropped`` ones (of pairs with a changed file).
    """

    affected: list[int]
    """Files whose seeds changed: every pair of theirs is aligned afresh."""
    memo: Memo
    dropped: set[PairKey]
    crossing: set[tuple[int, int]]
    """Pairs of other files (ids, in order) that share a seed hash whose count crossed
    ``max-df``: aligned afresh too."""
    crossed: frozenset[tuple[int, bool]] = frozenset()
    """The seed hashes that crossed, each with whether it pairs now: with the memo, all the
    alignment of the crossing pairs depends on."""

    @property
    def owners(self) -> list[int]:
        """The files of the crossing pairs."""
        return sorted({i for pair in self.crossing for i in pair})

    def keep(self, fa: I64, fb: I64) -> Bools:
        """Which pairs of files (``fa < fb``) a search of this plan aligns."""
        return self.keep_changed(fa, fb) | self.keep_crossing(fa, fb)

    def keep_changed(self, fa: I64, fb: I64) -> Bools:
        """The pairs of files with a file whose seeds changed."""
        keep: Bools = np.isin(fa, self.affected) | np.isin(fb, self.affected)
        return keep

    def keep_crossing(self, fa: I64, fb: I64) -> Bools:
        """The pairs of other files that share a seed hash that crossed ``max-df``."""
        wanted = np.array(sorted(a * (1 << 32) + b for a, b in self.crossing), np.int64)
        keep: Bools = np.isin(fa * (1 << 32) + fb, wanted)
        return keep

    @property
    def records(self) -> dict[PairKey, PairRecord]:
        """The records taken over (a new dict: for a full scan, which saves them again)."""
        return {k: r for k, r in self.memo.records.items() if k not in self.dropped}

    def accepted(self) -> list[RegionPair]:
        """The accepted pairs of the records taken over."""
        return self.memo.accepted(self.dropped)

    def totals(self) -> tuple[int, Counter[str]]:
        """Candidates and filtered candidates (by reason) of the records taken over."""
        return self.memo.totals(self.dropped)
