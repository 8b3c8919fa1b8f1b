"""Which content each file of a scan has: the manifest, git's racy-clean rule, content digests.

A snapshot reads only what changed: files whose size and modification time match the manifest
(and were hashed safely after their last change, see :func:`trusted`) are not even opened. It
needs nothing of the index's entries, so a scan whose result is cached (:mod:`crystal_lsp.clones.scan`)
takes one without loading the index, the lexers or numpy.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store
from crystal_lsp.text import sources
from crystal_lsp.text.sources import SkippedFile, content_sha

RACY_MARGIN_NS = 2_000_000_000
"""How much older than the moment it was hashed a file must be for its manifest entry to be
trusted: timestamps are coarse (2 s on FAT, 1 s on HFS+ and ext3, a clock tick elsewhere), so a
file written in the same interval may change again without its size or mtime changing."""


@dataclass
class Snapshot:
    """Which content each file has: ``contents[path] = (digest, bytes or None)``.

    The bytes are kept only for contents the manifest does not already record for the path
    (``None``: not read, or re-read and found unchanged, so the index has an entry for it).
    ``manifest`` entries: ``[size, mtime_ns, digest, hashed_ns, ctime_ns, inode]``.
    """

    contents: dict[str, tuple[str, bytes | None]] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    manifest: dict[str, list[Any]] = field(default_factory=dict)
    old_manifest: dict[str, list[Any]] = field(default_factory=dict)
    overrides: dict[str, bytes] = field(default_factory=dict)
    seconds: float = 0.0

    def digest(self) -> str:
        """A digest of every (path, content) pair."""
        h = hashlib.sha256()
        for path, (sha, _) in sorted(self.contents.items()):
            h.update(f"{path}\0{sha}\n".encode("utf-8", "surrogatepass"))
        for path, reason in sorted(self.skipped):
            h.update(f"!{path}\0{reason}\n".encode("utf-8", "surrogatepass"))
        return h.hexdigest()[:24]


def stat_key(st: os.stat_result) -> list[int]:
    """Size, mtime, ctime and inode, as git compares them (no rewrite keeps a ctime)."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def trusted(known: Any, st: os.stat_result) -> TypeGuard[list[Any]]:
    """Whether a manifest entry may stand for a file with this ``stat`` without reading it.

    git's racy-clean rule: the :func:`stat_key` must match and the file must have been modified
    safely (:data:`RACY_MARGIN_NS`) before it was hashed. Older and malformed entries never are.
    """
    if not isinstance(known, list) or len(known) < 6:
        return False
    size, mtime, sha, hashed_ns, ctime, ino = known[:6]
    if not (isinstance(sha, str) and isinstance(mtime, int) and isinstance(hashed_ns, int)):
        return False
    return [size, mtime, ctime, ino] == stat_key(st) and mtime < hashed_ns - RACY_MARGIN_NS


def manifest_key(config: ScanConfig) -> str:
    """The store key of the manifest (``path -> [size, mtime, digest, hashed, ctime, inode]``)."""
    return f"manifest:{config.entry_signature()}"


def save_manifest(store: Store, config: ScanConfig, snap: Snapshot) -> None:
    """Store the snapshot's manifest if it says more than the stored one.

    Files re-hashed because they were racily clean are then trusted by the next snapshot, also
    when this scan was answered from the cache. With overrides (buffers, staged blobs), the
    files they hide keep their stored entries.
    """
    manifest = snap.manifest if not snap.overrides else {**snap.old_manifest, **snap.manifest}
    if manifest != snap.old_manifest:
        store.set(manifest_key(config), manifest)


def take_snapshot(
    root: str,
    config: ScanConfig,
    store: Store,
    paths: Iterable[str],
    overrides: Mapping[str, bytes] | None = None,
    *,
    verify: bool = False,
) -> Snapshot:
    """Content digests of ``paths`` (relative, ``/``-separated), reading only changed files.

    Files whose manifest entry is :func:`trusted` are not read at all; ``verify`` reads and
    hashes every file regardless.
    """
    started = time.perf_counter()
    # taken before any stat: every file read below is read at this moment or later
    hashed_ns = time.time_ns()
    stored = store.get(manifest_key(config))
    manifest: dict[str, list[Any]] = stored if isinstance(stored, dict) else {}
    overrides = dict(overrides or {})
    snap = Snapshot(overrides=overrides)
    for rel in sorted(set(paths) | set(overrides)):
        if rel in overrides:
            data = overrides[rel]
            snap.contents[rel] = (content_sha(data), data)
            continue
        try:
            st = sources.stat_regular(os.path.join(root, rel), root)
        except SkippedFile as exc:
            snap.skipped.append((rel, exc.reason))
            continue
        known = manifest.get(rel)
        if not verify and trusted(known, st):
            snap.contents[rel] = (str(known[2]), None)
            snap.manifest[rel] = known
            continue
        if config.max_file_bytes and st.st_size > config.max_file_bytes:
            snap.skipped.append(
                (rel, f"too large ({st.st_size:,} bytes > {config.max_file_bytes:,})")
            )
            continue
        _hash(root, config, snap, rel, st, known, hashed_ns)
    snap.old_manifest = manifest
    snap.seconds = time.perf_counter() - started
    return snap


def _hash(
    root: str,
    config: ScanConfig,
    snap: Snapshot,
    rel: str,
    st: os.stat_result,
    known: Any,
    hashed_ns: int,
) -> None:
    """Read and hash one file into the snapshot, with its new manifest entry."""
    try:
        data = sources.read_bytes(os.path.join(root, rel), config.max_file_bytes, root)
    except SkippedFile as exc:
        snap.skipped.append((rel, exc.reason))
        return
    sha = content_sha(data)
    entry = [st.st_size, st.st_mtime_ns, sha, hashed_ns, st.st_ctime_ns, st.st_ino]
    if not (isinstance(known, list) and len(known) >= 3 and known[2] == sha):
        snap.contents[rel] = (sha, data)
        snap.manifest[rel] = entry
        return
    # the content the manifest records: the index has its entry, the bytes are not needed
    # (a racily clean checkout would otherwise hold every file in memory)
    snap.contents[rel] = (sha, None)
    # keep the stored entry when the new one is no better (it is trusted, or both are still
    # racy), so that an unchanged manifest is not rewritten
    same_stat = known[:2] + known[4:6] == entry[:2] + entry[4:6]
    if same_stat and (trusted(known, st) or not trusted(entry, st)):
        snap.manifest[rel] = known
    else:
        snap.manifest[rel] = entry
