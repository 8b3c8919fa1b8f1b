"""The native chaining of seed runs equals the Python dynamic programme it replaces.

Random runs of many file pairs -- near each other on a few diagonals, as copies with edits make
them, and scattered -- are chained by ``chain_pairs`` of the native core in one call and by
``_chain_pair`` pair by pair: the same chains, runs in the same order, in the same order.
"""

from __future__ import annotations

import numpy as np
import pytest

from crystal_lsp.clones.align import chains
from crystal_lsp.clones.align.chains import Chain, Runs
from crystal_lsp.metric import ngrams

needs_native = pytest.mark.skipif(
    not ngrams.native_available(), reason=f"native core not in use ({ngrams.native_status()})"
)


def random_runs(rng: np.random.Generator, pairs: int) -> tuple[Runs, np.ndarray, list]:
    fa, fb, i0, j0, length = [], [], [], [], []
    spans = []
    for p in range(pairs):
        count = int(rng.integers(1, 60))
        base = int(rng.integers(0, 400))
        diagonals = rng.integers(-30, 30, size=int(rng.integers(1, 4)))
        start = len(i0)
        seen = set()
        for _ in range(count):
            a = base + int(rng.integers(0, 500))
            b = max(0, a + int(rng.choice(diagonals)) + int(rng.integers(-2, 3)))
            if (a, b) in seen:
                continue
            seen.add((a, b))
            fa.append(p)
            fb.append(p + int(rng.integers(0, 2)))
            i0.append(a)
            j0.append(b)
            length.append(int(rng.integers(8, 40)))
        fb[start:] = [fb[start]] * (len(i0) - start)
        spans.append((start, len(i0), p, fb[start]))
    as64 = lambda v: np.array(v, dtype=np.int64)  # noqa: E731
    runs = Runs(as64(fa), as64(fb), as64(i0), as64(j0), as64(length))
    worth = runs.length - rng.integers(0, 8, size=len(i0))
    return runs, worth, spans


def python_chains(runs: Runs, worth: np.ndarray, spans: list, least: int) -> list[list[Chain]]:
    out = []
    for span in spans:
        found = chains._chain_pair_of(runs, worth, span, least)
        out.append([c for c in found if c.aligned >= least])
    return out


@needs_native
@pytest.mark.parametrize("seed", range(40))
def test_native_chaining_equals_the_python_one(seed: int) -> None:
    rng = np.random.default_rng(seed)
    runs, worth, spans = random_runs(rng, 12)
    least = int(rng.integers(8, 60))
    assert chains._chain_spans(runs, worth, spans, least) == python_chains(
        runs, worth, spans, least
    )


@needs_native
def test_ties_and_single_runs_agree() -> None:
    # equal scores everywhere: the order of equals decides which chain takes a shared run
    i0 = [0, 0, 10, 10, 20, 20, 100]
    j0 = [50, 60, 60, 70, 70, 80, 300]
    runs = Runs(
        np.zeros(7, np.int64), np.ones(7, np.int64), np.array(i0), np.array(j0), np.full(7, 8)
    )
    worth = runs.length.copy()
    spans = [(0, 6, 0, 1), (6, 7, 0, 1)]
    for least in (1, 8, 9, 30):
        assert chains._chain_spans(runs, worth, spans, least) == python_chains(
            runs, worth, spans, least
        )
