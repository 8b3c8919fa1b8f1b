"""Deciding which snippets are copies of each other, and grouping them into clone classes.

For every language: retrieve candidate pairs (:mod:`retrieval`), score each with CrystalBLEU in
both directions on two views (the raw tokens with the raw S set, and the normalized view with its
own S set, see :mod:`views`), and keep the pairs whose *similarity* -- the lower of the two
directions of the normalized-view CrystalBLEU -- reaches the threshold.

Why this decision: a consistent renaming leaves the normalized view unchanged, so renamed copies
score 1 where raw CrystalBLEU gives them a median of about 0.35; an inserted and a deleted
statement cost a few 4-grams in each direction. Taking the lower direction keeps a small snippet
contained in a large one from passing as its copy. Removing each view's S set keeps the
structure every function shares (``ID = ID ( ID )``) from counting as similarity.

Pairs nested in a reported pair are dropped and the rest grouped into clone classes
(:mod:`crystal_lsp.clones.grouping`). How two snippets compare is the one seam
:class:`crystal_lsp.clones.similarity.Similarity`.

A :class:`CloneFinder` keeps, per language, the retrieval index of the files on disk and a
:class:`~crystal_lsp.clones.similarity.Similarity` with the scores of every pair it has seen
(keyed by both snippets' contents, persisted by full scans) and an LRU of n-gram profiles, so that a long-lived caller (the language server) answers "what does this
edited buffer duplicate?" by scoring only the pairs that changed. Files given to the index as
``overrides`` (unsaved buffers, staged blobs) are kept out of that retrieval index and compared
with it and with each other.

Adapters extend it by composition: a :class:`PairScorer` computes the missing pair scores (the
Dask engine ships them to workers), ``pair_filter`` excludes pairs an adapter knows to be moot
(the language server: a buffer and its own file on disk), ``memoize_retrieval`` remembers
retrieval answers for a caller that asks the same questions repeatedly.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from crystal_lsp.clones.findings import Finding
from crystal_lsp.clones.grouping import Ref, Scores, drop_nested, group
from crystal_lsp.clones.index import RepoIndex
from crystal_lsp.clones.languagesets import LanguageSets
from crystal_lsp.clones.retrieval import MemoizedPostings, Postings, volatile_pairs
from crystal_lsp.clones.similarity import Code, Item, Similarity
from crystal_lsp.text.entries import GENERATED, OK, SnippetMeta
from crystal_lsp.text.fingerprints import U64
from crystal_lsp.text.snippets import DATA

MIN_SHARE = 0.35
# Candidates are every pair sharing MIN_SHARE of the smaller snippet's shingles: a property of
# the two snippets alone, so incremental and full scans see the same pairs.
MAX_CANDIDATES = 1_000_000
PAIR_CACHE_LIMIT = 400_000
Progress = Callable[[str, int, int], None]
PairFilter = Callable[[str, str], bool]
"""``(path a, path b) -> False`` to leave a pair out (see :class:`CloneFinder`)."""


class PairScorer(Protocol):
    """Computes the scores of pairs missing from a similarity's cache."""

    def fill(
        self,
        similarity: Similarity,
        missing: Mapping[str, tuple[Item, Item]],
        progress: Callable[[int, int], None] | None,
    ) -> None:
        """Put :meth:`Similarity.four_scores` of every ``key: (lo, hi)`` into its cache."""


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
            similarity.cache[key] = similarity.four_scores(lo, hi)
            if progress is not None and done % 500 == 0:
                progress(done, len(missing))


@dataclass
class LanguageResult:
    """Findings of one language and what it took."""

    findings: list[Finding]
    snippets: int
    candidates: int
    scored: int
    sets: str
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class _Snippets:
    refs: list[Ref]
    metas: list[SnippetMeta]
    shingles: list[U64]


