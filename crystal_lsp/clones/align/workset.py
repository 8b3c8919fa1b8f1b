"""One language's files as one clone search sees them, and the search itself.

A :class:`Workset` is the files on disk of a language (with their seed table, kept by the
finder) plus the overrides of this search (unsaved buffers, staged blobs), minus the files on
disk an override shadows. :func:`find_copies` runs the steps of :mod:`crystal_lsp.clones.finder`
on it: align, snap, decide, group. A focused search aligns the focus files first, then every
file a copy reached, until no new file turns up, so its classes are those a full search reports.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from crystal_lsp.clones.align.candidates import Side
from crystal_lsp.clones.align.chains import Runs
from crystal_lsp.clones.align.context import Finder, LanguageState
from crystal_lsp.clones.align.duplicates import duplicate_files, overcopied_spans, without_spans
from crystal_lsp.clones.align.pairs import PairKey, PairRecord
from crystal_lsp.clones.align.regions import Region, header_prefix
from crystal_lsp.clones.align.seeds import (
    I64,
    Bools,
    FileSeeds,
    SeedTable,
    noise_mask,
    raw_noise_mask,
)
from crystal_lsp.clones.similarity import Code, Item, Similarity
from crystal_lsp.text.entries import GENERATED, OK
from crystal_lsp.text.snippets import DATA

GENERATED_PAIR = "generated"
NO_SEEDS = FileSeeds(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.uint64))


@dataclass
class Workset:
    """The files of one search (module docstring); file ids index ``paths``."""

    finder: Finder
    state: LanguageState
    paths: list[str]
    extra: dict[int, FileSeeds]
    hidden: set[int]
    ids: dict[str, int] = field(default_factory=dict)
    duplicates: set[int] = field(default_factory=set)
    """Files whose content another file of the search has (:mod:`.duplicates`): not aligned."""
    changed: dict[int, FileSeeds] = field(default_factory=dict)
    """Disk files whose seeds in this search are not those of the language state's table."""
    _sides: dict[int, Side] = field(default_factory=dict)
    _noise: dict[int, Bools] = field(default_factory=dict)
    _noise_raw: dict[int, Bools] = field(default_factory=dict)

    @classmethod
    def of(cls, finder: Finder, state: LanguageState, language: str) -> Workset:
        """The disk files of ``state`` and the index's overrides of ``language``."""
        files = finder.index.files
        paths = list(state.paths)
        extra: dict[int, FileSeeds] = {}
        hidden: set[int] = set()
        disk = {p: i for i, p in enumerate(paths)}
        for path, file in sorted(files.items()):
            entry = file.entry
            if not file.override or entry.language != language:
                continue
            if entry.status not in (OK, GENERATED):
                continue
            extra[len(paths)] = FileSeeds.of(entry, state.trivial)
            paths.append(path)
            replaced = finder.shadow(path) if finder.shadow is not None else None
            if replaced is not None and replaced in disk:
                hidden.add(disk[replaced])
        work = cls(finder, state, paths, extra, hidden)
        work.ids = {p: i for i, p in enumerate(paths) if i not in hidden}
        if extra or hidden:
            work._own_duplicates()
        else:
            work.duplicates = set(state.duplicates)
        return work

    def _own_duplicates(self) -> None:
        """Duplicates of a search with overrides: identical files, over-copied units.

        The language state's table was made for the files on disk; a disk file whose seeds
        differ in this search (its original is hidden, a group of units crossed the count that
        makes it over-copied) takes part with its own seeds, as an override does.
        """
        files = self.finder.index.files
        ids = sorted(self.ids.values())
        keys = [
            (f"{int(i in self.extra)}{self.paths[i].lstrip(chr(0))}", files[self.paths[i]].sha)
            for i in ids
        ]
        self.duplicates = {ids[k] for k in duplicate_files(keys)}
        entries = [None if i in self.duplicates else files[self.paths[i]].entry for i in ids]
        spans = overcopied_spans(entries, self.finder.config.max_df)
        state = self.state
        for k, i in enumerate(ids):
            wanted = spans.get(k, [])
            if i in self.extra:
                self.extra[i] = without_spans(self.extra[i], wanted)
            elif i not in self.duplicates and (
                i in state.duplicates or wanted != state.dropped.get(i, [])
            ):
                entry = files[self.paths[i]].entry
                self.changed[i] = without_spans(FileSeeds.of(entry, state.trivial), wanted)

    @property
    def similarity(self) -> Similarity:
        """The language's similarity."""
        return self.state.similarity

    @property
    def snippet_count(self) -> int:
        """Indexed snippets of the search's files that may be reported (not data, suppressed)."""
        files = self.finder.index.files
        report_data = self.finder.config.report_data
        return sum(
            1
            for i in self.ids.values()
            for m in files[self.paths[i]].entry.snippets
            if not m.suppressed and (report_data or m.kind != DATA)
        )

    def seeds(self, i: int) -> FileSeeds:
        """The seeds of file ``i`` (none for a duplicate of another file)."""
        if i in self.duplicates:
            return NO_SEEDS
        if i in self.extra:
            return self.extra[i]
        return self.changed.get(i, self.state.seeds[i])

    def side(self, i: int) -> Side:
        """What a candidate needs of file ``i`` (tokens loaded on first use)."""
        found = self._sides.get(i)
        if found is None:
            path = self.paths[i]
            entry = self.finder.index.files[path].entry
            heavy = self.finder.index.heavy(path)
            found = self._sides[i] = Side(
                path, entry, heavy, self.noise(i), header_prefix(entry), self.noise_raw(i)
            )
        return found

    def run_weights(self, runs: Runs) -> I64:
        """Each run's tokens outside noise (on its first file): what it is worth to a chain."""
        weight: I64 = runs.length.copy()
        if not len(weight):
            return weight
        starts = np.flatnonzero(np.r_[True, runs.fa[1:] != runs.fa[:-1]])
        ends = np.r_[starts[1:], len(weight)]
        for b, e in zip(starts.tolist(), ends.tolist()):
            noise = self.noise(int(runs.fa[b]))
            if not noise.any():
                continue
            prefix = np.r_[0, np.cumsum(noise)]
            lo = np.minimum(runs.i0[b:e], len(noise))
            hi = np.minimum(runs.i0[b:e] + runs.length[b:e], len(noise))
            weight[b:e] -= prefix[hi] - prefix[lo]
        return weight

    def noise(self, i: int) -> Bools:
        """Per normalized token of file ``i``: inside noise (no tokens loaded).

        Data tables are noise unless the settings ask for them (``report_data``).
        """
        # the masks of files on disk are kept by the language state, across searches
        cache = self.state.noise if i < len(self.state.paths) else self._noise
        if i not in cache:
            entry = self.finder.index.files[self.paths[i]].entry
            cache[i] = noise_mask(entry, raw=self.noise_raw(i))
        return cache[i]

    def noise_raw(self, i: int) -> Bools:
        """Per raw token of file ``i``: inside noise (as :meth:`noise`)."""
        cache = self.state.noise_raw if i < len(self.state.paths) else self._noise_raw
        if i not in cache:
            ignore = (DATA,) if self.finder.config.report_data else ()
            entry = self.finder.index.files[self.paths[i]].entry
            cache[i] = raw_noise_mask(entry, ignore)
        return cache[i]

    def suppressed(self, i: int, region: Region) -> bool:
        """Whether a region lies mostly in a unit marked ``crystal: ignore`` (or its file is)."""
        for meta in self.finder.index.files[self.paths[i]].entry.snippets:
            if meta.suppressed and 2 * region.overlap_tokens(meta.start, meta.end) >= region.tokens:
                return True
        return False

    def table(self, among: Sequence[int] | None) -> SeedTable:
        """The seed table a search of ``among`` (None: every file) pairs seeds in."""
        if not self.extra and not self.hidden and among is None:
            return self.state.table
        if among is None:
            seeds = [None if i in self.hidden else self.seeds(i) for i in range(len(self.paths))]
            return SeedTable.of(seeds, self.finder.config.max_df)
        keys = [self.seeds(i).hashes for i in among]
        merged = np.concatenate(keys) if keys else np.empty(0, dtype=np.uint64)
        # disk files whose seeds differ here take part as overrides do (see _own_duplicates)
        extra = {i: s for i, s in self.extra.items() if i not in self.duplicates} | self.changed
        return self.state.table.overlaid(merged, extra, self.hidden | set(self.changed))

    def pair_key(self, fa: int, fb: int) -> PairKey:
        """The record key of a pair of files (their paths, in order)."""
        a, b = self.paths[fa], self.paths[fb]
        return (a, b) if a <= b else (b, a)

    def keep_pair(self, fa: int, fb: int) -> bool:
        """Whether two files are compared at all (and why not, when not: a filter reason)."""
        return self.skip_reason(fa, fb) is None

    def skip_reason(self, fa: int, fb: int) -> str | None:
        """Why two files are not compared (None: they are)."""
        if fa in self.hidden or fb in self.hidden:
            return "hidden"
        files = self.finder.index.files
        a, b = files[self.paths[fa]], files[self.paths[fb]]
        if a.entry.status == GENERATED and b.entry.status == GENERATED:
            return GENERATED_PAIR  # generated code repeating itself is what generators do
        if fa != fb and a.sha == b.sha:
            return "identical"  # one finding of identical files says it all
        finder = self.finder
        if finder.pair_filter is not None and not finder.pair_filter(a.path, b.path):
            return "filtered"
        if fa == fb and not finder.config.same_file:
            return "same file"
        return None

    def item(self, i: int, start: int, end: int, sha: str) -> Item:
        """A piece of file ``i`` for the similarity (tokens loaded when not cached)."""

        def load() -> Code:
            heavy = self.side(i).heavy
            return Code(heavy.texts[start:end], heavy.cats[start:end], heavy.lines[start:end])

        return sha, load


