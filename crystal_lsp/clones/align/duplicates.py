"""Duplicates that alignment sees once: identical files, and units copied past ``max-df``.

* **Identical files.** Of files with the same content, the first (files on disk before unsaved
  buffers, then by path) stands for all: the others take no part in alignment or in the digests
  of units, so the copies inside one of them are reported once, not once per file, and the
  identical files are one finding of their own (:mod:`crystal_lsp.clones.align.wholes`).
* **Units copied past max-df.** A seed found at more than ``max-df`` places pairs nothing
  (:mod:`crystal_lsp.clones.align.seeds`): a function pasted into 55 files would make every seed
  of its original boilerplate, and the original would be lost while its 55 copies are grouped by
  digest. Seeds inside a unit whose normalized tokens are those of more than ``max-df`` units
  count once: the first such unit keeps them, the others drop them, so the original still aligns
  with the group (through its first member), whatever ``max-df`` is. A group counts from half
  of ``max-df`` units (:func:`overcopied`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from crystal_lsp.clones.align.seeds import FileSeeds
from crystal_lsp.text.entries import Entry
from crystal_lsp.text.snippets import DATA


def duplicate_files(keys: Sequence[tuple[str, str]]) -> set[int]:
    """Positions of files whose content an earlier file has: ``keys[i] = (order, digest)``.

    ``order`` sorts the file among those of the same content (the first one stands for all).
    """
    first: dict[str, tuple[str, int]] = {}
    for i, (order, sha) in enumerate(keys):
        known = first.get(sha)
        if known is None or order < known[0]:
            first[sha] = (order, i)
    return {i for i, (_, sha) in enumerate(keys) if first[sha][1] != i}


Spans = dict[int, list[tuple[int, int]]]
"""Per file (position in the files given): normalized token spans whose seeds are dropped."""


def overcopied(max_df: int) -> int:
    """How many units of the same tokens make them over-copied (half of ``max-df``, at least 2).

    At ``max-df`` copies, every seed of the code they were copied from is boilerplate; from half
    of it, a few more near copies would make it so.
    """
    return max(2, max_df // 2)


def overcopied_spans(entries: Sequence[Entry | None], max_df: int) -> Spans:
    """The spans of all but the first unit of each over-copied group (module docstring).

    A group is the units (not data, not suppressed) of the given files with the same normalized
    tokens; ``None`` entries take no part.
    """
    groups: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for f, entry in enumerate(entries):
        if entry is None:
            continue
        for meta in entry.snippets:
            if meta.kind != DATA and not meta.suppressed:
                groups[meta.norm_sha].append((f, meta.start, meta.end))
    out: Spans = defaultdict(list)
    least = overcopied(max_df)
    for members in groups.values():
        if len(members) < least:
            continue
        for f, start, end in sorted(members)[1:]:
            entry = entries[f]
            assert entry is not None
            out[f].append(entry.normalized_span(start, end))
    return {f: sorted(spans) for f, spans in out.items()}


def without_spans(seeds: FileSeeds, spans: Sequence[tuple[int, int]]) -> FileSeeds:
    """The seeds that start outside every span."""
    if not spans:
        return seeds
    keep = np.ones(len(seeds.positions), dtype=bool)
    for lo, hi in spans:
        keep &= (seeds.positions < lo) | (seeds.positions >= hi)
    return FileSeeds(seeds.positions[keep], seeds.hashes[keep])
