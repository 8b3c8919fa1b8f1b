"""What the repository index is made of: file states, snapshots, and where tokenizing runs.

:class:`FileState` is one indexed file; :class:`Snapshot` which content each file has;
:class:`IndexEngine` where the two expensive steps (tokenizing, counting S) run. The index
itself is :class:`crystal_lsp.clones.index.repo.RepoIndex`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from crystal_lsp.clones.store import encode
from crystal_lsp.metric.sset import TriviallySharedSet, build_sset
from crystal_lsp.text.entries import Entry, build_entry


@dataclass
class FileState:
    """One indexed file: its content digest and entry."""

    path: str
    sha: str
    entry: Entry
    override: bool = False


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
        """:func:`crystal_lsp.metric.sset.build_sset`, with canonical ties.

        Canonical ties do not depend on reading order, so a scan's S is the same on every engine.
        """
        return build_sset(
            docs, k, max_n, language=language, tokenizer=tokenizer, tie_break="canonical"
        )


def build_job(job: BuildJob) -> tuple[bytes, bytes]:
    """Tokenize one file in a worker; returns the encoded light and heavy cache values."""
    path, text, language, replaced, min_tokens, min_lines = job
    entry = build_entry(
        path, text, language, min_tokens=min_tokens, min_lines=min_lines, replaced=replaced
    )
    assert entry.heavy is not None
    return encode(entry.light_json()), encode(entry.heavy.to_json())
