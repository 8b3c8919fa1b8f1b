"""Engines: where the map steps of a command run.

An :class:`Engine` offers what the commands need:

* ``map(func, items, **shared)``: ``func`` over items (chunks of work), results streamed back in
  order; ``share(value)`` makes a value (a dataset's tokens) available to every worker once;
* ``count(count_part, parts, k)``: the exact n-gram top-k of a corpus (:mod:`topk`): every part
  counted by ``count_part(part, buckets)``, tables reduced bucket by bucket, top-ks merged.

:class:`LocalEngine` runs them in a pool of processes on this machine, with one bucket: the
parent process sums the tables as they arrive and ranks the full table, exactly as
:func:`crystal_lsp.metric.sset.build_sset` does. :class:`DaskEngine` runs them on a ``distributed``
cluster: parts are scattered to the workers, each bucket is reduced by a tree of merges that
first sums the tables of the parts a worker counted (no transfer) and then the workers' sums,
so only one table per worker and bucket crosses the network and no process holds more than
its buckets' share of the table.

Functions handed to an engine must be picklable by reference (module-level functions of
``crystal_lsp``, or ``functools.partial`` of them): workers import them.
"""

from __future__ import annotations

import importlib
import sys
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from functools import partial
from typing import Any, Protocol, TypeVar

from crystal_lsp.distributed import engine_name
from crystal_lsp.distributed.topk import (
    CURVE_POINTS,
    BucketTop,
    Counted,
    PartCounts,
    PartStats,
    bucket_top,
    merge_tables,
    merge_tops,
    single_table_top,
)
from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.ngrams import Ngram
from crystal_lsp.text.parallel import default_jobs, worker_pool

R = TypeVar("R")
CountPart = Callable[..., PartCounts]  # count_part(part, buckets) -> PartCounts
StatsProgress = Callable[[PartStats], None]
MERGE_FAN_IN = 8


class Engine(Protocol):
    """Where map steps run (see the module docstring)."""

    name: str

    @property
    def workers(self) -> int:
        """How many workers (processes) run tasks in parallel."""
        ...

    def map(self, func: Callable[..., R], items: Iterable[Any], /, **shared: Any) -> Iterator[R]:
        """``func(item, **shared)`` over ``items``, results in order."""
        ...

    def share(self, value: Any) -> Any:
        """``value`` made available to every worker once, to pass to :meth:`map` as ``shared``."""
        ...

    def count(
        self,
        count_part: CountPart,
        parts: Sequence[Any],
        k: int,
        *,
        tie_break: str = "canonical",
        points: int = CURVE_POINTS,
        progress: StatsProgress | None = None,
    ) -> Counted:
        """The exact top-k n-grams and frequency curve of the parts, with their totals."""
        ...


class LocalEngine:
    """A process pool of ``jobs`` workers on this machine (in-process with one)."""

    name = "local"

    def __init__(self, jobs: int | None = None) -> None:
        self.jobs = max(1, jobs if jobs is not None else default_jobs())

    @property
    def workers(self) -> int:
        """The pool size."""
        return self.jobs

    def map(self, func: Callable[..., R], items: Iterable[Any], /, **shared: Any) -> Iterator[R]:
        """``func(item, **shared)`` over ``items`` in the pool, results in order."""
        if shared:
            func = partial(func, **shared)
        work = list(items)
        workers = min(self.jobs, len(work))
        if workers <= 1:
            yield from map(func, work)
            return
        pool = worker_pool(workers)
        try:
            yield from pool.map(func, work)
        finally:
            pool.shutdown(cancel_futures=True)

    def share(self, value: Any) -> Any:
        """The value itself (pool processes receive it with each task)."""
        return value

    def count(
        self,
        count_part: CountPart,
        parts: Sequence[Any],
        k: int,
        *,
        tie_break: str = "canonical",
        points: int = CURVE_POINTS,
        progress: StatsProgress | None = None,
    ) -> Counted:
        """Sum the parts' tables here, in reading order, and rank the full table."""
        total: Counter[Ngram] = Counter()
        documents = tokens = 0
        skipped: list[tuple[str, str]] = []
        for counted in self.map(partial(count_part, buckets=1), parts):
            # Counter.update keeps first-seen order, so tie_break="first-seen" works here
            total.update(counted.tables[0])
            documents += counted.documents
            tokens += counted.tokens
            skipped.extend(counted.skipped)
            if progress is not None:
                progress(counted.stats())
        best = single_table_top(total, k, tie_break, points)
        return Counted(best.top, best.curve, documents, tokens, skipped)


