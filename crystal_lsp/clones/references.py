"""References for a piece of code: the regions of a repository it aligns with best.

A hypothesis (an AI suggestion, a selection) is aligned with the indexed files exactly as the
clone finder aligns two files (:mod:`crystal_lsp.clones.finder`, steps 1-2): its seeds are paired
with theirs, runs become chains, each chain's region in the other file is snapped to whole lines
and units. Each region is then scored against the hypothesis (the caller's metric, CrystalBLEU),
and the regions are ranked by score, best first, ties by path and line, so the answer does not
depend on the order of the files; regions scoring zero, or overlapping a better one, are dropped
and counted.

The hypothesis takes part as a temporary override of the index (removed afterwards), so the
disk files an override shadows (unsaved buffers) are left out, and other overrides take part.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from crystal_lsp.clones.align.candidates import candidate
from crystal_lsp.clones.align.chains import ChainStats, chains_of, runs_of
from crystal_lsp.clones.align.regions import Region
from crystal_lsp.clones.align.seeds import SEED
from crystal_lsp.clones.finder import CloneFinder
from crystal_lsp.clones.index import FileState
from crystal_lsp.text.entries import GENERATED, OK, build_entry
from crystal_lsp.text.fingerprints import text_sha

HYPOTHESIS_KEY = "\0hypothesis"
"""The hypothesis's path in the index while it is aligned (no file can have it)."""
MAX_CHAINS = 400
"""Chains (most aligned tokens first) snapped and scored; those beyond are counted."""

Scorer = Callable[[Sequence[str]], float]
"""The score of the hypothesis against one reference's raw tokens."""
Skip = tuple[str, int, int]
"""``(path, first line, last line)``: a region overlapping these lines is not a reference."""


@dataclass(frozen=True)
class BestRegion:
    """A reference: a region of an indexed file and the hypothesis's score against it."""

    region: Region
    score: float
    tokens: list[str]


@dataclass
class BestRegions:
    """The ranked references and what was left out, by reason (counted, never silent)."""

    regions: list[BestRegion] = field(default_factory=list)
    aligned: int = 0
    """Distinct regions aligned with the hypothesis (before ranking)."""
    left_out: dict[str, int] = field(default_factory=dict)

    def count(self, reason: str, n: int = 1) -> None:
        """Count regions left out for a reason."""
        if n:
            self.left_out[reason] = self.left_out.get(reason, 0) + n


def best_regions(
    finder: CloneFinder,
    language: str,
    code: str,
    score: Scorer,
    *,
    limit: int,
    skip: Skip | None = None,
    paths: Callable[[str], bool] | None = None,
    min_lines: int = 1,
) -> BestRegions:
    """The ``limit`` best-scoring regions of the index aligned with ``code`` (module docstring).

    ``paths`` keeps only regions of the files it accepts (a folder or a file as reference);
    regions of fewer than ``min_lines`` lines are left out (and counted).
    """
    config = finder.config
    entry = build_entry(
        HYPOTHESIS_KEY, code, language, min_tokens=config.min_tokens, min_lines=config.min_lines
    )
    out = BestRegions()
    if entry.status not in (OK, GENERATED) or entry.heavy is None:
        return out
    files = finder.index.files
    previous = files.get(HYPOTHESIS_KEY)
    sha = "hypothesis:" + text_sha(entry.heavy.texts)
    files[HYPOTHESIS_KEY] = FileState(HYPOTHESIS_KEY, sha, entry, True)
    try:
        found = _aligned(finder, language, skip, paths, out)
    finally:
        if previous is None:
            files.pop(HYPOTHESIS_KEY, None)
        else:
            files[HYPOTHESIS_KEY] = previous
    ranked: list[BestRegion] = []
    for region, tokens in found:
        if region.lines < min_lines:
            out.count(f"fewer than {min_lines} lines")
            continue
        value = score(tokens)
        if value > 0.0:
            ranked.append(BestRegion(region, value, tokens))
        else:
            out.count("zero score")
    ranked.sort(key=lambda r: (-r.score, r.region.path, r.region.first_line, r.region.start))
    kept: list[BestRegion] = []
    for best in ranked:
        if any(best.region.overlap(k.region) for k in kept):
            out.count("overlaps a better region")
        elif len(kept) >= limit:
            out.count("beyond the limit")
        else:
            kept.append(best)
    out.regions = kept
    return out


def _aligned(
    finder: CloneFinder,
    language: str,
    skip: Skip | None,
    paths: Callable[[str], bool] | None,
    out: BestRegions,
) -> list[tuple[Region, list[str]]]:
    """Distinct regions of other files (or elsewhere in the hypothesis's file) it aligns with."""
    work = finder.workset(language)
    hid = work.ids.get(HYPOTHESIS_KEY)
    if hid is None:
        return []
    runs = runs_of(work.table([hid]).matches([hid]))

    def keep(fa: int, fb: int) -> bool:
        return fa != fb and hid in (fa, fb) and not ({fa, fb} & work.hidden)

    chains = chains_of(runs, SEED, ChainStats(), keep)
    chains.sort(key=lambda c: (-c.aligned, work.paths[c.fb if c.fa == hid else c.fa], c.a0))
    out.count("beyond the chain cap", max(0, len(chains) - MAX_CHAINS))
    seen: set[tuple[str, int, int]] = set()
    found: list[tuple[Region, list[str]]] = []
    for chain in chains[:MAX_CHAINS]:
        cand, _ = candidate(chain, work.side(chain.fa), work.side(chain.fb))
        region = cand.b if chain.fa == hid else cand.a
        if (region.path, region.start, region.end) in seen:
            continue
        seen.add((region.path, region.start, region.end))
        if paths is not None and not paths(region.path):
            out.count("outside the reference path")
            continue
        if skip is not None and region.path == skip[0]:
            if region.first_line <= skip[2] and skip[1] <= region.last_line:
                out.count("the hypothesis itself")
                continue
        heavy = finder.index.heavy(region.path)
        found.append((region, list(heavy.texts[region.start : region.end])))
    out.aligned = len(found)
    return found
