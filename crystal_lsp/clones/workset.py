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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from crystal_lsp.clones.candidates import TRIVIAL, Side, candidate, copied_tokens
from crystal_lsp.clones.chains import (
    Chain,
    ChainStats,
    Runs,
    chains_of,
    runs_of,
    split_at_widest_gap,
)
from crystal_lsp.clones.classes import RegionPair, distinct_pairs
from crystal_lsp.clones.digests import (
    Unit,
    file_region,
    identical_files,
    representative_pairs,
    unit_groups,
)
from crystal_lsp.clones.regions import Region, header_prefix
from crystal_lsp.clones.seeds import I64, Bools, FileSeeds, SeedTable, noise_mask
from crystal_lsp.clones.similarity import Code, Item, Similarity, trivial_shingles
from crystal_lsp.text.entries import GENERATED, OK
from crystal_lsp.text.snippets import DATA

if TYPE_CHECKING:
    from crystal_lsp.clones.finder import CloneFinder, LineFocus, Progress, _LanguageState

GENERATED_PAIR = "generated"
SUPPRESSED = "suppressed"
COPIED_SHARE = 0.75
"""Of ``min_tokens``, the share a copy must have copied (outside noise, see :mod:`candidates`)."""
SPLITS = 4
MIN_DENSITY = 0.6
"""A chain whose runs cover less than this share of its regions is split before it is decided."""
"""How many times a chain that is not a copy is split at its widest gap and decided again."""


def min_copied_tokens(min_tokens: int) -> int:
    """The fewest copied tokens a candidate needs to be a copy (``COPIED_SHARE`` of the size)."""
    return max(1, round(COPIED_SHARE * min_tokens))


@dataclass
class Workset:
    """The files of one search (module docstring); file ids index ``paths``."""

    finder: CloneFinder
    state: _LanguageState
    paths: list[str]
    extra: dict[int, FileSeeds]
    hidden: set[int]
    ids: dict[str, int] = field(default_factory=dict)
    _sides: dict[int, Side] = field(default_factory=dict)
    _noise: dict[int, Bools] = field(default_factory=dict)

    @classmethod
    def of(cls, finder: CloneFinder, state: _LanguageState, language: str) -> Workset:
        """The disk files of ``state`` and the index's overrides of ``language``."""
        files = finder.index.files
        paths = list(state.paths)
        extra: dict[int, FileSeeds] = {}
        hidden: set[int] = set()
        disk = {p: i for i, p in enumerate(paths)}
        excluded = trivial_shingles(state.sets.norm)
        for path, file in sorted(files.items()):
            entry = file.entry
            if not file.override or entry.language != language:
                continue
            if entry.status not in (OK, GENERATED):
                continue
            extra[len(paths)] = FileSeeds.of(entry, excluded)
            paths.append(path)
            replaced = finder.shadow(path) if finder.shadow is not None else None
            if replaced is not None and replaced in disk:
                hidden.add(disk[replaced])
        work = cls(finder, state, paths, extra, hidden)
        work.ids = {p: i for i, p in enumerate(paths) if i not in hidden}
        return work

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
        """The seeds of file ``i``."""
        return self.extra[i] if i in self.extra else self.state.seeds[i]

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
        if i not in self._noise:
            ignore = (DATA,) if self.finder.config.report_data else ()
            entry = self.finder.index.files[self.paths[i]].entry
            self._noise[i] = noise_mask(entry, ignore)
        return self._noise[i]

    def noise_raw(self, i: int) -> Bools:
        """Per raw token of file ``i``: inside noise (as :meth:`noise`)."""
        entry = self.finder.index.files[self.paths[i]].entry
        ignore = (DATA,) if self.finder.config.report_data else ()
        raw = np.zeros(entry.token_count, dtype=bool)
        for start, end, kind in entry.noise:
            if kind not in ignore:
                raw[start:end] = True
        return raw

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
        return self.state.table.overlaid(merged, self.extra, self.hidden)

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
    candidates: int = 0
    scored: int = 0
    filtered: Counter[str] = field(default_factory=Counter)
    timings: dict[str, float] = field(default_factory=dict)
    digests: set[str] = field(default_factory=set)
    """Content digests of every region scored (the pair scores worth keeping)."""

    def time(self, phase: str, started: float) -> None:
        """Add the seconds since ``started`` to a phase."""
        self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - started


