"""Accepted pairs as the findings a reviewer reads: one per copy, families, levels, ranking.

The steps, each in its own module:

1. the windows of one copy are merged into one pair, and pairs inside pairs dropped
   (:mod:`.merging`);
2. pairs become clone classes around a representative (:mod:`.classes`), classes inside larger
   ones dropped;
3. each class's pairs are read line by line (:mod:`.evidence`); classes of many parallel
   members gather into families, with every other window of the same members
   (:mod:`.families`);
4. each finding gets its level -- copy, or similar structure -- and the evidence for it
   (:mod:`.levels`), and findings are ranked copies first, then by what one refactoring removes
   (:data:`crystal_lsp.clones.findings.RANKING`).

A location is a whole unit (``function parse``, ``class Config``), a whole file, or lines of a
unit (``lines 120-151 of function main``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from crystal_lsp.clones.align.alignment import decide_regions, decide_spans
from crystal_lsp.clones.align.digests import FILE
from crystal_lsp.clones.align.pairs import RegionPair
from crystal_lsp.clones.align.regions import Region, enclosing, enclosing_strictly, header_prefix
from crystal_lsp.clones.copies.classes import CloneClass, clone_classes, drop_nested
from crystal_lsp.clones.copies.evidence import Evidence, evidence
from crystal_lsp.clones.copies.families import Family, families, family_seeds
from crystal_lsp.clones.copies.judge import family_phrase, judge, judged_again
from crystal_lsp.clones.copies.judge import short_repeat as _short
from crystal_lsp.clones.copies.judge import with_data_table as _marked
from crystal_lsp.clones.copies.levels import SHARE_MIN
from crystal_lsp.clones.copies.merging import merged, without_nested
from crystal_lsp.clones.copies.reads import Span, kept_decision, kept_evidence, region_digests
from crystal_lsp.clones.copies.repeats import (  # without_repeats: also imported from here
    kept_locations,
    merge_repeats,
    paired_locations,
    trim_shown,
    without_repeats,
    without_repeats_naive,  # noqa: F401
)
from crystal_lsp.clones.copies.units import as_whole_units, on_edges, table_name
from crystal_lsp.clones.findings import LINES, Finding, Location, Pair, sort_findings
from crystal_lsp.text.entries import Entry, SnippetMeta
from crystal_lsp.text.snippets import (
    ANONYMOUS,
    CALLBACK,
    CLASS,
    CONTAINERS,
    DATA,
    FUNCTION,
    STATEMENTS,
)

if TYPE_CHECKING:
    from crystal_lsp.clones.align.workset import Copies, Workset
    from crystal_lsp.clones.findings import LineFocus

NESTED, MERGED, IN_FAMILY, REPETITIVE = "nested", "merged windows", "in a family", "repetitive"
SAME_COPY = "joined: same copy"
SHOWN_PAIR = "members shown higher"
"""What :func:`findings_of` counts: pairs and classes folded into others on purpose."""


def findings_of(
    work: Workset, pairs: Sequence[RegionPair], focus: LineFocus | None, out: Copies
) -> tuple[list[Finding], Counter[str]]:
    """The findings of accepted pairs (module docstring), and what was folded, by reason.

    With ``focus``, only findings with a region in the focus. Merged windows are decided on
    ``out``'s search (their scores are cached and kept like any pair's).
    """

    def decide(a1: Region, b1: Region, a2: Region, b2: Region) -> RegionPair | None:
        fa, fb = work.ids[a1.path], work.ids[b1.path]
        spans = (a1.start, a2.end), (b1.start, b2.end)
        return kept_decision(work, fa, fb, *spans, out, decide_spans)

    def decide_whole(a: Region, b: Region) -> RegionPair | None:
        def as_they_are(
            w: Workset, fa: int, fb: int, _a: Span, _b: Span, o: Copies
        ) -> RegionPair | None:
            return decide_regions(w, fa, fb, a, b, o)

        spans = (a.start, a.end), (b.start, b.end)
        fa, fb = work.ids[a.path], work.ids[b.path]
        return kept_decision(work, fa, fb, *spans, out, as_they_are, kind="whole")

    headers: dict[str, list[int]] = {}

    def snippets(path: str) -> tuple[Entry, list[int]]:
        entry = work.entry(work.ids[path])  # no tokens loaded: a rescan reads what it reuses
        if path not in headers:
            headers[path] = header_prefix(entry)
        return entry, headers[path]

    folded: Counter[str] = Counter()
    joined, folded[MERGED] = merged(pairs, decide)
    joined, _ = as_whole_units(joined, snippets, decide_whole)
    kept, nested_pairs = without_nested(joined)
    read = _Evidences(work)
    kept, folded[REPETITIVE] = _without_repetitive(work, kept, read)
    kept, nested_again = on_edges(work, kept, decide_whole, lambda p: _level(work, p, read))
    classes, nested_classes = drop_nested(clone_classes(kept))
    folded[NESTED] = nested_pairs + nested_again + nested_classes
    evidences = [[read(shown(c.representative, m, pair)) for m, pair in c.members] for c in classes]

    place = _TopUnits(work)
    shares = [[1.0 if ev.renamed else ev.share for ev in evs] for evs in evidences]
    seeds = family_seeds(classes, shares, place)
    found, alone = families(classes, seeds, lambda rs: hull(work, rs))
    sources = _Sources(work, read)
    out_findings = [sources.of_class(work, classes[k], evidences[k]) for k in alone]
    for family in found:
        out_findings.append(sources.of_family(work, family, read))
        folded[IN_FAMILY] += family.classes - 1
    ranked, folded[SAME_COPY] = merge_repeats(sort_findings(out_findings))
    ranked, shown_again = without_repeats(sort_findings(ranked))
    folded[NESTED] += shown_again
    if focus is None:  # a focused search (a snippet, an editor's file) wants every copy of it
        ranked, folded[SHOWN_PAIR] = trim_shown(ranked, sources.rebuild)
        return sort_findings(ranked), +folded
    return [f for f in ranked if any(loc.touches(focus) for loc in f.locations)], +folded


def _level(work: Workset, pair: RegionPair, read: Callable[[RegionPair], Evidence]) -> str:
    """The level of a pair as a finding of its own (copy, or similar structure)."""
    return class_finding(work, CloneClass(pair.a, [(pair.b, pair)]), [read(pair)]).level


class _Sources:
    """Each finding and how to build it again with fewer members (:func:`.repeats.trim_shown`)."""

    def __init__(self, work: Workset, read: Callable[[RegionPair], Evidence]) -> None:
        self.of: dict[int, tuple[Finding, int, Callable[[list[int]], Finding]]] = {}
        self.work, self.read = work, read
        self.regions: dict[int, tuple[Location, Region]] = {}  # by id of a location built here

    def of_class(self, work: Workset, clone_class: CloneClass, evs: list[Evidence]) -> Finding:
        """The class's finding; again: with the locations given (the representative, 0, first)."""

        def some(order: list[int]) -> Finding:
            members = [(clone_class.members[k - 1], evs[k - 1]) for k in order if k > 0]
            fewer = CloneClass(clone_class.representative, [m for m, _ in members])
            return class_finding(work, fewer, [ev for _, ev in members])

        return self._add(class_finding(work, clone_class, evs), some, clone_class.regions)

    def of_family(self, work: Workset, family: Family, read: Callable[..., Evidence]) -> Finding:
        """The family's finding; again: with the locations given (in the finding's order)."""
        rep = family.representative
        order = [rep] + [k for k in range(len(family.members)) if k != rep]

        def some(keep: list[int]) -> Finding:
            at = {m: i for i, m in enumerate(sorted(order[i] for i in keep))}
            pairs = [(at[x], at[y], p) for x, y, p in family.pairs if x in at and y in at]
            members = [family.members[m] for m in sorted(at)]
            return family_finding(work, Family(members, pairs, at[rep], family.classes), read)

        members = [family.members[k] for k in order]
        return self._add(family_finding(work, family, read), some, members)

    def _add(
        self, finding: Finding, again: Callable[[list[int]], Finding], regions: Sequence[Region]
    ) -> Finding:
        self.of[id(finding)] = (finding, len(finding.locations), again)
        self.regions.update((id(loc), (loc, r)) for loc, r in zip(finding.locations, regions))
        return finding

    def rebuild(self, finding: Finding, keep: list[int]) -> Finding | None:
        """``finding`` with the locations ``keep`` (and those still paired), its evidence again."""
        known = self.of.get(id(finding))
        if known is None or known[0] is not finding or known[1] != len(finding.locations):
            trimmed = kept_locations(finding, keep)  # joined by merge_repeats: judged again
            if trimmed is None:
                return None
            known_at = [self.regions.get(id(loc), (None, None)) for loc in trimmed.locations]
            regions = [
                r if at is loc else None for loc, (at, r) in zip(trimmed.locations, known_at)
            ]
            least = self.work.finder.config.min_tokens
            return judged_again(trimmed, regions, self.read, least)
        order = paired_locations(finding, keep)
        return known[2](order) if len(order) >= 2 else None


