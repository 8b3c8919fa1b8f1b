"""Where added lines moved from: the line-level move map of :mod:`crystal_lsp.clones.created`.

Moving tests into a new file, or a function to another module, adds every moved line and
removes it at its old place. A pair of places that were copies before and moved together is
not a copy the change creates, but wholly added code has no old range through the diff's
hunks. So added lines are matched with removed lines of the same text (leading and trailing
blanks aside, as re-indenting a block does not change it): runs of at least :data:`MIN_RUN`
consecutive non-trivial lines equal on both sides, the longest first, each added and each
removed line used by one run at most -- so a function moved *and* copied elsewhere in the
same commit explains one of the two places, never both. Lines a run does not cover (edited
while moving) stay unmapped; a location counts as moved when most of its lines are mapped
(:func:`moved_range`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from crystal_lsp.clones.git import Spans

MIN_RUN = 3
"""Consecutive equal non-trivial lines from which added lines count as moved."""
MOVED_SHARE = 0.8
"""Share of a location's non-trivial added lines that must come from one old place."""
MAX_REPEATS = 64
"""A line text removed more often than this (a lone ``return err``) starts no run."""

Numbered = list[tuple[int, str]]
"""Non-trivial lines of one file: (1-based line number, stripped text)."""
Origin = tuple[str, int]
"""``(old path, old line)`` an added line moved from."""


def trivial(text: str) -> bool:
    """A line that says nothing on its own (blank, a lone brace or bracket)."""
    return sum(c.isalnum() for c in text) < 2


def numbered(lines: Sequence[str], spans: Spans) -> Numbered:
    """The non-trivial lines of ``lines`` inside ``spans`` (1-based, inclusive), stripped."""
    out: Numbered = []
    for lo, hi in spans:
        for n in range(max(1, lo), min(hi, len(lines)) + 1):
            text = lines[n - 1].strip()
            if not trivial(text):
                out.append((n, text))
    return out


def _runs(new: Numbered, old: Numbered) -> list[tuple[int, int, int]]:
    """Maximal runs ``(length, i, j)``: new[i + k] equals old[j + k] for k below length."""
    where: dict[str, list[int]] = defaultdict(list)
    for j, (_, text) in enumerate(old):
        where[text].append(j)
    out = []
    for i, (_, text) in enumerate(new):
        places = where.get(text, ())
        if len(places) > MAX_REPEATS:
            continue
        for j in places:
            if i and j and new[i - 1][1] == old[j - 1][1]:
                continue  # not the start of a run
            k = 1
            while i + k < len(new) and j + k < len(old) and new[i + k][1] == old[j + k][1]:
                k += 1
            if k >= MIN_RUN:
                out.append((k, i, j))
    return out


def move_map(
    added: Mapping[str, Numbered],
    removed: Mapping[str, Numbered],
    renamed_from: Mapping[str, str] | None = None,
) -> dict[str, dict[int, Origin]]:
    """New path -> new line -> the old line it moved from (see the module docstring).

    Longer runs win; on equal length, a run within one file (or its rename) first, then by
    path and line, so the map does not depend on the order of the inputs.
    """
    renamed = renamed_from or {}
    runs = []
    for new_path, new in added.items():
        for old_path, old in removed.items():
            same = old_path == renamed.get(new_path, new_path)
            for length, i, j in _runs(new, old):
                runs.append((-length, not same, new_path, i, old_path, j))
    runs.sort()
    used_new: set[tuple[str, int]] = set()
    used_old: set[tuple[str, int]] = set()
    out: dict[str, dict[int, Origin]] = defaultdict(dict)
    for neg, _, new_path, i, old_path, j in runs:
        free = [
            k
            for k in range(-neg)
            if (new_path, i + k) not in used_new and (old_path, j + k) not in used_old
        ]
        if len(free) < MIN_RUN:
            continue
        for k in free:
            used_new.add((new_path, i + k))
            used_old.add((old_path, j + k))
            out[new_path][added[new_path][i + k][0]] = (old_path, removed[old_path][j + k][0])
    return dict(out)


def moved_range(lines: Numbered, origins: Mapping[int, Origin]) -> tuple[str, int, int] | None:
    """The old range the numbered added lines of a location moved from, if most did.

    At least :data:`MOVED_SHARE` of them (and :data:`MIN_RUN`) must come from one old file;
    the range spans the old lines they came from.
    """
    by_path: dict[str, list[int]] = defaultdict(list)
    for n, _ in lines:
        origin = origins.get(n)
        if origin is not None:
            by_path[origin[0]].append(origin[1])
    if not by_path:
        return None
    path, olds = max(by_path.items(), key=lambda kv: (len(kv[1]), kv[0]))
    if len(olds) < max(MIN_RUN, MOVED_SHARE * len(lines)):
        return None
    return path, min(olds), max(olds)
