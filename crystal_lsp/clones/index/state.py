"""What the repository index is made of: file states, snapshots, and where tokenizing runs.

:class:`FileState` is one indexed file; :class:`Snapshot` which content each file has;
:class:`IndexEngine` where the two expensive steps (tokenizing, counting S) run. The index
itself is :class:`crystal_lsp.clones.index.repo.RepoIndex`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeGuard

from crystal_lsp.clones.store import encode
from crystal_lsp.metric.sset import TriviallySharedSet, build_sset
from crystal_lsp.text.entries import Entry, build_entry

RACY_MARGIN_NS = 2_000_000_000
"""How much older than the moment it was hashed a file must be for its manifest entry to be
trusted: timestamps are coarse (2 s on FAT, 1 s on HFS+ and ext3, a clock tick elsewhere), so a
file written in the same interval may change again without its size or mtime changing."""


@dataclass
class FileState:
    """One indexed file: its content digest and entry."""

    path: str
    sha: str
    entry: Entry
    override: bool = False


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
        import hashlib

        h = hashlib.sha256()
        for path, (sha, _) in sorted(self.contents.items()):
            h.update(f"{path}\0{sha}\n".encode("utf-8", "surrogatepass"))
        for path, reason in sorted(self.skipped):
            h.update(f"!{path}\0{reason}\n".encode("utf-8", "surrogatepass"))
        return h.hexdigest()[:24]


@dataclass
class RefreshStats:
    """What a refresh did, and how long each phase took (seconds)."""

    files: int = 0
    reused: int = 0
    tokenized: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


BuildJob = tuple[str, str, str | None, int, int, int]  # path, text, language, replaced, sizes


class IndexEngine(Protocol):
    """Where the index's two expensive steps run (:class:`LocalEngine`: in this process)."""

    def map_build_jobs(self, jobs: list[BuildJob]) -> Iterable[tuple[bytes, bytes]] | None:
        """:func:`build_job` of every job, in order; ``None``: the index runs them itself."""

    def make_sset(
        self, docs: list[list[str]], k: int, *, max_n: int, language: str, tokenizer: str
    ) -> TriviallySharedSet:
        """S of token sequences (:func:`crystal_lsp.metric.sset.build_sset`)."""


class LocalEngine:
    """Tokenizes in the index's own process pool and counts S here."""

    def map_build_jobs(self, jobs: list[BuildJob]) -> Iterable[tuple[bytes, bytes]] | None:
        """``None``: the index runs the jobs in its own process pool."""
        return None

    def make_sset(
        self, docs: list[list[str]], k: int, *, max_n: int, language: str, tokenizer: str
    ) -> TriviallySharedSet:
        """:func:`crystal_lsp.metric.sset.build_sset`."""
        return build_sset(docs, k, max_n, language=language, tokenizer=tokenizer)


def build_job(job: BuildJob) -> tuple[bytes, bytes]:
    """Tokenize one file in a worker; returns the encoded light and heavy cache values."""
    path, text, language, replaced, min_tokens, min_lines = job
    entry = build_entry(
        path, text, language, min_tokens=min_tokens, min_lines=min_lines, replaced=replaced
    )
    assert entry.heavy is not None
    return encode(entry.light_json()), encode(entry.heavy.to_json())


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