def _without_repetitive(
    work: Workset, pairs: list[RegionPair], read: Callable[[RegionPair], Evidence]
) -> tuple[list[RegionPair], int]:
    """The pairs that are not two windows of one run of repeated code (and how many were).

    Cases of a switch, branches of an if chain, the rows of a list of calls, a run of accessors:
    two windows of such a run, in one unit, close together (at most the length of one apart),
    that do not share most of their lines, are the run's structure, not a copy (the run is one
    unit of code). Windows of one function that repeat a block line for line stay copies.
    """
    kept: list[RegionPair] = []
    for pair in pairs:
        a, b = pair.a, pair.b
        if a.path == b.path and not (a.whole and b.whole):
            snippets = work.entry(work.ids[a.path]).snippets
            around_a = enclosing(snippets, a.start, a.end)
            close = abs(b.first_line - a.last_line) - 1 <= max(a.lines, b.lines)
            if close and around_a == enclosing(snippets, b.start, b.end):
                if read(pair).share < SHARE_MIN:
                    continue
        kept.append(pair)
    return kept, len(pairs) - len(kept)


class _Evidences:
    """The evidence of pairs of one workset, each pair of regions read once."""

    def __init__(self, work: Workset) -> None:
        self.work = work
        self.seen: dict[tuple[Region, Region], Evidence] = {}

    def __call__(self, pair: RegionPair) -> Evidence:
        key = (pair.a, pair.b)
        found = self.seen.get(key)
        if found is None:
            found = self.seen[key] = kept_evidence(self.work, pair, _evidence)
        return found


