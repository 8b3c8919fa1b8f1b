"""What chains become, worked out in forked processes when a cold scan has many of them.

Snapping a chain to a candidate (:func:`crystal_lsp.clones.align.alignment._outcome`) reads the
tokens of its two files and nothing else that changes: the outcomes of a search's chains are
independent of each other. A one-shot scan with ``jobs`` > 1 (:class:`Pool`) loads the tokens
of the chains' files here, forks workers that inherit the workset, and has each work out the
outcomes of a slice of the chains; the search takes them in order, exactly as it would have
computed them. Workers never touch the cache store (the tokens are loaded before the fork),
and only platforms with ``fork`` use them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from crystal_lsp.text.parallel import orphan_guard

MIN_CHAINS = 2000
"""Fewer chains are worked out here: a fork and the results' transfer would cost more."""
SLICES_PER_WORKER = 4


class _Search(Protocol):
    def side(self, i: int, /) -> object: ...


class _Chain(Protocol):
    @property
    def fa(self) -> int: ...

    @property
    def fb(self) -> int: ...


W = TypeVar("W", bound=_Search)
C = TypeVar("C", bound=_Chain)
R = TypeVar("R")

_SHARED: tuple[Any, Sequence[Any], Callable[[Any, Any], Any]] | None = None
"""What the forked workers inherit (set only while a pool runs)."""


class Pool:
    """Worker processes for a search's chain outcomes (module docstring); 1 job: none."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs

    def outcomes(
        self, work: W, chains: Sequence[C], outcome: Callable[[W, C], R]
    ) -> list[R] | None:
        """Every chain's ``outcome(work, chain)`` in order, or None to compute them in the search."""
        if self.jobs <= 1 or len(chains) < MIN_CHAINS or "fork" not in _methods():
            return None
        from concurrent.futures import ProcessPoolExecutor

        global _SHARED
        for i in sorted({f for chain in chains for f in (chain.fa, chain.fb)}):
            work.side(i)  # the tokens, loaded here: workers never read the store
        workers = min(self.jobs, os.cpu_count() or 1)
        step = max(1, -(-len(chains) // (workers * SLICES_PER_WORKER)))
        slices = [(a, min(a + step, len(chains))) for a in range(0, len(chains), step)]
        _SHARED = (work, chains, outcome)
        try:
            with ProcessPoolExecutor(
                max_workers=workers,
                mp_context=_context("fork"),
                initializer=orphan_guard,
                initargs=(os.getpid(),),
            ) as pool:
                return [found for part in pool.map(_slice, slices) for found in part]
        finally:
            _SHARED = None


def _methods() -> list[str]:
    import multiprocessing  # here: a scan without a pool need not import it

    return multiprocessing.get_all_start_methods()


def _context(method: str) -> Any:
    import multiprocessing

    return multiprocessing.get_context(method)


def _slice(bounds: tuple[int, int]) -> list[Any]:
    """The outcomes of chains ``[a, b)`` of the inherited search (in a worker)."""
    assert _SHARED is not None, "a worker without the search it was forked for"
    work, chains, outcome = _SHARED
    return [outcome(work, chains[k]) for k in range(*bounds)]