class Box:
    """One value shipped whole between Dask processes.

    ``distributed`` serializes a task result that is a plain dict, list or tuple item by item
    (one pickle call per entry): a count table of a million n-grams would cost a million calls
    instead of one. Results and shared values therefore travel boxed.
    """

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __reduce__(self) -> tuple[type[Box], tuple[Any]]:
        return (Box, (self.value,))

    def __sizeof__(self) -> int:
        # what Dask's memory manager sees (it spills by this estimate): about 150 bytes per
        # n-gram of a count table, whose keys share interned token strings
        value = self.value
        tables = value.tables if isinstance(value, PartCounts) else [value]
        if all(isinstance(table, dict) for table in tables):
            return 64 + sum(sys.getsizeof(t) + 150 * len(t) for t in tables)
        return 64 + sys.getsizeof(value)


def _unbox(value: Any) -> Any:
    return value.value if isinstance(value, Box) else value


def _call_boxed(func: Callable[..., Any], item: Any, *args: Any, **kwargs: Any) -> Box:
    """``func`` on unboxed arguments, its result boxed (runs on a worker)."""
    unboxed = {name: _unbox(value) for name, value in kwargs.items()}
    return Box(func(_unbox(item), *args, **unboxed))


def _table(counted: Box, bucket: int) -> Box:
    return Box(counted.value.tables[bucket])


def _stats(counted: Box) -> PartStats:
    stats: PartStats = counted.value.stats()
    return stats


def _merge(*tables: Box) -> Box:
    return Box(merge_tables(*(table.value for table in tables)))


def _top(table: Box, k: int, points: int) -> BucketTop:
    return bucket_top(table.value, k, points)


def _merge_tree(tables: list[Any], delayed: Any) -> Any:
    """One delayed table: ``tables`` summed by a tree of merges of ``MERGE_FAN_IN`` each."""
    while len(tables) > 1:
        tables = [
            delayed(_merge, pure=False)(*tables[i : i + MERGE_FAN_IN])
            for i in range(0, len(tables), MERGE_FAN_IN)
        ]
    return tables[0]


