"""Copies found by alignment: chains made candidates, decided, each file pair's outcome on record.

The steps 1-3 of :mod:`crystal_lsp.clones.finder` for the files of a search: seed matches become
chains (:mod:`crystal_lsp.clones.align.chains`), chains become candidates (:mod:`candidates`), the
similarity seam decides them (missing scores on the finder's scorer), and a chain that is not a
copy as a whole is split at its widest gap and its parts decided again. What every file pair
gave -- its copies, and its candidates left out on purpose by reason -- is kept in a
:class:`PairRecord`, so that a later full scan can reuse the pairs whose files did not change
(:mod:`crystal_lsp.clones.align.reuse`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from crystal_lsp.clones.align.candidates import Candidate, candidate, copied_tokens, of_spans
from crystal_lsp.clones.align.chains import (
    Chain,
    ChainStats,
    chains_of,
    runs_of,
    split_at_widest_gap,
)
from crystal_lsp.clones.align.incremental import ChainMemo, Outcome, Sides
from crystal_lsp.clones.align.pairs import RegionPair
from crystal_lsp.clones.align.regions import Region
from crystal_lsp.clones.align.seeds import I64, Bools
from crystal_lsp.clones.similarity import Item

if TYPE_CHECKING:
    from crystal_lsp.clones.align.context import Progress
    from crystal_lsp.clones.align.workset import Copies, Workset

COPIED_SHARE = 0.75
"""Of ``min_tokens``, the share a copy must have copied (outside noise, see :mod:`candidates`)."""
SPLITS = 4
"""How many times a chain that is not a copy is split at its widest gap and decided again."""
MIN_DENSITY = 0.6
"""A chain whose runs cover less than this share of its regions is split before it is decided."""
SUPPRESSED, OVERLAPPING = "suppressed", "overlapping"
Found = tuple[int, int, Region, Region, int, tuple[Item, Item]]
"""A candidate: file ids, both regions, copied tokens, and both pieces for the similarity."""


def min_copied_tokens(min_tokens: int) -> int:
    """The fewest copied tokens a candidate needs to be a copy (``COPIED_SHARE`` of the size)."""
    return max(1, round(COPIED_SHARE * min_tokens))


def aligned(
    work: Workset,
    among: Sequence[int] | None,
    done: set[int],
    out: Copies,
    progress: Progress | None,
    only: Callable[[I64, I64], Bools] | None = None,
) -> list[RegionPair]:
    """Accepted copies of the pairs of ``among`` (None: all files) with files not yet searched.

    ``only(fa, fb)``, if given, chooses among those pairs (arrays of pairs at once).
    """
    started = time.perf_counter()
    min_copied = min_copied_tokens(work.finder.config.min_tokens)
    stats = ChainStats()
    runs = runs_of(work.table(among).matches(among))

    def keep(fa: int, fb: int) -> bool:
        return fa not in done and fb not in done and work.keep_pair(fa, fb)

    def keep_many(fa: I64, fb: I64) -> Bools:
        kept = work.keep_pairs(fa, fb)
        if only is not None:
            kept &= only(fa, fb)
        if done:
            gone = np.fromiter(done, np.int64, len(done))
            kept &= ~(np.isin(fa, gone) | np.isin(fb, gone))
        return kept

    chains = chains_of(runs, (min_copied + 1) // 2, stats, keep, work.run_weights(runs), keep_many)
    for (fa, fb), counts in stats.per_pair.items():
        for reason, n in counts.items():
            out.count(work.pair_key(fa, fb), reason, n)
    for chain in chains:
        out.record(work.pair_key(chain.fa, chain.fb)).candidates += 1
    out.time("retrieval", started)
    accepted: list[RegionPair] = []
    for depth in range(SPLITS + 1):
        dense = [chain for chain in chains if chain.density >= MIN_DENSITY]
        found, origin = _candidates(work, dense, out, count=depth == 0)
        decisions = decided(work, found, out, progress)
        for (fa, fb, *_), pair in zip(found, decisions):
            if pair is not None:
                accepted.append(pair)
                out.record(work.pair_key(fa, fb)).accepted.append(pair)
        rejected = [chain for chain, pair in zip(origin, decisions) if pair is None]
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


def _candidates(
    work: Workset, chains: Sequence[Chain], out: Copies, count: bool
) -> tuple[list[Found], list[Chain]]:
    """The candidates of chains that are large enough, and the chain of each.

    A chain of an edited file the edit did not reach has the outcome it had before
    (:mod:`crystal_lsp.clones.align.incremental`, when the search keeps one).
    """
    started = time.perf_counter()
    memo = work.chain_memo
    found: list[Found] = []
    origin: list[Chain] = []
    pool = work.finder.pool
    pooled = pool.outcomes(work, chains, _outcome) if pool is not None and memo is None else None
    for k, chain in enumerate(chains):
        key = work.pair_key(chain.fa, chain.fb)
        other = _other(work, memo, chain)
        outcome = memo.get(chain, other) if memo is not None and other is not None else None
        if outcome is None:
            outcome = pooled[k] if pooled is not None else _outcome(work, chain)
        if memo is not None and other is not None:
            side = work.side(memo.fid)
            memo.put(chain, other, outcome, Sides(side.entry, side.heavy))
        reason, kept = outcome
        if reason is not None:
            out.count(key, reason, count)
        if kept is not None:
            found.append(_item(work, chain.fa, chain.fb, kept))
            origin.append(chain)
    out.time("retrieval", started)
    return found, origin


def _other(work: Workset, memo: ChainMemo | None, chain: Chain) -> str | None:
    """The path of a chain's other file when the memo keeps its outcome (else None)."""
    if memo is None or not memo.involves(chain):
        return None
    other = chain.fb if chain.fa == memo.fid else chain.fa
    if other != memo.fid and other >= len(work.state.paths):
        return None  # another override: it may have changed too
    return work.paths[other]


