"""The verdict on an inserted block: a copy of a region of the workspace, or new code.

The block was scored as ``crystal/score`` scores a hypothesis with automatic references (the
best-aligned regions, ranked by CrystalBLEU). Whether it *copies* one of them is the clone
finder's decision, asked of the same seam (:class:`crystal_lsp.clones.similarity.Similarity`)
with the insertion threshold in place of the finder's: the lower normalized CrystalBLEU of both
directions reaches the threshold, and the raw tokens agree or differ by a consistent renaming.
Of the references, the one judged a copy with the highest similarity is named (else the one
with the highest similarity: the *closest*); its kind is ``exact`` (same tokens), ``renamed``
(same tokens once names and literals are abstracted) or ``near``, as for findings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from crystal_lsp.clones.findings import EXACT, NEAR, RENAMED
from crystal_lsp.clones.similarity import NORMALIZED, Code, Item
from crystal_lsp.server.scoring import Piece
from crystal_lsp.server.workspace import Folder

COPY, NEW = "copy", "new"


def _item(piece: Piece) -> tuple[Item, Code]:
    code = Code(piece.tokens, piece.cats)
    return ("", lambda: code), code


def judge(
    folder: Folder,
    language: str,
    hypothesis: Piece,
    references: Sequence[Piece],
    threshold: float,
) -> dict[str, Any]:
    """``{"verdict", "kind", "similarity", "best"}`` of a block (worker thread).

    ``best``: the index of the named reference (None when nothing aligned: new code).
    """
    if not references or not hypothesis.tokens:
        return {"verdict": NEW, "kind": None, "similarity": None, "best": None}
    similarity = replace(folder.finder.similarity(language), threshold=threshold, cache={})
    mine, code = _item(hypothesis)
    ranked = []
    for k, reference in enumerate(references):
        theirs, _ = _item(reference)
        value = similarity.decision(mine, theirs)
        copy = similarity.copies(similarity.pair_scores(mine, theirs))
        ranked.append(((copy, value, -k), k, value, copy))
    _, best, value, copy = max(ranked)
    other = Code(references[best].tokens, references[best].cats)
    if list(code.texts) == list(other.texts):
        kind = EXACT
    elif code.view(NORMALIZED) == other.view(NORMALIZED):
        kind = RENAMED
    else:
        kind = NEAR
    return {
        "verdict": COPY if copy else NEW,
        "kind": kind if copy else None,
        "similarity": value,
        "best": best,
    }
