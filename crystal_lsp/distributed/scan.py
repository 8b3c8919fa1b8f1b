"""``crystal-lsp scan`` on an engine: tokenizing, S-set counting and pair scoring on workers.

The scan itself is unchanged (:func:`crystal_lsp.clones.scan.run_scan`); it is given an index and a
clone finder whose three expensive steps run on the engine:

* **entries**: files whose content is new to the cache are tokenized into index entries by
  :func:`crystal_lsp.clones.index._build_job` on the workers (the client reads the files and ships
  their text; results are stored in the client's cache as always);
* **S sets** of languages large enough for their own: the token sequences are counted on the
  workers and merged exactly (:mod:`crystal_lsp.distributed.topk`);
* **scoring**: candidate pairs whose scores are not cached are partitioned into chunks; each
  chunk travels with the tokens (texts and categories) of its snippets, and a worker scores it
  exactly as :meth:`crystal_lsp.clones.finder.CloneFinder._score` does (same metrics, same order of the
  lazy four scores), so the findings are identical to a local scan's.

Retrieval (the shingle index) and grouping stay on the client: they are fast array work.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from typing import Any

from crystal_lsp.clones.finder import CloneFinder, Ref, Scores, _LanguageState
from crystal_lsp.clones.index import BuildJob, RepoIndex, _build_job
from crystal_lsp.clones.scan import LineRanges, Progress, ScanResult, open_store, run_scan
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store
from crystal_lsp.distributed.engine import Engine, LazyEngine, engine_name
from crystal_lsp.distributed.topk import count_token_part
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.ngrams import Profile
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import TriviallySharedSet
from crystal_lsp.text.entries import SnippetMeta
from crystal_lsp.text.views import normalized

CHUNK_BYTES = 2_000_000
CHUNK_JOBS = 64
PART_TOKENS = 1_000_000
CHUNK_PAIRS = 2_000

Snippet = tuple[list[str], str]  # token texts, token categories


# ------------------------------------------------------------------------------ tokenizing
def build_chunk(jobs: list[BuildJob]) -> list[tuple[bytes, bytes]]:
    """Index entries of a chunk of files (runs on a worker)."""
    return [_build_job(job) for job in jobs]


def _job_chunks(jobs: Sequence[BuildJob]) -> Iterator[list[BuildJob]]:
    chunk: list[BuildJob] = []
    size = 0
    for job in jobs:
        if chunk and (size + len(job[1]) > CHUNK_BYTES or len(chunk) >= CHUNK_JOBS):
            yield chunk
            chunk, size = [], 0
        chunk.append(job)
        size += len(job[1])
    if chunk:
        yield chunk


def _doc_parts(docs: list[list[str]]) -> list[list[list[str]]]:
    parts: list[list[list[str]]] = [[]]
    tokens = 0
    for doc in docs:
        if parts[-1] and tokens + len(doc) > PART_TOKENS:
            parts.append([])
            tokens = 0
        parts[-1].append(doc)
        tokens += len(doc)
    return parts


class EngineIndex(RepoIndex):
    """A :class:`RepoIndex` that tokenizes new files and counts S sets on an engine."""

    def __init__(
        self,
        root: str,
        config: ScanConfig,
        store: Store,
        *,
        engine: Engine,
        jobs: int | None = None,
    ) -> None:
        super().__init__(root, config, store, jobs=jobs)
        self.engine = engine

    def _map_build_jobs(self, jobs: list[BuildJob]) -> Iterable[tuple[bytes, bytes]] | None:
        if not jobs:
            return None
        return (
            entry for chunk in self.engine.map(build_chunk, _job_chunks(jobs)) for entry in chunk
        )

    def _make_sset(
        self, docs: list[list[str]], k: int, *, language: str, tokenizer: str
    ) -> TriviallySharedSet:
        max_n = self.config.max_n
        counted = self.engine.count(partial(count_token_part, max_n=max_n), _doc_parts(docs), k)
        return counted.to_sset(k, max_n, language=language, tokenizer=tokenizer)


# ------------------------------------------------------------------------------ scoring
@dataclass(frozen=True)
class ScoringSetup:
    """What a worker needs to score pairs of one language: both S sets and the settings."""

    raw: TriviallySharedSet
    norm: TriviallySharedSet
    max_n: int
    smoothing: str
    language: str
    threshold: float

    @property
    def key(self) -> tuple[str, str, int, str, str]:
        """Identifies the metrics built from this setup."""
        return (
            self.raw.fingerprint(),
            self.norm.fingerprint(),
            self.max_n,
            self.smoothing,
            self.language,
        )


_METRICS: dict[tuple[str, str, int, str, str], tuple[CrystalBLEU, CrystalBLEU]] = {}
_METRICS_LOCK = threading.Lock()


def _metrics(setup: ScoringSetup) -> tuple[CrystalBLEU, CrystalBLEU]:
    """The raw-view and normalized-view metrics, built once per worker process."""
    with _METRICS_LOCK:
        found = _METRICS.get(setup.key)
        if found is None:
            args: dict[str, Any] = {
                "max_n": setup.max_n,
                "smoothing": Smoothing.parse(setup.smoothing),
                "language": setup.language,
            }
            if len(_METRICS) >= 4:
                _METRICS.clear()
            found = _METRICS[setup.key] = (
                CrystalBLEU(setup.raw, **args),
                CrystalBLEU(setup.norm, **args),
            )
        return found


def score_chunk(
    chunk: tuple[list[tuple[str, str]], dict[str, Snippet]], setup: ScoringSetup
) -> list[list[float]]:
    """The four scores of each ``(lo, hi)`` snippet pair of a chunk (runs on a worker).

    The same computation as :meth:`crystal_lsp.clones.finder.CloneFinder._score`: normalized view
    lo→hi, then hi→lo only if that passes, then both raw-view directions only if both pass;
    ``-1`` marks a score not computed.
    """
    pairs, snippets = chunk
    raw_metric, norm_metric = _metrics(setup)
    needs_tokens = Smoothing.parse(setup.smoothing).method >= 5
    profiles: dict[tuple[str, str], tuple[Profile, list[str]]] = {}

    def profile(view: str, sha: str) -> tuple[Profile, list[str]]:
        found = profiles.get((view, sha))
        if found is None:
            texts, cats = snippets[sha]
            if view == "n":
                texts = normalized(texts, cats)
                found = (norm_metric.profile(texts), texts)
            else:
                found = (raw_metric.profile(texts), texts)
            profiles[(view, sha)] = found
        return found

    def score(view: str, hyp: str, ref: str) -> float:
        metric = norm_metric if view == "n" else raw_metric
        h, r = profile(view, hyp), profile(view, ref)
        if needs_tokens:
            return metric.score_profiles(h[0], [r[0]], hypothesis=h[1], references=[r[1]])
        return metric.score_profiles(h[0], [r[0]])

    out: list[list[float]] = []
    threshold = setup.threshold
    for lo, hi in pairs:
        n_lh = score("n", lo, hi)
        n_hl = r_lh = r_hl = -1.0
        if n_lh >= threshold:
            n_hl = score("n", hi, lo)
            if n_hl >= threshold:
                r_lh = score("r", lo, hi)
                r_hl = score("r", hi, lo)
        out.append([n_lh, n_hl, r_lh, r_hl])
    return out


class EngineFinder(CloneFinder):
    """A :class:`CloneFinder` that scores uncached candidate pairs on an engine."""

    def __init__(self, index: RepoIndex, engine: Engine) -> None:
        super().__init__(index)
        self.engine = engine

    def _snippet(self, ref: Ref, meta: SnippetMeta) -> Snippet:
        heavy = self.index.heavy(ref[0])
        return heavy.texts[meta.start : meta.end], heavy.cats[meta.start : meta.end]

    def _chunks(
        self,
        missing: Mapping[str, tuple[int, int]],
        refs: list[Ref],
        metas: list[SnippetMeta],
    ) -> Iterator[tuple[list[tuple[str, str]], dict[str, Snippet]]]:
        pairs: list[tuple[str, str]] = []
        snippets: dict[str, Snippet] = {}
        for lo, hi in missing.values():
            for i in (lo, hi):
                if metas[i].sha not in snippets:
                    snippets[metas[i].sha] = self._snippet(refs[i], metas[i])
            pairs.append((metas[lo].sha, metas[hi].sha))
            if len(pairs) >= CHUNK_PAIRS:
                yield pairs, snippets
                pairs, snippets = [], {}
        if pairs:
            yield pairs, snippets

    def _score(
        self,
        language: str,
        state: _LanguageState,
        refs: list[Ref],
        metas: list[SnippetMeta],
        pairs: list[tuple[int, int]],
        progress: Progress | None,
    ) -> tuple[dict[tuple[int, int], Scores], int]:
        # The pairs (by content) whose scores are not cached: scored on the engine, then the
        # local method finds every score in the cache.
        missing: dict[str, tuple[int, int]] = {}
        for a, b in pairs:
            lo, hi = (a, b) if metas[a].sha <= metas[b].sha else (b, a)
            key = f"{metas[lo].sha}|{metas[hi].sha}"
            values = state.pair_cache.get(key)
            if (values is None or len(values) != 4) and key not in missing:
                missing[key] = (lo, hi)
        if missing:
            setup = ScoringSetup(
                state.sets.raw,
                state.sets.norm,
                self.config.max_n,
                self.config.smoothing,
                language,
                self.config.threshold,
            )
            keys = iter(missing)
            done = 0
            for scores in self.engine.map(
                partial(score_chunk, setup=setup), self._chunks(missing, refs, metas)
            ):
                for values in scores:
                    state.pair_cache[next(keys)] = values
                done += len(scores)
                if progress is not None:
                    progress(f"scoring ({language})", done, len(missing))
        out, _ = super()._score(language, state, refs, metas, pairs, progress)
        return out, len(missing)


# ------------------------------------------------------------------------------ entry point
def run_scan_on_engine(
    root: str,
    paths: Iterable[str],
    config: ScanConfig,
    *,
    engine: str | None = "dask",
    scheduler: str | None = None,
    jobs: int | None = None,
    store: Store | None = None,
    focus_lines: LineRanges | None = None,
    progress: Progress | None = None,
    use_cache: bool = True,
    with_ngrams: bool = False,
) -> ScanResult:
    """:func:`crystal_lsp.clones.scan.run_scan` with its heavy steps on an engine (opened on demand)."""
    with ExitStack() as stack:
        lazy = LazyEngine(stack, engine, scheduler, jobs)
        if store is None:
            store = open_store(root)
            stack.callback(store.close)
        index = EngineIndex(root, config, store, engine=lazy, jobs=jobs)
        return run_scan(
            root,
            paths,
            config,
            focus_lines=focus_lines,
            progress=progress,
            use_cache=use_cache,
            with_ngrams=with_ngrams,
            jobs=jobs,
            index=index,
            finder=EngineFinder(index, lazy),
        )


def scan_runner(engine: str | None, scheduler: str | None) -> Callable[..., ScanResult]:
    """``run_scan`` for the local engine, else :func:`run_scan_on_engine` bound to the engine."""
    name = engine_name(engine, scheduler)
    if name == "local":
        return run_scan
    return partial(run_scan_on_engine, engine=name, scheduler=scheduler)