@dataclass
class _LanguageState:
    key: tuple[object, ...]
    sets: LanguageSets
    base: _Snippets
    postings: Postings | MemoizedPostings
    similarity: Similarity
    pair_cache_key: str


class CloneFinder:
    """Finds clone classes in an up-to-date :class:`RepoIndex` (reusable across refreshes).

    ``scorer`` computes missing pair scores (default: here); ``pair_filter(path_a, path_b)``
    returning False leaves a pair out; ``memoize_retrieval`` remembers retrieval answers.
    """

    def __init__(
        self,
        index: RepoIndex,
        *,
        scorer: PairScorer | None = None,
        pair_filter: PairFilter | None = None,
        memoize_retrieval: bool = False,
    ) -> None:
        self.index = index
        self.config = index.config
        self.scorer: PairScorer = scorer if scorer is not None else LocalScorer()
        self.pair_filter = pair_filter
        self.memoize_retrieval = memoize_retrieval
        self._states: dict[str, _LanguageState] = {}

    def find(
        self,
        focus: Mapping[str, set[int] | None] | None = None,
        progress: Progress | None = None,
    ) -> dict[str, LanguageResult]:
        """Clone classes per language; with ``focus``, only those involving focus snippets.

        ``focus`` maps paths to the snippet indices to look at (``None``: all of the file's).
        """
        out: dict[str, LanguageResult] = {}
        for language in self.index.languages():
            if focus is not None and not any(
                p in self.index.files and self.index.files[p].entry.language == language
                for p in focus
            ):
                continue
            out[language] = self._find_language(language, focus, progress)
        return out

    def similarity(self, language: str) -> Similarity:
        """The pair similarity of a language (shares the finder's profile and score caches)."""
        return self._state(language, None).similarity

    def retrieval(self, language: str) -> tuple[list[Ref], list[SnippetMeta], Postings]:
        """The indexed snippets of a language (files on disk) and their retrieval index."""
        state = self._state(language, None)
        postings = state.postings
        if isinstance(postings, MemoizedPostings):
            postings = postings.postings
        return state.base.refs, state.base.metas, postings

    def save_scores(self) -> int:
        """Add the pair scores computed so far to those full scans keep; returns how many.

        The next start (of the server, ``crystal-lsp scan`` or the hook) then reuses them.
        """
        saved = 0
        for state in self._states.values():
            scores = state.similarity.cache
            if not scores:
                continue
            stored = self.index.store.get(state.pair_cache_key) or {}
            if isinstance(stored, dict) and len(stored) < PAIR_CACHE_LIMIT:
                stored.update(scores)
                self.index.store.set(state.pair_cache_key, stored)
                saved += len(scores)
        return saved

    # ------------------------------------------------------------------ state
    def _snippets(self, language: str, volatile: bool) -> _Snippets:
        refs: list[Ref] = []
        metas: list[SnippetMeta] = []
        arrays: list[U64] = []
        for path, state in sorted(self.index.files.items()):
            entry = state.entry
            if (
                entry.language != language
                or entry.status not in (OK, GENERATED)
                or state.override != volatile
            ):
                continue
            for i, meta in enumerate(entry.snippets):
                if meta.suppressed or (meta.kind == DATA and not self.config.report_data):
                    continue
                refs.append((path, i))
                metas.append(meta)
                arrays.append(entry.shingles[i])
        return _Snippets(refs, metas, arrays)

    def _state(self, language: str, progress: Progress | None) -> _LanguageState:
        sets = self.index.sets(language, progress)
        files_key = tuple(
            (p, s.sha)
            for p, s in sorted(self.index.files.items())
            if s.entry.language == language and not s.override
        )
        key = (sets.fingerprint, files_key)
        state = self._states.get(language)
        if state is not None and state.key == key:
            return state
        base = self._snippets(language, volatile=False)
        if state is not None and state.sets.fingerprint == sets.fingerprint:
            similarity, pair_cache_key = state.similarity, state.pair_cache_key
        else:
            similarity = Similarity.of(sets.raw, sets.norm, self.config, language)
            pair_cache_key = f"pairs:{language}:{sets.fingerprint}:{self.config.signature()}"
            similarity.cache = self.index.store.get(pair_cache_key) or {}
        retriever = similarity.retriever(base.shingles, self.config.max_df)
        postings = MemoizedPostings(retriever) if self.memoize_retrieval else retriever
        state = _LanguageState(key, sets, base, postings, similarity, pair_cache_key)
        self._states[language] = state
        return state

    # ------------------------------------------------------------------ one language
    def _find_language(
        self, language: str, focus: Mapping[str, set[int] | None] | None, progress: Progress | None
    ) -> LanguageResult:
        timings: dict[str, float] = {}
        started = time.perf_counter()
        state = self._state(language, progress)
        extra = self._snippets(language, volatile=True)
        # snippet ids: base snippets first, then the volatile ones
        refs = state.base.refs + extra.refs
        metas = state.base.metas + extra.metas
        shingles = state.base.shingles + extra.shingles
        offset = len(state.base.refs)
        timings["ngrams"] = time.perf_counter() - started

        started = time.perf_counter()
        pairs = self._candidates(state, refs, shingles, offset, focus)
        pairs = [(a, b) for a, b in pairs if self._comparable(refs[a], refs[b], metas[a], metas[b])]
        timings["retrieval"] = time.perf_counter() - started

        started = time.perf_counter()
        scores, scored = self._score(language, state, refs, metas, pairs, progress)
        if focus is None and scored:
            self._persist(state, metas)
        elif focus is not None:
            scored += self._close_classes(
                language, state, refs, metas, shingles, offset, focus, scores
            )
        timings["scoring"] = time.perf_counter() - started

        started = time.perf_counter()
        threshold = self.config.threshold
        kept = {pair: s for pair, s in scores.items() if min(s[0], s[1]) >= threshold}
        findings = group(language, drop_nested(kept, refs, metas), refs, metas)
        timings["grouping"] = time.perf_counter() - started
        return LanguageResult(
            findings, len(refs), len(pairs), scored, state.sets.fingerprint, timings
        )

    def _close_classes(
        self,
        language: str,
        state: _LanguageState,
        refs: list[Ref],
        metas: list[SnippetMeta],
        shingles: list[U64],
        offset: int,
        focus: Mapping[str, set[int] | None],
        scores: dict[tuple[int, int], Scores],
    ) -> int:
        """Extend a focused scan to whole clone classes (adds to ``scores``; returns pairs scored).

        A focused scan first scores only pairs with a focus snippet. The copies it finds may have
        further copies, and their pairs decide the class's members and score in a full scan, so
        every snippet reached is queried in turn until no new copy turns up.
        """
        threshold = self.config.threshold

        def copies(pairs: Iterable[tuple[int, int]]) -> set[int]:
            return {
                i
                for pair in pairs
                if min(scores[pair][0], scores[pair][1]) >= threshold
                for i in pair
            }

        asked = set(_focused(refs, focus))
        frontier = copies(scores) - asked
        scored = 0
        while frontier:
            asked |= frontier
            wanted: dict[str, set[int] | None] = {}
            for i in frontier:
                path, k = refs[i]
                entry = wanted.setdefault(path, set())
                assert entry is not None
                entry.add(k)
            found = self._candidates(state, refs, shingles, offset, wanted)
            fresh = [
                (a, b)
                for a, b in found
                if (a, b) not in scores and self._comparable(refs[a], refs[b], metas[a], metas[b])
            ]
            more, count = self._score(language, state, refs, metas, fresh, None)
            scores.update(more)
            scored += count
            frontier = copies(more) - asked
        return scored

    def _candidates(
        self,
        state: _LanguageState,
        refs: list[Ref],
        shingles: list[U64],
        offset: int,
        focus: Mapping[str, set[int] | None] | None,
    ) -> list[tuple[int, int]]:
        top = MAX_CANDIDATES
        found: set[tuple[int, int]] = set()
        if focus is None:
            a, b, _ = state.postings.all_pairs(MIN_SHARE, top)
            found.update(zip(a.tolist(), b.tolist()))
            wanted = list(range(offset, len(refs)))
        else:
            wanted = _focused(refs, focus)
        for i in wanted:
            owners, _ = state.postings.query(
                shingles[i], MIN_SHARE, top, exclude=i if i < offset else -1
            )
            for j in owners.tolist():
                found.add((min(i, j), max(i, j)))
        # volatile snippets against each other (a buffer's own copies, staged files together)
        found.update(volatile_pairs(shingles, wanted, range(offset, len(refs)), MIN_SHARE))
        return sorted(found)

    def _comparable(self, ra: Ref, rb: Ref, ma: SnippetMeta, mb: SnippetMeta) -> bool:
        files = self.index.files
        if files[ra[0]].entry.status == GENERATED and files[rb[0]].entry.status == GENERATED:
            return False  # generated code repeating itself is what generators do
        if self.pair_filter is not None and not self.pair_filter(ra[0], rb[0]):
            return False
        if ra[0] != rb[0]:
            return True
        if not self.config.same_file:
            return False
        return (
            ma.end <= mb.start or mb.end <= ma.start
        )  # nested or overlapping snippets are not copies

    # ------------------------------------------------------------------ scoring
    def _item(self, ref: Ref, meta: SnippetMeta) -> Item:
        def load() -> Code:
            heavy = self.index.heavy(ref[0])
            return Code(heavy.texts[meta.start : meta.end], heavy.cats[meta.start : meta.end])

        return meta.sha, load

    def _score(
        self,
        language: str,
        state: _LanguageState,
        refs: list[Ref],
        metas: list[SnippetMeta],
        pairs: Sequence[tuple[int, int]],
        progress: Progress | None,
    ) -> tuple[dict[tuple[int, int], Scores], int]:
        """The scores of candidate pairs (computing those not cached); and how many were new."""
        similarity = state.similarity
        missing: dict[str, tuple[Item, Item]] = {}
        for a, b in pairs:
            key, forward = similarity.pair_key(metas[a].sha, metas[b].sha)
            if key in missing or similarity.cached(metas[a].sha, metas[b].sha) is not None:
                continue
            lo, hi = (a, b) if forward else (b, a)
            missing[key] = (self._item(refs[lo], metas[lo]), self._item(refs[hi], metas[hi]))
        if missing:
            report = None
            if progress is not None:
                report = lambda done, total: progress(f"scoring ({language})", done, total)  # noqa: E731
            self.scorer.fill(similarity, missing, report)
        out: dict[tuple[int, int], Scores] = {}
        for a, b in pairs:
            found = similarity.cached(metas[a].sha, metas[b].sha)
            assert found is not None, "the scorer left a pair unscored"
            out[(a, b)] = found
        return out, len(missing)

    def _persist(self, state: _LanguageState, metas: list[SnippetMeta]) -> None:
        """Save the pair scores of a full scan (only pairs among current snippets)."""
        current = {m.sha for m in metas}
        cache = state.similarity.cache
        kept = {
            k: v
            for k, v in cache.items()
            if k.split("|", 1)[0] in current and k.split("|", 1)[1] in current
        }
        if len(kept) > PAIR_CACHE_LIMIT:
            kept = dict(list(kept.items())[-PAIR_CACHE_LIMIT:])
        cache.clear()
        cache.update(kept)
        self.index.store.set(state.pair_cache_key, kept)


def _focused(refs: list[Ref], focus: Mapping[str, set[int] | None]) -> list[int]:
    """The snippet ids a focus selects."""
    return [
        i
        for i, (path, k) in enumerate(refs)
        if path in focus and (focus[path] is None or k in focus[path])  # type: ignore[operator]
    ]
