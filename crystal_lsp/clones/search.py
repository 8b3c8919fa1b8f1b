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
from crystal_lsp.clones.align.context import Progress
from crystal_lsp.clones.align.incremental import ChainMemo, edit_of
from crystal_lsp.clones.align.pairs import RegionPair
from crystal_lsp.clones.align.plan import Plan
from crystal_lsp.clones.align.wholes import whole_copies
from crystal_lsp.clones.align.workset import Copies, Workset
from crystal_lsp.clones.copies import reads
from crystal_lsp.clones.copies.build import findings_of
from crystal_lsp.clones.copies.classes import distinct_pairs
from crystal_lsp.clones.findings import LineFocus


def find_copies(work: Workset, focus: LineFocus | None, progress: Progress | None) -> Copies:
    """Clone classes of a workset (module docstring); with ``focus``, those touching it.

    Any search reuses what the previous full scan found for the pairs of files that did not
    change (:mod:`crystal_lsp.clones.align.reuse`): a full scan, the language server's buffers and
    the hook's staged files all align only what changed. Without such a scan, a focused search
    aligns the focus files, then every file a copy reached, until no new file turns up.
    """
    out = Copies()
    full = focus is None and not work.extra and not work.hidden
    focus_done = False
    started = time.perf_counter()
    previous = reuse.plan(work)
    out.time("retrieval", started)
    if previous is not None:
        out.base = previous
        new: list[RegionPair] = []
        if previous.affected:
            work.chain_memo = _chain_memo(work, previous.affected)
            new = aligned(work, previous.affected, set(), out, progress, previous.keep_changed)
            _keep_chains(work)
        if previous.crossing:
            new += _crossing_pairs(work, previous, out, progress)
        touching = None if focus is None else _reaching_files(new, focus, previous)
        new += whole_copies(work, None, set(), out, touching)
        if focus is None:
            accepted = previous.accepted() + new
        else:  # only the pairs among the files copies connect to the focus (see _reaching)
            wanted = _reaching_files(new, focus, previous)
            accepted = previous.memo.accepted_in(wanted, previous.dropped)
            accepted += [p for p in new if p.a.path in wanted]
            focus_done = True
    elif focus is None:
        accepted = aligned(work, None, set(), out, progress)
        accepted += whole_copies(work, None, set(), out)
    else:
        accepted = _focused(work, focus, out, progress)
    if full:
        reuse.save(work, out.all_records())
    started = time.perf_counter()
    if focus is not None and not focus_done:
        accepted = _reaching(accepted, focus)
    out.findings, folded = findings_of(work, distinct_pairs(accepted), focus, out)
    if full:
        reads.save(work)
    out.filtered.update(folded)
    out.time("grouping", started)
    return out


def _chain_memo(work: Workset, affected: list[int]) -> ChainMemo | None:
    """The kept chain outcomes of the one override a search aligns afresh (if one it is)."""
    if len(affected) != 1 or affected[0] not in work.extra:
        return None
    fid = affected[0]
    path = work.paths[fid]
    side = work.side(fid)
    kept = work.state.chains.get(path)
    if kept is None:
        return ChainMemo(path, fid, None, {})
    entry, heavy, outcomes = kept
    return ChainMemo(path, fid, edit_of(entry, heavy, side.entry, side.heavy), outcomes)


def _keep_chains(work: Workset) -> None:
    """Keep the chain outcomes of this search's override for its next version."""
    memo = work.chain_memo
    work.state.chains.clear()  # one edited buffer at a time (the others are searched afresh)
    if memo is not None:
        side = work.side(memo.fid)
        work.state.chains[memo.path] = (side.entry, side.heavy, memo.new)
    work.chain_memo = None


CROSSING_KEPT = 8
"""How many outcomes of crossing pairs a language state keeps (keystrokes repeat them)."""


def _crossing_pairs(
    work: Workset, previous: Plan, out: Copies, progress: Progress | None
) -> list[RegionPair]:
    """The accepted pairs of the plan's crossing pairs, their records added to ``out``.

    Their alignment depends on the memo and on which crossed hashes pair (typing keeps
    crossing the same hash for a while): it is kept for the next search of the same.
    """
    key = (id(previous.memo), previous.crossed)
    kept = work.state.crossing.get(key)
    if kept is not None and kept[0] is previous.memo:
        out.records.update(kept[1])
        return list(kept[2])
    before = set(out.records)
    found = aligned(work, previous.owners, set(), out, progress, previous.keep_crossing)
    records = {k: r for k, r in out.records.items() if k not in before}
    if len(work.state.crossing) >= CROSSING_KEPT:
        work.state.crossing.clear()
    work.state.crossing[key] = (previous.memo, records, found)
    return found


def _reaching(pairs: list[RegionPair], focus: LineFocus) -> list[RegionPair]:
    """The pairs among the files that copies connect to the focus files.

    The classes touching the focus, and any larger class they could be nested in, lie there.
    """
    wanted = _reaching_files(pairs, focus)
    return [p for p in pairs if p.a.path in wanted]


def _reaching_files(
    pairs: list[RegionPair], focus: LineFocus, previous: Plan | None = None
) -> set[str]:
    """The focus files and every file copies connect to them (through other files too).

    With ``previous``, the pairs it takes over from the memo count too.
    """
    linked: dict[str, set[str]] = {}
    for p in pairs:
        linked.setdefault(p.a.path, set()).add(p.b.path)
        linked.setdefault(p.b.path, set()).add(p.a.path)
    wanted = set(focus)
    pending = list(wanted)
    while pending:
        path = pending.pop()
        others = set(linked.get(path, ()))
        if previous is not None:
            dropped = previous.dropped
            others.update(other for key, other in previous.memo.links(path) if key not in dropped)
        for other in others:
            if other not in wanted:
                wanted.add(other)
                pending.append(other)
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
