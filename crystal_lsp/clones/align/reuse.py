"""Reusing a full scan's alignment when few files changed.

A full scan aligns every pair of files. When only a few files changed since the previous full
scan (same settings, same S sets), every pair of unchanged files aligns exactly as before -- their
seeds are the same, and so are the chains, candidates and scores made from them -- unless a changed
file moved a seed hash across the ``max-df`` boilerplate cut (its number of occurrences crossed
it): then every pair of files holding that hash is aligned afresh too. The previous scan's outcome of the
other pairs (:class:`~crystal_lsp.clones.align.alignment.PairRecord`: copies, filter counts) is reused,
the rest computed, so the result equals a fresh scan's.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import numpy as np

from crystal_lsp.clones.align.duplicates import without_spans
from crystal_lsp.clones.align.pairs import Memo, PairKey, PairRecord, RegionPair
from crystal_lsp.clones.align.plan import Plan
from crystal_lsp.clones.align.regions import Region
from crystal_lsp.clones.align.seeds import FileSeeds
from crystal_lsp.text.fingerprints import U64

if TYPE_CHECKING:
    from crystal_lsp.clones.align.workset import Workset

log = logging.getLogger(__name__)

REUSE_SHARE = 0.25
"""Beyond this share of changed files, everything is aligned afresh."""
FORMAT = 3


def memo_key(work: Workset) -> str:
    """Where a language's pair records are kept (settings and S sets in the key)."""
    state = work.state
    signature = work.finder.config.signature()
    return f"align:{work.similarity.language}:{state.sets.fingerprint}:{signature}:{FORMAT}"


def load(work: Workset) -> Memo | None:
    """The stored memo of the workset's language and settings (parsed once per finder)."""
    key = memo_key(work)
    cached = work.finder.memos.get(key)
    if cached is not None:
        return cached
    doc = work.finder.index.store.get(key)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return None
    try:
        memo = Memo(
            dict(doc["files"]),
            {_pair_key(k): _record(v) for k, v in doc["records"].items()},
            {p: [(int(a), int(b)) for a, b in s] for p, s in doc["spans"].items()},
            doc["records"],
        )
    except (KeyError, TypeError, ValueError) as exc:
        log.warning("alignment memo is malformed (%s); aligning afresh", exc)
        return None
    work.finder.memos[key] = memo
    return memo


def plan(work: Workset) -> Plan | None:
    """The reuse plan of a search, or None when everything must be aligned afresh."""
    memo = load(work)
    if memo is None:
        return None
    try:
        current, changed, removed = _changes(work, memo)
        if len(changed) + len(removed) > REUSE_SHARE * max(1, len(current)):
            return None
        found = _crossing(work, changed | removed, memo)
        if found is None:
            return None
        crossing, status = found
        ids = work.ids
        pairs = {
            (min(ids[a], ids[b]), max(ids[a], ids[b]))
            for a, b in crossing
            if a not in changed and b not in changed
        }
        dropped = memo.touching(changed | removed) | crossing
    except (KeyError, TypeError, ValueError) as exc:
        log.warning("alignment memo is malformed (%s); aligning afresh", exc)
        return None
    return Plan(sorted(ids[p] for p in changed), memo, dropped, pairs, status)


def save(work: Workset, records: dict[PairKey, PairRecord]) -> None:
    """Keep a full scan's pair records for the next search."""
    kept = {k: r for k, r in records.items() if r.accepted or r.candidates or r.filtered}
    spans = {work.paths[i]: work.spans(i) for i in work.ids.values() if work.spans(i)}
    previous = work.finder.memos.get(memo_key(work))
    stored = {f"{a}\0{b}": _stored_record(previous, (a, b), r) for (a, b), r in kept.items()}
    memo = Memo(_current(work), kept, spans, stored)
    doc = {
        "format": FORMAT,
        "files": memo.files,
        "spans": {p: [list(span) for span in s] for p, s in spans.items()},
        "records": stored,
    }
    work.finder.memos[memo_key(work)] = memo
    work.finder.index.store.set(memo_key(work), doc)