def _outcome(work: Workset, chain: Chain) -> Outcome:
    """What a chain becomes: its candidate, or why it is left out (see :func:`_judged`)."""
    a, b = work.side(chain.fa), work.side(chain.fb)
    aligned_tokens, kind_of = copied_tokens(chain, a, b)
    if 2 * aligned_tokens < min_copied_tokens(work.finder.config.min_tokens):
        return kind_of(), None
    cand, kind_of = candidate(chain, a, b)
    return _judged(work, chain.fa, chain.fb, cand, kind_of)


def _judged(
    work: Workset, fa: int, fb: int, cand: Candidate, kind_of: Callable[[], str]
) -> Outcome:
    """A candidate to decide, or why it is left out (None: too small, not counted)."""
    config = work.finder.config
    if min(cand.a.tokens, cand.b.tokens) < config.min_tokens or (
        min(cand.a.lines, cand.b.lines) < config.min_lines
    ):
        return None, None
    if cand.a.overlap(cand.b) or cand.b.within(cand.a) or cand.a.within(cand.b):
        return OVERLAPPING, None  # a unit around both sides of an inner copy
    if cand.copied < min_copied_tokens(config.min_tokens):
        return kind_of(), None
    if work.suppressed(fa, cand.a) or work.suppressed(fb, cand.b):
        return SUPPRESSED, None
    return None, (cand.a, cand.b, cand.copied, cand.sha_a, cand.sha_b)


def _item(work: Workset, fa: int, fb: int, kept: tuple[Region, Region, int, str, str]) -> Found:
    a, b, copied, sha_a, sha_b = kept
    items = (work.item(fa, a.start, a.end, sha_a), work.item(fb, b.start, b.end, sha_b))
    return (fa, fb, a, b, copied, items)


def decide_spans(
    work: Workset, fa: int, fb: int, span_a: tuple[int, int], span_b: tuple[int, int], out: Copies
) -> RegionPair | None:
    """The copy two spans of whole lines make, snapped as a chain's are, if it is decided one.

    What a finding of several aligned windows is merged into
    (:mod:`crystal_lsp.clones.copies.merging`); nothing is counted for a span pair that is not.
    """
    cand, kind_of = of_spans(span_a, span_b, work.side(fa), work.side(fb))
    kept = _judged(work, fa, fb, cand, kind_of)[1]
    if kept is None:
        return None
    return decided(work, [_item(work, fa, fb, kept)], out, None)[0]


def decide_regions(
    work: Workset, fa: int, fb: int, a: Region, b: Region, out: Copies
) -> RegionPair | None:
    """The copy two regions make as they are (not snapped again), if it is decided one.

    What a copy covering most of two units is widened to: the units whole, signatures included
    (:mod:`crystal_lsp.clones.copies.build`).
    """
    cand = Candidate(a, b, work.side(fa), work.side(fb))
    kept = _judged(work, fa, fb, cand, cand.noise_kind)[1]
    if kept is None:
        return None
    return decided(work, [_item(work, fa, fb, kept)], out, None)[0]


def decided(
    work: Workset, found: Sequence[Found], out: Copies, progress: Progress | None
) -> list[RegionPair | None]:
    """Score the candidates (missing scores on the finder's scorer): each copy, or None."""
    started = time.perf_counter()
    similarity = work.similarity
    missing: dict[str, tuple[Item, Item]] = {}
    for *_, (x, y) in found:
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
    decisions: list[RegionPair | None] = []
    for _, _, a, b, copied, (x, y) in found:
        scores = similarity.cached(x[0], y[0])
        assert scores is not None, "the scorer left a pair unscored"
        if similarity.copies(scores):
            sim = min(scores[0], scores[1])
            decisions.append(RegionPair(a, b, sim, min(scores[2], scores[3]), copied))
        else:
            decisions.append(None)
    out.time("scoring", started)
    return decisions
