"""Whole copies of a search: exact and renamed units grouped by digest, and identical files.

Step 4's digest grouping (:mod:`crystal_lsp.clones.align.digests`) for the files of a search: each
group's first unit is paired with the others, their copied tokens counted outside noise, and the
pairs decided by the similarity seam like aligned ones (:func:`alignment.decided`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from crystal_lsp.clones.align.alignment import Found, decided, min_copied_tokens
from crystal_lsp.clones.align.candidates import main_noise_kind
from crystal_lsp.clones.align.digests import (
    Unit,
    file_region,
    identical_files,
    representative_pairs,
    unit_groups,
)
from crystal_lsp.clones.align.pairs import RegionPair

if TYPE_CHECKING:
    from crystal_lsp.clones.align.workset import Copies, Workset


def whole_copies(
    work: Workset,
    among: Sequence[int] | None,
    done: set[int],
    out: Copies,
    touching: set[str] | None = None,
) -> list[RegionPair]:
    """Exact and renamed copies of whole units, and identical files, touching ``among``.

    With ``touching``, only the groups with a member in those files (each group whole).
    """
    started = time.perf_counter()
    files = work.finder.index.files
    config = work.finder.config
    min_copied = min_copied_tokens(config.min_tokens)
    wanted = None if among is None else set(among)

    def fresh(x: int, y: int) -> bool:
        if wanted is not None and x not in wanted and y not in wanted:
            return False
        # a pair filter spares alignment; digests are cheap and whole groups must stay whole
        allowed = (None, "identical", "filtered")
        return x not in done and y not in done and work.skip_reason(x, y) in allowed

    units = _units(work, touching)
    found: list[Found] = []
    groups = unit_groups(units, config.report_data)
    if touching is not None:
        groups = [g for g in groups if any(u.path in touching for u in g)]
    for rep, other in representative_pairs(groups):
        x, y = work.ids[rep.path], work.ids[other.path]
        if not fresh(x, y) or files[rep.path].sha == files[other.path].sha:
            continue
        copied = min(_unit_copied(work, x, rep), _unit_copied(work, y, other))
        if copied < min_copied:
            out.filtered[main_noise_kind(work.entry(x), [(rep.meta.start, rep.meta.end)])] += 1
            continue
        items = (
            work.item(x, rep.meta.start, rep.meta.end, rep.meta.sha),
            work.item(y, other.meta.start, other.meta.end, other.meta.sha),
        )
        found.append((x, y, rep.region(), other.region(), copied, items))
    found += _identical(work, fresh, out, min_copied, touching)
    out.time("grouping", started)
    return [pair for pair in decided(work, found, out, None) if pair is not None]


def _units(work: Workset, touching: set[str] | None) -> list[Unit]:
    """The units to group: all of them, or those sharing a digest with a unit of ``touching``."""
    files = work.finder.index.files
    if touching is None:
        return [
            Unit(work.paths[i], k, meta)
            for i in work.ids.values()
            if i not in work.duplicates  # an identical file's units are its original's
            for k, meta in enumerate(files[work.paths[i]].entry.snippets)
        ]
    # a group touches those files only if one of their units has its digest: leave the other
    # units out before grouping (the groups kept are the same, at a fraction of the cost)
    digests = {m.norm_sha for p in touching if p in files for m in files[p].entry.snippets}
    return [
        Unit(work.paths[i], k, files[work.paths[i]].entry.snippets[k])
        for i, k in work.units_of(digests)
    ]


def _identical(
    work: Workset,
    fresh: Callable[[int, int], bool],
    out: Copies,
    min_copied: int,
    touching: set[str] | None,
) -> list[Found]:
    """Identical files as whole-file candidates (scored like any other pair)."""
    files = work.finder.index.files
    ids: Iterable[int] = work.ids.values()
    if touching is not None:  # only the files of the touching files' contents
        shas = {files[p].sha for p in touching if p in work.ids}
        ids = sorted(i for i in ids if files[work.paths[i]].sha in shas)
    triples = [
        (work.paths[i], files[work.paths[i]].sha, files[work.paths[i]].entry.token_count)
        for i in ids
    ]
    found: list[Found] = []
    for group in identical_files(triples, work.finder.config.min_tokens):
        if touching is not None and not touching.intersection(group):
            continue
        first = work.ids[group[0]]
        side = work.side(first)
        copied = int((~side.noise).sum()) if len(side.noise) else len(side.entry.npos)
        for path in group[1:]:
            other = work.ids[path]
            if not fresh(first, other):
                continue
            if copied < min_copied:
                kind = main_noise_kind(side.entry, [(0, side.entry.token_count)])
                out.filtered["identical " + kind] += 1
                continue
            region_a = file_region(group[0], side.heavy)
            region_b = file_region(path, work.side(other).heavy)
            sha = files[group[0]].sha
            items = (
                work.item(first, 0, region_a.end, "file:" + sha),
                work.item(other, 0, region_b.end, "file:" + sha),
            )
            found.append((first, other, region_a, region_b, copied, items))
    return found


def _unit_copied(work: Workset, i: int, unit: Unit) -> int:
    noise = work.noise(i)  # of the entry alone: no tokens loaded
    a, b = work.entry(i).normalized_span(unit.meta.start, unit.meta.end)
    return int((~noise[a:b]).sum()) if len(noise) else b - a
