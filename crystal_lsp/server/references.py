"""Automatic references of ``crystal/score``: the best-aligned regions of the workspace.

The clone finder's alignment (:func:`crystal_lsp.clones.references.best_regions`) finds the
regions of the folder's index the hypothesis aligns with; each is scored with CrystalBLEU, the
best :data:`AUTO_KEEP` (score above zero) become the references, labelled ``path:lines (unit)``.
A file or folder given as reference means its best regions the same way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pygls.uris import to_fs_path

from crystal_lsp.clones.findings import display_path
from crystal_lsp.clones.references import BestRegion, BestRegions, Skip, best_regions
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.sset import TriviallySharedSet
from crystal_lsp.server.positions import Codec, TextIndex
from crystal_lsp.server.scoring import Piece, ScoreError
from crystal_lsp.server.workspace import Folder
from crystal_lsp.text.lexers import GENERIC, canonical_name, resolve_lexer
from crystal_lsp.text.lexinput import raw_end, unify_line_ends

AUTO_KEEP = 3
ALIKE = ({"c", "cpp"},)
"""Languages a header may be written in either of (``.h`` lexes as C)."""


@dataclass(frozen=True)
class Within:
    """A file or folder of the workspace whose regions may be references."""

    name: str
    """Its path relative to the folder's root (``.``: the whole folder)."""

    def __call__(self, path: str) -> bool:
        return self.name == "." or path == self.name or path.startswith(self.name + "/")


def region_searches(
    folder: Folder, refs: Sequence[Mapping[str, Any]] | None, language: str, hyp_uri: str | None
) -> dict[int, Within]:
    """The references that mean their best regions: folders, and indexed files without a range.

    A reference with a range, or with ``"whole": true``, is scored as given.
    """
    out: dict[int, Within] = {}
    for k, ref in enumerate(refs or []):
        uri = ref.get("uri")
        if not isinstance(uri, str) or ref.get("range") is not None or ref.get("whole"):
            continue
        fs_path = to_fs_path(uri)
        if fs_path is None:
            continue
        rel, relative = folder.display_path(uri, fs_path)
        if os.path.isdir(fs_path):
            if not relative:
                raise ScoreError(f"references[{k}]: {fs_path} is outside the workspace folder")
            out[k] = Within(rel)
        elif relative and rel in folder.index.files:
            check_same_language(uri, language, f"references[{k}]", hyp_uri)
            out[k] = Within(rel)
    return out


def display(path: str) -> str:
    """The path of an index key (an unsaved buffer's key is its path behind a NUL)."""
    return path[1:] if path.startswith("\0") else path


def _file_language(uri: str | None) -> str:
    name = os.path.basename(to_fs_path(uri) or "") if uri else ""
    return canonical_name(resolve_lexer(None, name, "", guess=False)) if name else GENERIC


def check_same_language(uri: str | None, language: str, what: str, hyp_uri: str | None) -> None:
    """Refuse a reference file written in another language than the hypothesis.

    The reference's language comes from its file name; it may be the language the hypothesis is
    scored in, or that of the hypothesis's own file name (editors name languages their own way).
    """
    if uri is None:
        return
    theirs = _file_language(uri)
    if theirs in (GENERIC, language, _file_language(hyp_uri)):
        return
    if any({theirs, language} <= pair for pair in ALIKE):
        return
    name = os.path.basename(to_fs_path(uri) or uri)
    raise ScoreError(
        f"{what}: {name} is {theirs} code but the hypothesis is scored as {language}; "
        "give references in the hypothesis's language"
    )


