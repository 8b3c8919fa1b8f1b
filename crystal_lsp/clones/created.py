"""Which copies a change creates: the one rule of the hook, ``scan --new-since`` and the MCP diff check.

A finding touching changed lines is not, by that alone, a copy the change adds: editing a line
inside code that was already duplicated, adding doc comments, renaming a symbol in a copy or
removing duplication all touch copies that existed before. So a pair of places counts as new
only when it is a copy *after* the change and was not one *before* it:

1. each location of an after-finding that touches added lines is mapped through the diff's
   hunks onto the old version of its file (:meth:`Before.old_range`; wholly added code has no
   old range);
2. the repository as it was before the change is scanned, focused on those old ranges
   (:func:`scan_before`: changed files at their old content, added files absent, deleted and
   renamed files at their old paths);
3. a pair (changed location, other location) existed before when one before-finding holds a
   location overlapping the changed location's old range and another overlapping the other
   location's old range. Such a pair is not new, unless the change made the changed side
   substantially larger: at least :data:`GROWTH` times the tokens of its old counterpart and
   :data:`GROWTH_TOKENS` more, made of lines the change adds (:func:`grew`);
4. two places that both existed and were both edited, the lines added to one matching the lines
   added to the other more than the other's old lines, were edited alike, not copied
   (:func:`parallel_edit`);
5. code the change moves (:mod:`crystal_lsp.clones.moved_lines`: added lines equal to lines it
   removes) maps onto its old place instead of counting as added: it is never the copy, two
   moved sides are an old pair, and the before-scan looks where it was.

Of a new pair, the *copy* is the side with the larger share of added lines (wholly added code
over code that existed and was edited); the other side is the original. Two wholly added
sides: the later location is the copy. A finding is reported when it keeps a copy
(:class:`Verdict`); the rest are counted by the caller, never dropped silently.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from crystal_lsp.clones.findings import Finding, Location
from crystal_lsp.clones.git import WHOLE_FILE, Diff, Git, Hunk, Spans, list_paths, since
from crystal_lsp.clones.moved_lines import Numbered, Origin, move_map, moved_range, numbered

if TYPE_CHECKING:
    from crystal_lsp.clones.scan import ScanResult
    from crystal_lsp.clones.store import Store

GROWTH = 1.5
"""An existing copy whose changed side grew to this many times its old tokens is new again..."""
GROWTH_TOKENS = 40
"""... when it also gained at least this many tokens (about five lines of code)..."""
GROWTH_ADDED = 0.5
"""... and the change added at least this share of the lines it grew by: a two-line edit that
lets the finder stretch an old copy's range over a whole template did not make it larger."""
MOSTLY_ADDED = 0.5
"""Share of a location's non-trivial lines the change adds from which it may have moved."""
Reader = Callable[[str], "bytes | None"]
"""The new content of a path of the change (None: unreadable)."""
EXISTING = "copy existing before the change"
"""The reason findings left out by this rule are counted under (``ScanResult.filtered``)..."""
MOVED = "code moved by the change"
"""... and the reason for those whose changed code the change only moved."""

OldRange = tuple[str, int, int]
"""``(old path, first line, last line)``."""


def _old_line(hunks: Sequence[Hunk], line: int, low: bool) -> int:
    """The old line of new ``line``; for an added line, the edge of what it replaced."""
    shift = 0
    for old_start, old_count, new_start, new_count in hunks:
        if new_count and new_start <= line < new_start + new_count:
            if old_count:
                return old_start if low else old_start + old_count - 1
            return old_start + 1 if low else old_start
        if (new_start + new_count - 1 if new_count else new_start) < line:
            shift += old_count - new_count
        else:
            break
    return line + shift


def old_lines(hunks: Sequence[Hunk], first: int, last: int) -> tuple[int, int] | None:
    """The old lines new lines ``first..last`` come from (None: all of them are added)."""
    lo, hi = _old_line(hunks, first, True), _old_line(hunks, last, False)
    return (lo, hi) if lo <= hi else None


def added_share(loc: Location, added: Spans | None) -> float:
    """The share of a location's lines that the change adds."""
    if not added:
        return 0.0
    inside = sum(max(0, min(hi, loc.last_line) - max(lo, loc.first_line) + 1) for lo, hi in added)
    return inside / max(1, loc.last_line - loc.first_line + 1)


