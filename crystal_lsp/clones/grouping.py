"""From scored pairs to clone classes: nested pairs dropped, connected pairs grouped.

Pairs nested in a reported pair (a method of a reported class against the matching method of the
other copy) are dropped, then the remaining pairs are joined into clone classes (connected
components).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from crystal_lsp.clones.findings import Finding, Location, Pair, sort_findings
from crystal_lsp.text.entries import SnippetMeta

Ref = tuple[str, int]  # (path, snippet index)
Scores = tuple[float, float, float, float]


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


def location(ref: Ref, meta: SnippetMeta) -> Location:
    """The finding location of an indexed snippet."""
    return Location(
        ref[0],
        meta.first_line,
        meta.first_col,
        meta.last_line,
        meta.last_col,
        meta.kind,
        meta.name,
        meta.tokens,
        meta.sha,
        meta.norm_sha,
    )


def ancestors(
    refs: list[Ref], metas: list[SnippetMeta], wanted: Iterable[int]
) -> dict[int, list[int]]:
    """For each wanted snippet: itself and every snippet of its file that contains it."""
    by_path: dict[str, list[int]] = defaultdict(list)
    for i, (path, _) in enumerate(refs):
        by_path[path].append(i)
    out: dict[int, list[int]] = {}
    for i in wanted:
        path = refs[i][0]
        m = metas[i]
        out[i] = [j for j in by_path[path] if metas[j].start <= m.start and m.end <= metas[j].end]
    return out


def drop_nested(
    kept: Mapping[tuple[int, int], Scores], refs: list[Ref], metas: list[SnippetMeta]
) -> dict[tuple[int, int], Scores]:
    """The pairs not nested in another kept pair (both members inside the other's members)."""
    outer = ancestors(refs, metas, {i for pair in kept for i in pair})
    out = {}
    for (a, b), s in kept.items():
        dominated = any(
            (x, y) != (a, b) and ((x, y) in kept or (y, x) in kept)
            for x in outer[a]
            for y in outer[b]
        )
        if not dominated:
            out[(a, b)] = s
    return out


def group(
    language: str,
    kept: Mapping[tuple[int, int], Scores],
    refs: list[Ref],
    metas: list[SnippetMeta],
) -> list[Finding]:
    """Clone classes of the kept pairs (connected components), sorted for reporting."""
    members = sorted({i for pair in kept for i in pair})
    position = {m: k for k, m in enumerate(members)}
    classes: dict[int, list[tuple[int, int]]] = defaultdict(list)
    component_of: dict[int, int] = {}
    edges = [(position[a], position[b]) for a, b in kept]
    for component in components(len(members), edges):
        for k in component:
            component_of[members[k]] = members[component[0]]
    for pair in kept:
        classes[component_of[pair[0]]].append(pair)
    return sort_findings(
        [_finding(language, pairs, kept, refs, metas) for pairs in classes.values()]
    )


def _finding(
    language: str,
    pairs: list[tuple[int, int]],
    kept: Mapping[tuple[int, int], Scores],
    refs: list[Ref],
    metas: list[SnippetMeta],
) -> Finding:
    members = sorted(
        {i for pair in pairs for i in pair}, key=lambda i: (refs[i][0], metas[i].start)
    )
    position = {m: k for k, m in enumerate(members)}
    pair_objs = []
    for a, b in sorted(pairs, key=lambda p: tuple(sorted((position[p[0]], position[p[1]])))):
        n_ab, n_ba, r_ab, r_ba = kept[(a, b)]
        pa, pb = sorted((position[a], position[b]))
        pair_objs.append(Pair(pa, pb, min(n_ab, n_ba), min(r_ab, r_ba)))
    return Finding(language, [location(refs[i], metas[i]) for i in members], pair_objs)
