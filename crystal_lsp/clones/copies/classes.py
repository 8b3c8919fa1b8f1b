"""From pairs of copied regions to clone classes, without chaining.

Copies of one piece of code found pair by pair form a graph. Joining its connected components
would chain: A like B, B like C, C like D puts A and D in one class although they may not be
alike at all. Instead every class has a *representative*, and every member of the class is a
copy of the representative itself (a pair of the two was accepted): the region with the most
copied code over its pairs represents its class, its partners are the members, and pairs between
two members are implied by the class. What the representative does not explain (a member's copy
elsewhere) forms further classes the same way.

Regions of one file that cover nearly the same lines are one location. A class whose every member
lies inside a member of a larger class (the methods of two copied classes) is not reported again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from crystal_lsp.clones.align.pairs import RegionPair
from crystal_lsp.clones.align.regions import Region
from crystal_lsp.clones.copies.grouping import components
from crystal_lsp.clones.copies.spans import Spans

SAME_LOCATION = 0.75
"""Regions of one file sharing this share of the longer one's tokens are one location."""
NESTED = 0.5
"""A class whose every region has this share inside a region of a larger class is not reported
again (another alignment of the same copies)."""


@dataclass
class CloneClass:
    """A representative region and its copies (each a pair with the representative)."""

    representative: Region
    members: list[tuple[Region, RegionPair]]

    @property
    def gain(self) -> float:
        """Copied tokens times similarity, summed over the members."""
        return sum(pair.gain for _, pair in self.members)

    @property
    def regions(self) -> list[Region]:
        """The representative, then the members."""
        return [self.representative, *(region for region, _ in self.members)]


def distinct_pairs(pairs: Iterable[RegionPair], overlap: float = 0.5) -> list[RegionPair]:
    """The pairs that are not another alignment of a better pair of the same two places.

    Code with a repeated structure (a list of similar calls) also aligns shifted by a few lines;
    of two pairs whose regions overlap on both sides (each by ``overlap`` of the shorter), the one
    with more copied code stays. The rivals of a pair are the kept pairs of the same two files
    with a region on its first region's tokens (:class:`.spans.Spans`); with an empty region or
    no share required every kept pair of the two files is one (:func:`distinct_pairs_naive`).
    """
    ordered = sorted(pairs, key=lambda p: (-p.gain, p.a.path, p.a.start, p.b.path, p.b.start))
    if overlap <= 0 or any(p.a.tokens <= 0 or p.b.tokens <= 0 for p in ordered):
        return distinct_pairs_naive(ordered, overlap)
    kept: list[RegionPair] = []
    on_tokens: Spans[RegionPair] = Spans()
    for pair in ordered:
        files = {(pair.a.path, pair.b.path), (pair.b.path, pair.a.path)}
        if any(
            (other.a.path, other.b.path) in files and _same_place(pair, other, overlap)
            for other in on_tokens.near(pair.a.path, pair.a.start, pair.a.end)
        ):
            continue
        kept.append(pair)
        on_tokens.add(pair.a.path, pair.a.start, pair.a.end, pair)
        on_tokens.add(pair.b.path, pair.b.start, pair.b.end, pair)
    return kept


def distinct_pairs_naive(pairs: Iterable[RegionPair], overlap: float = 0.5) -> list[RegionPair]:
    """:func:`distinct_pairs` comparing each pair with every kept pair of its two files."""
    kept: list[RegionPair] = []
    by_files: dict[tuple[str, str], list[RegionPair]] = defaultdict(list)
    for pair in sorted(pairs, key=lambda p: (-p.gain, p.a.path, p.a.start, p.b.path, p.b.start)):
        key = (pair.a.path, pair.b.path)
        rivals = by_files[key] + by_files[(key[1], key[0])]
        if any(_same_place(pair, other, overlap) for other in rivals):
            continue
        kept.append(pair)
        by_files[key].append(pair)
    return kept


def _same_place(x: RegionPair, y: RegionPair, share: float) -> bool:
    def close(r: Region, s: Region) -> bool:
        return r.overlap(s) >= share * min(r.tokens, s.tokens)

    return (close(x.a, y.a) and close(x.b, y.b)) or (close(x.a, y.b) and close(x.b, y.a))


def locations(pairs: Sequence[RegionPair]) -> tuple[list[Region], list[tuple[int, int, int]]]:
    """Distinct locations of the pairs' regions, and each pair as ``(node, node, pair index)``.

    Regions are assigned in order of the pairs' gain, so a location takes the lines of its most
    telling pair. A region is the first location it shares enough tokens with: one it overlaps.
    """
    if any(p.a.tokens <= 0 or p.b.tokens <= 0 for p in pairs):
        return locations_naive(pairs)
    nodes: list[Region] = []
    on_tokens: Spans[int] = Spans()

    def node(region: Region) -> int:
        # the first location (in order of creation) that this region shares enough tokens with
        same = [
            k
            for k in on_tokens.near(region.path, region.start, region.end)
            if region.overlap(nodes[k]) >= SAME_LOCATION * max(region.tokens, nodes[k].tokens)
        ]
        if same:
            return min(same)
        nodes.append(region)
        on_tokens.add(region.path, region.start, region.end, len(nodes) - 1)
        return len(nodes) - 1

    return nodes, _edges(pairs, node)


