"""Open documents of a workspace folder: what the worker copies of them, and what it finds.

A modified buffer is indexed under a private key (``"\\0" + path``, see :class:`Buffer`); the
findings the clone finder reports for it are presented under the buffer's path, and copies in
the on-disk version of a modified buffer are dropped (:func:`present`): they are its old self.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from crystal_lsp.clones.copies.grouping import components
from crystal_lsp.clones.findings import Finding, sort_findings
from crystal_lsp.text.entries import SnippetMeta
from crystal_lsp.text.incremental import IncrementalEntry


@dataclass(frozen=True)
class DocumentSnapshot:
    """What the worker needs of an open document, copied on the event loop."""

    uri: str
    version: int | None
    text: str
    language_id: str
    fs_path: str | None


@dataclass
class Buffer:
    """An open document of a folder (worker-thread state)."""

    uri: str
    path: str
    """Display path: relative to the folder root, else absolute, else the URI."""
    relative: bool
    entry: IncrementalEntry | None = None
    sha: str = ""
    injected: bool = False

    @property
    def key(self) -> str:
        """The index key of the buffer's content when it differs from the disk."""
        return "\0" + self.path


@dataclass
class DocResult:
    """The outcome of checking one document version."""

    uri: str
    version: int | None
    path: str
    skip: str | None = None
    """Why the document gets no diagnostics (logged once), or None."""
    quiet: bool = False
    """The skip needs no log line (an empty document)."""
    language: str = ""
    findings: list[Finding] = field(default_factory=list)
    entry: IncrementalEntry | None = None
    prepare: bool = False
    """The buffer was checked as its indexed file and still needs tokenizing for edits."""
    indexed: list[SnippetMeta] = field(default_factory=list)
    """The snippets of the indexed file when it was checked as such (``entry`` is None then)."""

    @property
    def snippets(self) -> list[SnippetMeta]:
        """The document's snippets: of its tokenized buffer, else of its indexed file."""
        return self.entry.entry.snippets if self.entry is not None else self.indexed


def entry_summary(entry: Any) -> tuple[Any, ...]:
    """What must agree between a buffer's entry and the indexed entry of the same content."""
    return (
        entry.language,
        entry.status,
        entry.token_count,
        [(m.start, m.end, m.sha, m.norm_sha, m.first_line, m.last_line) for m in entry.snippets],
    )


def regroup(finding: Finding, keep: list[int], names: dict[str, str]) -> list[Finding]:
    """Split a finding restricted to ``keep`` into its connected clone classes.

    Pairs join the representative with each member, so what stays together is the
    representative with its remaining members (it stays the representative).
    """
    position = {old: new for new, old in enumerate(keep)}
    locations = [
        replace(
            finding.locations[i],
            path=names.get(finding.locations[i].path, finding.locations[i].path),
        )
        for i in keep
    ]
    pairs = [
        replace(p, a=position[p.a], b=position[p.b])
        for p in finding.pairs
        if p.a in position and p.b in position
    ]
    groups = components(len(locations), [(p.a, p.b) for p in pairs])
    representative = position.get(finding.representative, -1)
    out = []
    for members in groups:
        if len(members) < 2:
            continue
        index = {old: new for new, old in enumerate(members)}
        out.append(
            Finding(
                finding.language,
                [locations[i] for i in members],
                [
                    replace(p, a=index[p.a], b=index[p.b])
                    for p in pairs
                    if p.a in index and p.b in index
                ],
                finding.shared_ngrams,
                index.get(representative, 0),
            )
        )
    return out


def present(findings: Iterable[Finding], buffers: Mapping[str, Buffer]) -> list[Finding]:
    """Findings as the user sees them: buffer keys become paths, stale disk copies go."""
    stale = {b.path for b in buffers.values() if b.injected and b.relative}
    names = {b.key: b.path for b in buffers.values() if b.injected}
    out: list[Finding] = []
    for finding in findings:
        keep = [i for i, loc in enumerate(finding.locations) if loc.path not in stale]
        if len(keep) < 2:
            continue
        if len(keep) == len(finding.locations) and not any(
            loc.path in names for loc in finding.locations
        ):
            out.append(finding)
            continue
        out.extend(regroup(finding, keep, names))
    return sort_findings(out)