def find_copies(work: Workset, focus: LineFocus | None, progress: Progress | None) -> Copies:
    """Clone classes of a workset (module docstring); with ``focus``, those touching it."""
    from crystal_lsp.clones.report import findings_of

    out = Copies()
    among = None if focus is None else sorted(work.ids[p] for p in focus if p in work.ids)
    accepted: list[RegionPair] = []
    done: set[int] = set()
    while among is None or among:
        accepted += _aligned(work, among, done, out, progress)
        accepted += _whole_copies(work, among, done, out)
        if among is None:
            break
        done |= set(among)
        reached = {work.ids[r.path] for pair in accepted for r in (pair.a, pair.b)}
        among = sorted(reached - done)
    started = time.perf_counter()
    out.findings, shown = findings_of(work, distinct_pairs(accepted), focus)
    out.filtered["nested"] += shown
    out.time("grouping", started)
    return out


def _aligned(
    work: Workset,
    among: Sequence[int] | None,
    done: set[int],
    out: Copies,
    progress: Progress | None,
) -> list[RegionPair]:
    """Accepted copies of the chains of ``among`` (None: all) with files not yet searched.

    A chain that is not a copy as a whole may hold one: it is split at its widest gap and each
    part decided again (up to ``SPLITS`` times).
    """
    started = time.perf_counter()
    min_copied = min_copied_tokens(work.finder.config.min_tokens)
    stats = ChainStats()
    runs = runs_of(work.table(among).matches(among))

    def keep(fa: int, fb: int) -> bool:
        return fa not in done and fb not in done and work.keep_pair(fa, fb)

    chains = chains_of(runs, (min_copied + 1) // 2, stats, keep, work.run_weights(runs))
    out.filtered["repetitive"] += stats.repetitive
    out.filtered["convention"] += stats.convention_pairs
    out.filtered["runs beyond the cap"] += stats.capped_runs
    out.candidates += len(chains)
    out.time("retrieval", started)
    accepted: list[RegionPair] = []
    for depth in range(SPLITS + 1):
        dense = [chain for chain in chains if chain.density >= MIN_DENSITY]
        found, origin = _candidates(work, dense, out, count=depth == 0)
        decided = _decided(work, found, out, progress)
        accepted += [pair for pair in decided if pair is not None]
        rejected = [chain for chain, pair in zip(origin, decided) if pair is None]
        rejected += [chain for chain in chains if chain.density < MIN_DENSITY]
        chains = [
            part
            for chain in rejected
            for part in split_at_widest_gap(chain)
            if 2 * part.aligned >= min_copied
        ]
        if not chains:
            break
    return accepted


Found = tuple[Any, Any, int, tuple[Item, Item]]


def _candidates(
    work: Workset, chains: Sequence[Chain], out: Copies, count: bool
) -> tuple[list[Found], list[Chain]]:
    """The candidates of chains that are large enough, and the chain of each."""
    started = time.perf_counter()
    config = work.finder.config
    min_copied = min_copied_tokens(config.min_tokens)
    found: list[Found] = []
    origin: list[Chain] = []
    for chain in chains:
        a, b = work.side(chain.fa), work.side(chain.fb)
        aligned, kind = copied_tokens(chain, a, b)
        if 2 * aligned < min_copied:
            out.filtered[kind] += count
            continue
        cand, kind = candidate(chain, a, b)
        if min(cand.a.tokens, cand.b.tokens) < config.min_tokens or (
            min(cand.a.lines, cand.b.lines) < config.min_lines
        ):
            continue
        if cand.a.overlap(cand.b) or cand.b.within(cand.a) or cand.a.within(cand.b):
            out.filtered["overlapping"] += count  # a unit around both sides of an inner copy
            continue
        if cand.copied < min_copied:
            out.filtered[kind] += count
            continue
        if work.suppressed(chain.fa, cand.a) or work.suppressed(chain.fb, cand.b):
            out.filtered[SUPPRESSED] += count
            continue
        items = (
            work.item(chain.fa, cand.a.start, cand.a.end, cand.sha_a),
            work.item(chain.fb, cand.b.start, cand.b.end, cand.sha_b),
        )
        found.append((cand.a, cand.b, cand.copied, items))
        origin.append(chain)
    out.time("retrieval", started)
    return found, origin


def _whole_copies(
    work: Workset, among: Sequence[int] | None, done: set[int], out: Copies
) -> list[RegionPair]:
    """Exact and renamed copies of whole units, and identical files, touching ``among``."""
    started = time.perf_counter()
    files = work.finder.index.files
    config = work.finder.config
    min_copied = min_copied_tokens(config.min_tokens)
    wanted = None if among is None else set(among)

    def fresh(x: int, y: int) -> bool:
        if wanted is not None and x not in wanted and y not in wanted:
            return False
        return x not in done and y not in done and work.skip_reason(x, y) in (None, "identical")

    units = [
        Unit(work.paths[i], k, meta)
        for i in work.ids.values()
        for k, meta in enumerate(files[work.paths[i]].entry.snippets)
    ]
    found = []
    for rep, other in representative_pairs(unit_groups(units, config.report_data)):
        x, y = work.ids[rep.path], work.ids[other.path]
        if not fresh(x, y) or files[rep.path].sha == files[other.path].sha:
            continue
        copied, kind = _unit_copied(work, x, rep), _main_kind(work, x, rep)
        copied = min(copied, _unit_copied(work, y, other))
        if copied < min_copied:
            out.filtered[kind] += 1
            continue
        items = (
            work.item(x, rep.meta.start, rep.meta.end, rep.meta.sha),
            work.item(y, other.meta.start, other.meta.end, other.meta.sha),
        )
        found.append((rep.region(), other.region(), copied, items))
    found += _identical(work, fresh, out, min_copied)
    out.time("grouping", started)
    return [pair for pair in _decided(work, found, out, None) if pair is not None]


def _identical(
    work: Workset, fresh: Callable[[int, int], bool], out: Copies, min_copied: int
) -> list[Found]:
    """Identical files as whole-file candidates (scored like any other pair)."""
    files = work.finder.index.files
    triples = [
        (work.paths[i], files[work.paths[i]].sha, files[work.paths[i]].entry.token_count)
        for i in work.ids.values()
    ]
    found = []
    for group in identical_files(triples, work.finder.config.min_tokens):
        first = work.ids[group[0]]
        side = work.side(first)
        copied = int((~side.noise).sum()) if len(side.noise) else len(side.entry.npos)
        for path in group[1:]:
            other = work.ids[path]
            if not fresh(first, other):
                continue
            if copied < min_copied:
                out.filtered["identical " + _file_kind(side)] += 1
                continue
            region_a = file_region(group[0], side.heavy)
            region_b = file_region(path, work.side(other).heavy)
            sha = files[group[0]].sha
            items = (
                work.item(first, 0, region_a.end, "file:" + sha),
                work.item(other, 0, region_b.end, "file:" + sha),
            )
            found.append((region_a, region_b, copied, items))
    return found


def _file_kind(side: Side) -> str:
    kinds: Counter[str] = Counter()
    for start, end, kind in side.entry.noise:
        kinds[kind] += end - start
    return kinds.most_common(1)[0][0] if kinds else TRIVIAL


def _unit_copied(work: Workset, i: int, unit: Unit) -> int:
    side = work.side(i)
    a, b = side.entry.normalized_span(unit.meta.start, unit.meta.end)
    return int((~side.noise[a:b]).sum()) if len(side.noise) else b - a


def _main_kind(work: Workset, i: int, unit: Unit) -> str:
    side = work.side(i)
    kinds: Counter[str] = Counter()
    for start, end, kind in side.entry.noise:
        kinds[kind] += max(0, min(end, unit.meta.end) - max(start, unit.meta.start))
    best = kinds.most_common(1)
    return best[0][0] if best and best[0][1] else TRIVIAL


def _decided(
    work: Workset, found: Sequence[Found], out: Copies, progress: Progress | None
) -> list[RegionPair | None]:
    """Score the candidates (missing scores on the finder's scorer): each copy, or None."""
    started = time.perf_counter()
    similarity = work.similarity
    missing: dict[str, tuple[Item, Item]] = {}
    for _, _, _, (x, y) in found:
        out.digests.update((x[0], y[0]))
        key, forward = similarity.pair_key(x[0], y[0])
        if key not in missing and similarity.cached(x[0], y[0]) is None:
            missing[key] = (x, y) if forward else (y, x)
    if missing:
        report: Callable[[int, int], None] | None = None
        if progress is not None:
            language = similarity.language
            report = lambda done, total: progress(f"scoring ({language})", done, total)  # noqa: E731
        work.finder.scorer.fill(similarity, missing, report)
        out.scored += len(missing)
    decided: list[RegionPair | None] = []
    for a, b, copied, (x, y) in found:
        scores = similarity.cached(x[0], y[0])
        assert scores is not None, "the scorer left a pair unscored"
        if similarity.copies(scores):
            sim = min(scores[0], scores[1])
            decided.append(RegionPair(a, b, sim, min(scores[2], scores[3]), copied))
        else:
            decided.append(None)
    out.time("scoring", started)
    return decided