def locations_naive(
    pairs: Sequence[RegionPair],
) -> tuple[list[Region], list[tuple[int, int, int]]]:
    """:func:`locations` comparing each region with every location of its file."""
    nodes: list[Region] = []
    by_path: dict[str, list[int]] = defaultdict(list)

    def node(region: Region) -> int:
        for k in by_path[region.path]:
            other = nodes[k]
            if region.overlap(other) >= SAME_LOCATION * max(region.tokens, other.tokens):
                return k
        nodes.append(region)
        by_path[region.path].append(len(nodes) - 1)
        return len(nodes) - 1

    return nodes, _edges(pairs, node)


def _edges(
    pairs: Sequence[RegionPair], node: Callable[[Region], int]
) -> list[tuple[int, int, int]]:
    """Each pair as ``(node, node, pair index)``, best gain first, pairs within one node left out."""
    edges: list[tuple[int, int, int]] = []
    for i in sorted(range(len(pairs)), key=lambda k: -pairs[k].gain):
        x, y = node(pairs[i].a), node(pairs[i].b)
        if x != y:
            edges.append((x, y, i))
    return edges


def clone_classes(pairs: Sequence[RegionPair]) -> list[CloneClass]:
    """Clone classes of accepted pairs (module docstring), largest gain first.

    See :func:`drop_nested` for the classes worth reporting.
    """
    nodes, edges = locations(pairs)
    component = components(len(nodes), [(x, y) for x, y, _ in edges])
    of_node = {n: k for k, members in enumerate(component) for n in members}
    grouped: dict[int, dict[tuple[int, int], int]] = defaultdict(dict)
    for x, y, i in edges:
        grouped[of_node[x]].setdefault((min(x, y), max(x, y)), i)
    out: list[CloneClass] = []
    for remaining in grouped.values():
        out.extend(_classes_of_component(nodes, pairs, remaining))
    out.sort(key=lambda c: (-c.gain, c.representative.path, c.representative.start))
    return out


def _classes_of_component(
    nodes: list[Region], pairs: Sequence[RegionPair], remaining: dict[tuple[int, int], int]
) -> list[CloneClass]:
    """Representative-based classes of one connected component's pairs."""
    out: list[CloneClass] = []
    while remaining:
        weight: dict[int, float] = defaultdict(float)
        for (x, y), i in remaining.items():
            weight[x] += pairs[i].gain
            weight[y] += pairs[i].gain
        # ties go to the first place in the repository; an unsaved buffer ("\0" + path, see
        # the language server) ranks where its file does
        rep = min(weight, key=lambda n: (-weight[n], nodes[n].path.lstrip("\0"), nodes[n].start))
        members = sorted(
            ((y if x == rep else x, i) for (x, y), i in remaining.items() if rep in (x, y)),
            key=lambda m: (nodes[m[0]].path, nodes[m[0]].start),
        )
        out.append(CloneClass(nodes[rep], [(nodes[m], pairs[i]) for m, i in members]))
        inside = {rep, *(m for m, _ in members)}
        remaining = {
            edge: i
            for edge, i in remaining.items()
            if not (edge[0] in inside and edge[1] in inside)
        }
    return out


def drop_nested(classes: Iterable[CloneClass]) -> tuple[list[CloneClass], int]:
    """Classes not nested in a larger one (given largest gain first), and how many were.

    A class is left out when each of its regions lies mostly within its own region of a larger
    class: the methods of two copied classes, or another alignment of the same copies. The
    rivals of a class are the kept ones with a region on its representative's tokens.
    """
    given = list(classes)
    if any(r.tokens <= 0 for c in given for r in c.regions):
        return drop_nested_naive(given)
    kept: list[CloneClass] = []
    on_tokens: Spans[CloneClass] = Spans()
    for candidate in given:
        rep = candidate.representative
        near = on_tokens.near(rep.path, rep.start, rep.end)
        rivals = [c for c in near if any(_covered(rep, r) for r in c.regions)]
        if any(_inside(candidate, bigger) for bigger in rivals):
            continue
        kept.append(candidate)
        for region in candidate.regions:
            on_tokens.add(region.path, region.start, region.end, candidate)
    return kept, len(given) - len(kept)


def drop_nested_naive(classes: Iterable[CloneClass]) -> tuple[list[CloneClass], int]:
    """:func:`drop_nested` comparing each class with every kept class on its files."""
    kept: list[CloneClass] = []
    owners: dict[str, list[CloneClass]] = defaultdict(list)
    dropped = 0
    for candidate in classes:
        rep = candidate.representative
        rivals = [c for c in owners[rep.path] if any(_covered(rep, r) for r in c.regions)]
        if any(_inside(candidate, bigger) for bigger in rivals):
            dropped += 1
            continue
        kept.append(candidate)
        for path in {region.path for region in candidate.regions}:
            owners[path].append(candidate)
    return kept, dropped


def _covered(region: Region, outer: Region) -> bool:
    """Whether most of a region (``NESTED`` of it) lies in ``outer``, no smaller than it."""
    return outer.tokens >= region.tokens and region.overlap(outer) >= NESTED * region.tokens


def _inside(small: CloneClass, big: CloneClass) -> bool:
    """Every region of ``small`` lies mostly within its own region of ``big``.

    Two copies inside one region of a larger class are copies within that region, not the
    larger class seen again: each of ``small``'s regions needs a different container.
    """
    if small is big:
        return False
    taken: set[int] = set()
    options = [
        [k for k, outer in enumerate(big.regions) if _covered(region, outer)]
        for region in small.regions
    ]
    for choices in sorted(options, key=len):
        free = [k for k in choices if k not in taken]
        if not free:
            return False
        taken.add(free[0])
    return True
