"""Clone classes as findings: locations that say what was copied, ranked by what it costs.

A location is a whole unit (``function parse``, ``class Config``), a whole file, or lines of a
unit (``lines 120-151 of function main``). Findings are ranked by the copied non-trivial tokens
of their members times their similarity (:data:`crystal_lsp.clones.findings.RANKING`): a long
copied block comes before a five-line look-alike, however similar.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from crystal_lsp.clones.align.candidates import region_norm_sha, region_sha
from crystal_lsp.clones.align.digests import FILE
from crystal_lsp.clones.align.pairs import RegionPair
from crystal_lsp.clones.align.regions import Region
from crystal_lsp.clones.copies.classes import CloneClass, clone_classes, drop_nested
from crystal_lsp.clones.findings import LINES, Finding, Location, Pair, sort_findings

if TYPE_CHECKING:
    from crystal_lsp.clones.align.context import LineFocus
    from crystal_lsp.clones.align.workset import Workset


def findings_of(
    work: Workset, pairs: Sequence[RegionPair], focus: LineFocus | None
) -> tuple[list[Finding], int]:
    """The findings of accepted pairs, and how many classes were left out as already shown.

    With ``focus``, only findings with a region in the focus. See :func:`classes.drop_nested`.
    """
    classes, dropped = drop_nested(clone_classes(pairs))
    if focus is not None:
        classes = [c for c in classes if any(_in_focus(r, focus) for r in c.regions)]
    return sort_findings([finding(work, c) for c in classes]), dropped


def finding(work: Workset, clone_class: CloneClass) -> Finding:
    """One clone class as a finding: the representative first, then its copies."""
    locations = [location(work, r) for r in clone_class.regions]
    pairs = [
        Pair(0, k, pair.similarity, pair.crystalbleu, copied=pair.copied)
        for k, (_, pair) in enumerate(clone_class.members, 1)
    ]
    return Finding(work.similarity.language, locations, pairs, representative=0)


def location(work: Workset, region: Region) -> Location:
    """The reported form of a region (see the module docstring)."""
    side = work.side(work.ids[region.path])
    entry, heavy = side.entry, side.heavy
    unit = entry.snippets[region.unit] if region.unit >= 0 else None
    place = (region.path, region.first_line, region.first_col, region.last_line, region.last_col)
    if region.whole and unit is not None:
        return Location(*place, unit.kind, unit.name, region.tokens, unit.sha, unit.norm_sha)
    sha, norm = region_sha(heavy, region), region_norm_sha(heavy, region)
    if region.whole:
        return Location(*place, FILE, "", region.tokens, sha, norm)
    if unit is None:
        return Location(*place, LINES, "", region.tokens, sha, norm)
    return Location(
        *place,
        LINES,
        "",
        region.tokens,
        sha,
        norm,
        unit.kind,
        unit.name,
        unit.first_line,
        unit.last_line,
    )


def _in_focus(region: Region, focus: LineFocus) -> bool:
    if region.path not in focus:
        return False
    spans = focus[region.path]
    if spans is None:
        return True
    return any(lo <= region.last_line and region.first_line <= hi for lo, hi in spans)
