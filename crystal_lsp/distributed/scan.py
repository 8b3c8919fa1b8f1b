"""``crystal-lsp scan`` on an engine: tokenizing, S-set counting and pair scoring on workers.

The scan itself is unchanged (:func:`crystal_lsp.clones.scan.run_scan`); it is given an index and a
clone finder composed with strategies that run their three expensive steps on the engine:

* **entries**: files whose content is new to the cache are tokenized into index entries by
  :func:`crystal_lsp.clones.index.build_job` on the workers (:class:`EngineSteps`) (the client reads the files and ships
  their text; results are stored in the client's cache as always);
* **S sets** of languages large enough for their own: the token sequences are counted on the
  workers and merged exactly (:mod:`crystal_lsp.distributed.topk`);
* **scoring** (:class:`EngineScorer`): candidate pairs whose scores are not cached are
  partitioned into chunks; each chunk travels with the tokens (texts and categories) of its
  snippets, and a worker scores it with the same
  :meth:`crystal_lsp.clones.similarity.Similarity.pair_scores` a local scan uses, so the findings
  are identical to a local scan's.

Retrieval (the shingle index) and grouping stay on the client: they are fast array work.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial

from crystal_lsp.clones.finder import CloneFinder
from crystal_lsp.clones.index import BuildJob, RepoIndex, build_job
from crystal_lsp.clones.scan import LineRanges, Progress, ScanResult, open_store, run_scan
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.similarity import Code, Item, Similarity
from crystal_lsp.clones.store import Store
from crystal_lsp.distributed import engine_name
from crystal_lsp.distributed.engine import Engine, LazyEngine
from crystal_lsp.distributed.topk import count_token_part
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import TriviallySharedSet

CHUNK_BYTES = 2_000_000
CHUNK_JOBS = 64
PART_TOKENS = 1_000_000
CHUNK_PAIRS = 2_000

Snippet = tuple[list[str], str, list[int] | None]  # token texts, categories, lines


# ------------------------------------------------------------------------------ tokenizing
def build_chunk(jobs: list[BuildJob]) -> list[tuple[bytes, bytes]]:
    """Index entries of a chunk of files (runs on a worker)."""
    return [build_job(job) for job in jobs]


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


class EngineSteps:
    """The index's :class:`~crystal_lsp.clones.index.IndexEngine` on an engine's workers."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def map_build_jobs(self, jobs: list[BuildJob]) -> Iterable[tuple[bytes, bytes]] | None:
        """Tokenize new files on the workers, in chunks (``None`` when there is nothing)."""
        if not jobs:
            return None
        return (
            entry for chunk in self.engine.map(build_chunk, _job_chunks(jobs)) for entry in chunk
        )

    def make_sset(
        self, docs: list[list[str]], k: int, *, max_n: int, language: str, tokenizer: str
    ) -> TriviallySharedSet:
        """Count the n-grams on the workers and merge the top k exactly."""
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
    def key(self) -> tuple[str, str, int, str, str, float]:
        """Identifies the similarity built from this setup."""
        return (
            self.raw.fingerprint(),
            self.norm.fingerprint(),
            self.max_n,
            self.smoothing,
            self.language,
            self.threshold,
        )

    def similarity(self) -> Similarity:
        """The similarity a local scan uses for these S sets and settings."""
        return Similarity(
            self.raw,
            self.norm,
            self.max_n,
            Smoothing.parse(self.smoothing),
            self.language,
            self.threshold,
        )


_SIMILARITIES: dict[tuple[str, str, int, str, str, float], Similarity] = {}
_SIMILARITIES_LOCK = threading.Lock()


def _similarity(setup: ScoringSetup) -> Similarity:
    """The setup's similarity, built once per worker process."""
    with _SIMILARITIES_LOCK:
        found = _SIMILARITIES.get(setup.key)
        if found is None:
            if len(_SIMILARITIES) >= 4:
                _SIMILARITIES.clear()
            found = _SIMILARITIES[setup.key] = setup.similarity()
        return found


def score_chunk(
    chunk: tuple[list[tuple[str, str]], dict[str, Snippet]], setup: ScoringSetup
) -> list[list[float]]:
    """The scores of each ``(lo, hi)`` pair of pieces of code of a chunk (runs on a worker)."""
    pairs, snippets = chunk
    similarity = _similarity(setup)

    def item(sha: str) -> Item:
        texts, cats, lines = snippets[sha]
        return sha, lambda: Code(texts, cats, lines)

    return [similarity.pair_scores(item(lo), item(hi)) for lo, hi in pairs]


class EngineScorer:
    """A :class:`~crystal_lsp.clones.finder.PairScorer` that scores on an engine's workers."""

    def __init__(self, engine: Engine, config: ScanConfig) -> None:
        self.engine = engine
        self.config = config

    def fill(
        self,
        similarity: Similarity,
        missing: Mapping[str, tuple[Item, Item]],
        progress: Callable[[int, int], None] | None,
    ) -> None:
        """Score the missing pairs in chunks on the workers; fill the similarity's cache."""
        setup = ScoringSetup(
            similarity.raw,
            similarity.norm,
            similarity.max_n,
            self.config.smoothing,
            similarity.language,
            similarity.threshold,
        )
        keys = iter(missing)
        done = 0
        for scores in self.engine.map(partial(score_chunk, setup=setup), _chunks(missing)):
            for values in scores:
                similarity.cache[next(keys)] = values
            done += len(scores)
            if progress is not None:
                progress(done, len(missing))


def _chunks(
    missing: Mapping[str, tuple[Item, Item]],
) -> Iterator[tuple[list[tuple[str, str]], dict[str, Snippet]]]:
    pairs: list[tuple[str, str]] = []
    snippets: dict[str, Snippet] = {}
    for lo, hi in missing.values():
        for sha, load in (lo, hi):
            if sha not in snippets:
                code = load()
                lines = list(code.lines) if code.lines is not None else None
                snippets[sha] = (list(code.texts), code.cats, lines)
        pairs.append((lo[0], hi[0]))
        if len(pairs) >= CHUNK_PAIRS:
            yield pairs, snippets
            pairs, snippets = [], {}
    if pairs:
        yield pairs, snippets


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
        index = RepoIndex(root, config, store, engine=EngineSteps(lazy), jobs=jobs)
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
            finder=CloneFinder(index, scorer=EngineScorer(lazy, config)),
        )


def scan_runner(engine: str | None, scheduler: str | None) -> Callable[..., ScanResult]:
    """``run_scan`` for the local engine, else :func:`run_scan_on_engine` bound to the engine."""
    name = engine_name(engine, scheduler)
    if name == "local":
        return run_scan
    return partial(run_scan_on_engine, engine=name, scheduler=scheduler)
