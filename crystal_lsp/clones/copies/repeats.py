"""One copy, one finding: a finding that reports a pair a higher-ranked one already shows joins it.

Clone classes are built around representatives without chaining
(:mod:`crystal_lsp.clones.copies.classes`), so four units that are all copies of each other may
come out as two classes of three sharing two members: the same pair reported twice, and an
N-way copy spread over several findings. A finding two of whose locations are two locations of
a finding ranked higher (same level, both families or neither) is the same copy: its other
locations and its pairs join that finding, which then lists every member once.

A finding with members inside two different locations of a finding ranked higher (a method
copied four times, two of its copies inside the two halves of a long copied window) reports that
pair again: :func:`trim_shown` keeps one of those members (the representative first), so each
pair of places is shown once, by the higher finding, and the lower one keeps its other members.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from crystal_lsp.clones.align.digests import FILE
from crystal_lsp.clones.copies.spans import Spans
from crystal_lsp.clones.findings import COPY, Finding, Location

Rebuild = Callable[[Finding, list[int]], "Finding | None"]
"""``(finding, indices of the locations it keeps) -> the finding of those members`` (None: none)."""

SAME = 0.5
"""Two locations of one file overlapping by this share of the longer are the same place (a whole
function is not the same place as five lines of it: a finding of the function stays apart)."""


def same_place(x: Location, y: Location) -> bool:
    """Whether two locations are one place (same file, mostly the same lines, both ways)."""
    if x.path != y.path:
        return False
    inside = min(x.last_line, y.last_line) - max(x.first_line, y.first_line) + 1
    longer = max(x.last_line - x.first_line, y.last_line - y.first_line) + 1
    return inside > 0 and inside >= SAME * longer


def _touch(x: Location, y: Location) -> bool:
    return x.path == y.path and x.first_line <= y.last_line and y.first_line <= x.last_line


def merge_repeats(findings: list[Finding]) -> tuple[list[Finding], int]:
    """The ranked findings with each one repeating a higher one's pair joined to it, and how many.

    A joined finding's locations that are places the host already lists map onto them; the
    others are added (a finding with a location only partly overlapping one of the host's stays
    apart: it is a different range of code, not the same member).
    """
    kept: list[Finding] = []
    where: Spans[tuple[int, int]] = Spans()  # (kept index, location index) by lines
    joined = 0
    for finding in findings:
        host, mapping = _host(finding, kept, where)
        if host < 0:
            for k, loc in enumerate(finding.locations):
                where.add(loc.path, loc.first_line, loc.last_line + 1, (len(kept), k))
            kept.append(finding)
            continue
        target = kept[host]
        for k, loc in enumerate(finding.locations):
            if k not in mapping:
                mapping[k] = len(target.locations)
                where.add(loc.path, loc.first_line, loc.last_line + 1, (host, mapping[k]))
                target.locations.append(loc)
        paired = {frozenset((p.a, p.b)) for p in target.pairs}
        for pair in finding.pairs:
            a, b = mapping[pair.a], mapping[pair.b]
            if a != b and frozenset((a, b)) not in paired:
                target.pairs.append(replace(pair, a=a, b=b))
                paired.add(frozenset((a, b)))
        joined += 1
    return kept, joined


def _host(
    finding: Finding, kept: list[Finding], where: Spans[tuple[int, int]]
) -> tuple[int, dict[int, int]]:
    """The kept finding ``finding`` repeats a pair of (-1: none), and its locations' places in it."""
    near: dict[int, set[int]] = {}
    for loc in finding.locations:
        for host, k in where.near(loc.path, loc.first_line, loc.last_line + 1):
            near.setdefault(host, set()).add(k)
    for host in sorted(near):
        target = kept[host]
        if target.level != finding.level or target.family != finding.family:
            continue
        mapping: dict[int, int] = {}
        clash = False
        for k, loc in enumerate(finding.locations):
            same = [j for j in sorted(near[host]) if same_place(loc, target.locations[j])]
            free = [j for j in same if j not in mapping.values()]
            if free:
                mapping[k] = free[0]
            elif any(_touch(loc, target.locations[j]) for j in near[host]):
                clash = True
                break
        if not clash and len(mapping) >= 2:
            return host, mapping
    return -1, {}


def trim_shown(findings: list[Finding], rebuild: Rebuild) -> tuple[list[Finding], int]:
    """The ranked findings without members that repeat a pair shown higher, and how many went.

    Two locations of a finding that overlap two different locations of one finding ranked
    higher are a pair that finding already shows: one of the two is left out (its pairs with
    it); the representative is always kept, and so is the closest partner of each member that
    lies where no higher finding shows anything (its twin of the same normalized text first),
    then the others in order. A finding left with fewer than two locations is
    left out whole. Returns the findings (a trimmed one rebuilt by ``rebuild``, its evidence
    read on the pairs it keeps) and the number of members left out.
    """
    kept: list[Finding] = []
    where: Spans[tuple[int, int]] = Spans()
    dropped = 0
    for finding in findings:
        keep = _unshown(finding, kept, where)
        if len(keep) < len(finding.locations):
            rebuilt = rebuild(finding, keep) if len(keep) >= 2 else None
            dropped += len(finding.locations) - (len(rebuilt.locations) if rebuilt else 0)
            if rebuilt is None:
                continue
            finding = rebuilt
        for k, loc in enumerate(finding.locations):
            where.add(loc.path, loc.first_line, loc.last_line + 1, (len(kept), k))
        kept.append(finding)
    return kept, dropped


