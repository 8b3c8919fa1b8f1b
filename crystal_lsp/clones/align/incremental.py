"""Re-aligning an edited file: the candidates of chains the edit does not reach are kept.

A language server aligns an unsaved buffer after every keystroke. Its chains are made afresh
(:mod:`crystal_lsp.clones.align.chains`, cheap); what a chain becomes -- its candidate, snapped
to lines and units, or the reason it was left out (:mod:`crystal_lsp.clones.align.alignment`) --
is what costs, and for most chains the keystroke changed nothing of what that reads. An
:class:`Edit` tells where two versions of a file differ (the tokens between their common
prefix and suffix, and every unit and noise range around them); a :class:`ChainMemo` keeps, per
chain of the previous version, its outcome and the tokens of the edited file its snapping could
read (:data:`REACH_LINES` lines around the chain, and its final regions). A chain of the new
version whose runs are those of a kept chain moved by the edit, and whose reach lies clear of
the edit, has the kept outcome, moved. Units and noise ranges the edit changed count as reached
when they overlap the reach -- but for a unit that holds the edit and the reach and is too large
for the reach to snap to as a whole, whichever version (its size is all snapping reads of it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from crystal_lsp.clones.align.lines import line_table
from crystal_lsp.clones.align.regions import (
    EXTEND_LINES,
    PAIRED_UNIT,
    Region,
    header_prefix,
    raw_span,
)
from crystal_lsp.text.entries import Entry, Heavy, SnippetMeta

if TYPE_CHECKING:
    from crystal_lsp.clones.align.chains import Chain

REACH_LINES = 2 * EXTEND_LINES + 1
"""Lines around a chain its snapping may read (extension takes up to two lines a step)."""
Outcome = tuple["str | None", "tuple[Region, Region, int, str, str] | None"]
"""What a chain became: the reason it was left out (counted), or its candidate's regions,
copied tokens and digests; both None for a candidate too small to count."""


@dataclass(frozen=True)
class Edit:
    """Where the new version of a file differs from the old one (raw and normalized tokens)."""

    start: int
    old_end: int
    new_end: int
    nstart: int
    nold_end: int
    nnew_end: int
    lines: int
    """How many lines later the tokens after the edit are."""
    units: dict[int, int]
    """Old snippet index -> new index, for the snippets the edit did not touch."""
    changed_units: tuple[list[SnippetMeta], list[SnippetMeta]]
    """The snippets of each version that overlap or hold the edit."""
    changed_noise: tuple[list[tuple[int, int]], list[tuple[int, int]]]
    """The noise ranges of each version that overlap the edit."""
    old_header: list[int]
    new_header: list[int]

    @property
    def delta(self) -> int:
        """Raw tokens added by the edit."""
        return self.new_end - self.old_end

    @property
    def ndelta(self) -> int:
        """Normalized tokens added by the edit."""
        return self.nnew_end - self.nold_end

    def old_position(self, n: int, size: int) -> int | None:
        """The old normalized position of new normalized tokens ``[n, n + size)`` (None: edited)."""
        if n + size <= self.nstart:
            return n
        if n >= self.nnew_end:
            return n - self.ndelta
        return None

    def moved(self, region: Region, path: str) -> Region | None:
        """An old region of the edited file as it lies in the new version (None: touched)."""
        if region.path != path:
            return region
        unit = self.units.get(region.unit, -1) if region.unit >= 0 else -1
        if region.unit >= 0 and unit < 0:
            return None
        if region.end <= self.start:
            return replace(region, unit=unit)
        if region.start >= self.old_end:
            return replace(
                region,
                start=region.start + self.delta,
                end=region.end + self.delta,
                first_line=region.first_line + self.lines,
                last_line=region.last_line + self.lines,
                unit=unit,
            )
        return None


def edit_of(old: Entry, old_heavy: Heavy, new: Entry, new_heavy: Heavy) -> Edit | None:
    """The edit from one version of a file to the next, or None when it cannot be told apart.

    The edit runs from the first token that differs to the last one (one more token of margin
    after it: a string token's normalized form depends on the token before it); every unit and
    noise range that does not overlap it must be the same in both versions, moved.
    """
    if old.language != new.language or old.status != new.status:
        return None
    a, b = old_heavy, new_heavy
    n, m = len(a.texts), len(b.texts)
    start = 0
    while (
        start < n
        and start < m
        and a.texts[start] == b.texts[start]
        and a.cats[start] == b.cats[start]
    ):
        start += 1
    tail = 0
    while (
        tail < n - start
        and tail < m - start
        and a.texts[n - 1 - tail] == b.texts[m - 1 - tail]
        and a.cats[n - 1 - tail] == b.cats[m - 1 - tail]
    ):
        tail += 1
    tail = max(0, tail - 1)
    old_end, new_end = n - tail, m - tail
    lines = (b.lines[new_end] - a.lines[old_end]) if tail else 0
    if tail and b.lines[-1] - a.lines[-1] != lines:
        return None
    nstart = int(old.npos.searchsorted(start))
    nold_end, nnew_end = int(old.npos.searchsorted(old_end)), int(new.npos.searchsorted(new_end))
    if len(old.npos) - nold_end != len(new.npos) - nnew_end:
        return None
    if [kind for _, _, kind in _dedup(old)] != [kind for _, _, kind in _dedup(new)]:
        return None  # the order of noise kinds breaks ties between them
    units = _unit_map(old.snippets, new.snippets, start, old_end, new_end - old_end, lines)
    noise = _noise_changes(old, new, start, old_end, new_end)
    if units is None or noise is None:
        return None
    touched = (
        [s for s in old.snippets if (s.start < old_end and s.end > start) or s.start == start],
        [s for s in new.snippets if (s.start < new_end and s.end > start) or s.start == start],
    )
    return Edit(
        start, old_end, new_end, nstart, nold_end, nnew_end, lines, units, touched, noise,
        header_prefix(old), header_prefix(new),
    )  # fmt: skip


def _dedup(entry: Entry) -> list[tuple[int, int, str]]:
    """The first noise range of each kind (their order breaks ties between kinds)."""
    seen: set[str] = set()
    out = []
    for a, b, kind in entry.noise:
        if kind not in seen:
            seen.add(kind)
            out.append((a, b, kind))
    return out


def _same(m: SnippetMeta, k: SnippetMeta, delta: int, lines: int) -> bool:
    return (
        (k.start, k.end, k.first_line, k.last_line)
        == (m.start + delta, m.end + delta, m.first_line + lines, m.last_line + lines)
        and (k.kind, k.name, k.depth, k.sha, k.norm_sha, k.suppressed)
        == (m.kind, m.name, m.depth, m.sha, m.norm_sha, m.suppressed)
        and (k.first_col, k.last_col) == (m.first_col, m.last_col)
    )


def _unit_map(
    old: list[SnippetMeta],
    new: list[SnippetMeta],
    start: int,
    old_end: int,
    delta: int,
    lines: int,
) -> dict[int, int] | None:
    """Old -> new index of the snippets clear of the edit (None: they do not correspond)."""
    clear_old = [k for k, m in enumerate(old) if m.end <= start or m.start >= old_end]
    clear_new = [k for k, m in enumerate(new) if m.end <= start or m.start >= old_end + delta]
    if len(clear_old) != len(clear_new):
        return None
    out: dict[int, int] = {}
    for i, j in zip(clear_old, clear_new):
        m, k = old[i], new[j]
        shift, moved = (0, 0) if m.end <= start else (delta, lines)
        if not _same(m, k, shift, moved):
            return None
        out[i] = j
    return out


def _noise_changes(
    old: Entry, new: Entry, start: int, old_end: int, new_end: int
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]] | None:
    """The noise ranges of each version overlapping the edit (None: the others differ)."""
    delta = new_end - old_end

    def clear(entry: Entry, end: int, shift: int) -> list[tuple[int, int, str]]:
        return [
            (a - (shift if a >= end else 0), b - (shift if a >= end else 0), kind)
            for a, b, kind in entry.noise
            if b <= start or a >= end
        ]

    if clear(old, old_end, 0) != clear(new, new_end, delta):
        return None
    return (
        [(a, b) for a, b, _ in old.noise if not (b <= start or a >= old_end)],
        [(a, b) for a, b, _ in new.noise if not (b <= start or a >= new_end)],
    )


@dataclass
class Kept:
    """A chain's outcome, and what of the edited file its snapping reads."""

    outcome: Outcome
    reach: list[tuple[int, int]]
    """Raw token spans of the edited file the outcome depends on."""


class ChainMemo:
    """The outcomes of an edited file's chains in its previous version, for its next one."""

    def __init__(self, path: str, fid: int, edit: Edit | None, old: dict[tuple[object, ...], Kept]):
        self.path = path
        self.fid = fid
        self.edit = edit
        self.old = old
        self.new: dict[tuple[object, ...], Kept] = {}
        self.reused = 0

    def involves(self, chain: Chain) -> bool:
        """Whether a chain has a side in the edited file."""
        return self.fid in (chain.fa, chain.fb)

    def get(self, chain: Chain, other: str) -> Outcome | None:
        """The kept outcome of a chain the edit does not reach, moved (None: align it)."""
        edit = self.edit
        if edit is None:
            return None
        runs: list[tuple[int, int, int]] = []
        for i0, i1, j0 in chain.runs:
            a = edit.old_position(i0, i1 - i0) if chain.fa == self.fid else i0
            b = edit.old_position(j0, i1 - i0) if chain.fb == self.fid else j0
            if a is None or b is None:
                return None
            runs.append((a, a + i1 - i0, b))
        kept = self.old.get((chain.fa == self.fid, chain.fb == self.fid, other, tuple(runs)))
        if kept is None or not all(self._clear(lo, hi) for lo, hi in kept.reach):
            return None
        reason, found = kept.outcome
        if found is None:
            return kept.outcome
        ra, rb = edit.moved(found[0], self.path), edit.moved(found[1], self.path)
        if ra is None or rb is None:
            return None
        self.reused += 1
        return reason, (ra, rb, found[2], found[3], found[4])

    def _clear(self, lo: int, hi: int) -> bool:
        """Whether old raw tokens ``[lo, hi)`` read nothing the edit changed."""
        edit = self.edit
        assert edit is not None
        if hi > edit.start and lo < edit.old_end:
            return False
        for a, b in edit.changed_noise[0]:
            if a < hi and b > lo:
                return False
        size = hi - lo
        units = zip(*edit.changed_units) if _paired(edit) else None
        if units is None:
            return not any(m.start < hi and m.end > lo for m in edit.changed_units[0])
        for m, k in units:
            if m.start < hi and m.end > lo:
                if not (m.start <= lo and hi <= m.end):
                    return False
                body_old = m.tokens - (edit.old_header[m.end] - edit.old_header[m.start])
                body_new = k.tokens - (edit.new_header[k.end] - edit.new_header[k.start])
                if size >= PAIRED_UNIT * min(body_old, body_new):
                    return False
        return True

    def put(self, chain: Chain, other: str, outcome: Outcome, side_of: Sides) -> None:
        """Keep a chain's outcome in this version (with what it reads of the edited file)."""
        reach: list[tuple[int, int]] = []
        table = line_table(side_of.heavy)
        for mine, lo, hi in (
            (chain.fa == self.fid, chain.a0, chain.a1),
            (chain.fb == self.fid, chain.b0, chain.b1),
        ):
            if not mine:
                continue
            raw_lo, raw_hi = raw_span(side_of.entry, side_of.heavy, lo, hi)
            first = max(0, table.index(raw_lo) - REACH_LINES)
            last = min(len(table.firsts) - 1, table.index(max(raw_hi - 1, raw_lo)) + REACH_LINES)
            reach.append((table.firsts[first], table.ends[last]))
        found = outcome[1]
        if found is not None:
            reach += [(r.start, r.end) for r in found[:2] if r.path == self.path]
        key = (chain.fa == self.fid, chain.fb == self.fid, other, tuple(chain.runs))
        self.new[key] = Kept(outcome, reach)


def _paired(edit: Edit) -> bool:
    """Whether the snippets the edit touched are the same ones, grown or shrunk in place."""
    old, new = edit.changed_units
    if len(old) != len(new):
        return False
    return all(
        m.start == k.start and m.end + edit.delta == k.end and (m.kind, m.name) == (k.kind, k.name)
        for m, k in zip(old, new)
    )


@dataclass(frozen=True)
class Sides:
    """The edited file's entry and tokens."""

    entry: Entry
    heavy: Heavy
