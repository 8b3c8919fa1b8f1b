"""Connected components of a graph (union-find): regions of pairs, members of findings."""

from __future__ import annotations

from collections.abc import Iterable


def components(count: int, edges: Iterable[tuple[int, int]]) -> list[list[int]]:
    """Connected components of ``range(count)`` under ``edges`` (union-find), each sorted.

    Components come in the order of their smallest member; singletons are included.
    """
    parent = list(range(count))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for i in range(count):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())
