"""Moves: added code that the same change removes elsewhere is not a new copy.

Moving a function to another file (or within its file), renaming a file while editing it, or
editing code in place all show up as added lines; if that code already had a copy somewhere,
the clone finder pairs the added snippet with it, yet the change did not *add* a copy. So each
added snippet is matched against the snippets of the old versions of changed files that
overlap removed lines: pairs whose normalized content is equal, or whose similarity (the
clone finder's decision, :meth:`crystal_lsp.clones.similarity.Similarity.decision`) reaches the
threshold. Each removed snippet explains at
most one added snippet (greedily: same file or rename first, then the most similar), so copying
a function *and* editing the original in the same commit still leaves one copy reported.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from crystal_lsp.clones.git import Spans
from crystal_lsp.clones.index import RepoIndex
from crystal_lsp.clones.index.retrieval import Postings
from crystal_lsp.clones.similarity import Code, Similarity
from crystal_lsp.text.entries import OK
from crystal_lsp.text.fingerprints import U64

from .report import Key

MIN_SHARE = 0.2  # shingle overlap below which a pair is not even scored
TOP = 10  # most-overlapping removed snippets scored per added snippet


@dataclass(frozen=True)
class Piece:
    """A snippet on one side of the change, with what matching needs."""

    language: str
    path: str
    first_line: int
    last_line: int
    sha: str
    norm_sha: str
    shingles: U64
    code: Code

    @property
    def key(self) -> Key:
        """Identifies the snippet (as :func:`.report.location_key` a finding's location)."""
        return (self.path, self.first_line, self.last_line, self.sha)


def _overlaps(first: int, last: int, spans: Spans) -> bool:
    return any(first <= hi and lo <= last for lo, hi in spans)


def added_pieces(index: RepoIndex, focus: Mapping[str, Spans]) -> list[Piece]:
    """Indexed snippets overlapping the given lines (the added ones, for the new state)."""
    out = []
    for path, spans in sorted(focus.items()):
        state = index.files.get(path)
        if state is None or state.entry.status != OK:
            continue
        heavy = None
        for i, meta in enumerate(state.entry.snippets):
            if not _overlaps(meta.first_line, meta.last_line, spans):
                continue
            heavy = heavy or index.heavy(path)
            out.append(
                Piece(
                    state.entry.language,
                    path,
                    meta.first_line,
                    meta.last_line,
                    meta.sha,
                    meta.norm_sha,
                    state.entry.shingles[i],
                    Code(heavy.texts[meta.start : meta.end], heavy.cats[meta.start : meta.end]),
                )
            )
    return out


def removed_pieces(
    old_index: RepoIndex, old: Mapping[str, bytes], removed: Mapping[str, Spans]
) -> list[Piece]:
    """Snippets of the old file versions overlapping the removed lines.

    ``old_index`` is a second index over the same store: the old versions were usually
    indexed when they were new (by an earlier run of the hook, the CLI or the server), so
    their entries come from the cache instead of being tokenized again.
    """
    old_index.load(old_index.snapshot([], {p: d for p, d in old.items() if removed.get(p)}))
    return added_pieces(old_index, removed)


def _pairs(added: list[Piece], removed: list[Piece], top: int) -> set[tuple[int, int]]:
    """Candidate (added, removed) index pairs: equal normalized content or shared shingles.

    Retrieval goes through an inverted index (:class:`Postings`), so deleting a large
    directory in the same commit does not make the check quadratic.
    """
    out: set[tuple[int, int]] = set()
    by_norm: dict[tuple[str, str], list[int]] = defaultdict(list)
    by_language: dict[str, list[int]] = defaultdict(list)
    for j, r in enumerate(removed):
        by_norm[(r.language, r.norm_sha)].append(j)
        by_language[r.language].append(j)
    postings = {
        language: Postings(
            [removed[j].shingles for j in members], np.empty(0, dtype=np.uint64), 2**31
        )
        for language, members in by_language.items()
    }
    for i, a in enumerate(added):
        out.update((i, j) for j in by_norm.get((a.language, a.norm_sha), ()))
        if a.language in postings:
            owners, _ = postings[a.language].query(a.shingles, MIN_SHARE, top)
            members = by_language[a.language]
            out.update((i, members[k]) for k in owners.tolist())
    return out


def match_moves(
    index: RepoIndex,
    added: list[Piece],
    removed: list[Piece],
    renamed_from: Mapping[str, str],
) -> dict[Key, Piece]:
    """Added snippet key -> the removed snippet it moved from (see the module docstring)."""
    config = index.config
    seams: dict[str, Similarity] = {}

    def similarity(a: Piece, b: Piece) -> float:
        if a.norm_sha == b.norm_sha:
            return 1.0
        seam = seams.get(a.language)
        if seam is None:
            sets = index.sets(a.language)
            seam = seams[a.language] = Similarity.of(sets.raw, sets.norm, config, a.language)
        return seam.decision(("", lambda: a.code), ("", lambda: b.code))

    candidates: list[tuple[bool, float, Piece, Piece]] = []
    for i, j in _pairs(added, removed, TOP):
        a, r = added[i], removed[j]
        score = similarity(a, r)
        if score >= config.threshold:
            candidates.append((r.path == renamed_from.get(a.path, a.path), score, a, r))
    candidates.sort(key=lambda c: (not c[0], -c[1], c[2].key, c[3].key))
    moved: dict[Key, Piece] = {}
    used: set[Key] = set()
    for _, _, a, r in candidates:
        if a.key in moved or r.key in used:
            continue
        moved[a.key] = r
        used.add(r.key)
    return moved