@dataclass
class Before:
    """The old side of a change: which new paths existed, where, and how their lines moved."""

    git: Git
    old_path: dict[str, str] = field(default_factory=dict)
    """New path -> old path, for changed files that existed before (renamed or not)."""
    hunks: dict[str, list[Hunk]] = field(default_factory=dict)
    old_blobs: dict[str, str] = field(default_factory=dict)
    """Old path -> blob id of every changed or deleted file's old version."""
    created: set[str] = field(default_factory=set)
    """New paths without an old side (added, copied, untracked)."""
    removed: dict[str, Spans] = field(default_factory=dict)
    """Old path -> the lines the change removes from it."""
    read: Reader | None = None
    """The new contents, for moved code (None: moves are not looked for)."""
    moves: dict[str, dict[int, Origin]] = field(default_factory=dict)
    """New path -> added line -> where it moved from (:meth:`map_moves`)."""
    added: Mapping[str, Spans] = field(default_factory=dict)
    _lines: dict[str, list[str]] = field(default_factory=dict)
    _claimed: dict[str, set[int]] | None = None
    _removed: dict[str, list[int]] = field(default_factory=dict)

    @classmethod
    def of(
        cls, git: Git, diff: Diff, untracked: Sequence[str] = (), read: Reader | None = None
    ) -> Before:
        """The old side of ``diff`` (``git diff`` with ``-M``), plus untracked new files.

        ``read``: the new content of a path, to follow code the change moves.
        """
        out = cls(git, hunks=dict(diff.patch.hunks), created=set(untracked), read=read)
        out.removed = dict(diff.patch.removed)
        for entry in diff.entries:
            if entry.status == "U":
                continue
            if entry.status in "MRT" and entry.old_is_file:
                out.old_blobs[entry.old_path] = entry.old_sha
                if entry.new_is_file:
                    out.old_path[entry.new_path] = entry.old_path
            elif entry.status == "D" and entry.old_is_file:
                out.old_blobs[entry.old_path] = entry.old_sha
            elif entry.new_is_file:
                out.created.add(entry.new_path)
        return out

    def lines(self, path: str) -> list[str]:
        """The new content of ``path`` as lines (empty when it cannot be read)."""
        if path not in self._lines:
            data = self.read(path) if self.read is not None else None
            self._lines[path] = (data or b"").decode("utf-8", "replace").splitlines()
        return self._lines[path]

    def numbered(self, loc: Location, added: bool | None = None) -> Numbered:
        """A location's non-trivial lines: all, only the added ones, or only the others."""
        spans = [(loc.first_line, loc.last_line)]
        out = numbered(self.lines(loc.path), spans)
        if added is None:
            return out
        mine = self.added.get(loc.path, ())
        return [(n, t) for n, t in out if any(lo <= n <= hi for lo, hi in mine) == added]

    def map_moves(self, added: Mapping[str, Spans], paths: Iterable[str]) -> None:
        """Follow the added lines of ``paths`` to the removed lines they moved from."""
        self.added = added
        wanted = sorted({p for p in paths if p in added})
        if self.read is None or not wanted or not self.removed:
            return
        olds = {p: self.old_blobs[p] for p in self.removed if p in self.old_blobs}
        blobs = self.git.blobs(olds.values())
        removed = {
            p: numbered(blobs[sha].decode("utf-8", "replace").splitlines(), self.removed[p])
            for p, sha in olds.items()
        }
        new = {p: numbered(self.lines(p), added[p]) for p in wanted}
        self._removed = {p: [n for n, _ in lines] for p, lines in removed.items()}
        self.moves = move_map(new, removed, self.old_path)

    def claims(self, old_path: str, first: int, last: int) -> bool:
        """Whether most of old lines ``first..last`` moved to added lines (:meth:`map_moves`)."""
        if self._claimed is None:
            self._claimed = defaultdict(set)
            for origins in self.moves.values():
                for path, line in origins.values():
                    self._claimed[path].add(line)
        mine = self._claimed.get(old_path, set())
        lines = [n for n in self._removed.get(old_path, ()) if first <= n <= last]
        return 2 * sum(1 for n in lines if n in mine) > len(lines)

    def moved_from(self, loc: Location) -> OldRange | None:
        """Where a mostly added location moved from (None: it did not move, or not mostly)."""
        origins = self.moves.get(loc.path)
        if not origins:
            return None
        mine = self.numbered(loc, added=True)
        if len(mine) < MOSTLY_ADDED * len(self.numbered(loc)):
            return None
        return moved_range(mine, origins)

    def old_range(self, loc: Location) -> OldRange | None:
        """Where a location's lines were before the change (None: they did not exist)."""
        moved = self.moved_from(loc)
        if moved is not None:
            return moved
        if loc.path in self.created:
            return None
        old = self.old_path.get(loc.path, loc.path)
        span = old_lines(self.hunks.get(loc.path, ()), loc.first_line, loc.last_line)
        return None if span is None else (old, *span)


