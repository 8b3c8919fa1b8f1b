"""Reusing a full scan's alignment when few files changed.

A full scan aligns every pair of files. When only a few files changed since the previous full
scan (same settings, same S sets), every pair of unchanged files aligns exactly as before -- their
seeds are the same, and so are the chains, candidates and scores made from them -- unless a changed
file moved a seed hash across the ``max-df`` boilerplate cut (its number of occurrences crossed
it): then every file holding that hash is aligned afresh too. The previous scan's outcome of the
other pairs (:class:`~crystal_lsp.clones.align.alignment.PairRecord`: copies, filter counts) is reused,
the rest computed, so the result equals a fresh scan's.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from crystal_lsp.clones.align.pairs import Memo, PairKey, PairRecord, RegionPair
from crystal_lsp.clones.align.regions import Region
from crystal_lsp.clones.align.seeds import FileSeeds
from crystal_lsp.text.fingerprints import U64

if TYPE_CHECKING:
    from crystal_lsp.clones.align.workset import Workset

log = logging.getLogger(__name__)

REUSE_SHARE = 0.25
"""Beyond this share of changed files, everything is aligned afresh."""
FORMAT = 1


@dataclass
class Plan:
    """What a full scan aligns afresh, and the pair records it takes over."""

    affected: list[int]
    records: dict[PairKey, PairRecord]


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
        old_files = memo.files
        current = _current(work)
        changed = {p for p, sha in current.items() if old_files.get(p) != sha}
        removed = set(old_files) - set(current)
        if len(changed) + len(removed) > REUSE_SHARE * max(1, len(current)):
            return None
        crossing = _crossing_owners(work, changed | removed, old_files)
        if crossing is None:
            return None
        affected = changed | (crossing & current.keys())  # hidden files take no part
        records = {
            key: record for key, record in memo.records.items() if _reusable(key, current, affected)
        }
    except (KeyError, TypeError, ValueError) as exc:
        log.warning("alignment memo is malformed (%s); aligning afresh", exc)
        return None
    return Plan(sorted(work.ids[p] for p in affected), records)


def save(work: Workset, records: dict[PairKey, PairRecord]) -> None:
    """Keep a full scan's pair records for the next search."""
    kept = {k: r for k, r in records.items() if r.accepted or r.candidates or r.filtered}
    memo = Memo(_current(work), kept)
    doc = {
        "format": FORMAT,
        "files": memo.files,
        "records": {f"{a}\0{b}": _record_json(r) for (a, b), r in kept.items()},
    }
    work.finder.memos[memo_key(work)] = memo
    work.finder.index.store.set(memo_key(work), doc)


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


def _reusable(key: PairKey, current: dict[str, str], affected: set[str]) -> bool:
    a, b = key
    return a in current and b in current and a not in affected and b not in affected


def _crossing_owners(
    work: Workset, changed: Iterable[str], old_files: dict[str, str]
) -> set[str] | None:
    """Unchanged files holding a seed hash whose count crossed ``max-df`` (None: unknown)."""
    trivial = work.state.trivial
    old_parts: list[U64] = []
    new_parts: list[U64] = []
    for path in changed:
        if path in work.ids:
            new_parts.append(work.seeds(work.ids[path]).hashes)
        if path in old_files and not old_files[path].endswith("="):  # a duplicate had none
            entry = work.finder.index.cached_entry(old_files[path])
            if entry is None:
                return None
            old_parts.append(FileSeeds.of(entry, trivial).hashes)
    old, new = _counts(old_parts), _counts(new_parts)
    keys = np.union1d(old[0], new[0])
    if not len(keys):
        return set()
    table = work.state.table
    now = np.searchsorted(table.hashes, keys, "right") - np.searchsorted(table.hashes, keys)
    before = now - _lookup(new, keys) + _lookup(old, keys)
    max_df = table.max_df
    crossed = keys[((now >= 2) & (now <= max_df)) != ((before >= 2) & (before <= max_df))]
    lo = np.searchsorted(table.hashes, crossed, "left")
    hi = np.searchsorted(table.hashes, crossed, "right")
    owners = {int(o) for a, b in zip(lo.tolist(), hi.tolist()) for o in table.owners[a:b]}
    return {work.paths[o] for o in owners}


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
