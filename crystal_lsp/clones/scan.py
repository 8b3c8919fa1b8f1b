"""One clone scan: refresh the index, find clone classes, cache the result.

This is the core entry point shared by the CLI, the language server and the pre-commit hook; it
takes the list of files from its caller (see :mod:`crystal_lsp.clones.files` for git and directory
listings) and never touches git itself. A scan whose inputs (see :func:`inputs_digest`) are
unchanged since the last one returns the cached result without loading the index. A scan with
``use_cache=False`` re-hashes every file, recomputes the findings and stores them over whatever
result was cached.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from crystal_lsp.clones.findings import COPY, RANKING, SCHEMA_VERSION, Finding, sort_findings
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.snapshot import Snapshot, save_manifest, take_snapshot
from crystal_lsp.clones.store import Store, repo_cache_dir
from crystal_lsp.version import __version__

if TYPE_CHECKING:
    from crystal_lsp.clones.finder import CloneFinder, LanguageResult
    from crystal_lsp.clones.index import RepoIndex

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]
LineRanges = Mapping[str, Sequence[tuple[int, int]]]
# Part of every result-cache digest. Bumped to 2 when focus None (a plain scan) and {} (a focus
# with no changed lines) stopped sharing a digest: results stored by older code may be poisoned.
RESULT_FORMAT = 2


@dataclass
class ScanResult:
    """Findings plus everything needed to trust and reproduce them."""

    root: str
    config: ScanConfig
    findings: list[Finding]
    files: int = 0
    snippets: int = 0
    candidates: int = 0
    scored: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    generated: list[str] = field(default_factory=list)
    ssets: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    cached: bool = False
    filtered: dict[str, int] = field(default_factory=dict)
    """Candidate copies left out on purpose, by reason (see docs/scan.md, *What is filtered*)."""
    undecodable: dict[str, int] = field(default_factory=dict)
    """Indexed files with bytes that did not decode, and how many were replaced by U+FFFD."""

    def to_json(self, with_ngrams: bool = False, exact: bool = False) -> dict[str, Any]:
        """The documented JSON report (schema version 3: findings of every level).

        ``exact``: scores not rounded (the result cache's form of the findings).
        """
        settings = asdict(self.config)
        settings.pop("extra", None)
        return {
            "version": SCHEMA_VERSION,
            "tool": {"name": "crystal-lsp", "version": __version__},
            "root": self.root,
            "signature": self.config.signature(),
            "settings": settings,
            "ssets": self.ssets,
            "summary": {
                "files": self.files,
                "snippets": self.snippets,
                "findings": len(self.findings),
                "copies": sum(1 for f in self.findings if f.level == COPY),
                "similar": sum(1 for f in self.findings if f.level != COPY),
                "skipped": len(self.skipped),
                "candidates": self.candidates,
                "scored": self.scored,
                "cached": self.cached,
                "filtered": dict(sorted(self.filtered.items())),
                "ranking": RANKING,
            },
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
            "findings": [f.to_json(with_ngrams, exact=exact) for f in self.findings],
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "generated": list(self.generated),
            "undecodable": [{"path": p, "replaced": n} for p, n in self.undecodable.items()],
        }


def _undecodable(index: RepoIndex) -> dict[str, int]:
    """Indexed files whose bytes did not all decode, with the count replaced by U+FFFD."""
    return {p: s.entry.replaced for p, s in sorted(index.files.items()) if s.entry.replaced}


def open_store(root: str) -> Store:
    """The cache store of a repository."""
    return Store(repo_cache_dir(root))


def focus_of(index: RepoIndex, ranges: LineRanges) -> dict[str, Sequence[tuple[int, int]]]:
    """The focus of a scan: the given 1-based inclusive line ranges of indexed files."""
    return {path: list(spans) for path, spans in ranges.items() if path in index.files and spans}


def run_scan(
    root: str,
    paths: Iterable[str],
    config: ScanConfig,
    *,
    store: Store | None = None,
    overrides: Mapping[str, bytes] | None = None,
    focus_lines: LineRanges | None = None,
    progress: Progress | None = None,
    use_cache: bool = True,
    with_ngrams: bool = False,
    jobs: int | None = None,
    index: RepoIndex | None = None,
    finder: CloneFinder | None = None,
) -> ScanResult:
    """Scan ``paths`` under ``root`` (see the module docstring).

    Long-lived callers pass their ``index`` and ``finder`` so that retrieval structures, pair
    scores and profiles carry over between scans.
    """
    started = time.perf_counter()
    own_store = store is None and index is None
    store = index.store if index is not None else (store or open_store(root))
    try:
        # without the cache, every file is re-hashed too: nothing cached is taken on trust
        snap = _snapshot(root, paths, config, store, overrides, index, verify=not use_cache)
        digest = inputs_digest(snap, config, focus_lines, with_ngrams)
        slot = result_key(config, overrides, focus_lines)
        if use_cache:
            cached = _cached_result(store, slot, digest, root, config)
            if cached is not None:
                save_manifest(store, config, snap)
                cached.timings = {"stat": snap.seconds, "total": time.perf_counter() - started}
                return cached
        # imported only now: a result served from the cache needs neither numpy nor the lexers
        from crystal_lsp.clones.index import RepoIndex

        index = index or RepoIndex(root, config, store, jobs=jobs)
        result = _computed(root, config, index, snap, focus_lines, progress, finder)
        if with_ngrams:
            _attach_ngrams(index, result.findings)
        result.timings["total"] = time.perf_counter() - started
        # written with use_cache=False too, so that a scan without the cache repairs a bad entry
        store.set(slot, {"digest": digest, "result": _to_cache(result)})
        store.set(_digest_key(slot), digest)
        return result
    finally:
        if own_store:
            store.close()


def _computed(
    root: str,
    config: ScanConfig,
    index: RepoIndex,
    snap: Snapshot,
    focus_lines: LineRanges | None,
    progress: Progress | None,
    finder: CloneFinder | None,
) -> ScanResult:
    """The index brought to the snapshot, and the clone classes found in it."""
    from crystal_lsp.clones.align.pooled import Pool
    from crystal_lsp.clones.finder import CloneFinder

    stats = index.load(snap, progress)
    result = ScanResult(
        root,
        config,
        [],
        files=stats.files,
        skipped=stats.skipped,
        generated=list(index.generated),
        timings=dict(stats.timings),
        undecodable=_undecodable(index),
    )
    focus = focus_of(index, focus_lines) if focus_lines is not None else None
    if focus is None or focus:
        if finder is None or finder.index is not index:
            finder = CloneFinder(index)
            finder.pool = Pool(index.jobs)  # a finder of this scan alone: workers may fork
        _collect(result, finder.find(focus, progress))
    result.findings = sort_findings(result.findings)
    return result


def _snapshot(
    root: str,
    paths: Iterable[str],
    config: ScanConfig,
    store: Store,
    overrides: Mapping[str, bytes] | None,
    index: RepoIndex | None,
    *,
    verify: bool,
) -> Snapshot:
    """The index's snapshot, or without an index one that does not load it (a cached scan)."""
    if index is not None:
        return index.snapshot(paths, overrides, verify=verify)
    return take_snapshot(os.path.abspath(root), config, store, paths, overrides, verify=verify)


def inputs_digest(
    snap: Snapshot, config: ScanConfig, focus_lines: LineRanges | None, with_ngrams: bool
) -> str:
    """What a cached result must have been computed from, for it to be served again.

    Every path and content digest (and why a file was skipped), the settings signature (which
    covers the crystal-lsp version), which paths are in-memory overrides (they stay out of the S
    sets), the focus -- ``None`` (a plain scan), ``{}`` (a focus on nothing: no findings) and
    line ranges are all different -- and whether shared n-grams are attached.
    """
    focus = None
    if focus_lines is not None:
        focus = sorted(
            [path, sorted([int(lo), int(hi)] for lo, hi in spans)]
            for path, spans in focus_lines.items()
        )
    doc = {
        "format": RESULT_FORMAT,
        "files": snap.digest(),
        "settings": config.signature(),
        "overrides": sorted(snap.overrides),
        "focus": focus,
        "ngrams": bool(with_ngrams),
    }
    # ensure_ascii: paths decoded with surrogateescape stay encodable
    blob = json.dumps(doc, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(blob.encode("ascii")).hexdigest()[:32]


def result_key(
    config: ScanConfig, overrides: Mapping[str, bytes] | None, focus: LineRanges | None
) -> str:
    """The cache slot of a scan's result: one for whole-tree scans, one for partial ones.

    Two slots because the hook's scans of the staged and of the old contents (overrides, a
    focus) would otherwise evict the whole-tree result every commit; the digest stored beside
    each result still decides whether it is reused.
    """
    slot = "part" if overrides or focus is not None else "full"
    return f"result:{config.signature()}:{slot}"


def _digest_key(result_key: str) -> str:
    """Where the digest of the stored result is kept on its own (read before the result)."""
    return f"{result_key}:digest"


def _cached_result(
    store: Store, key: str, digest: str, root: str, config: ScanConfig
) -> ScanResult | None:
    """The stored result of the same inputs; ``None`` if missing, of other inputs, or malformed.

    The digest stored beside the result is read first: a changed tree (a rescan) does not
    decode the whole previous result only to find it stale. Without it, the result is read.
    """
    stored = store.get(_digest_key(key))
    if isinstance(stored, str) and stored != digest:
        return None
    doc = store.get(key)
    if not isinstance(doc, dict) or doc.get("digest") != digest:
        return None
    try:
        return _from_cache(root, config, doc["result"])
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        log.warning("cached scan result is malformed (%s); recomputing", exc)
        return None


def _collect(result: ScanResult, per_language: Mapping[str, LanguageResult]) -> None:
    """Add each language's findings, counts and timings to the result."""
    for language, res in per_language.items():
        result.findings.extend(res.findings)
        result.snippets += res.snippets
        result.candidates += res.candidates
        result.scored += res.scored
        result.ssets[language] = res.sets
        for reason, count in res.filtered.items():
            result.filtered[reason] = result.filtered.get(reason, 0) + count
        for phase, seconds in res.timings.items():
            result.timings[phase] = result.timings.get(phase, 0.0) + seconds


def _to_cache(result: ScanResult) -> dict[str, Any]:
    doc = result.to_json(with_ngrams=True, exact=True)
    doc["location_shas"] = [
        [loc.path, loc.first_line, loc.last_line, loc.sha, loc.norm_sha]
        for f in result.findings
        for loc in f.locations
    ]
    doc["snippets"] = result.snippets
    return doc


def _from_cache(root: str, config: ScanConfig, doc: dict[str, Any]) -> ScanResult:
    shas = {(p, a, b): (s, n) for p, a, b, s, n in doc.get("location_shas", [])}
    summary = doc["summary"]
    return ScanResult(
        root,
        config,
        [Finding.from_json(f, shas) for f in doc["findings"]],
        files=summary["files"],
        snippets=summary["snippets"],
        candidates=summary["candidates"],
        scored=0,
        skipped=[(s["path"], s["reason"]) for s in doc["skipped"]],
        generated=list(doc.get("generated", [])),
        undecodable={u["path"]: u["replaced"] for u in doc.get("undecodable", [])},
        ssets=dict(doc["ssets"]),
        cached=True,
        filtered=dict(summary.get("filtered", {})),
    )


def _attach_ngrams(index: RepoIndex, findings: list[Finding]) -> None:
    """The shared non-trivial n-grams of each finding's representative and first copy."""
    from crystal_lsp.clones.similarity import shared_ngrams

    for finding in findings:
        if finding.shared_ngrams or len(finding.locations) < 2:
            continue
        texts = []
        for loc in finding.locations[:2]:
            heavy = index.heavy(loc.path)
            start = bisect.bisect_left(heavy.lines, loc.first_line - 1)
            end = bisect.bisect_right(heavy.lines, loc.last_line - 1)
            texts.append(heavy.texts[start:end])
        ignore = index.sets(finding.language).raw.as_frozenset()
        finding.shared_ngrams = shared_ngrams(texts[0], texts[1], ignore)
