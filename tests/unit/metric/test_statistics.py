"""Per-order statistics against NLTK's internals; seeded bootstrap and paired bootstrap."""

from __future__ import annotations

from typing import Any

import crystalbleu
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.translate import bleu_score as nltk_bleu

from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import TriviallySharedSet
from crystal_lsp.metric.statistics import (
    CorpusCounts,
    bootstrap,
    estimate_ci,
    paired_bootstrap,
    resample_indices,
    sentence_statistics,
)

pytestmark = pytest.mark.usefixtures("core")

ALPHABET = "abcde"
tokens = st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=14)
references = st.lists(tokens, min_size=1, max_size=4)
SSET = TriviallySharedSet({("a",): 9, ("a", "b"): 5, ("c", "d", "e"): 3}, k=3)


def _nltk_stats(refs: Any, hyp: Any, ignoring: Any) -> tuple[list[int], list[int], float]:
    """Matches, totals and brevity penalty by NLTK's (crystalbleu's) own functions."""
    precisions = [
        crystalbleu.modified_precision(refs, hyp, n, ignoring=ignoring) for n in (1, 2, 3, 4)
    ]
    closest = nltk_bleu.closest_ref_length(refs, len(hyp))
    return (
        [p.numerator for p in precisions],
        [p.denominator for p in precisions],
        nltk_bleu.brevity_penalty(closest, len(hyp)),
    )


@settings(max_examples=300, deadline=None)
@given(references, tokens, st.booleans())
def test_sentence_statistics_equal_nltk_internals(refs: Any, hyp: Any, crystal: bool) -> None:
    metric = CrystalBLEU(SSET if crystal else None)
    stats = sentence_statistics(metric, hyp, refs)
    matches, totals, bp = _nltk_stats(refs, hyp, dict(SSET.counts) if crystal else None)
    assert list(stats.matches) == matches
    assert list(stats.totals) == totals
    assert stats.brevity_penalty == pytest.approx(bp, abs=1e-12)
    assert stats.precisions == tuple(m / t for m, t in zip(matches, totals))
    assert stats.hyp_len == len(hyp)
    assert stats.ref_len == nltk_bleu.closest_ref_length(refs, len(hyp))
    assert stats.score == metric.sentence_score(hyp, refs)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(references, tokens), min_size=1, max_size=6), st.booleans())
def test_corpus_statistics_equal_the_corpus_score(pairs: Any, crystal: bool) -> None:
    metric = CrystalBLEU(SSET if crystal else None, smoothing=Smoothing.parse("m1:eps=0.1"))
    hyps = [h for _, h in pairs]
    refs = [r for r, _ in pairs]
    corpus = CorpusCounts(metric, hyps, refs)
    stats = corpus.statistics()
    assert stats.score == metric.corpus_score(hyps, refs)
    ignoring = dict(SSET.counts) if crystal else None
    summed = [_nltk_stats(r, h, ignoring) for r, h in pairs]
    assert list(stats.matches) == [sum(s[0][i] for s in summed) for i in range(4)]
    assert list(stats.totals) == [sum(s[1][i] for s in summed) for i in range(4)]


def _corpus(seed: int, size: int = 30) -> tuple[CorpusCounts, CorpusCounts]:
    rng = np.random.default_rng(seed)

    def sample(n: int) -> list[str]:
        return [str(x) for x in rng.choice(list(ALPHABET), size=n)]

    refs = [[sample(12)] for _ in range(size)]
    good = [r[0][:10] + sample(2) for r in refs]
    poor = [sample(12) for _ in refs]
    metric = CrystalBLEU(SSET)
    return CorpusCounts(metric, good, refs), CorpusCounts(metric, poor, refs)


def test_bootstrap_is_reproducible_with_a_seed() -> None:
    good, _ = _corpus(1)
    first, again = bootstrap(good, 200, seed=7), bootstrap(good, 200, seed=7)
    assert first == again
    other = bootstrap(good, 200, seed=8)
    assert other != first
    score = good.statistics().score
    assert first.mean - 3 * first.ci <= score <= first.mean + 3 * first.ci
    assert first.ci > 0


def test_bootstrap_resamples_are_sums_of_the_pairs_counts() -> None:
    good, _ = _corpus(2, size=8)
    indices = resample_indices(len(good), 5, 3)
    for row, score in zip(indices, good.resampled(indices)):
        assert good.statistics(good.rows[row].sum(axis=0)).score == score
    assert CorpusCounts(good.metric, [], []).rows.shape == (0, 10)


def test_estimate_ci_uses_the_2_5_and_97_5_order_statistics() -> None:
    scores = np.arange(1000, dtype=np.float64)
    mean, ci = estimate_ci(scores)
    assert mean == pytest.approx(499.5)
    assert ci == pytest.approx(0.5 * (974 - 25))


def test_paired_bootstrap_tells_a_better_system_apart() -> None:
    good, poor = _corpus(4)
    result = paired_bootstrap(good, poor, 300, seed=11)
    assert result == paired_bootstrap(good, poor, 300, seed=11)
    assert result.system > result.baseline
    assert result.p_value < 0.05
    same = paired_bootstrap(good, good, 300, seed=11)
    # sacrebleu counts only centred differences strictly above the observed one: (0 + 1) / 301
    assert same.system == same.baseline and same.p_value == 1 / 301
    with pytest.raises(ValueError):
        paired_bootstrap(good, CorpusCounts(good.metric, [["a"]], [[["a"]]]), 10)
