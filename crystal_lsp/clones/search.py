"""A clone search of one language's workset: align, decide, group.

:func:`find_copies` runs the steps of :mod:`crystal_lsp.clones.finder` on a
:class:`~crystal_lsp.clones.align.workset.Workset`: alignment and whole copies
(:mod:`crystal_lsp.clones.align`), then findings (:mod:`crystal_lsp.clones.copies`). A focused
search aligns the focus files first, then every file a copy reached, until no new file turns up,
so its findings are those a full search reports.
"""

from __future__ import annotations

import time

from crystal_lsp.clones.align import reuse
from crystal_lsp.clones.align.alignment import aligned
from crystal_lsp.clones.align.context import LineFocus, Progress
from crystal_lsp.clones.align.pairs import RegionPair
from crystal_lsp.clones.align.wholes import whole_copies
from crystal_lsp.clones.align.workset import Copies, Workset
from crystal_lsp.clones.copies.build import findings_of
from crystal_lsp.clones.copies.classes import distinct_pairs
from crystal_lsp.clones.copies.grouping import components


def find_copies(work: Workset, focus: LineFocus | None, progress: Progress | None) -> Copies:
    """Clone classes of a workset (module docstring); with ``focus``, those touching it.

    Any search reuses what the previous full scan found for the pairs of files that did not
    change (:mod:`crystal_lsp.clones.align.reuse`): a full scan, the language server's buffers and
    the hook's staged files all align only what changed. Without such a scan, a focused search
    aligns the focus files, then every file a copy reached, until no new file turns up.
    """
    out = Copies()
    full = focus is None and not work.extra and not work.hidden
    started = time.perf_counter()
    previous = reuse.plan(work)
    out.time("retrieval", started)
    if previous is not None:
        out.records.update(previous.records)
        accepted = [p for r in previous.records.values() for p in r.accepted]
        if previous.affected:
            accepted += aligned(work, previous.affected, set(), out, progress)
        touching = None if focus is None else _reaching_files(accepted, focus)
        accepted += whole_copies(work, None, set(), out, touching)
    elif focus is None:
        accepted = aligned(work, None, set(), out, progress)
        accepted += whole_copies(work, None, set(), out)
    else:
        accepted = _focused(work, focus, out, progress)
    if full:
        reuse.save(work, out.records)
    started = time.perf_counter()
    if focus is not None:
        accepted = _reaching(accepted, focus)
    out.findings, folded = findings_of(work, distinct_pairs(accepted), focus, out)
    out.filtered.update(folded)
    out.time("grouping", started)
    return out


def _reaching(pairs: list[RegionPair], focus: LineFocus) -> list[RegionPair]:
    """The pairs among the files that copies connect to the focus files.

    The classes touching the focus, and any larger class they could be nested in, lie there.
    """
    wanted = _reaching_files(pairs, focus)
    return [p for p in pairs if p.a.path in wanted]


def _reaching_files(pairs: list[RegionPair], focus: LineFocus) -> set[str]:
    """The focus files and every file copies connect to them (through other files too)."""
    paths = sorted({r.path for p in pairs for r in (p.a, p.b)} | set(focus))
    index = {path: k for k, path in enumerate(paths)}
    parts = components(len(paths), [(index[p.a.path], index[p.b.path]) for p in pairs])
    wanted: set[str] = set()
    for part in parts:
        names = {paths[k] for k in part}
        if names & set(focus):
            wanted |= names
    return wanted


def _focused(
    work: Workset, focus: LineFocus | None, out: Copies, progress: Progress | None
) -> list[RegionPair]:
    """A focused search (or one with overrides): the focus, then every file a copy reached."""
    among = None if focus is None else sorted(work.ids[p] for p in focus if p in work.ids)
    accepted: list[RegionPair] = []
    done: set[int] = set()
    while among is None or among:
        accepted += aligned(work, among, done, out, progress)
        accepted += whole_copies(work, among, done, out)
        if among is None:
            break
        done |= set(among)
        reached = {work.ids[r.path] for pair in accepted for r in (pair.a, pair.b)}
        among = sorted(reached - done)
    return accepted
