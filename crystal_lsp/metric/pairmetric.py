"""What a pairwise metric is: its settings, the items it scores, and the protocol it follows.

Kept apart from :mod:`~crystal_lsp.metric.registry` so that the metrics the registry builds
lazily (:mod:`~crystal_lsp.metric.codebleu`) name these types without importing the registry
back (an import circle).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import TriviallySharedSet
from crystal_lsp.text.tokens import Tokens


@dataclass(frozen=True)
class MetricConfig:
    """Settings shared by all metrics of one evaluation."""

    sset: TriviallySharedSet | None = None
    smoothing: Smoothing = field(default_factory=Smoothing)
    max_n: int = 4
    language: str = "-"


@dataclass(frozen=True)
class PreparedItem:
    """What metrics may use of an item: its code and its tokens."""

    code: str
    tokens: Tokens


class PairMetric(Protocol):
    """A similarity metric over prepared items, addressed by index."""

    name: str

    @property
    def signature(self) -> str:
        """What the scores depend on."""
        ...

    def prepare(self, items: Sequence[PreparedItem | None]) -> None:
        """Precompute whatever per-item data scoring needs (``None``: item not used)."""
        ...

    def score(self, hyp: int, refs: Sequence[int]) -> float:
        """Similarity of item ``hyp`` to the items ``refs`` (higher is more similar)."""
        ...

    def corpus(self, pairs: Sequence[tuple[int, Sequence[int]]]) -> float:
        """One score for a set of pairs (corpus-level where the metric defines one)."""
        ...
