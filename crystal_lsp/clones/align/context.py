"""What a search runs in: its finder's settings and helpers, and a language's kept state.

The align layer sees the clone finder (:class:`crystal_lsp.clones.finder.CloneFinder`) only
through :class:`Finder`, so that the finder builds on this layer and not the other way round.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from crystal_lsp.clones.align.duplicates import Member
from crystal_lsp.clones.align.pairs import Memo
from crystal_lsp.clones.align.pooled import Pool
from crystal_lsp.clones.align.seeds import I64, Bools, FileSeeds, SeedTable
from crystal_lsp.clones.index import RepoIndex
from crystal_lsp.clones.index.languagesets import LanguageSets
from crystal_lsp.clones.index.retrieval import MemoizedPostings, Postings
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.similarity import Item, Similarity
from crystal_lsp.text.entries import SnippetMeta
from crystal_lsp.text.fingerprints import U64

Progress = Callable[[str, int, int], None]
PairFilter = Callable[[str, str], bool]
"""``(path a, path b) -> False`` to leave a pair of files out."""
Shadow = Callable[[str], "str | None"]
"""``override path -> the path on disk it replaces`` (None: it replaces nothing)."""
Ref = tuple[str, int]


class PairScorer(Protocol):
    """Computes the scores of pairs missing from a similarity's cache."""

    def fill(
        self,
        similarity: Similarity,
        missing: Mapping[str, tuple[Item, Item]],
        progress: Callable[[int, int], None] | None,
    ) -> None:
        """Put :meth:`Similarity.pair_scores` of every ``key: (lo, hi)`` into its cache."""


class LocalScorer:
    """Scores missing pairs in this process."""

    def fill(
        self,
        similarity: Similarity,
        missing: Mapping[str, tuple[Item, Item]],
        progress: Callable[[int, int], None] | None,
    ) -> None:
        """See :meth:`PairScorer.fill`."""
        for done, (key, (lo, hi)) in enumerate(missing.items(), 1):
            similarity.cache[key] = similarity.pair_scores(lo, hi)
            if progress is not None and done % 500 == 0:
                progress(done, len(missing))


class Finder(Protocol):
    """What a search needs of its clone finder."""

    index: RepoIndex
    config: ScanConfig
    scorer: PairScorer
    pair_filter: PairFilter | None
    shadow: Shadow | None
    memos: dict[str, Memo]
    """Parsed pair records of full scans by key (:mod:`crystal_lsp.clones.align.reuse`)."""
    pool: Pool | None
    """Worker processes for chain outcomes (:mod:`crystal_lsp.clones.align.pooled`), if any."""


@dataclass
class LanguageState:
    """One language's files on disk as the finder keeps them between searches."""

    key: tuple[object, ...]
    sets: LanguageSets
    paths: list[str]
    seeds: list[FileSeeds]
    table: SeedTable
    similarity: Similarity
    pair_cache_key: str
    trivial: U64
    """Hashes of the normalized S set's 4-grams: no seed starts on one."""
    postings: Postings | MemoizedPostings | None = None
    refs: list[Ref] = field(default_factory=list)
    metas: list[SnippetMeta] = field(default_factory=list)
    noise: dict[int, Bools] = field(default_factory=dict)
    """Noise masks of the files on disk by id (see :meth:`Workset.noise`), kept across searches."""
    noise_raw: dict[int, Bools] = field(default_factory=dict)
    duplicates: set[int] = field(default_factory=set)
    """Disk files whose content an earlier disk file has: their seeds are not in ``table``."""
    dropped: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    """Disk files' spans of over-copied units whose seeds are dropped (:mod:`.duplicates`)."""
    groups: dict[str, list[Member]] = field(default_factory=dict)
    """The units of the disk files that are not duplicates, by normalized digest."""
    _by_sha: dict[str, list[int]] | None = None
    files: object = None
    """The ``index.files`` dict the state was made of (its disk files never change)."""
    disk_ok: bool = False
    """Whether a disk file of the language is ``ok`` (then overrides do not move the S sets)."""
    ids: dict[str, int] | None = None
    """Disk file ids by path."""
    crossing: dict[tuple[int, frozenset[tuple[int, bool]]], tuple[object, Any, Any]] = field(
        default_factory=dict
    )
    """Outcomes of crossing pairs by memo and crossed hashes (``crystal_lsp.clones.search``)."""
    memo_diff: tuple[object, dict[str, str], set[str], set[str]] | None = None
    facts: tuple[Bools, I64, dict[str, int]] | None = None
    """Per disk file: generated, and a number per content digest (``Workset.keep_pairs``)."""
    chains: dict[str, tuple[Any, Any, Any]] = field(default_factory=dict)
    """By override path: its last searched entry and tokens, and its chains' outcomes
    (:mod:`crystal_lsp.clones.align.incremental`)."""
    """A memo, then the disk files' digests, those that differ from the memo's, and the memo's
    files that are gone (:func:`crystal_lsp.clones.align.reuse.plan`)."""
    units: dict[str, list[tuple[int, int]]] | None = None
    """The snippets of the disk files by normalized digest: ``(file, snippet)`` in order."""
    snippet_counts: list[int] | None = None
    """Per disk file, its snippets that may be reported (see ``Workset.snippet_count``)."""
    noise_prefix: tuple[npt.NDArray[np.int32], I64] | None = None
    """Prefix sums of every disk file's normalized noise mask, one after the other, and where
    each file's sums begin (see ``Workset.run_weights``)."""
    reads: object = None
    """What findings read off tokens, by content (``crystal_lsp.clones.copies.reads``)."""

    def by_sha(self, sha: Callable[[int], str]) -> dict[str, list[int]]:
        """The disk files by content digest (``sha(i)``: the digest of file ``i``)."""
        if self._by_sha is None:
            self._by_sha = {}
            for i in range(len(self.paths)):
                self._by_sha.setdefault(sha(i), []).append(i)
        return self._by_sha
