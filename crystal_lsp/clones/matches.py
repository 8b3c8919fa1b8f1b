"""What a piece of code repeats: the repository's best-matching code for a query.

One answer for every adapter that asks "which code of the repository does this snippet repeat?":
the language server's automatic references for scoring a selection, ``crystal-lsp score
--against``, and an agent's duplication check. The query is token texts with their categories
(any code, indexed or not); the answer is the indexed code it matches best, each match with the
decision similarity (normalized view, the lower direction) and raw CrystalBLEU of the query
against it, ranked by similarity, then CrystalBLEU, then path and line -- never by the order in
which files were listed. Matches with no similarity at all are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from crystal_lsp.clones.finder import CloneFinder
from crystal_lsp.clones.similarity import RAW, Code, Item, Similarity
from crystal_lsp.text.entries import SnippetMeta
from crystal_lsp.text.fingerprints import shingles
from crystal_lsp.text.views import normalized

CANDIDATES_PER_MATCH = 8
Exclude = Callable[[str, int, int], bool]
"""``(path, first line, last line) -> True`` to leave a piece of code out of the answer."""


@dataclass(frozen=True)
class Match:
    """Indexed code a query matches (1-based lines and columns, token range in the file)."""

    path: str
    start: int
    end: int
    first_line: int
    first_col: int
    last_line: int
    last_col: int
    kind: str
    name: str
    similarity: float
    """Decision similarity of the query and this code (normalized view, lower direction)."""
    crystalbleu: float
    """Raw CrystalBLEU of the query against this code (the query as hypothesis)."""

    @property
    def label(self) -> str:
        """``path:first-last (kind name)``."""
        what = f"{self.kind} {self.name}".strip()
        return f"{self.path}:{self.first_line}-{self.last_line}" + (f" ({what})" if what else "")


def find_matches(
    finder: CloneFinder,
    language: str,
    texts: Sequence[str],
    cats: str,
    *,
    limit: int = 3,
    exclude: Exclude | None = None,
) -> list[Match]:
    """The ``limit`` best matches of a query among the indexed code of one language."""
    if not texts or language not in finder.index.languages():
        return []
    refs, metas, postings = finder.retrieval(language)
    similarity = finder.similarity(language)
    query = shingles(normalized(texts, cats))
    owners, shared = postings.query(query, 0.0, max(1, len(refs)))
    # most shared shingles first, ties by place: the same answer whatever the listing order
    order = sorted(
        range(len(owners)),
        key=lambda k: (-int(shared[k]), refs[owners[k]][0], metas[owners[k]].start),
    )
    code = Code(list(texts), cats)
    item: Item = ("", lambda: code)
    out: list[Match] = []
    for k in order[: limit * CANDIDATES_PER_MATCH]:
        path, meta = refs[owners[k]][0], metas[owners[k]]
        if exclude is not None and exclude(path, meta.first_line, meta.last_line):
            continue
        match = _match(finder, similarity, item, path, meta)
        if match.similarity > 0.0 or match.crystalbleu > 0.0:
            out.append(match)
    out.sort(key=lambda m: (-m.similarity, -m.crystalbleu, m.path, m.first_line, m.start))
    return out[:limit]


def _match(
    finder: CloneFinder, similarity: Similarity, query: Item, path: str, meta: SnippetMeta
) -> Match:
    heavy = finder.index.heavy(path)
    code = Code(heavy.texts[meta.start : meta.end], heavy.cats[meta.start : meta.end])
    other: Item = (meta.sha, lambda: code)
    decision = similarity.decision(query, other)
    raw = similarity.directed(RAW, query, other)
    return Match(
        path,
        meta.start,
        meta.end,
        meta.first_line,
        meta.first_col,
        meta.last_line,
        meta.last_col,
        meta.kind,
        meta.name,
        decision,
        raw,
    )
