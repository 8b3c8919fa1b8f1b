"""``crystal-lsp disting`` on an engine: tokenizing, S counting and pair scoring on workers.

``disting`` runs four steps that an engine can take over, gathered in :class:`Steps`: tokenize
the items, build S from the train split's tokens, make each metric, and evaluate it on the
pairs. :data:`LOCAL_STEPS` are the usual functions. :class:`EngineSteps` runs them on an engine:

* items are tokenized in chunks on the workers (the same lexer calls as
  :func:`crystal_lsp.text.parallel.tokenize_many`);
* S is the exact map-reduce top-k of :mod:`crystal_lsp.distributed.topk`;
* a metric is a :class:`RemoteMetric`: the items (code and tokens) are copied to every worker
  once, each worker prepares the metric once, and the pairs are scored in chunks; the report
  is then computed by :func:`crystal_lsp.metric.disting.evaluate_metric` itself from those scores, so
  every number equals the local one (the same float operations on the same inputs).

The class labels, the split and the pair sampling stay on the client: they need the whole
dataset's labels, which are small next to the pairs.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

from crystal_lsp.distributed import engine_name
from crystal_lsp.distributed.engine import Engine, LazyEngine
from crystal_lsp.distributed.topk import count_token_part
from crystal_lsp.metric.disting import MetricReport, evaluate_metric
from crystal_lsp.metric.registry import MetricConfig, PairMetric, PreparedItem, make_metric
from crystal_lsp.metric.sampling import Pair, PairSets
from crystal_lsp.metric.sset import DEFAULT_TIE_BREAK, TriviallySharedSet, build_sset
from crystal_lsp.text.parallel import Job, Raw, _from_raw, _tokenize_chunk, tokenize_many
from crystal_lsp.text.tokens import Tokens

CHUNK_BYTES = 2_000_000
CHUNK_ITEMS = 256
CHUNK_PAIRS = 5_000
PART_TOKENS = 1_000_000
Shipped = list[tuple[str, Raw] | None]  # per item: code and raw tokens (None: not used)


@dataclass(frozen=True)
class Steps:
    """The steps of ``disting`` that an engine may run (each with the local function's shape)."""

    tokenize_many: Callable[..., list[Tokens]]
    build_sset: Callable[..., TriviallySharedSet]
    make_metric: Callable[[str, MetricConfig], PairMetric]
    evaluate_metric: Callable[..., MetricReport]


LOCAL_STEPS = Steps(tokenize_many, build_sset, make_metric, evaluate_metric)


# ------------------------------------------------------------------------------ on workers
def tokenize_chunk(jobs: list[Job], keep_comments: bool) -> list[Raw]:
    """Tokens of a chunk of items, as plain lists (runs on a worker)."""
    return _tokenize_chunk(jobs, keep_comments)


_PREPARED: dict[tuple[str, str], PairMetric] = {}
_PREPARED_LOCK = threading.Lock()


def _prepared(run: str, name: str, config: MetricConfig, items: Shipped) -> PairMetric:
    """The metric ``name`` prepared on all items, once per worker process and run."""
    with _PREPARED_LOCK:
        metric = _PREPARED.get((run, name))
        if metric is None:
            for key in [key for key in _PREPARED if key[0] != run]:
                del _PREPARED[key]  # an earlier run's items
            metric = make_metric(name, config)
            metric.prepare(
                [
                    None if item is None else PreparedItem(item[0], _from_raw(item[1]))
                    for item in items
                ]
            )
            _PREPARED[(run, name)] = metric
        return metric


def score_pairs(
    pairs: list[Pair], *, run: str, name: str, config: MetricConfig, shipped: Shipped
) -> list[float]:
    """Scores of a chunk of pairs (runs on a worker)."""
    metric = _prepared(run, name, config, shipped)
    return [metric.score(hyp, refs) for hyp, refs in pairs]


# ------------------------------------------------------------------------------ on the client
class RemoteMetric:
    """A metric scored on an engine; ``score`` answers from the scores the workers computed."""

    def __init__(self, name: str, config: MetricConfig) -> None:
        self.name = name
        self.config = config
        self.local = make_metric(name, config)  # signature, and corpus-level aggregates
        self.items: Sequence[PreparedItem | None] = []
        self.scores: dict[Pair, float] = {}
        self._local_ready = False

    @property
    def signature(self) -> str:
        """The metric's signature."""
        return self.local.signature

    def prepare(self, items: Sequence[PreparedItem | None]) -> None:
        """Keep the items for the workers (nothing is computed here)."""
        self.items = items
        self._local_ready = False

    def score(self, hyp: int, refs: Sequence[int]) -> float:
        """The score a worker computed for this pair."""
        return self.scores[(hyp, tuple(refs))]

    def corpus(self, pairs: Sequence[tuple[int, Sequence[int]]]) -> float:
        """Corpus-level aggregate, computed here (it needs every pair's statistics at once)."""
        if not self._local_ready:
            self.local.prepare(self.items)
            self._local_ready = True
        return self.local.corpus(pairs)


def _chunks(items: Sequence[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


class EngineSteps:
    """The ``disting`` steps on an engine (see the module docstring)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._shared: tuple[Sequence[PreparedItem | None], Any] | None = None
        self._run = ""

    def _share(self, items: Sequence[PreparedItem | None]) -> Any:
        """The items on every worker, copied once for all metrics of a run."""
        if self._shared is None or self._shared[0] is not items:
            shipped: Shipped = [
                None
                if item is None
                else (
                    item.code,
                    (
                        item.tokens.texts,
                        item.tokens.starts,
                        [str(t) for t in item.tokens.types],
                        item.tokens.language,
                    ),
                )
                for item in items
            ]
            self._shared = (items, self.engine.share(shipped))
            self._run = uuid.uuid4().hex  # workers prepare metrics again for new items
        return self._shared[1]

    def tokenize_many(
        self,
        jobs: Sequence[Job],
        *,
        processes: int | None = None,
        keep_comments: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> list[Tokens]:
        """Like :func:`crystal_lsp.text.parallel.tokenize_many`, in chunks on the engine."""
        chunks: list[list[Job]] = [[]]
        size = 0
        for job in jobs:
            if chunks[-1] and (size + len(job[1]) > CHUNK_BYTES or len(chunks[-1]) >= CHUNK_ITEMS):
                chunks.append([])
                size = 0
            chunks[-1].append(job)
            size += len(job[1])
        out: list[Tokens] = []
        for raws in self.engine.map(tokenize_chunk, chunks, keep_comments=keep_comments):
            out.extend(_from_raw(raw) for raw in raws)
            if progress is not None:
                progress(len(raws))
        return out

    def build_sset(
        self,
        documents: Iterable[Sequence[str]],
        k: int,
        max_n: int = 4,
        *,
        language: str = "",
        tokenizer: str = "",
        tie_break: str = DEFAULT_TIE_BREAK,
    ) -> TriviallySharedSet:
        """Like :func:`crystal_lsp.metric.sset.build_sset`, counted on the engine.

        First-seen ties depend on the order of the documents, which a map-reduce does not keep:
        that S is counted here, from the tokens the engine returned.
        """
        if tie_break != "canonical":
            return build_sset(
                documents, k, max_n, language=language, tokenizer=tokenizer, tie_break=tie_break
            )
        parts: list[list[list[str]]] = [[]]
        tokens = 0
        for doc in documents:
            if parts[-1] and tokens + len(doc) > PART_TOKENS:
                parts.append([])
                tokens = 0
            parts[-1].append(list(doc))
            tokens += len(doc)
        counted = self.engine.count(partial(count_token_part, max_n=max_n), parts, k)
        return counted.to_sset(k, max_n, language=language, tokenizer=tokenizer)

    def make_metric(self, name: str, config: MetricConfig) -> PairMetric:
        """A :class:`RemoteMetric`."""
        return RemoteMetric(name, config)

    def evaluate_metric(
        self,
        metric: PairMetric,
        test: PairSets,
        train: PairSets | None,
        aggregate: str = "mean",
        progress: Callable[[int], None] | None = None,
    ) -> MetricReport:
        """Score the pairs on the engine, then summarise with the local ``evaluate_metric``."""
        if not isinstance(metric, RemoteMetric):
            return evaluate_metric(metric, test, train, aggregate, progress)
        started = time.perf_counter()
        pairs = test.intra + test.inter
        if train is not None and train.intra and train.inter:
            pairs += train.intra + train.inter
        shared = self._share(metric.items)
        size = max(1, min(CHUNK_PAIRS, -(-len(pairs) // (4 * self.engine.workers))))
        chunks = list(_chunks(pairs, size))
        scored = self.engine.map(
            score_pairs,
            chunks,
            run=self._run,
            name=metric.name,
            config=metric.config,
            shipped=shared,
        )
        for chunk, scores in zip(chunks, scored):
            for (hyp, refs), value in zip(chunk, scores):
                metric.scores[(hyp, tuple(refs))] = value
            if progress is not None:
                progress(len(chunk))
        report = evaluate_metric(metric, test, train, aggregate)
        report.seconds = time.perf_counter() - started
        return report


@contextmanager
def disting_steps(
    engine: str | None = None, scheduler: str | None = None, jobs: int | None = None
) -> Iterator[Steps | EngineSteps]:
    """The steps for ``engine`` (a Dask engine is opened on first use, closed after)."""
    name = engine_name(engine, scheduler)
    if name == "local":
        yield LOCAL_STEPS
        return
    with ExitStack() as stack:
        yield EngineSteps(LazyEngine(stack, name, scheduler, jobs))