def _evidence(work: Workset, pair: RegionPair) -> Evidence:
    a, b = work.side(work.ids[pair.a.path]), work.side(work.ids[pair.b.path])
    names_a, owner_a = _methods(a.entry.snippets, pair.a)
    names_b, owner_b = _methods(b.entry.snippets, pair.b)
    shared = sorted(names_a & names_b)
    apart = (pair.a.path, owner_a) != (pair.b.path, owner_b)
    parallel = ", ".join(shared[:3]) if shared and apart and owner_a >= 0 and owner_b >= 0 else ""
    if not parallel and _parallel_modules(pair.a.path, pair.b.path):
        parallel = f"{pair.a.path.rsplit('/', 1)[-1]} (one per folder)"
    return evidence(pair.a, a.heavy, a.noise_raw, pair.b, b.heavy, b.noise_raw, parallel)


def _parallel_modules(a: str, b: str) -> bool:
    """Files of the same name in different folders: one module per backend or platform."""
    folder_a, _, name_a = a.lstrip("\0").rpartition("/")
    folder_b, _, name_b = b.lstrip("\0").rpartition("/")
    return name_a == name_b and folder_a != folder_b and name_a not in _GENERIC_NAMES


# names every package has: two of them are not parallel implementations of one thing
_GENERIC_NAMES = frozenset(
    {"__init__.py", "index.js", "index.ts", "utils.py", "util.py", "helpers.py", "main.py"}
)


