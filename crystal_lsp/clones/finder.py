"""Finding copied code: aligned regions, decided by CrystalBLEU, grouped without chaining.

For every language of an up-to-date :class:`~crystal_lsp.clones.index.RepoIndex`:

1. **align**: files are aligned by their normalized token streams (identifiers and literals
   abstracted, :mod:`crystal_lsp.text.views`): equal runs of non-trivial tokens (seeds,
   :mod:`crystal_lsp.clones.align.seeds`) are chained into regions that run in parallel, with gaps for
   edited lines (:mod:`crystal_lsp.clones.align.chains`), inside and across functions, so a block copied
   into a long function, or a function extended after copying, is a candidate;
2. **snap** each candidate's regions to whole lines, and to a whole unit when all of it was
   copied (:mod:`crystal_lsp.clones.align.regions`); count its *copied* tokens, aligned tokens outside
   the code that repeats by convention (:mod:`crystal_lsp.text.noise`): a candidate with too few
   is filtered under that convention's name, and counted;
3. **decide** with the similarity seam (:class:`~crystal_lsp.clones.similarity.Similarity`):
   CrystalBLEU of the two regions' normalized views (the lower direction) must reach the
   threshold, and their raw tokens must agree too (raw CrystalBLEU, or a consistent renaming);
4. **group** copies into classes around a representative (:mod:`crystal_lsp.clones.copies.classes`),
   with whole copies found by digest however often they occur (identical files, exact and renamed
   units: :mod:`crystal_lsp.clones.align.digests`), and rank them by copied tokens times similarity.

A :class:`CloneFinder` keeps, per language, the seed table of the files on disk and the pair
scores it has computed (keyed by the regions' contents, persisted by full scans), so a long-lived
caller (the language server) answers "what does this edited buffer repeat?" by aligning only the
buffer. Files given to the index as ``overrides`` (unsaved buffers, staged blobs) are aligned
against the files on disk and each other; an override may *shadow* a file on disk (the server's
buffers: ``shadow(path)`` names the file it replaces), which then takes no part.

Adapters extend it by composition: a :class:`PairScorer` computes missing pair scores (the Dask
engine ships them to workers), ``pair_filter`` spares aligning file pairs an adapter knows to be
moot (whole copies found by digest are grouped whole regardless).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from crystal_lsp.clones.align.context import (
    LanguageState,
    LocalScorer,
    PairFilter,
    PairScorer,
    Progress,
    Ref,
    Shadow,
)
from crystal_lsp.clones.align.duplicates import (
    duplicate_files,
    group_spans,
    unit_groups,
    without_spans,
)
from crystal_lsp.clones.align.pairs import Memo
from crystal_lsp.clones.align.pooled import Pool
from crystal_lsp.clones.align.seeds import SeedTable, seeds_of
from crystal_lsp.clones.align.workset import Copies, Workset
from crystal_lsp.clones.findings import Finding, LineFocus
from crystal_lsp.clones.index import RepoIndex
from crystal_lsp.clones.index.retrieval import MemoizedPostings, Postings
from crystal_lsp.clones.search import find_copies
from crystal_lsp.clones.similarity import Similarity, trivial_shingles
from crystal_lsp.text.entries import GENERATED, OK, SnippetMeta
from crystal_lsp.text.snippets import DATA

__all__ = [
    "CloneFinder",
    "LanguageResult",
    "LineFocus",
    "LocalScorer",
    "PairFilter",
    "PairScorer",
    "Progress",
    "Shadow",
]

PAIR_CACHE_LIMIT = 400_000


@dataclass
class LanguageResult:
    """Findings of one language and what it took."""

    findings: list[Finding]
    snippets: int
    candidates: int
    scored: int
    sets: str
    timings: dict[str, float] = field(default_factory=dict)
    filtered: dict[str, int] = field(default_factory=dict)
    """Candidates left out on purpose, by reason (noise kinds, repetitions, generated code)."""


class CloneFinder:
    """Finds clone classes in an up-to-date :class:`RepoIndex` (reusable across refreshes).

    ``scorer`` computes missing pair scores (default: here); ``pair_filter(path_a, path_b)``
    returning False leaves a pair of files out; ``shadow`` maps an override to the file on disk it
    replaces; ``memoize_retrieval`` remembers the answers of :meth:`retrieval`'s index.
    """

    def __init__(
        self,
        index: RepoIndex,
        *,
        scorer: PairScorer | None = None,
        pair_filter: PairFilter | None = None,
        shadow: Shadow | None = None,
        memoize_retrieval: bool = False,
    ) -> None:
        self.index = index
        self.config = index.config
        self.scorer: PairScorer = scorer if scorer is not None else LocalScorer()
        self.pair_filter = pair_filter
        self.shadow = shadow
        self.memoize_retrieval = memoize_retrieval
        self._states: dict[str, LanguageState] = {}
        self._disk: tuple[object, set[str]] | None = None
        self.memos: dict[str, Memo] = {}
        """Parsed pair records of full scans by key (:mod:`crystal_lsp.clones.align.reuse`)."""
        self.pool: Pool | None = None
        """Worker processes for chain outcomes (a one-shot scan's, :mod:`.align.pooled`)."""

    def find(
        self, focus: LineFocus | None = None, progress: Progress | None = None
    ) -> dict[str, LanguageResult]:
        """Clone classes per language; with ``focus``, only those with a region in the focus."""
        out: dict[str, LanguageResult] = {}
        files = self.index.files
        for language in self._languages():
            if focus is not None and not any(
                p in files and self.index.compared_as(files[p].entry.language) == language
                for p in focus
            ):
                continue
            out[language] = self._find_language(language, focus, progress)
        return out

    def similarity(self, language: str) -> Similarity:
        """The pair similarity of a language (shares the finder's profile and score caches)."""
        return self._state(language, None).similarity

    def retrieval(self, language: str) -> tuple[list[Ref], list[SnippetMeta], Postings]:
        """The indexed snippets of a language (files on disk) and their shingle postings."""
        state = self._state(language, None)
        if state.postings is None:
            state.refs, state.metas, arrays = [], [], []
            for path in state.paths:
                entry = self.index.files[path].entry
                for i, meta in enumerate(entry.snippets):
                    if meta.suppressed or (meta.kind == DATA and not self.config.report_data):
                        continue
                    state.refs.append((path, i))
                    state.metas.append(meta)
                    arrays.append(entry.shingles[i])
            built = state.similarity.retriever(arrays, self.config.max_df)
            state.postings = MemoizedPostings(built) if self.memoize_retrieval else built
        found = state.postings
        if isinstance(found, MemoizedPostings):
            found = found.postings
        return state.refs, state.metas, found

    def workset(self, language: str) -> Workset:
        """The files of a search of ``language``: those on disk and the index's overrides."""
        language = self.index.compared_as(language)
        return Workset.of(self, self._state(language, None), language)

    def save_scores(self) -> int:
        """Add the pair scores computed so far to those full scans keep; returns how many."""
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
    def _languages(self) -> list[str]:
        """The index's languages (:meth:`RepoIndex.languages`), those of the disk kept.

        The disk files of one ``index.files`` dict never change (a refresh makes a new dict);
        overrides come and go in it.
        """
        files = self.index.files
        if self._disk is None or self._disk[0] is not files:
            disk = {
                self.index.compared_as(s.entry.language)
                for s in files.values()
                if s.entry.status == OK and not s.override
            }
            self._disk = (files, disk)
        found = set(self._disk[1])
        found.update(
            self.index.compared_as(s.entry.language)
            for s in files.values()
            if s.override and s.entry.status == OK
        )
        return sorted(found)

    def _state(self, language: str, progress: Progress | None) -> LanguageState:
        language = self.index.compared_as(language)
        state = self._states.get(language)
        if state is not None and state.files is self.index.files and state.disk_ok:
            # the same disk files (see _languages): the S sets, which only they make, and
            # everything built of them stand
            return state
        sets = self.index.sets(language, progress)
        paths = [
            p
            for p, s in sorted(self.index.files.items())
            if self.index.compared_as(s.entry.language) == language
            and s.entry.status in (OK, GENERATED)
            and not s.override
        ]
        key = (sets.fingerprint, tuple((p, self.index.files[p].sha) for p in paths))
        state = self._states.get(language)
        if state is not None and state.key == key:
            state.files = self.index.files
            return state
        if state is not None and state.sets.fingerprint == sets.fingerprint:
            similarity, pair_cache_key = state.similarity, state.pair_cache_key
        else:
            similarity = Similarity.of(sets.raw, sets.norm, self.config, language)
            pair_cache_key = f"pairs:{language}:{sets.fingerprint}:{self.config.signature()}"
            similarity.cache = self.index.store.get(pair_cache_key) or {}
        trivial = trivial_shingles(sets.norm)
        entries = [self.index.files[p].entry for p in paths]
        duplicates = duplicate_files([(p, self.index.files[p].sha) for p in paths])
        kept = [None if i in duplicates else e for i, e in enumerate(entries)]
        groups = unit_groups(kept)
        dropped = group_spans(groups.values(), lambda i: kept[i], self.config.max_df)
        seeds = [
            without_spans(found, dropped.get(i, ()))
            for i, found in enumerate(seeds_of(entries, trivial))
        ]
        table = SeedTable.of(
            [None if i in duplicates else s for i, s in enumerate(seeds)], self.config.max_df
        )
        state = LanguageState(key, sets, paths, seeds, table, similarity, pair_cache_key, trivial)
        state.duplicates, state.dropped, state.groups = duplicates, dropped, groups
        state.files = self.index.files
        state.disk_ok = any(e.status == OK for e in entries)
        self._states[language] = state
        return state

    # ------------------------------------------------------------------ one language
    def _find_language(
        self, language: str, focus: LineFocus | None, progress: Progress | None
    ) -> LanguageResult:
        started = time.perf_counter()
        state = self._state(language, progress)
        work = Workset.of(self, state, language)
        timings = {"ngrams": time.perf_counter() - started}
        copies = find_copies(work, focus, progress)
        timings.update(copies.timings)
        if focus is None and copies.scored:
            self._persist(state, copies)
        return LanguageResult(
            copies.findings,
            work.snippet_count,
            copies.candidates,
            copies.scored,
            state.sets.fingerprint,
            timings,
            {k: v for k, v in copies.all_filtered().items() if v},
        )

    def _persist(self, state: LanguageState, copies: Copies) -> None:
        """Save the pair scores of a full scan (only pairs among current regions)."""
        current = copies.digests
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
