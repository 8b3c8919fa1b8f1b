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

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence

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


Member = tuple[int, int, int]
"""A unit of a group: its file (position in the files given), first and end raw token."""


def unit_groups(entries: Sequence[Entry | None]) -> dict[str, list[Member]]:
    """The units (not data, not suppressed) of the given files by normalized digest, in order.

    ``None`` entries take no part.
    """
    groups: dict[str, list[Member]] = defaultdict(list)
    for f, entry in enumerate(entries):
        if entry is not None:
            for norm_sha, start, end in _units(entry):
                groups[norm_sha].append((f, start, end))
    return groups


def _units(entry: Entry) -> list[tuple[str, int, int]]:
    return [
        (m.norm_sha, m.start, m.end) for m in entry.snippets if m.kind != DATA and not m.suppressed
    ]


def overcopied_spans(entries: Sequence[Entry | None], max_df: int) -> Spans:
    """The spans of all but the first unit of each over-copied group (module docstring).

    A group is the units (not data, not suppressed) of the given files with the same normalized
    tokens; ``None`` entries take no part.
    """
    return group_spans(unit_groups(entries).values(), lambda f: entries[f], max_df)


def group_spans(
    groups: Iterable[list[Member]], entry_of: Callable[[int], Entry | None], max_df: int
) -> Spans:
    """The normalized spans of all but the first unit of each over-copied group, by file."""
    out: Spans = defaultdict(list)
    least = overcopied(max_df)
    for members in groups:
        if len(members) < least:
            continue
        for f, start, end in sorted(members)[1:]:
            entry = entry_of(f)
            assert entry is not None
            out[f].append(entry.normalized_span(start, end))
    return {f: sorted(spans) for f, spans in out.items()}


def regrouped_spans(
    groups: dict[str, list[Member]],
    dropped: Spans,
    entry_of: Callable[[int], Entry],
    changes: tuple[set[int], Sequence[int]],
    max_df: int,
) -> Spans:
    """:func:`overcopied_spans` after some files left the groups and others joined them.

    ``groups`` and ``dropped`` are those of the files before (``dropped``: their spans);
    ``changes`` are the files that left and those that joined. Only the groups these files
    have units in are regrouped: the spans of every file with a unit in one of them are
    returned (the others keep theirs).
    """
    left, joined = changes
    joining: dict[str, list[Member]] = defaultdict(list)
    for f in joined:
        for norm_sha, start, end in _units(entry_of(f)):
            joining[norm_sha].append((f, start, end))
    touched = set(joining)
    for f in left:
        touched.update(norm_sha for norm_sha, _, _ in _units(entry_of(f)))
    before = [groups.get(g, []) for g in touched]
    after = [
        [m for m in groups.get(g, []) if m[0] not in left] + joining.get(g, []) for g in touched
    ]
    files = {m[0] for members in before + after for m in members}
    old = group_spans(before, entry_of, max_df)
    new = group_spans(after, entry_of, max_df)
    out: Spans = {}
    for f in files:
        spans = Counter(dropped.get(f, []))
        spans.subtract(old.get(f, []))
        spans.update(new.get(f, []))
        out[f] = sorted(spans.elements())
    return out


def without_spans(seeds: FileSeeds, spans: Sequence[tuple[int, int]]) -> FileSeeds:
    """The seeds that start outside every span."""
    if not spans:
        return seeds
    keep = np.ones(len(seeds.positions), dtype=bool)
    for lo, hi in spans:
        keep &= (seeds.positions < lo) | (seeds.positions >= hi)
    return FileSeeds(seeds.positions[keep], seeds.hashes[keep])