def _methods(snippets: Sequence[SnippetMeta], region: Region) -> tuple[frozenset[str], int]:
    """The methods a region is, lies in or holds, and their class (-1: not methods of a class).

    A region inside one method gives that method; a region of a class gives the methods it
    covers whole (for parallel classes, the names both sides share tell the overrides).
    """
    k = region.unit
    while k >= 0 and snippets[k].kind not in (FUNCTION, CLASS):
        k = enclosing_strictly(snippets, k)
    if k < 0:
        return frozenset(), -1
    if snippets[k].kind == FUNCTION:
        owner = enclosing_strictly(snippets, k)
        if owner < 0 or snippets[owner].kind != CLASS or not snippets[k].name:
            return frozenset(), -1
        return frozenset({snippets[k].name}), owner
    names = frozenset(
        m.name
        for j, m in enumerate(snippets)
        if m.kind == FUNCTION
        and m.name
        and region.start <= m.start
        and m.end <= region.end
        and enclosing_strictly(snippets, j) == k
    )
    return names, k


def class_finding(work: Workset, clone_class: CloneClass, evidences: list[Evidence]) -> Finding:
    """One clone class as a finding: the representative first, then its copies.

    Its level, evidence and probability are those of its best pair (:func:`.judge.judge`).
    """
    locations = [location(work, r) for r in clone_class.regions]
    pairs = [
        Pair(0, k, pair.similarity, pair.crystalbleu, copied=pair.copied)
        for k, (_, pair) in enumerate(clone_class.members, 1)
    ]
    least = work.finder.config.min_tokens
    shorts = [
        _short(clone_class.representative, member, pair, least)
        for member, pair in clone_class.members
    ]
    language = work.similarity.language
    v = judge(language, locations, pairs, evidences, shorts)
    return Finding(
        language,
        locations,
        pairs,
        level=v.level,
        evidence=_marked(v.evidence, locations),
        probability=v.probability,
        facts=v.facts,
    )


def shown(a: Region, b: Region, pair: RegionPair) -> RegionPair:
    """``pair`` as the two locations a finding shows (its evidence is read on what is shown)."""
    if (pair.a, pair.b) == (a, b):
        return pair
    return RegionPair(a, b, pair.similarity, pair.crystalbleu, pair.copied)


def family_finding(
    work: Workset, family: Family, read: Callable[[RegionPair], Evidence] | None = None
) -> Finding:
    """A family as one finding: its members with their aligned ranges (judged like a class).

    ``read`` gives a pair's evidence (default: read afresh; :func:`findings_of` reads each
    pair once).
    """
    order = [family.representative] + [
        k for k in range(len(family.members)) if k != family.representative
    ]
    at = {k: i for i, k in enumerate(order)}
    locations = [location(work, family.members[k]) for k in order]
    pairs = [
        Pair(at[x], at[y], pair.similarity, pair.crystalbleu, copied=pair.copied)
        for x, y, pair in family.pairs
    ]
    reader = read if read is not None else lambda pair: _evidence(work, pair)
    evidences = [reader(shown(family.members[x], family.members[y], p)) for x, y, p in family.pairs]
    phrase = family_phrase(locations)
    v = judge(work.similarity.language, locations, pairs, evidences, family=phrase)
    return Finding(
        work.similarity.language,
        locations,
        pairs,
        level=v.level,
        evidence=_marked(v.evidence, locations),
        family=True,
        probability=v.probability,
        facts=v.facts,
    )


def hull(work: Workset, regions: Sequence[Region]) -> Region:
    """The region of one file from the first of ``regions`` to the end of the last."""
    first = min(regions, key=lambda r: (r.start, -r.end))
    last = max(regions, key=lambda r: (r.end, -r.start))
    if first.start == last.start and first.end == last.end:
        return first
    snippets = work.entry(work.ids[first.path]).snippets
    unit = enclosing(snippets, first.start, last.end)
    whole = unit >= 0 and (snippets[unit].start, snippets[unit].end) == (first.start, last.end)
    return Region(
        first.path,
        first.start,
        last.end,
        first.first_line,
        first.first_col,
        last.last_line,
        last.last_col,
        unit,
        whole,
    )