def _unshown(finding: Finding, kept: list[Finding], where: Spans[tuple[int, int]]) -> list[int]:
    """The indices of ``finding``'s locations that repeat no pair of a kept finding."""
    touched: list[dict[int, set[int]]] = []
    for loc in finding.locations:
        hosts: dict[int, set[int]] = {}
        for host, j in where.near(loc.path, loc.first_line, loc.last_line + 1):
            other = kept[host].locations[j]
            # a whole copied file shows no copy inside it (see without_repeats)
            if other.kind != FILE and _touch(loc, other):
                hosts.setdefault(host, set()).add(j)
        touched.append(hosts)
    # a member where no higher finding shows anything keeps its closest partner, whatever it
    # repeats: a paste of one of several per-type variants must stay paired with its original
    outside = [k for k, hosts in enumerate(touched) if not hosts]
    twins = {t for k in outside for t in _twins(finding, k)[:1]}
    first = [finding.representative, *sorted(twins - {finding.representative})]
    closest = {_closest(finding, k) for k in outside if not _twins(finding, k)}
    for k in sorted(closest - set(first)):  # kept unless it repeats a pair with a twin
        if not any(_clash(touched[k], touched[t]) for t in twins):
            first.append(k)
    keep = list(first)  # then the others, each unless it repeats a pair with one kept
    for k, hosts in enumerate(touched):
        if k not in first and not any(_clash(hosts, touched[i]) for i in keep):
            keep.append(k)
    return sorted(keep)


def _twins(finding: Finding, k: int) -> list[int]:
    """The other members of the same normalized text as member ``k`` (a paste and its original).

    A class pairs its members with its representative only: by its pairs alone a paste of one
    of several per-type variants would be kept with the representative and lose its original.
    """
    norm = finding.locations[k].norm_sha
    return [
        j for j, loc in enumerate(finding.locations) if j != k and norm and loc.norm_sha == norm
    ]


def _closest(finding: Finding, k: int) -> int:
    """The member whose pair with member ``k`` copies the most (``k`` itself when unpaired)."""
    strength = {
        (p.b if p.a == k else p.a): p.copied * max(p.crystalbleu, 0.0) + p.similarity
        for p in finding.pairs
        if k in (p.a, p.b)
    }
    return max(strength, key=lambda m: (strength[m], -m), default=k)


def _clash(x: dict[int, set[int]], y: dict[int, set[int]]) -> bool:
    """Whether two locations overlap two different locations of one finding."""
    for host in x.keys() & y.keys():
        if len(x[host] | y[host]) > 1:
            return True
    return False


def paired_locations(finding: Finding, keep: list[int]) -> list[int]:
    """Of the locations ``keep``, those paired with another kept one ([]: not the representative).

    Repeatedly: a location whose only partner was left out goes too.
    """
    chosen = set(keep)
    while True:
        paired = {i for p in finding.pairs if p.a in chosen and p.b in chosen for i in (p.a, p.b)}
        if paired == chosen:
            break
        chosen = paired
    return sorted(chosen) if finding.representative in chosen else []


def kept_locations(finding: Finding, keep: list[int]) -> Finding | None:
    """``finding`` with the locations ``keep`` and the pairs between them (None: no pair left)."""
    order = paired_locations(finding, keep)
    if len(order) < 2:
        return None
    at = {k: i for i, k in enumerate(order)}
    return replace(
        finding,
        locations=[finding.locations[k] for k in order],
        pairs=[replace(p, a=at[p.a], b=at[p.b]) for p in finding.pairs if p.a in at and p.b in at],
        representative=at[finding.representative],
    )


def without_repeats(findings: list[Finding]) -> tuple[list[Finding], int]:
    """The ranked findings without those a higher-ranked one already shows, and how many.

    A finding whose every location lies within a location of one higher-ranked finding (two
    functions of a window that the higher one pairs with another window) tells the reviewer
    nothing new. Similar structure never hides a copy, nor a whole copied file a copy inside it.
    Only a finding with a location holding the first line of the first location can show it.
    """
    if any(
        not f.locations or any(loc.first_line > loc.last_line for loc in f.locations)
        for f in findings
    ):
        return without_repeats_naive(findings)
    kept: list[Finding] = []
    on_lines: Spans[Finding] = Spans()
    for finding in findings:
        first = finding.locations[0]
        if any(
            _repeats(finding, shown)
            for shown in on_lines.near(first.path, first.first_line, first.first_line + 1)
        ):
            continue
        kept.append(finding)
        for loc in finding.locations:
            on_lines.add(loc.path, loc.first_line, loc.last_line + 1, finding)
    return kept, len(findings) - len(kept)


def without_repeats_naive(findings: list[Finding]) -> tuple[list[Finding], int]:
    """:func:`without_repeats` comparing each finding with every one kept before it."""
    kept: list[Finding] = []
    for finding in findings:
        if any(_repeats(finding, shown) for shown in kept):
            continue
        kept.append(finding)
    return kept, len(findings) - len(kept)


def _repeats(finding: Finding, shown: Finding) -> bool:
    """Whether ``shown``, ranked higher, already shows ``finding`` (:func:`without_repeats`)."""
    if shown.level != finding.level and shown.level != COPY:
        return False
    return all(any(_within(loc, outer) for outer in shown.locations) for loc in finding.locations)


def _within(loc: Location, outer: Location) -> bool:
    """Whether ``loc`` lies within ``outer`` (a whole file copied hides no copy inside it)."""
    inside = outer.first_line <= loc.first_line and loc.last_line <= outer.last_line
    return loc.path == outer.path and outer.kind != FILE and inside
