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
import numpy.typing as npt

from crystal_lsp.clones.align.candidates import Side
from crystal_lsp.clones.align.chains import Runs
from crystal_lsp.clones.align.context import Finder, LanguageState
from crystal_lsp.clones.align.duplicates import regrouped_spans, without_spans
from crystal_lsp.clones.align.incremental import ChainMemo
from crystal_lsp.clones.align.pairs import PairKey, PairRecord
from crystal_lsp.clones.align.plan import Plan
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
from crystal_lsp.text.entries import GENERATED, OK, Entry
from crystal_lsp.text.fingerprints import U64
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
    _facts: tuple[Bools, Bools, I64] | None = None
    _spans: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    chain_memo: ChainMemo | None = None
    """The kept outcomes of an edited override's chains (:mod:`.incremental`), if any."""

    @classmethod
    def of(cls, finder: Finder, state: LanguageState, language: str) -> Workset:
        """The disk files of ``state`` and the index's overrides of ``language``."""
        files = finder.index.files
        paths = list(state.paths)
        extra: dict[int, FileSeeds] = {}
        hidden: set[int] = set()
        if state.ids is None:
            state.ids = {p: i for i, p in enumerate(paths)}
        disk = state.ids
        for path, file in sorted((p, s) for p, s in files.items() if s.override):
            entry = file.entry
            if finder.index.compared_as(entry.language) != language or entry.status not in (
                OK,
                GENERATED,
            ):
                continue
            extra[len(paths)] = FileSeeds.of(entry, state.trivial)
            paths.append(path)
            replaced = finder.shadow(path) if finder.shadow is not None else None
            if replaced is not None and replaced in disk:
                hidden.add(disk[replaced])
        work = cls(finder, state, paths, extra, hidden)
        work.ids = dict(disk)
        for i in sorted(hidden):
            del work.ids[paths[i]]
        work.ids.update((paths[i], i) for i in extra)
        if extra or hidden:
            work._own_duplicates()
        else:
            work.duplicates = set(state.duplicates)
        return work

    def _own_duplicates(self) -> None:
        """Duplicates of a search with overrides: identical files, over-copied units.

        The language state's table was made for the files on disk; a disk file whose seeds
        differ in this search (its original is hidden, a group of units crossed the count that
        makes it over-copied) takes part with its own seeds, as an override does. Only what
        the overrides and the hidden files touch is computed again: the identical files of
        their contents, the groups of their units.
        """
        files = self.finder.index.files
        state = self.state

        def entry_of(i: int) -> Entry:
            return files[self.paths[i]].entry

        self.duplicates = self._duplicate_ids()
        before = set(range(len(state.paths))) - state.duplicates
        now = {i for i in self.ids.values() if i not in self.duplicates}
        changes = (before - now, sorted(now - before))
        spans = regrouped_spans(
            state.groups, state.dropped, entry_of, changes, self.finder.config.max_df
        )
        for i in sorted(set(self.extra) | set(spans) | state.duplicates):
            if i in self.hidden:
                continue
            wanted = spans.get(i, state.dropped.get(i, []))
            if i in self.extra:
                self.extra[i] = without_spans(self.extra[i], wanted)
                self._spans[i] = wanted
            elif i not in self.duplicates and (
                i in state.duplicates or wanted != state.dropped.get(i, [])
            ):
                seeds = FileSeeds.of(entry_of(i), state.trivial)
                self.changed[i] = without_spans(seeds, wanted)
                self._spans[i] = wanted

    def _duplicate_ids(self) -> set[int]:
        """Files whose content an earlier file of the search has (:func:`duplicate_files`)."""
        files = self.finder.index.files
        state = self.state

        def sha(i: int) -> str:
            return files[self.paths[i]].sha

        def order(i: int) -> str:
            return f"{int(i in self.extra)}{self.paths[i].lstrip(chr(0))}"

        touched = {sha(i) for i in self.extra} | {sha(i) for i in self.hidden}
        found = {i for i in state.duplicates if sha(i) not in touched}
        by_sha = state.by_sha(sha)
        for content in touched:
            members = [i for i in by_sha.get(content, []) if i not in self.hidden]
            members += [i for i in self.extra if sha(i) == content]
            if len(members) > 1:
                first = min(members, key=order)
                found.update(i for i in members if i != first)
        return found

    @property
    def similarity(self) -> Similarity:
        """The language's similarity."""
        return self.state.similarity

    @property
    def snippet_count(self) -> int:
        """Indexed snippets of the search's files that may be reported (not data, suppressed)."""
        files = self.finder.index.files
        report_data = self.finder.config.report_data

        def count(i: int) -> int:
            snippets = files[self.paths[i]].entry.snippets
            return sum(1 for m in snippets if not m.suppressed and (report_data or m.kind != DATA))

        state = self.state
        if state.snippet_counts is None:
            state.snippet_counts = [count(i) for i in range(len(state.paths))]
        disk = state.snippet_counts
        total = sum(disk) - sum(disk[i] for i in self.hidden)
        return total + sum(count(i) for i in self.extra)

    def spans(self, i: int) -> list[tuple[int, int]]:
        """The normalized spans of over-copied units whose seeds file ``i`` leaves out."""
        if i in self.duplicates:
            return []
        found = self._spans.get(i)
        if found is None and i not in self.extra:
            found = self.state.dropped.get(i)
        return found or []

    def counts(self, hashes: U64) -> I64:
        """How often each seed hash occurs in the files of this search."""
        table = self.state.table.lookup(hashes)
        out: I64 = np.searchsorted(table.hashes, hashes, "right") - np.searchsorted(
            table.hashes, hashes, "left"
        )
        for i, sign in self._differing():
            seeds = self.state.seeds[i] if sign < 0 else self.seeds(i)
            found, counts = np.unique(seeds.hashes, return_counts=True)
            at = np.minimum(np.searchsorted(found, hashes), max(len(found) - 1, 0))
            hit = found[at] == hashes if len(found) else np.zeros(len(hashes), bool)
            out[hit] += sign * counts[at[hit]]
        return out

    def owners(self, hashes: U64) -> list[set[int]]:
        """The files of this search holding each seed hash."""
        table = self.state.table.lookup(hashes)
        lo = np.searchsorted(table.hashes, hashes, "left").tolist()
        hi = np.searchsorted(table.hashes, hashes, "right").tolist()
        gone = {i for i, sign in self._differing() if sign < 0}
        out = [set(table.owners[a:b].tolist()) - gone for a, b in zip(lo, hi)]
        for i, sign in self._differing():
            if sign > 0:
                held = np.isin(hashes, self.seeds(i).hashes).tolist()
                for k in np.flatnonzero(held).tolist():
                    out[k].add(i)
        return out

    def _differing(self) -> list[tuple[int, int]]:
        """Files whose seeds here differ from the state table's: -1 (theirs out), +1 (ours in)."""
        state = self.state
        out = [
            (i, -1) for i in sorted(self.hidden | set(self.changed)) if i not in state.duplicates
        ]
        out += [
            (i, 1) for i in sorted(set(self.extra) | set(self.changed)) if i not in self.duplicates
        ]
        return out

    def seeds(self, i: int) -> FileSeeds:
        """The seeds of file ``i`` (none for a duplicate of another file)."""
        if i in self.duplicates:
            return NO_SEEDS
        if i in self.extra:
            return self.extra[i]
        return self.changed.get(i, self.state.seeds[i])

    def entry(self, i: int) -> Entry:
        """The index entry of file ``i`` (its snippets; no tokens loaded)."""
        return self.finder.index.files[self.paths[i]].entry

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
        prefix, offsets = self._noise_prefix()
        disk = runs.fa < len(self.state.paths)
        if disk.any():
            fa, i0, length = runs.fa[disk], runs.i0[disk], runs.length[disk]
            size = offsets[fa + 1] - offsets[fa] - 1
            lo, hi = np.minimum(i0, size), np.minimum(i0 + length, size)
            weight[disk] -= prefix[offsets[fa] + hi] - prefix[offsets[fa] + lo]
        for i in np.unique(runs.fa[~disk]).tolist():
            at = runs.fa == i
            noise = self.noise(i)
            prefix = np.r_[0, np.cumsum(noise)]
            lo = np.minimum(runs.i0[at], len(noise))
            hi = np.minimum(runs.i0[at] + runs.length[at], len(noise))
            weight[at] -= prefix[hi] - prefix[lo]
        return weight

    def _noise_prefix(self) -> tuple[npt.NDArray[np.int32], I64]:
        """The prefix sums of the disk files' noise masks (kept by the language state)."""
        if self.state.noise_prefix is None:
            parts = [np.zeros(1, np.int32)]
            for i in range(len(self.state.paths)):
                parts.append(np.r_[0, np.cumsum(self.noise(i), dtype=np.int32)].astype(np.int32))
            sizes = np.array([len(part) for part in parts[1:]], dtype=np.int64)
            offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64) + 1
            self.state.noise_prefix = (np.concatenate(parts), offsets)
        return self.state.noise_prefix

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

    def units_of(self, digests: set[str]) -> list[tuple[int, int]]:
        """The snippets ``(file, index)`` of the search's files with one of these digests.

        Duplicates (:attr:`duplicates`) left out; in file order, then snippet order.
        """
        state = self.state
        files = self.finder.index.files
        if state.units is None:
            state.units = {}
            for i, path in enumerate(state.paths):
                for k, meta in enumerate(files[path].entry.snippets):
                    state.units.setdefault(meta.norm_sha, []).append((i, k))
        skip = self.hidden | self.duplicates
        out = [u for d in digests for u in state.units.get(d, ()) if u[0] not in skip]
        for i in self.extra:
            if i not in self.duplicates:
                snippets = files[self.paths[i]].entry.snippets
                out += [(i, k) for k, meta in enumerate(snippets) if meta.norm_sha in digests]
        return sorted(out)

    def keep_pairs(self, fa: I64, fb: I64) -> Bools:
        """:meth:`keep_pair` of many pairs of files at once."""
        files = self.finder.index.files
        if self._facts is None:
            state = self.state
            if state.facts is None:  # of the disk files, kept by the language state
                shas: dict[str, int] = {}
                disk = [files[p] for p in state.paths]
                state.facts = (
                    np.array([s.entry.status == GENERATED for s in disk], dtype=bool),
                    np.array([shas.setdefault(s.sha, len(shas)) for s in disk], dtype=np.int64),
                    shas,
                )
            generated, sha, shas = state.facts
            hidden = np.zeros(len(self.paths), dtype=bool)
            hidden[sorted(self.hidden)] = True
            extra = [files[self.paths[i]] for i in range(len(state.paths), len(self.paths))]
            more = dict(shas)
            self._facts = (
                hidden,
                np.r_[generated, [s.entry.status == GENERATED for s in extra]].astype(bool),
                np.r_[sha, [more.setdefault(s.sha, len(more)) for s in extra]].astype(np.int64),
            )
        hidden, generated, sha = self._facts
        keep: Bools = ~(hidden[fa] | hidden[fb]) & ~(generated[fa] & generated[fb])
        keep &= (fa == fb) | (sha[fa] != sha[fb])
        if not self.finder.config.same_file:
            keep &= fa != fb
        pair_filter = self.finder.pair_filter
        if pair_filter is not None:
            for k in np.flatnonzero(keep).tolist():
                a, b = files[self.paths[int(fa[k])]], files[self.paths[int(fb[k])]]
                keep[k] = pair_filter(a.path, b.path)
        return keep

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
    base: Plan | None = None
    """The previous full scan's records this search takes over (besides ``records``)."""

    def all_records(self) -> dict[PairKey, PairRecord]:
        """The records taken over, then those of this search."""
        if self.base is None:
            return self.records
        return {**self.base.records, **self.records}

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
        taken = self.base.totals()[0] if self.base is not None else 0
        return taken + sum(r.candidates for r in self.records.values())

    def all_filtered(self) -> Counter[str]:
        """Every candidate left out on purpose, by reason."""
        total = Counter(self.filtered)
        if self.base is not None:
            for reason, count in self.base.totals()[1].items():
                total[reason] += count
        for r in self.records.values():
            for reason, count in r.filtered.items():
                total[reason] += count
        return total

    def time(self, phase: str, started: float) -> None:
        """Add the seconds since ``started`` to a phase."""
        self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - started