@dataclass
class Copies:
    """What a search found and what it took."""

    findings: list[Any] = field(default_factory=list)
    scored: int = 0
    filtered: Counter[str] = field(default_factory=Counter)
    """Candidates left out on purpose that belong to no file pair's record."""
    records: dict[PairKey, PairRecord] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    digests: set[str] = field(default_factory=set)
    """Content digests of every region scored (the pair scores worth keeping)."""

    def record(self, key: PairKey) -> PairRecord:
        """The record of a file pair (created on first use)."""
        found = self.records.get(key)
        if found is None:
            found = self.records[key] = PairRecord()
        return found

    def count(self, key: PairKey, reason: str, n: int = 1) -> None:
        """Count candidates of a file pair left out for a reason."""
        if n:
            self.record(key).filtered[reason] += n

    @property
    def candidates(self) -> int:
        """Chains made candidates, over all file pairs."""
        return sum(r.candidates for r in self.records.values())

    def all_filtered(self) -> Counter[str]:
        """Every candidate left out on purpose, by reason."""
        total = Counter(self.filtered)
        for r in self.records.values():
            for reason, count in r.filtered.items():
                total[reason] += count
        return total

    def time(self, phase: str, started: float) -> None:
        """Add the seconds since ``started`` to a phase."""
        self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - started