def change_since(root: str, ref: str, untracked: bool = True) -> tuple[dict[str, Spans], Before]:
    """Lines added since ``ref`` (work tree against it, with renames) and the old side.

    The ``--new-since`` view of the rule: paths relative to ``root``; untracked files are new
    in every line (not listed at all with ``untracked`` false: ``tracked-only``).
    """
    git, commit = since(root, ref)
    diff = git.diff(commit, relative=True)
    added = dict(diff.patch.added)
    others = list_paths(git, "--others", "--exclude-standard") if untracked else []
    for name in others:
        added[name] = [(1, WHOLE_FILE)]
    return added, Before.of(git, diff, others, read=lambda path: read_file(root, path))


def read_file(root: str, path: str) -> bytes | None:
    """A file of the work tree (None when it cannot be read)."""
    try:
        with open(os.path.join(root, path), "rb") as fh:
            return fh.read()
    except OSError:
        return None


@dataclass(frozen=True)
class Verdict:
    """An after-finding the change is answerable for: its created copies and their originals."""

    finding: Finding
    copies: tuple[int, ...]
    """Locations the change created as copies, most added first."""
    originals: tuple[tuple[int, ...], ...]
    """For each copy, the locations it newly copies (originals first)."""


def before_focus(
    findings: Sequence[Finding], added: Mapping[str, Spans], before: Before
) -> dict[str, Spans]:
    """The old ranges of every changed location: what :func:`scan_before` looks at."""
    out: dict[str, Spans] = defaultdict(list)
    for finding in findings:
        for loc in finding.locations:
            if loc.touches(added):
                old = before.old_range(loc)
                if old is not None:
                    out[old[0]].append((old[1], old[2]))
    return {p: sorted(set(s)) for p, s in out.items()}


def scan_before(
    before: Before,
    paths: Sequence[str],
    focus: Mapping[str, Spans],
    run: Callable[[list[str], dict[str, bytes], Mapping[str, Spans]], Sequence[Finding]],
    keep: Callable[[list[str]], list[str]] = list,
) -> list[Finding]:
    """The findings of the old state around ``focus``, through the caller's scan ``run``.

    ``run(paths, overrides, focus)``: the after-scan's paths with the new-only ones left out
    and the old ones (filtered by ``keep``: the settings' globs) added; overrides are the old
    contents of changed and deleted files.
    """
    if not focus:
        return []
    gone = before.created | {new for new, old in before.old_path.items() if new != old}
    olds = keep(sorted(set(before.old_blobs) - set(paths)))
    corpus = [p for p in paths if p not in gone] + olds
    blobs = before.git.blobs(before.old_blobs.values())
    overrides = {path: blobs[sha] for path, sha in before.old_blobs.items()}
    return list(run(sorted(set(corpus)), overrides, focus))


def grew(after: Location, old: Location, added_lines: int | None = None) -> bool:
    """Whether the change made a copy substantially larger (see the module docstring).

    ``added_lines``: how many of ``after``'s lines the change adds; the growth must be made
    of them (:data:`GROWTH_ADDED`), not of old code the finder now reaches.
    """
    if after.tokens < GROWTH * old.tokens or after.tokens - old.tokens < GROWTH_TOKENS:
        return False
    if added_lines is None:
        return True
    growth = (after.last_line - after.first_line) - (old.last_line - old.first_line)
    return added_lines >= GROWTH_ADDED * growth


def _overlaps(loc: Location, where: OldRange) -> bool:
    return loc.path == where[0] and loc.first_line <= where[2] and where[1] <= loc.last_line


class _Existing:
    """The before-findings, by old path, answering 'was this pair a copy before'."""

    def __init__(self, findings: Sequence[Finding]) -> None:
        self.by_path: dict[str, list[tuple[Finding, int]]] = defaultdict(list)
        for finding in findings:
            for i, loc in enumerate(finding.locations):
                self.by_path[loc.path].append((finding, i))

    def pair(
        self, after: Location, mine: OldRange, theirs: OldRange, added_lines: int | None = None
    ) -> bool:
        """A before-finding pairs the two old ranges (and the changed side did not grow)."""
        for finding, i in self.by_path.get(mine[0], ()):
            old = finding.locations[i]
            if not _overlaps(old, mine) or grew(after, old, added_lines):
                continue
            if any(_overlaps(o, theirs) for j, o in enumerate(finding.locations) if j != i):
                return True
        return False