def _changes(work: Workset, memo: Memo) -> tuple[dict[str, str], set[str], set[str]]:
    """The search's files' digests, those whose seeds differ from the memo's, the memo's gone.

    The digests are those of :func:`_current`. What the disk files give is kept by the language state (for this memo); a search only
    looks again at the files its overrides touch.
    """
    state = work.state
    if state.memo_diff is None or state.memo_diff[0] is not memo:
        disk = {p: s + ("=" if i in state.duplicates else "") for p, s, i in _disk_shas(work)}
        differ = {
            p
            for i, p in enumerate(state.paths)
            if memo.files.get(p) != disk[p]
            or memo.spans.get(p, []) != ([] if i in state.duplicates else state.dropped.get(i, []))
        }
        state.memo_diff = (memo, disk, differ, set(memo.files) - set(disk))
    _, disk, differ, gone = state.memo_diff
    touched = set(work.extra) | set(work.changed) | (work.duplicates ^ state.duplicates)
    touched -= work.hidden
    current = dict(disk)
    for i in work.hidden:
        del current[work.paths[i]]
    files = work.finder.index.files
    for i in sorted(touched):
        path = work.paths[i]
        current[path] = files[path].sha + ("=" if i in work.duplicates else "")
    changed = differ - {work.paths[i] for i in work.hidden | touched}
    changed.update(
        work.paths[i]
        for i in touched
        if memo.files.get(work.paths[i]) != current[work.paths[i]]
        or memo.spans.get(work.paths[i], []) != work.spans(i)
    )
    removed = gone | {work.paths[i] for i in work.hidden if work.paths[i] in memo.files}
    return current, changed, removed


def _disk_shas(work: Workset) -> list[tuple[str, str, int]]:
    files = work.finder.index.files
    return [(p, files[p].sha, i) for i, p in enumerate(work.state.paths)]


def _current(work: Workset) -> dict[str, str]:
    """Each file's content digest; a duplicate's is marked, so that becoming one is a change."""
    files = work.finder.index.files
    return {
        work.paths[i]: files[work.paths[i]].sha + ("=" if i in work.duplicates else "")
        for i in work.ids.values()
    }


def _pair_key(key: str) -> PairKey:
    a, _, b = key.partition("\0")
    return a, b


def _crossing(
    work: Workset, changed: Iterable[str], memo: Memo
) -> tuple[set[PairKey], frozenset[tuple[int, bool]]] | None:
    """The pairs of files that share a seed hash whose count crossed ``max-df`` since the memo.

    ``changed`` are the files whose seeds differ from the memo's (None: their old seeds are
    unknown). A pair of files shares such a hash when both hold it now.
    """
    old_parts: list[U64] = []
    new_parts: list[U64] = []
    for path in changed:
        if path in work.ids:
            new_parts.append(work.seeds(work.ids[path]).hashes)
        sha = memo.files.get(path)
        if sha is not None and not sha.endswith("="):  # a duplicate had none
            entry = work.finder.index.cached_entry(sha)
            if entry is None:
                return None
            spans = [(int(a), int(b)) for a, b in memo.spans.get(path, [])]
            old_parts.append(without_spans(FileSeeds.of(entry, work.state.trivial), spans).hashes)
    old, new = _counts(old_parts), _counts(new_parts)
    keys = np.union1d(old[0], new[0])
    if not len(keys):
        return set(), frozenset()
    now = work.counts(keys)
    before = now - _lookup(new, keys) + _lookup(old, keys)
    max_df = work.finder.config.max_df
    pairable = (now >= 2) & (now <= max_df)
    moved = pairable != ((before >= 2) & (before <= max_df))
    crossed = keys[moved]
    status = frozenset(zip(crossed.tolist(), pairable[moved].tolist()))
    out: set[PairKey] = set()
    for owners in work.owners(crossed):
        paths = sorted({work.paths[o] for o in owners})
        out.update((a, b) for k, a in enumerate(paths) for b in paths[k + 1 :])
    return out, status


def _counts(parts: list[U64]) -> tuple[U64, Any]:
    if not parts:
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64)
    keys, counts = np.unique(np.concatenate(parts), return_counts=True)
    return keys, counts


def _lookup(table: tuple[U64, Any], keys: U64) -> Any:
    found, counts = table
    out = np.zeros(len(keys), dtype=np.int64)
    if len(found):
        at = np.minimum(np.searchsorted(found, keys), len(found) - 1)
        hit = found[at] == keys
        out[hit] = counts[at[hit]]
    return out


def _stored_record(previous: Memo | None, key: PairKey, record: PairRecord) -> Any:
    """A record's JSON form: as it was read, when the record is taken over from ``previous``."""
    if previous is not None and previous.records.get(key) is record:
        found = previous.stored.get(f"{key[0]}\0{key[1]}")
        if found is not None:
            return found
    return _record_json(record)


def _record_json(record: PairRecord) -> dict[str, Any]:
    return {
        "accepted": [
            [asdict(p.a), asdict(p.b), p.similarity, p.crystalbleu, p.copied]
            for p in record.accepted
        ],
        "filtered": dict(record.filtered),
        "candidates": record.candidates,
    }


def _record(doc: dict[str, Any]) -> PairRecord:
    accepted = [
        RegionPair(Region(**a), Region(**b), float(sim), float(raw), int(copied))
        for a, b, sim, raw, copied in doc["accepted"]
    ]
    return PairRecord(accepted, Counter(doc["filtered"]), int(doc["candidates"]))
