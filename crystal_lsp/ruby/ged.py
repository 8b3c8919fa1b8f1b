"""A bounded-time approximate graph edit distance, and GRS.

GED is the least cost of node and edge insertions, deletions and relabellings (unit costs) that
turn one labelled directed graph into the other; GRS is ``1 − GED / (|V1| + |E1| + |V2| + |E2|)``
(Tran et al.). Exact GED is NP-hard (the paper approximates it with Exas feature vectors).

What is computed here is the cost of one concrete edit path, so it is an *upper bound* on the
exact GED (and GRS a lower bound on the exact GRS):

1. Nodes are matched greedily, most specific evidence first. Node colours are refined by
   Weisfeiler–Lehman rounds (label plus the multiset of (edge kind, direction, neighbour
   colour)); level by level (the last WL round down to the first, then label plus the kinds and
   directions of the incident edges, then the label alone, then the incident edge kinds alone),
   unmatched nodes of equal colour are paired in program order. Leftover nodes are paired in
   program order as relabellings; the rest are inserted or deleted.
2. The mapping fixes the edit path: a node pair with different labels costs 1, an unmatched node
   1; for each ordered pair of mapped endpoints the edge-kind multisets are compared (common kinds
   free, then relabellings, then insertions and deletions).

Identical graphs get distance 0, and the distance never exceeds the sum of the graph sizes, so GRS
lies in [0, 1]. Time is O(rounds · (V + E) log V), independent of how similar the graphs are; no
cost matrix and no assignment solver. A label-count *lower bound* (node and edge-kind multiset
differences) is returned alongside, which brackets the exact GED.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from typing import NamedTuple

from crystal_lsp.ruby.options import Timeout

WL_ROUNDS = 2


class Graph(NamedTuple):
    """A directed graph with labelled nodes (in program order) and kind-labelled edges."""

    labels: tuple[str, ...]
    edges: tuple[tuple[int, int, str], ...]

    @property
    def size(self) -> int:
        """Number of nodes plus number of edges (the paper's size)."""
        return len(self.labels) + len(self.edges)


class GedResult(NamedTuple):
    """An edit path's cost (upper bound of the exact GED) and a lower bound."""

    distance: int
    lower_bound: int


def graph_edit_distance(
    a: Graph, b: Graph, rounds: int = WL_ROUNDS, deadline: float | None = None
) -> GedResult:
    """Approximate GED of two graphs (see the module docstring).

    ``deadline`` (a ``time.perf_counter()`` value) is checked between refinement rounds.
    """
    mapping = _match(a, b, rounds, deadline)
    return GedResult(_path_cost(a, b, mapping), lower_bound(a, b))


def grs_from_distance(distance: int, size_a: int, size_b: int) -> float:
    """GRS from a graph edit distance and the two graph sizes."""
    return 1.0 - distance / (size_a + size_b) if size_a + size_b else 1.0


def lower_bound(a: Graph, b: Graph) -> int:
    """Label-count lower bound: any edit path must fix the label and edge-kind multisets."""
    return _multiset_gap(Counter(a.labels), Counter(b.labels)) + _multiset_gap(
        Counter(kind for *_, kind in a.edges), Counter(kind for *_, kind in b.edges)
    )


def _multiset_gap(x: Counter[str], y: Counter[str]) -> int:
    common = sum((x & y).values())
    return max(sum(x.values()), sum(y.values())) - common


def _colours(
    graphs: tuple[Graph, Graph], rounds: int, deadline: float | None
) -> list[tuple[list[int], list[int]]]:
    """Colour ids of both graphs' nodes per matching level, most specific level first.

    Levels: Weisfeiler–Lehman rounds ``rounds`` down to 1 (label plus the multiset of (edge kind
    and direction, neighbour colour of the previous round)), then label plus the multiset of
    incident edge kinds and directions, then the label alone, then the incident edge kinds alone.
    One shared table makes ids comparable across the graphs.
    """
    table: dict[object, int] = {}
    neighbours = []
    for graph in graphs:
        adjacent: list[list[tuple[str, int]]] = [[] for _ in graph.labels]
        for source, target, kind in graph.edges:
            adjacent[source].append((kind + ">", target))
            adjacent[target].append((kind + "<", source))
        neighbours.append(adjacent)
    labels = [[table.setdefault(label, len(table)) for label in g.labels] for g in graphs]
    profiles = [
        [tuple(sorted(kind for kind, _ in adjacent[v])) for v in range(len(adjacent))]
        for adjacent in neighbours
    ]
    current = labels
    wl = []
    for _ in range(rounds):
        if deadline is not None and time.perf_counter() > deadline:
            raise Timeout
        current = [
            [
                table.setdefault(
                    (colour[v], tuple(sorted((kind, colour[u]) for kind, u in adjacent[v]))),
                    len(table),
                )
                for v in range(len(colour))
            ]
            for colour, adjacent in zip(current, neighbours)
        ]
        wl.append((current[0], current[1]))
    labelled_profiles = [
        [table.setdefault(("p", label, p), len(table)) for label, p in zip(ls, ps)]
        for ls, ps in zip(labels, profiles)
    ]
    bare_profiles = [[table.setdefault(("q", p), len(table)) for p in ps] for ps in profiles]
    return [
        *reversed(wl),
        (labelled_profiles[0], labelled_profiles[1]),
        (labels[0], labels[1]),
        (bare_profiles[0], bare_profiles[1]),
    ]


def _match(a: Graph, b: Graph, rounds: int, deadline: float | None) -> dict[int, int]:
    """Greedy node mapping from ``a`` to ``b`` (see the module docstring)."""
    mapping: dict[int, int] = {}
    used_b: set[int] = set()
    for colours_a, colours_b in _colours((a, b), rounds, deadline):
        groups: dict[int, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
        for v, colour in enumerate(colours_a):
            if v not in mapping:
                groups[colour][0].append(v)
        for v, colour in enumerate(colours_b):
            if v not in used_b:
                groups[colour][1].append(v)
        for left, right in groups.values():
            for u, v in zip(left, right):
                mapping[u] = v
                used_b.add(v)
    rest_b = [v for v in range(len(b.labels)) if v not in used_b]
    rest_a = [u for u in range(len(a.labels)) if u not in mapping]
    mapping.update(zip(rest_a, rest_b))
    return mapping


def _path_cost(a: Graph, b: Graph, mapping: dict[int, int]) -> int:
    matched = len(mapping)
    cost = sum(a.labels[u] != b.labels[v] for u, v in mapping.items())
    cost += (len(a.labels) - matched) + (len(b.labels) - matched)
    kinds_a: dict[tuple[int, int], Counter[str]] = defaultdict(Counter)
    for source, target, kind in a.edges:
        if source in mapping and target in mapping:
            kinds_a[mapping[source], mapping[target]][kind] += 1
        else:
            cost += 1  # the edge goes with a deleted node
    kinds_b: dict[tuple[int, int], Counter[str]] = defaultdict(Counter)
    for source, target, kind in b.edges:
        kinds_b[source, target][kind] += 1
    for pair in kinds_a.keys() | kinds_b.keys():
        x, y = kinds_a.get(pair, Counter()), kinds_b.get(pair, Counter())
        cost += _multiset_gap(x, y)
    return cost
