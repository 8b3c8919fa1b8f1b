"""The verdict on a finding: its pairs judged, the best chosen, its level and checkable facts.

:func:`judge` reads each pair of a finding with :mod:`.verdict` (the features of its evidence
and of where its copies lie), picks the pair that best makes the finding's case -- a pair at
copy level with the highest probability, else the most probable -- and gives the finding's
level (:func:`crystal_lsp.clones.copies.levels.level_of`), its evidence phrases, its
probability and its facts (what the JSON carries for a reader or a script to check).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from crystal_lsp.clones.align.pairs import RegionPair
from crystal_lsp.clones.align.regions import Region
from crystal_lsp.clones.copies.evidence import Evidence
from crystal_lsp.clones.copies.levels import (
    FAMILY,
    level_of,
    renamed_whole,
    type_variants,
    verbatim,
)
from crystal_lsp.clones.copies.verdict import Context, features, model
from crystal_lsp.clones.findings import COPY, LINES, SIMILAR, Finding, Location, Pair
from crystal_lsp.text.snippets import DATA

UNKNOWN_COVER = 0.5
"""The share of its unit a location covers when it lies in no unit (top-level lines)."""


@dataclass(frozen=True)
class Verdict:
    """A finding's level, phrases, probability and facts (module docstring)."""

    level: str
    evidence: list[str]
    probability: float
    facts: dict[str, Any]


def covered(loc: Location) -> float:
    """The share of its unit's lines a location covers (1: a whole unit or file)."""
    if loc.kind != LINES:
        return 1.0
    if not loc.unit_kind or loc.unit_last < loc.unit_first:
        return UNKNOWN_COVER
    share = (loc.last_line - loc.first_line + 1) / (loc.unit_last - loc.unit_first + 1)
    return min(share, 1.0)


def unit_name(loc: Location) -> str:
    """The name of the unit a location is, or lies in."""
    return loc.unit_name if loc.kind == LINES else loc.name


def judge(
    language: str,
    locations: Sequence[Location],
    pairs: Sequence[Pair],
    evidences: Sequence[Evidence],
    shorts: Sequence[str | None] | None = None,
    family: str | None = None,
) -> Verdict:
    """The verdict on a finding whose ``pairs`` have ``evidences`` (module docstring).

    ``shorts``: per pair, why it is a short repeat (or None); ``family``: the description of
    the family the finding is, if it is one. Each pair's evidence is read from its first
    location to its second (names read ``a->b``).
    """
    shorts = shorts if shorts is not None else [None] * len(pairs)
    whole = all(loc.kind != LINES for loc in locations)
    exact = whole and len({loc.sha for loc in locations}) == 1 and bool(locations[0].sha)
    judged = []
    base = False
    for pair, ev, short in zip(pairs, evidences, shorts):
        a, b = locations[pair.a], locations[pair.b]
        ctx = Context(
            pair.copied,
            pair.crystalbleu,
            min(covered(a), covered(b)),
            a.path == b.path,
            len(locations),
            family is not None,
            short is not None,
            (unit_name(a), unit_name(b)),
            language,
            (a.path, b.path),
        )
        feats = features(ev, ctx)
        p = model().probability(feats)
        level, why = level_of(ev, family, short, p=p, exact=exact, language=language)
        by_rules = level_of(ev, family, short, exact=exact, language=language)[0]
        judged.append(
            (level == COPY, p, pair.copied * max(pair.crystalbleu, 0.0), level, why, feats)
        )
        base = base or by_rules == COPY
    k = max(range(len(judged)), key=lambda i: judged[i][:3])
    _, p, _, level, why, feats = judged[k]
    out = facts(pairs[k], evidences[k], feats)
    out["rules"] = COPY if base else SIMILAR
    rule = invariant(evidences[k], exact, language, family)
    if rule:
        out["invariant"] = rule
    return Verdict(level, why, p, out)


def invariant(ev: Evidence, exact: bool, language: str, family: str | None = None) -> str:
    """The invariant that decides a pair's level whatever the model says (empty: none)."""
    if exact:
        return "identical"
    if type_variants(ev, language):
        return "type variants"
    if verbatim(ev):
        return "verbatim"
    return "renamed" if family is None and renamed_whole(ev) else ""


def facts(pair: Pair, ev: Evidence, feats: dict[str, float]) -> dict[str, Any]:
    """The checkable evidence of a finding's best pair (``Finding.facts``)."""
    out: dict[str, Any] = {
        "pair": [pair.a, pair.b],
        "code_lines": [ev.lines_a, ev.lines_b],
        "identical": ev.identical,
        "differing": dict(ev.kinds),
    }
    if ev.renamed:
        out["renaming"] = [list(p) for p in ev.names]
        if ev.edited:
            out["edited"] = ev.edited
    out["features"] = {k: round(v, 6) for k, v in feats.items()}
    return out


def judged_again(
    finding: Finding,
    regions: Sequence[Region | None],
    read: Callable[[RegionPair], Evidence],
    least: int,
) -> Finding:
    """``finding`` judged on the pairs it keeps (``regions``: its locations', in order).

    A finding that took in another's members (:func:`.repeats.merge_repeats`) and then lost
    some (:func:`.repeats.trim_shown`) may have lost its best pair: its level, evidence and
    facts are read again on what it shows, so that they never name a location it does not list.
    ``least``: the copied tokens under which a pair is a short repeat.
    """
    known = [r for r in regions if r is not None]
    if len(known) != len(finding.locations):
        return finding
    shown = [
        RegionPair(known[p.a], known[p.b], p.similarity, p.crystalbleu, p.copied)
        for p in finding.pairs
    ]
    shorts = [short_repeat(pair.a, pair.b, pair, least) for pair in shown]
    phrase = family_phrase(finding.locations) if finding.family else None
    evidences = [read(pair) for pair in shown]
    v = judge(finding.language, finding.locations, finding.pairs, evidences, shorts, phrase)
    why = with_data_table(v.evidence, finding.locations)
    return replace(finding, level=v.level, evidence=why, probability=v.probability, facts=v.facts)


def family_phrase(locations: Sequence[Location]) -> str:
    """How a family's finding is described: its members and where they lie."""
    files = len({loc.path for loc in locations})
    where = f"in {files} files" if files > 1 else "in one file"
    return f"{FAMILY}: {len(locations)} members {where}"


DATA_TABLE = "a data table"
"""The evidence of a finding with a location that is data (:mod:`crystal_lsp.text.tables`)."""


def with_data_table(why: list[str], locations: Sequence[Location]) -> list[str]:
    """The evidence, saying so when a location is data rather than code."""
    if any(DATA in (loc.kind, loc.unit_kind) for loc in locations) and DATA_TABLE not in why:
        return [*why, DATA_TABLE]
    return why


def short_repeat(rep: Region, member: Region, pair: RegionPair, least: int) -> str | None:
    """Why a pair is a short repeat (too little copied code to act on), or None.

    A whole function or class copied is a copy whatever its size; a few lines of one are not.
    """
    if pair.copied >= least or (rep.whole and member.whole):
        return None
    return f"a short repeat ({pair.copied} copied tokens, under {least})"
