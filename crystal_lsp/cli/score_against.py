"""``crystal-lsp score --hyp FILE --against PATH``: references found in a repository or folder.

PATH is indexed as the clone finder indexes a repository (its cache is reused); the regions of
its files the hypothesis aligns with best (:func:`crystal_lsp.clones.references.best_regions`)
become the references, ranked by CrystalBLEU, zero scores and regions shorter than the smaller
of the hypothesis and the finder's ``min_lines`` dropped; they are listed with the score, and
what was left out is counted.

The *verdict* is the clone finder's, as ``scan`` and the MCP server give it: the hypothesis joins
the index as an override (shadowing its own file when it is one of PATH's), only its pairs are
aligned, and the finding it belongs to says what it is (``renamed copy of a.py:3-9 (function f),
similarity 1.00``) -- raw CrystalBLEU alone is low for a renamed copy.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import Any

from crystal_lsp.clones.finder import CloneFinder
from crystal_lsp.clones.findings import Finding, Pair, display_path
from crystal_lsp.clones.index import FileState, RepoIndex
from crystal_lsp.clones.references import HYPOTHESIS_KEY
from crystal_lsp.clones.reports.agent import place, what
from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import TriviallySharedSet
from crystal_lsp.text.entries import OK, build_entry
from crystal_lsp.text.fingerprints import content_sha
from crystal_lsp.text.tokens import Tokens

DEFAULT_KEEP = 3


@dataclass(frozen=True)
class Verdict:
    """What the clone finder says the hypothesis is: a copy of an original, or new code."""

    text: str
    type: str | None = None
    """``exact``, ``renamed`` or ``near`` (None: no copy found)."""
    original: str | None = None
    similarity: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The verdict as reported in JSON."""
        return {
            "text": self.text,
            "type": self.type,
            "original": self.original,
            "similarity": self.similarity,
        }


@dataclass
class Found:
    """References found under a path, with their labels and what was left out."""

    references: list[list[str]]
    labels: list[str]
    scores: list[float]
    aligned: int
    left_out: dict[str, int]
    sset: TriviallySharedSet
    verdict: Verdict

    def to_json(self) -> dict[str, Any]:
        """The search as reported in JSON."""
        return {
            "aligned": self.aligned,
            "leftOut": self.left_out,
            "regions": [{"label": lb, "crystalbleu": s} for lb, s in zip(self.labels, self.scores)],
        }


def find_references(
    args: argparse.Namespace,
    hypothesis: Tokens,
    code: str,
    language: str,
    sset: TriviallySharedSet | None,
) -> Found:
    """The best regions of ``args.against`` for the hypothesis (S: given, else the repository's)."""
    from crystal_lsp.clones.files import list_files
    from crystal_lsp.clones.references import best_regions
    from crystal_lsp.clones.scan import open_store
    from crystal_lsp.clones.settings import load_config

    target = os.path.abspath(args.against)
    if not os.path.exists(target):
        raise CrystalError(f"--against {args.against}: no such file or directory")
    root = target if os.path.isdir(target) else os.path.dirname(target)
    config = load_config(root, {})
    paths = list_files(root, config) if os.path.isdir(target) else [os.path.basename(target)]
    store = open_store(root)
    try:
        index = RepoIndex(root, config, store)
        index.refresh(paths)
        if not any(s.entry.language == language for s in index.files.values()):
            raise CrystalError(f"--against {args.against}: no {language} code indexed there")
        sset = sset if sset is not None else index.sets(language).raw
        crystal = CrystalBLEU(
            sset, max_n=args.max_n, smoothing=Smoothing.parse(args.smoothing), language=language
        )
        hyp = list(hypothesis.texts)
        profile = crystal.profile(hyp)

        def score(tokens: Any) -> float:
            ref = list(tokens)
            return crystal.score_profiles(
                profile, [crystal.profile(ref)], hypothesis=hyp, references=[ref]
            )

        own = os.path.relpath(os.path.abspath(args.hyp), root).replace(os.sep, "/")
        own = own if own in index.files else ""
        skip = (own, 1, 10**9) if own else None
        lines = min(config.min_lines, code.count("\n") + (not code.endswith("\n")))
        found = best_regions(
            CloneFinder(index), language, code, score, limit=args.keep, skip=skip, min_lines=lines
        )
        verdict = clone_verdict(index, language, code, own)
    finally:
        store.close()
    labels = [_label(b.region) for b in found.regions]
    return Found(
        [b.tokens for b in found.regions],
        labels,
        [b.score for b in found.regions],
        found.aligned,
        dict(sorted(found.left_out.items())),
        sset,
        verdict,
    )


def clone_verdict(index: RepoIndex, language: str, code: str, own: str) -> Verdict:
    """The clone finder's verdict on ``code`` against the index (module docstring)."""
    config = index.config
    entry = build_entry(
        HYPOTHESIS_KEY, code, language, min_tokens=config.min_tokens, min_lines=config.min_lines
    )
    if entry.status != OK:
        status = entry.status.replace("_", " ")
        return Verdict(f"not checked: the hypothesis is {status} ({entry.token_count} tokens)")
    sha = content_sha(code.encode("utf-8", "surrogatepass"))
    index.files[HYPOTHESIS_KEY] = FileState(HYPOTHESIS_KEY, sha, entry, True)
    finder = CloneFinder(
        index,
        pair_filter=lambda a, b: HYPOTHESIS_KEY in (a, b),
        shadow=lambda path: (own or None) if path == HYPOTHESIS_KEY else None,
    )
    try:
        found = finder.find({HYPOTHESIS_KEY: None}).get(language)
    finally:
        index.files.pop(HYPOTHESIS_KEY, None)
    best: tuple[float, Finding, Pair] | None = None
    for finding in found.findings if found is not None else []:
        mine = [k for k, loc in enumerate(finding.locations) if loc.path == HYPOTHESIS_KEY]
        for pair in finding.pairs:
            if (pair.a in mine) != (pair.b in mine) and (
                best is None or pair.copied * pair.similarity > best[0]
            ):
                best = (pair.copied * pair.similarity, finding, pair)
    if best is None:
        return Verdict(f"no copy found (clone finder threshold {config.threshold:g})")
    _, finding, pair = best
    original = finding.locations[
        pair.b if finding.locations[pair.a].path == HYPOTHESIS_KEY else pair.a
    ]
    return Verdict(
        f"{finding.type} copy of {place(original)} ({what(original)}), "
        f"similarity {pair.similarity:.2f}",
        finding.type,
        place(original),
        pair.similarity,
    )


def _label(region: Any) -> str:
    lines = (
        str(region.first_line)
        if region.first_line == region.last_line
        else f"{region.first_line}-{region.last_line}"
    )
    return f"{display_path(region.path)}:{lines}"
