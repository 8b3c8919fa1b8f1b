"""Families of parallel units: many look-alike members that are one finding, not many.

Code written after one pattern on purpose -- 2D/3D/4D vector classes, one class per material,
a validator per option, one config per locale -- aligns member against member, and every
window of it would be a clone class of its own. A reviewer sees one thing: a family.

A clone class *seeds* a family when its members are not verbatim copies of its representative
(the median share of identical lines is below :data:`VERBATIM`, a consistently renamed member
counting as verbatim: a function pasted into many files unchanged or renamed stays a copy, its
members listed) and either it has at least
:data:`MIN_MEMBERS` locations in at least :data:`MIN_PLACES` different places (files, or
top-level units of one file), or another class joins the same places.
Every class that has regions in two or more members of a family (another window of the same
parallel units) joins it, and so do overlapping seeds. The family's members are the hulls of
its regions per file (regions of one file that overlap or touch are one member), each with its
aligned range; its pairs join every member to the family, best pair first.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from crystal_lsp.clones.align.pairs import RegionPair
from crystal_lsp.clones.align.regions import Region
from crystal_lsp.clones.copies.classes import CloneClass
from crystal_lsp.clones.copies.grouping import components
from crystal_lsp.clones.copies.spans import Spans

MIN_MEMBERS = 4
MIN_PLACES = 3
VERBATIM = 0.9
TOUCH_LINES = 2
"""Regions of one file this many lines apart (or closer) are one member of a family."""

Hull = Callable[[Sequence[Region]], Region]
"""The region spanning some regions of one file (built by the caller, who knows the file)."""
Place = Callable[[Region], tuple[str, int]]
"""``(path, top-level unit or -1)`` of a region: where a member of a family lives."""


@dataclass
class Family:
    """A family of parallel units: member regions, and pairs joining them (member indices)."""

    members: list[Region]
    pairs: list[tuple[int, int, RegionPair]]
    representative: int
    classes: int
    """How many clone classes it gathers."""


def family_seeds(
    classes: Sequence[CloneClass], shares: Sequence[Sequence[float]], place: Place
) -> list[bool]:
    """Which classes seed a family (module docstring).

    ``shares``: per member, its share of lines identical to the representative's (1 for a
    member that is the representative renamed: a copy, not a parallel unit). A class seeds one when it has many parallel members, or when another class joins the same
    three or more places too: two windows of parallel units (the methods of 2D, 3D and 4D
    vector classes) that did not align as one.
    """
    places = [frozenset(place(r) for r in c.regions) for c in classes]
    repeated = Counter(p for p in places if len(p) >= MIN_PLACES)
    out = []
    for c, member_shares, where in zip(classes, shares, places):
        many = len(c.regions) >= MIN_MEMBERS and len(where) >= MIN_PLACES
        parallel = bool(member_shares) and statistics.median(member_shares) < VERBATIM
        out.append((many or repeated[where] > 1) and parallel)
    return out


def families(
    classes: Sequence[CloneClass], seeds: Sequence[bool], hull: Hull
) -> tuple[list[Family], list[int]]:
    """The families of some classes (given their seeds), and the classes left on their own."""
    out: list[Family] = []
    alone: list[int] = []
    for part in components(len(classes), family_links(classes, seeds)):
        if not any(seeds[k] for k in part):
            alone += part
            continue
        family = _family([classes[k] for k in part], hull)
        if family.pairs:
            out.append(family)
        else:  # its regions merged into one member: the classes stand on their own
            alone += part
    return out, sorted(alone)


def family_links(classes: Sequence[CloneClass], seeds: Sequence[bool]) -> list[tuple[int, int]]:
    """``(class, seed)`` of each class that joins a seed's family (module docstring).

    A class touches only the seeds with a region on one of its regions' tokens.
    """
    on_tokens: Spans[int] = Spans()
    for s, seed in enumerate(seeds):
        if seed:
            for region in classes[s].regions:
                on_tokens.add(region.path, region.start, region.end, s)
    links: list[tuple[int, int]] = []
    for k, clone_class in enumerate(classes):
        near = {s for r in clone_class.regions for s in on_tokens.near(r.path, r.start, r.end)}
        for s in sorted(near - {k}):
            touching = _touching(clone_class, classes[s])
            if touching >= 2 or (seeds[k] and touching >= 1):
                links.append((k, s))
    return links


def links_naive(classes: Sequence[CloneClass], seeds: Sequence[bool]) -> list[tuple[int, int]]:
    """:func:`family_links` comparing each class with every seed."""
    links: list[tuple[int, int]] = []
    seed_ids = [k for k, s in enumerate(seeds) if s]
    for k, clone_class in enumerate(classes):
        for s in seed_ids:
            if s == k:
                continue
            touching = _touching(clone_class, classes[s])
            if touching >= 2 or (seeds[k] and touching >= 1):
                links.append((k, s))
    return links


def _touching(small: CloneClass, family: CloneClass) -> int:
    """How many distinct regions of ``family`` the regions of ``small`` overlap."""
    hit: set[int] = set()
    for region in small.regions:
        for k, other in enumerate(family.regions):
            if k not in hit and region.overlap(other) > 0:
                hit.add(k)
                break
    return len(hit)


def _family(members: list[CloneClass], hull: Hull) -> Family:
    """One family of the classes of a component: its member hulls and joining pairs."""
    regions = [r for c in members for r in c.regions]
    by_path: dict[str, list[Region]] = defaultdict(list)
    for region in regions:
        by_path[region.path].append(region)
    hulls: list[Region] = []
    for path in sorted(by_path):
        for group in _touching_groups(by_path[path]):
            hulls.append(hull(group))
    pairs = [pair for c in members for _, pair in c.members]
    edges = _edges(hulls, pairs)
    weight: dict[int, float] = defaultdict(float)
    for x, y, pair in edges:
        weight[x] += pair.copied * max(pair.crystalbleu, 0.0)
        weight[y] += pair.copied * max(pair.crystalbleu, 0.0)
    rep = min(range(len(hulls)), key=lambda k: (-weight[k], hulls[k].path, hulls[k].start))
    return Family(hulls, _spanning(rep, len(hulls), edges), rep, len(members))


def _touching_groups(regions: list[Region]) -> list[list[Region]]:
    """Regions of one file grouped when they overlap or are at most ``TOUCH_LINES`` apart."""
    ordered = sorted(regions, key=lambda r: (r.start, r.end))
    groups: list[list[Region]] = []
    end_line = -(10**9)
    for region in ordered:
        if groups and region.first_line - end_line - 1 <= TOUCH_LINES:
            groups[-1].append(region)
            end_line = max(end_line, region.last_line)
        else:
            groups.append([region])
            end_line = region.last_line
    return groups


def _edges(hulls: list[Region], pairs: list[RegionPair]) -> list[tuple[int, int, RegionPair]]:
    """The pairs as edges between the hulls holding their regions."""

    def holder(region: Region) -> int:
        for k, h in enumerate(hulls):
            if h.path == region.path and h.start <= region.start and region.end <= h.end:
                return k
        return -1

    out = []
    for pair in pairs:
        x, y = holder(pair.a), holder(pair.b)
        if x >= 0 and y >= 0 and x != y:
            out.append((x, y, pair))
    return out


def _spanning(
    rep: int, count: int, edges: list[tuple[int, int, RegionPair]]
) -> list[tuple[int, int, RegionPair]]:
    """Edges joining every member to the representative's tree, best pair first (a BFS)."""
    ranked = sorted(edges, key=lambda e: -(e[2].copied * max(e[2].crystalbleu, 0.0)))
    reached = {rep}
    out: list[tuple[int, int, RegionPair]] = []
    grew = True
    while grew and len(reached) < count:
        grew = False
        for x, y, pair in ranked:
            if (x in reached) != (y in reached):
                out.append((x, y, pair) if x in reached else (y, x, pair))
                reached.add(y if x in reached else x)
                grew = True
    return out
