"""What ``crystal-clones`` prints: one line per finding, a summary, progress on stderr.

A finding (a clone class) is reported once, at its first new location -- new code that the
change adds and did not move there -- naming the closest other copy (the most similar pair;
on a tie, code that already existed). Paths are printed as git stores them, except that
undecodable bytes and control characters are escaped, so that one finding stays one line.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from crystal_lsp.clones.created import Verdict
from crystal_lsp.clones.findings import Finding, Location, Pair, display_path
from crystal_lsp.clones.git import Spans
from crystal_lsp.clones.settings import ScanConfig

from .staged import RANGE, STAGED

PROG = "crystal-clones"
FILES = "files"
Key = tuple[str, int, int, str]
"""A snippet or a finding's location: path, first line, last line, token digest."""


def location_key(loc: Location) -> Key:
    """The :data:`Key` of a finding's location (what :mod:`.moves` matches moved code by)."""
    return (loc.path, loc.first_line, loc.last_line, loc.sha)


@dataclass(frozen=True)
class Addition:
    """One reported clone class: where the new code is and its closest other copy."""

    location: Location
    other: Location
    similarity: float
    also: tuple[Location, ...]
    """The class's other copies in the checked code (other new copies, for a change)."""
    finding: Finding
    new: bool = True
    at: int = 0
    """The first line of the copy that the change adds (its first line in files mode)."""

    def line(self) -> str:
        """``original:line: function f copied to copy:line (lines a-b), similarity 0.87``.

        The original first, then where the change adds the copy (a line it adds).
        """
        what = self.other.describe() or "code"
        copy = self.location
        at = self.at or copy.first_line
        verb = "copied to" if self.new else "duplicated at"
        text = (
            f"{display_path(self.other.path)}:{self.other.first_line}: {what} {verb} "
            f"{display_path(copy.path)}:{at} (lines {copy.first_line}-{copy.last_line}), "
            f"similarity {self.similarity:.2f}"
        )
        if self.also:
            shown = ", ".join(f"{display_path(a.path)}:{a.first_line}" for a in self.also[:3])
            more = f" and {len(self.also) - 3} more" if len(self.also) > 3 else ""
            text += f"; also {'added ' if self.new else ''}at {shown}{more}"
        return text

    def agent_line(self) -> str:
        """``original:a-b ~ copy:c-d similarity 0.87 (what the original is)``, for agents."""
        other, copy = self.other, self.location
        return (
            f"{display_path(other.path)}:{other.first_line}-{other.last_line} ~ "
            f"{display_path(copy.path)}:{copy.first_line}-{copy.last_line} "
            f"similarity {self.similarity:.2f} ({other.describe() or 'code'})"
        )


@dataclass
class Outcome:
    """What one run found and looked at."""

    mode: str
    additions: list[Addition] = field(default_factory=list)
    files: int = 0
    """Files whose added lines (or, in files mode, whole contents) were checked."""
    corpus: int = 0
    """Files of the repository the checked code was compared with (0: no comparison needed)."""
    moves: int = 0
    existing: int = 0
    """Findings touching the change whose copies all existed before it (not new)."""
    baselined: int = 0
    similar: int = 0
    """Findings of similar structure not reported (``--show-similar`` reports them)."""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    cached: bool = False
    seconds: float = 0.0


def in_focus(loc: Location, focus: Mapping[str, Spans] | None) -> bool:
    """Whether a location overlaps the checked lines (``None``: everything is checked)."""
    if focus is None:
        return True
    spans = focus.get(loc.path)
    return spans is not None and any(
        loc.first_line <= hi and lo <= loc.last_line for lo, hi in spans
    )


def _first_added(loc: Location, focus: Mapping[str, Spans] | None) -> int:
    """The first line of a location that the change adds (its first line without a focus)."""
    spans = (focus or {}).get(loc.path) or []
    lines = [
        max(lo, loc.first_line) for lo, hi in spans if lo <= loc.last_line and loc.first_line <= hi
    ]
    return min(lines, default=loc.first_line)


