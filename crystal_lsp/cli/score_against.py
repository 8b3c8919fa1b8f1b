"""``crystal-lsp score --hyp FILE --against PATH``: references found in a repository or folder.

PATH is indexed as the clone finder indexes a repository (its cache is reused); the regions of
its files the hypothesis aligns with best (:func:`crystal_lsp.clones.references.best_regions`)
become the references, ranked by CrystalBLEU, zero scores dropped; they are listed with the
score, and what was left out is counted.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import Any

from crystal_lsp.clones.findings import display_path
from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import TriviallySharedSet
from crystal_lsp.text.tokens import Tokens

DEFAULT_KEEP = 3


@dataclass
class Found:
    """References found under a path, with their labels and what was left out."""

    references: list[list[str]]
    labels: list[str]
    scores: list[float]
    aligned: int
    left_out: dict[str, int]
    sset: TriviallySharedSet

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
    from crystal_lsp.clones.finder import CloneFinder
    from crystal_lsp.clones.index import RepoIndex
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
        skip = (own, 1, 10**9) if own in index.files else None
        found = best_regions(CloneFinder(index), language, code, score, limit=args.keep, skip=skip)
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
    )


def _label(region: Any) -> str:
    lines = (
        str(region.first_line)
        if region.first_line == region.last_line
        else f"{region.first_line}-{region.last_line}"
    )
    return f"{display_path(region.path)}:{lines}"
