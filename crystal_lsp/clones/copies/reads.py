"""What turning pairs into findings reads off tokens, kept by content between scans.

:func:`~crystal_lsp.clones.copies.build.findings_of` reads every accepted pair's lines
(:func:`~crystal_lsp.clones.copies.evidence.evidence`) and the digests of the regions it reports
(:func:`~crystal_lsp.clones.align.candidates.region_sha`). Both are functions of the two files'
contents, the regions and the settings, so a rescan after one file changed need not load the
tokens of every other file again: :class:`Reads` keeps them by file content digest and region
(paths in the key too: the evidence reads them), in memory for a long-lived finder and in the
store for the next process. A full scan keeps only what it read, so the memo never outgrows
the findings; an in-memory override (an editor's buffer, a staged blob) is read afresh and
never kept.
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Callable
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from crystal_lsp.clones.align.candidates import region_norm_sha, region_sha
from crystal_lsp.clones.align.pairs import RegionPair
from crystal_lsp.clones.align.regions import Region
from crystal_lsp.clones.copies.evidence import Evidence

if TYPE_CHECKING:
    from crystal_lsp.clones.align.workset import Copies, Workset

log = logging.getLogger(__name__)

FORMAT = 2
MEMORY_LIMIT = 20_000
"""Entries a finder keeps between full scans (focused searches only add): then it starts over.

