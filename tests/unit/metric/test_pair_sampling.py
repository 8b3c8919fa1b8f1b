"""Class-balanced pair sampling (the reference protocol), RUBY level shares and CPU time."""

from __future__ import annotations

from collections import Counter

import pytest

from crystal_lsp.metric.disting import evaluate_metric
from crystal_lsp.metric.registry import MetricConfig, PreparedItem, make_metric, metric_names
from crystal_lsp.metric.sampling import exact_pairs, sample_pairs
from crystal_lsp.text.tokens import tokenize

# one large class and five small ones: uniform sampling over pairs is dominated by 'big'
CLASSES = ["big"] * 60 + [c for c in "abcde" for _ in range(15)]
INDICES = list(range(len(CLASSES)))


def test_class_balanced_intra_pairs_choose_classes_uniformly() -> None:
    sampled = sample_pairs(CLASSES, INDICES, 300, seed=3)
    per_class = Counter(CLASSES[h] for h, _ in sampled.intra)
    # 'big' holds 1770 of the 2295 unordered intra pairs, but is one class in six
    assert per_class["big"] / len(sampled.intra) == pytest.approx(1 / 6, abs=0.06)
    uniform = sample_pairs(CLASSES, INDICES, 300, seed=3, sampling="uniform")
    assert Counter(CLASSES[h] for h, _ in uniform.intra)["big"] / 300 > 0.7


def test_class_balanced_inter_pairs_choose_two_classes_uniformly() -> None:
    sampled = sample_pairs(CLASSES, INDICES, 600, seed=4)
    touching_big = sum("big" in (CLASSES[h], CLASSES[r[0]]) for h, r in sampled.inter)
    # two distinct classes of six: 'big' is one of them with probability 1/3
    assert touching_big / len(sampled.inter) == pytest.approx(1 / 3, abs=0.06)


def test_class_balanced_pairs_are_distinct_unordered_and_capped() -> None:
    sampled = sample_pairs(CLASSES, INDICES, 10_000, seed=5)
    for pairs, same in ((sampled.intra, True), (sampled.inter, False)):
        keys = [frozenset((h, r[0])) for h, r in pairs]
        assert len(keys) == len(set(keys))
        assert all((CLASSES[h] == CLASSES[r[0]]) == same for h, r in pairs)
    # every distinct unordered intra pair, and no more
    assert len(sampled.intra) == 1770 + 5 * 105
    assert sampled == sample_pairs(CLASSES, INDICES, 10_000, seed=5)


@pytest.mark.skipif("ruby" not in metric_names(), reason="RUBY is not available")
def test_ruby_level_shares_and_cpu_time_are_reported() -> None:
    codes = ["x = a + b", "y = a + b", "print(x)", "print(y)"]
    prepared = [PreparedItem(c, tokenize(c, "generic")) for c in codes]
    metric = make_metric("ruby", MetricConfig(language="generic"))
    metric.prepare(prepared)
    pairs = exact_pairs(["s", "s", "p", "p"], [0, 1, 2, 3])
    report = evaluate_metric(metric, pairs, None)
    levels = report.extra["levels"]
    assert sum(levels.values()) == pytest.approx(1.0)
    assert report.extra["level_pairs"] == len(pairs.intra) + len(pairs.inter)
    assert set(levels) <= {"grs", "trs", "sts"}
    assert report.cpu_seconds >= 0.0 and "cpu_seconds" in report.to_json()
    bleu = make_metric("bleu", MetricConfig())
    bleu.prepare(prepared)
    assert "levels" not in evaluate_metric(bleu, pairs, None).extra