class _TopUnits:
    """Where a region lives: its file, and the top-level unit it starts in (-1: none)."""

    def __init__(self, work: Workset) -> None:
        self.work = work
        self.of: dict[str, TopUnits] = {}

    def __call__(self, region: Region) -> tuple[str, int]:
        units = self.of.get(region.path)
        if units is None:
            snippets = self.work.entry(self.work.ids[region.path]).snippets
            units = self.of[region.path] = top_units(snippets)
        return region.path, top_unit_at(units, region.start)


TopUnits = tuple[list[int], list[int], list[int], bool]
"""The top-level units of a file: indices, starts, ends, and whether they follow each other."""


def top_units(snippets: Sequence[SnippetMeta]) -> TopUnits:
    """The top-level units of a file's snippets (for :func:`top_unit_at`)."""
    ks = [k for k, meta in enumerate(snippets) if meta.depth == 0]
    starts, ends = [snippets[k].start for k in ks], [snippets[k].end for k in ks]
    ordered = all(
        starts[i] < starts[i + 1] and ends[i] <= starts[i + 1] for i in range(len(ks) - 1)
    )
    return ks, starts, ends, ordered


def top_unit_at(units: TopUnits, at: int) -> int:
    """The first top-level unit (in the file's order) holding token ``at``, or -1.

    By bisection when the units follow each other without overlapping (then at most one holds
    it), else by a scan of the top-level units.
    """
    ks, starts, ends, ordered = units
    if ordered:
        i = bisect_right(starts, at) - 1
        return ks[i] if i >= 0 and at < ends[i] else -1
    for k, start, end in zip(ks, starts, ends):
        if start <= at < end:
            return k
    return -1


def top_unit_naive(snippets: Sequence[SnippetMeta], at: int) -> int:
    """:func:`top_unit_at` scanning every snippet."""
    for k, meta in enumerate(snippets):
        if meta.depth == 0 and meta.start <= at < meta.end:
            return k
    return -1


def location(work: Workset, region: Region) -> Location:
    """The reported form of a region (see the module docstring)."""
    entry = work.entry(work.ids[region.path])
    unit = entry.snippets[region.unit] if region.unit >= 0 else None
    place = (region.path, region.first_line, region.first_col, region.last_line, region.last_col)
    if region.whole and unit is not None and unit.kind == STATEMENTS:
        table = table_name(work, region)
        if table is not None:  # a data table, named as one
            return Location(*place, DATA, table, region.tokens, unit.sha, unit.norm_sha)
    if region.whole and unit is not None:
        name = unit.name
        definition = named_definition(entry.snippets, region.unit)
        if definition != region.unit:  # `Run callback in TestLoad`, `(anonymous) in main`
            name = f"{name} in {entry.snippets[definition].name}"
        return Location(*place, unit.kind, name, region.tokens, unit.sha, unit.norm_sha)
    sha, norm = region_digests(work, region)
    if region.whole:
        return Location(*place, FILE, "", region.tokens, sha, norm)
    if unit is None:
        return Location(*place, LINES, "", region.tokens, sha, norm)
    unit = entry.snippets[named_definition(entry.snippets, region.unit)]
    table = table_name(work, region)
    kind, name = (unit.kind, unit.name) if table is None else (DATA, table)
    return Location(
        *place, LINES, "", region.tokens, sha, norm, kind, name, unit.first_line, unit.last_line
    )


def named_definition(snippets: Sequence[SnippetMeta], k: int) -> int:
    """The unit lines in unit ``k`` are said to lie in: the nearest enclosing named definition.

    Code inside a callback or an anonymous function (Go's ``t.Run("case", func(t) {...})``, a
    closure passed to ``map``) lies in the function that defines it; ``k`` itself when no named
    definition encloses it (a test suite of nested ``describe`` callbacks).
    """
    j = k
    while j >= 0:
        meta = snippets[j]
        if meta.kind in CONTAINERS and meta.name != ANONYMOUS and not meta.name.endswith(CALLBACK):
            return j
        j = enclosing_strictly(snippets, j)
    return k