Only files on disk are kept (an editor's buffer changes with every keystroke)."""
_FIELDS = tuple(f.name for f in fields(Evidence))
_REGION_FIELDS = tuple(f.name for f in fields(Region))
# the fields' values as a tuple: dataclasses.astuple deep-copies every value (most of a save)
_values: Callable[[Evidence], tuple[Any, ...]] = operator.attrgetter(*_FIELDS)
_region_values: Callable[[Region], tuple[Any, ...]] = operator.attrgetter(*_REGION_FIELDS)
Decision = tuple["RegionPair | None", frozenset[str]]
"""A merged span pair's copy (None: not one) and the region digests its scoring kept."""
_PLAIN = (bool, int, float, str)


class Reads:
    """Evidence of pairs and digests of regions, by content (module docstring)."""

    def __init__(
        self,
        key: str,
        evidence: dict[str, Evidence],
        digests: dict[str, list[str]],
        decisions: dict[str, Decision] | None = None,
    ):
        self.key = key
        self.evidence = evidence
        self.digests = digests
        self.decisions: dict[str, Decision] = decisions if decisions is not None else {}
        self.used: set[str] = set()
        self.added = 0
        self.config: object = None
        """The settings object the key was made of (the key is made once per settings)."""

    def get_evidence(self, key: str) -> Evidence | None:
        """The kept evidence under ``key`` (:func:`pair_key`), if any."""
        found = self.evidence.get(key)
        if found is not None:
            self.used.add(key)
        return found

    def put_evidence(self, key: str, ev: Evidence) -> None:
        """Keep the evidence of a pair (only if its fields are plain values)."""
        if all(_plain(v) for v in _values(ev)):
            self._room()
            self.evidence[key] = ev
            self.used.add(key)
            self.added += 1

    def get_digests(self, key: str) -> list[str] | None:
        """The kept raw and normalized digests of a region, if any."""
        found = self.digests.get(key)
        if found is not None:
            self.used.add(key)
        return found

    def put_digests(self, key: str, digests: list[str]) -> None:
        """Keep a region's raw and normalized digests."""
        self._room()
        self.digests[key] = digests
        self.used.add(key)
        self.added += 1

    def get_decision(self, key: str) -> Decision | None:
        """The kept decision of two spans, if any."""
        found = self.decisions.get(key)
        if found is not None:
            self.used.add(key)
        return found

    def put_decision(self, key: str, decision: Decision) -> None:
        """Keep the decision of two spans (the pair or None, and the digests it scored)."""
        self._room()
        self.decisions[key] = decision
        self.used.add(key)
        self.added += 1

    def size(self) -> int:
        """Entries held."""
        return len(self.evidence) + len(self.digests) + len(self.decisions)

    def _room(self) -> None:
        if self.size() >= MEMORY_LIMIT:
            self.evidence.clear()
            self.digests.clear()
            self.decisions.clear()
            self.used.clear()

    def prune(self) -> None:
        """Keep only the entries used since the last prune."""
        self.evidence = {k: v for k, v in self.evidence.items() if k in self.used}
        self.digests = {k: v for k, v in self.digests.items() if k in self.used}
        self.decisions = {k: v for k, v in self.decisions.items() if k in self.used}
        self.used = set()
        self.added = 0

    def to_json(self) -> dict[str, Any]:
        """What is stored: the entries this finder used since it was loaded or last saved."""
        return {
            "format": FORMAT,
            "fields": list(_FIELDS),
            "evidence": {k: list(_values(v)) for k, v in self.evidence.items() if k in self.used},
            "digests": {k: v for k, v in self.digests.items() if k in self.used},
            "region_fields": list(_REGION_FIELDS),
            "decisions": {
                k: [None if pair is None else _pair_row(pair), sorted(scored)]
                for k, (pair, scored) in self.decisions.items()
                if k in self.used
            },
        }


def reads_of(work: Workset) -> Reads:
    """The memo of a workset's language (loaded from the store once per language state)."""
    found = work.state.reads
    config = work.finder.config
    if isinstance(found, Reads) and found.config is config:
        return found
    key = f"reads:{work.similarity.language}:{config.signature()}:{FORMAT}"
    if isinstance(found, Reads) and found.key == key:
        found.config = config
        return found
    reads = _load(work, key)
    reads.config = config
    work.state.reads = reads
    return reads


def _load(work: Workset, key: str) -> Reads:
    doc = work.finder.index.store.get(key)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return Reads(key, {}, {})
    try:
        if tuple(doc["fields"]) != _FIELDS:
            return Reads(key, {}, {})
        evidence = {str(k): _evidence(row) for k, row in doc["evidence"].items()}
        digests = {str(k): [str(v[0]), str(v[1])] for k, v in doc["digests"].items()}
        decisions: dict[str, Decision] = {}
        if tuple(doc["region_fields"]) == _REGION_FIELDS:
            decisions = {
                str(k): (None if row is None else _pair(row), frozenset(map(str, scored)))
                for k, (row, scored) in doc["decisions"].items()
            }
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        log.warning("the memo of findings' reads is malformed (%s); reading afresh", exc)
        return Reads(key, {}, {})
    return Reads(key, evidence, digests, decisions)


def _pair_row(pair: RegionPair) -> list[Any]:
    a, b = _region_values(pair.a), _region_values(pair.b)
    return [*a, *b, pair.similarity, pair.crystalbleu, pair.copied]


def _pair(row: list[Any]) -> RegionPair:
    n = len(_REGION_FIELDS)
    if len(row) != 2 * n + 3 or not all(isinstance(v, _PLAIN) for v in row):
        raise ValueError("a pair row of other fields")
    a, b = Region(*row[:n]), Region(*row[n : 2 * n])
    return RegionPair(a, b, float(row[-3]), float(row[-2]), int(row[-1]))


def _plain(v: Any) -> bool:
    """A plain value, or a tuple (a JSON list) of them (the evidence's name pairs and kinds)."""
    if isinstance(v, (tuple, list)):
        return all(_plain(x) for x in v)
    return isinstance(v, _PLAIN)


def _tuples(v: Any) -> Any:
    return tuple(_tuples(x) for x in v) if isinstance(v, list) else v


def _evidence(row: list[Any]) -> Evidence:
    if len(row) != len(_FIELDS) or not all(_plain(v) for v in row):
        raise ValueError("an evidence row of other fields")
    return Evidence(*(_tuples(v) for v in row))


def save(work: Workset) -> None:
    """Store what a full scan read (only the entries it used), if it read anything new."""
    reads = work.state.reads
    if not isinstance(reads, Reads):
        return
    if reads.added or reads.size() > len(reads.used):
        work.finder.index.store.set(reads.key, reads.to_json())
    reads.prune()


def _region_key(work: Workset, region: Region) -> str:
    sha = work.finder.index.files[region.path].sha
    r = region
    return (
        f"{sha}\0{r.path}\0{r.start}\0{r.end}\0{r.first_line}\0{r.first_col}\0"
        f"{r.last_line}\0{r.last_col}\0{r.unit}\0{int(r.whole)}"
    )


def pair_key(work: Workset, pair: RegionPair) -> str:
    """The key of a pair's evidence: both files' contents and both regions (paths too)."""
    return f"{_region_key(work, pair.a)}\1{_region_key(work, pair.b)}"


def region_digests(work: Workset, region: Region) -> tuple[str, str]:
    """:func:`region_sha` and :func:`region_norm_sha` of a region (kept by content)."""
    if _override(work, region.path):
        heavy = work.side(work.ids[region.path]).heavy
        return region_sha(heavy, region), region_norm_sha(heavy, region)
    reads = reads_of(work)
    sha = work.finder.index.files[region.path].sha
    key = f"{sha}\0{region.start}\0{region.end}"
    found = reads.get_digests(key)
    if found is None:
        heavy = work.side(work.ids[region.path]).heavy
        found = [region_sha(heavy, region), region_norm_sha(heavy, region)]
        reads.put_digests(key, found)
    return found[0], found[1]


def kept_evidence(
    work: Workset, pair: RegionPair, read: Callable[[Workset, RegionPair], Evidence]
) -> Evidence:
    """``read(work, pair)``, kept by content (:func:`pair_key`)."""
    if _override(work, pair.a.path) or _override(work, pair.b.path):
        return read(work, pair)
    reads = reads_of(work)
    key = pair_key(work, pair)
    found = reads.get_evidence(key)
    if found is None:
        found = read(work, pair)
        reads.put_evidence(key, found)
    return found


def _override(work: Workset, path: str) -> bool:
    """Whether a file is an in-memory override: its contents come and go, it is not kept."""
    return work.finder.index.files[path].override


Span = tuple[int, int]
DecideSpans = Callable[["Workset", int, int, Span, Span, "Copies"], "RegionPair | None"]


def kept_decision(
    work: Workset,
    fa: int,
    fb: int,
    span_a: Span,
    span_b: Span,
    out: Copies,
    decide: DecideSpans,
    kind: str = "",
) -> RegionPair | None:
    """``decide(work, fa, fb, span_a, span_b, out)``, kept by content, S sets and spans.

    ``kind`` tells decisions of the same spans apart (``whole``: regions taken as they are).

    What the decision adds to ``out.digests`` (the scores worth keeping) is kept with it and
    added again when it is reused.
    """
    path_a, path_b = work.paths[fa], work.paths[fb]
    if _override(work, path_a) or _override(work, path_b):
        return decide(work, fa, fb, span_a, span_b, out)
    reads = reads_of(work)
    files = work.finder.index.files
    key = (
        f"{kind}{work.state.sets.fingerprint}\2{files[path_a].sha}\0{path_a}\0{span_a[0]}\0{span_a[1]}"
        f"\1{files[path_b].sha}\0{path_b}\0{span_b[0]}\0{span_b[1]}"
    )
    found = reads.get_decision(key)
    if found is not None:
        out.digests.update(found[1])
        return found[0]
    kept = out.digests
    out.digests = set()
    try:
        pair = decide(work, fa, fb, span_a, span_b, out)
        scored = frozenset(out.digests)
    finally:
        kept.update(out.digests)
        out.digests = kept
    reads.put_decision(key, (pair, scored))
    return pair