class AutoReferences:
    """Best-aligned regions of a folder for a hypothesis (metrics cached per S set)."""

    def __init__(self) -> None:
        self._metrics: dict[tuple[str, str, int, str], CrystalBLEU] = {}

    def metric(self, folder: Folder, language: str, sset: TriviallySharedSet) -> CrystalBLEU:
        """A long-lived CrystalBLEU for ranking regions (it caches n-gram profiles)."""
        config = folder.config
        key = (sset.fingerprint(), config.smoothing, config.max_n, language)
        metric = self._metrics.get(key)
        if metric is None:
            if len(self._metrics) > 8:
                self._metrics.clear()
            metric = self._metrics[key] = CrystalBLEU(
                sset, max_n=config.max_n, smoothing=config.smoothing_spec, language=language
            )
        return metric

    def find(
        self,
        folder: Folder,
        language: str,
        hypothesis: Piece,
        crystal: CrystalBLEU,
        skip: Skip | None,
        codec: Codec | None,
        within: Within | None = None,
    ) -> tuple[list[Piece], dict[str, Any]]:
        """The best references and how they were found (worker thread)."""
        if not hypothesis.tokens:
            return [], {"aligned": 0, "leftOut": []}
        profile = crystal.profile(hypothesis.tokens)

        def score(tokens: Any) -> float:
            return crystal.score_profiles(
                profile,
                [crystal.profile(list(tokens))],
                hypothesis=hypothesis.tokens,
                references=[list(tokens)],
            )

        own = _own_lines(folder, skip, hypothesis) if skip is not None else None
        found: BestRegions = best_regions(
            folder.finder,
            language,
            hypothesis.code,
            score,
            limit=AUTO_KEEP,
            skip=own,
            paths=(lambda p: within(display(p))) if within is not None else None,
        )
        left_out = [{"reason": r, "count": n} for r, n in sorted(found.left_out.items())]
        note = {"aligned": found.aligned, "leftOut": left_out}
        return [_piece(folder, best, codec) for best in found.regions], note


def _own_lines(folder: Folder, skip: Skip, hypothesis: Piece) -> Skip:
    """The hypothesis's own lines as the index holds them (worker thread).

    A modified open buffer is indexed under its private key, in the version last checked, which
    may be older than the text scored (a check is pending): there its lines are found by content,
    the occurrence nearest to where they are now.
    """
    path, first, last = skip
    for buffer in folder.buffers.values():
        if buffer.path != path or not buffer.injected or buffer.entry is None:
            continue
        indexed = buffer.entry.source
        if indexed == unify_line_ends(hypothesis.text):
            return (buffer.key, first, last)
        block = unify_line_ends(hypothesis.text).split("\n")[first - 1 : last]
        lines = indexed.split("\n")
        found = [
            i + 1
            for i, line in enumerate(lines)
            if block and line == block[0] and lines[i : i + len(block)] == block
        ]
        at = min(found, key=lambda n: (abs(n - first), n), default=first)
        return (buffer.key, at, at + last - first)
    return skip


def _piece(folder: Folder, best: BestRegion, codec: Codec | None) -> Piece:
    """A region as a scored reference, labelled ``path:first-last (unit)``."""
    region = best.region
    path = display(region.path)
    entry = folder.index.files[region.path].entry
    heavy = folder.index.heavy(region.path)
    text = folder.text_of(path) or ""
    index = TextIndex(text, codec)
    rng = index.range(region.first_line, region.first_col, region.last_line, region.last_col)
    unit = entry.snippets[region.unit] if 0 <= region.unit < len(entry.snippets) else None
    what = f" ({unit.kind} {unit.name})" if unit is not None and region.whole and unit.name else ""
    lines = (
        f"{region.first_line}"
        if region.first_line == region.last_line
        else f"{region.first_line}-{region.last_line}"
    )
    starts = heavy.starts[region.start : region.end]
    return Piece(
        f"{display_path(path)}:{lines}{display_path(what)}",
        folder.uri_of(path),
        text,
        starts[0],
        raw_end(text, starts[-1], best.tokens[-1]),
        rng,
        list(best.tokens),
        list(starts),
        heavy.cats[region.start : region.end],
        index,
    )