def addition_for(
    finding: Finding,
    focus: Mapping[str, Spans] | None,
    moved: Mapping[Key, object],
    new: bool = True,
    verdict: Verdict | None = None,
) -> Addition | None:
    """The reported form of a finding, or None when all its new code was moved there.

    With a :class:`Verdict` (a change), the copy is the verdict's first created copy that was
    not moved, the original its closest partner; without, the first location in focus.
    """
    order = list(verdict.copies) if verdict is not None else range(len(finding.locations))
    fresh = [
        i
        for i in order
        if in_focus(finding.locations[i], focus) and location_key(finding.locations[i]) not in moved
    ]
    if not fresh:
        return None
    anchor = fresh[0]
    allowed = set(verdict.originals[verdict.copies.index(anchor)]) if verdict is not None else None
    pairs = [p for p in finding.pairs if anchor in (p.a, p.b)] or finding.pairs

    def rank(pair: Pair) -> tuple[bool, float, bool, int]:
        other = pair.b if pair.a == anchor else pair.a
        known = allowed is None or other in allowed
        return (known, pair.similarity, other not in fresh, -other)  # then existing, then first

    best = max(pairs, key=rank)
    other = best.b if best.a == anchor else best.a
    if other == anchor or (allowed is not None and other not in allowed):
        other = (verdict.originals[verdict.copies.index(anchor)] if verdict else [other])[0]
    also = tuple(finding.locations[i] for i in fresh[1:] if i != other)
    loc = finding.locations[anchor]
    return Addition(
        loc,
        finding.locations[other],
        best.similarity,
        also,
        finding,
        new,
        _first_added(loc, focus) if new else loc.first_line,
    )


def summary(outcome: Outcome, config: ScanConfig) -> str:
    """The one summary line on stderr."""
    what = {
        STAGED: "staged file",
        RANGE: "changed file",
        FILES: "file",
    }[outcome.mode]
    count = len(outcome.additions)
    noun = "clone-like addition" if outcome.mode != FILES else "clone"
    head = (
        f"{count} {noun}{'s' if count != 1 else ''} in {outcome.files} {what}"
        f"{'s' if outcome.files != 1 else ''}"
    )
    if outcome.corpus:
        head += f" (against {outcome.corpus} files, threshold {config.threshold:g})"
    parts = [head]
    if outcome.moves:
        parts.append(f"{outcome.moves} moved")
    if outcome.existing:
        n = outcome.existing
        parts.append(f"{n} edit{'s' if n != 1 else ''} of existing copies")
    if outcome.baselined:
        parts.append(f"{outcome.baselined} baselined")
    if outcome.similar:
        parts.append(f"{outcome.similar} of similar structure (--show-similar)")
    if outcome.skipped:
        parts.append(f"{len(outcome.skipped)} not checked")
    parts.append(f"{outcome.seconds:.2f} s{' (cached)' if outcome.cached else ''}")
    return f"{PROG}: " + ", ".join(parts)


def note(line: str) -> None:
    """One line on stderr (the summary, errors, progress notes)."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


class StderrProgress:
    """Progress on stderr: bars on a terminal, else a few lines while a long indexing runs."""

    def __init__(self, bars: bool) -> None:
        self.bars = bars
        self.bar: Any = None
        self.phase = ""
        self.next_note = 0
        self.started = time.perf_counter()

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self.bars:
            self._milestone(phase, done, total)
            return
        from tqdm import tqdm

        if phase != self.phase:
            self.close()
            self.bar = tqdm(total=total, desc=phase, file=sys.stderr, leave=False)
            self.phase = phase
        self.bar.total = total
        self.bar.n = done
        self.bar.refresh()

    def _milestone(self, phase: str, done: int, total: int) -> None:
        if phase != "tokenizing" or total < 50:
            return
        if self.next_note == 0:
            note(
                f"{PROG}: indexing {total} files (first run or many changes; "
                "later runs reuse the cache)"
            )
            self.started = time.perf_counter()
            self.next_note = 1
        quarter = 4 * done // total
        if quarter >= self.next_note:
            seconds = time.perf_counter() - self.started
            left = f", about {seconds * (total - done) / done:.0f} s left" if done < total else ""
            note(f"{PROG}: indexed {done}/{total} files ({seconds:.0f} s{left})")
            self.next_note = quarter + 1

    def close(self) -> None:
        """Remove the bar, if one is shown."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None