class DaskEngine:
    """A ``distributed`` cluster, through a connected ``Client``."""

    name = "dask"

    def __init__(self, client: Any, buckets: int | None = None) -> None:
        self.client = client
        self.buckets = buckets if buckets is not None else min(64, max(2, 4 * self.workers))

    @property
    def workers(self) -> int:
        """Worker processes known to the scheduler now."""
        return max(1, len(self.client.nthreads()))

    def map(self, func: Callable[..., R], items: Iterable[Any], /, **shared: Any) -> Iterator[R]:
        """``func(item, **shared)`` on the cluster, a bounded window of tasks in flight."""
        window = max(8, 4 * self.workers)
        pending: deque[Any] = deque()
        source = iter(items)
        try:
            for item in source:
                pending.append(self.client.submit(_call_boxed, func, item, pure=False, **shared))
                if len(pending) >= window:
                    break
            while pending:
                future = pending.popleft()
                result = future.result().value
                future.release()
                for item in source:
                    pending.append(
                        self.client.submit(_call_boxed, func, item, pure=False, **shared)
                    )
                    break
                yield result
        finally:
            if pending:
                self.client.cancel(list(pending))

    def share(self, value: Any) -> Any:
        """A future of ``value``, copied to every worker (tasks given it receive the value)."""
        return self.client.scatter([Box(value)], broadcast=True, hash=False)[0]

    def count(
        self,
        count_part: CountPart,
        parts: Sequence[Any],
        k: int,
        *,
        tie_break: str = "canonical",
        points: int = CURVE_POINTS,
        progress: StatsProgress | None = None,
    ) -> Counted:
        """Map the parts, reduce each bucket by a tree of merges, merge the buckets' top-ks."""
        check_tie_break(self.name, tie_break)
        if not parts:
            return Counted({}, [], 0, 0, [])
        dask: Any = importlib.import_module("dask")
        distributed: Any = importlib.import_module("distributed")
        delayed = dask.delayed
        # Parts go to the workers directly (scattered), not inside the task graph; a map task
        # runs where its part is, so the parts of one worker are merged there first and only
        # one table per worker and bucket crosses the network.
        scattered = self.client.scatter([Box(part) for part in parts], hash=False)
        holders = self.client.who_has(scattered)
        by_worker: dict[str, list[int]] = {}
        for index, future in enumerate(scattered):
            where = sorted(holders.get(future.key, ()))
            by_worker.setdefault(where[0] if where else "", []).append(index)
        maps = [
            delayed(_call_boxed, pure=False)(count_part, part, self.buckets) for part in scattered
        ]
        stats = [delayed(_stats, pure=True)(m) for m in maps]
        finals = []
        for bucket in range(self.buckets):
            tables = [delayed(_table, pure=True)(m, bucket) for m in maps]
            level = [
                _merge_tree([tables[i] for i in group], delayed) for group in by_worker.values()
            ]
            finals.append(delayed(_top, pure=False)(_merge_tree(level, delayed), k, points))
        futures = self.client.compute(stats + finals)
        try:
            if progress is not None:
                for future in distributed.as_completed(futures[: len(stats)]):
                    progress(future.result())
            part_stats: list[PartStats] = self.client.gather(futures[: len(stats)])
            best = merge_tops(self.client.gather(futures[len(stats) :]), k, points)
        except BaseException:
            self.client.cancel(futures)
            raise
        del scattered, futures  # releases the parts and results on the workers
        return Counted(
            best.top,
            best.curve,
            sum(s.documents for s in part_stats),
            sum(s.tokens for s in part_stats),
            [item for s in part_stats for item in s.skipped],
        )


def check_tie_break(engine: str, tie_break: str) -> None:
    """Only the local engine keeps reading order, which ``first-seen`` ties depend on."""
    if engine != "local" and tie_break != "canonical":
        raise CrystalError(
            f"--tie-break {tie_break} depends on the order documents are read in; "
            "use it with --engine local"
        )


@contextmanager
def open_engine(
    engine: str | None = None, scheduler: str | None = None, jobs: int | None = None
) -> Iterator[Engine]:
    """An engine for the duration of a command (a Dask client is closed afterwards)."""
    if engine_name(engine, scheduler) == "local":
        yield LocalEngine(jobs)
        return
    from crystal_lsp.distributed.client import connect

    with connect(scheduler, jobs) as client:
        yield DaskEngine(client)


class LazyEngine:
    """An engine opened on first use and closed with ``stack`` (a cached scan starts nothing)."""

    def __init__(
        self, stack: ExitStack, engine: str | None, scheduler: str | None, jobs: int | None
    ) -> None:
        self.name = engine_name(engine, scheduler)
        self._stack = stack
        self._args = (engine, scheduler, jobs)
        self._engine: Engine | None = None

    def _get(self) -> Engine:
        if self._engine is None:
            self._engine = self._stack.enter_context(open_engine(*self._args))
        return self._engine

    @property
    def workers(self) -> int:
        """The opened engine's workers."""
        return self._get().workers

    def map(self, func: Callable[..., R], items: Iterable[Any], /, **shared: Any) -> Iterator[R]:
        """See :meth:`Engine.map`."""
        return self._get().map(func, items, **shared)

    def share(self, value: Any) -> Any:
        """See :meth:`Engine.share`."""
        return self._get().share(value)

    def count(
        self,
        count_part: CountPart,
        parts: Sequence[Any],
        k: int,
        *,
        tie_break: str = "canonical",
        points: int = CURVE_POINTS,
        progress: StatsProgress | None = None,
    ) -> Counted:
        """See :meth:`Engine.count`."""
        return self._get().count(
            count_part, parts, k, tie_break=tie_break, points=points, progress=progress
        )
