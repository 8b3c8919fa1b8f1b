"""Tokenizing many sources in parallel processes.

Pygments is pure Python and holds the GIL, so threads do not help; work is spread over a
process pool in chunks. Results cross the process boundary as plain lists (token texts, offsets
and token type names) and token types are mapped back to Pygments' singletons in the parent.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from pygments.token import _TokenType, string_to_tokentype

from crystal_lsp.text.lexers import resolve_lexer
from crystal_lsp.text.tokens import Tokens, lex

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

Job = tuple[str, str, str | None]  # (name, source, language or None)
Raw = tuple[list[str], list[int], list[str], str]
_MIN_PER_PROCESS = 64
_ORPHAN_POLL_S = 0.5


def _exit_with_parent(parent: int) -> None:
    """Poll the parent; end this worker when it is gone (a ``kill -9`` runs no clean-up)."""
    while True:
        time.sleep(_ORPHAN_POLL_S)
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:  # alive, owned by someone else after a pid reuse: keep going
            pass


def orphan_guard(parent: int) -> None:
    """Worker initializer: a daemon thread ends the worker once ``parent`` has died."""
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A process pool whose workers end with this process, however it ends."""
    # imported here: multiprocessing is most of a scan's imports that no pool needs
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(
        max_workers=workers, initializer=orphan_guard, initargs=(os.getpid(),)
    )


def default_jobs() -> int:
    """Worker processes to use by default: the CPUs this process may run on that are idle.

    A machine whose load average already keeps its CPUs busy gets no more processes than it
    has idle CPUs (at least one): more would only add their start-up to the CPU time.
    """
    cpus = available_cpus()
    try:
        load = os.getloadavg()[0]
    except OSError:  # pragma: no cover - no load average
        load = 0.0
    return max(1, min(cpus, cpus - int(load)))


def available_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _tokenize_raw(job: Job, keep_comments: bool) -> Raw:
    name, source, language = job
    tokens = lex(source, resolve_lexer(language, name, source), keep_comments=keep_comments)
    return tokens.texts, tokens.starts, [str(t) for t in tokens.types], tokens.language


def _tokenize_chunk(chunk: list[Job], keep_comments: bool) -> list[Raw]:
    return [_tokenize_raw(job, keep_comments) for job in chunk]


_TYPE_CACHE: dict[str, _TokenType] = {}


def _from_raw(raw: Raw) -> Tokens:
    texts, starts, type_names, language = raw
    cache = _TYPE_CACHE
    types = []
    for name in type_names:
        ttype = cache.get(name)
        if ttype is None:
            ttype = cache[name] = string_to_tokentype(name)
        types.append(ttype)
    return Tokens(texts, starts, types, language)


def tokenize_many(
    jobs: Sequence[Job],
    *,
    processes: int | None = None,
    keep_comments: bool = False,
    progress: Callable[[int], None] | None = None,
    chunk_size: int = 32,
) -> list[Tokens]:
    """Tokenize ``(name, source, language)`` jobs, in order, using up to ``processes`` workers."""
    workers = processes if processes is not None else default_jobs()
    workers = min(workers, max(1, len(jobs) // _MIN_PER_PROCESS))
    if workers <= 1:
        out = []
        for job in jobs:
            out.append(_from_raw(_tokenize_raw(job, keep_comments)))
            if progress is not None:
                progress(1)
        return out
    chunks = [list(jobs[i : i + chunk_size]) for i in range(0, len(jobs), chunk_size)]
    results: list[Tokens] = []
    with worker_pool(workers) as pool:
        for raws in pool.map(_tokenize_chunk, chunks, [keep_comments] * len(chunks)):
            results.extend(_from_raw(raw) for raw in raws)
            if progress is not None:
                progress(len(raws))
    return results


def chunked(items: Sequence[Job], size: int) -> Iterator[list[Job]]:
    """Consecutive chunks of ``size`` jobs."""
    for i in range(0, len(items), size):
        yield list(items[i : i + size])