def parallel_edit(before: Before, copy: Location, original: Location) -> bool:
    """Whether two places that both existed were edited alike rather than one copied.

    A sweep that rewrites the same idiom in two old, parallel places (a fixture swapped for
    another in two tests) can lift them over the threshold; the lines it adds to one then
    match the lines it adds to the other, not the other's old code, which a copy would take.
    Both sides must have existed in place (a created file has no old code to edit).
    """
    if copy.path in before.created or original.path in before.created:
        return False
    added = Counter(t for _, t in before.numbered(copy, added=True))
    alike = sum((added & Counter(t for _, t in before.numbered(original, added=True))).values())
    kept = sum((added & Counter(t for _, t in before.numbered(original, added=False))).values())
    return alike > kept


def _judge(
    finding: Finding, added: Mapping[str, Spans], before: Before, existing: _Existing
) -> Verdict:
    locs = finding.locations
    moved = [before.moved_from(loc) is not None for loc in locs]
    # moved code existed before: it is never the copy, and two moved sides are an old pair
    share = [
        added_share(loc, added.get(loc.path)) if loc.touches(added) and not moved[k] else 0.0
        for k, loc in enumerate(locs)
    ]
    olds = [before.old_range(loc) for loc in locs]
    partners: dict[int, list[int]] = {}
    for i, loc in enumerate(locs):
        if share[i] == 0.0:
            continue
        for j in range(len(locs)):
            if j == i or (share[j], j) > (share[i], i):
                continue  # j is the copy of that pair (or the pair is judged from j's side)
            mine, theirs = olds[i], olds[j]
            if mine is not None and theirs is not None:
                grown = round(share[i] * (loc.last_line - loc.first_line + 1))
                if existing.pair(loc, mine, theirs, grown):
                    continue
                if share[j] > 0.0 and parallel_edit(before, loc, locs[j]):
                    continue
            partners.setdefault(i, []).append(j)
    copies = sorted(partners, key=lambda i: (-share[i], i))
    originals = tuple(tuple(sorted(partners[i], key=lambda j: (share[j], j))) for i in copies)
    return Verdict(finding, tuple(copies), originals)


def only_moved(finding: Finding, added: Mapping[str, Spans], before: Before) -> bool:
    """Whether every changed location of a finding is code the change moved."""
    changed = [loc for loc in finding.locations if loc.touches(added)]
    return bool(changed) and all(before.moved_from(loc) is not None for loc in changed)


def created_copies(
    findings: Sequence[Finding],
    added: Mapping[str, Spans],
    before: Before,
    scan: Callable[[Mapping[str, Spans]], Sequence[Finding]],
) -> tuple[list[Verdict], int]:
    """The findings with a copy the change creates, and how many touched only older copies.

    ``added``: the lines the change adds, by new path; ``scan(old_focus)``: the findings of the
    old state around the old ranges (:func:`scan_before`), called only when a changed location
    existed before.
    """
    touching = [f for f in findings if any(loc.touches(added) for loc in f.locations)]
    before.map_moves(added, {loc.path for f in touching for loc in f.locations})
    # a finding whose changed code only moved creates no copy: no need to look before
    focus = before_focus([f for f in touching if not only_moved(f, added, before)], added, before)
    existing = _Existing(scan(focus) if focus else ())
    verdicts = [_judge(f, added, before, existing) for f in touching]
    kept = [v for v in verdicts if v.copies]
    return kept, len(touching) - len(kept)


def keep_created(
    result: ScanResult,
    added: Mapping[str, Spans],
    before: Before,
    paths: Sequence[str],
    keep: Callable[[list[str]], list[str]] = list,
    store: Store | None = None,
) -> list[Verdict]:
    """Leave in ``result`` only the findings with a copy the change creates (count the rest).

    What ``scan --new-since`` and the MCP server's diff check apply to a scan focused on
    ``added``; the old state is scanned with ``run_scan`` over the same store.
    """
    from crystal_lsp.clones.scan import run_scan

    def run(
        corpus: list[str], overrides: dict[str, bytes], focus: Mapping[str, Spans]
    ) -> list[Finding]:
        return run_scan(
            result.root, corpus, result.config, store=store, overrides=overrides, focus_lines=focus
        ).findings

    verdicts, existing = created_copies(
        result.findings, added, before, lambda focus: scan_before(before, paths, focus, run, keep)
    )
    kept = {id(v.finding) for v in verdicts}
    moved = sum(
        1
        for f in result.findings
        if id(f) not in kept and f.locations and only_moved(f, added, before)
    )
    result.findings = [f for f in result.findings if id(f) in kept]
    for reason, count in ((EXISTING, existing - moved), (MOVED, moved)):
        if count:
            result.filtered[reason] = result.filtered.get(reason, 0) + count
    return verdicts
