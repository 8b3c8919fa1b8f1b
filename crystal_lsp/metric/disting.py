"""Distinguishability, ROC AUC and the threshold classifier (CrystalBLEU paper, §3.2 and §4.3).

Which pairs are scored is :mod:`crystal_lsp.metric.sampling`'s (by default, the pairs the
reference evaluation scripts draw, oriented as they score them).

Distinguishability is ``mean(intra) / mean(inter)`` of sentence-level scores (the brief's and the
shared datasets' definition), or with ``aggregate="corpus"`` the ratio of the metric applied to the
whole intra set and the whole inter set (the paper's ``m(Pairs_intra) / m(Pairs_inter)``; for
BLEU-family metrics that is corpus-level BLEU). The ratio inflates when inter-class scores collapse
to the smoothing floor, so ROC AUC and the classifier's accuracy are reported next to it; it is
undefined (None) when the inter-class value is 0.

The threshold classifier is the paper's: the threshold is the midpoint of the mean intra-class and
the mean inter-class score on *training* pairs (drawn from the ``train`` split); a test pair is
predicted equivalent when its score is above the threshold.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.registry import PairMetric
from crystal_lsp.metric.sampling import Pair, PairSets

AGGREGATES = ("mean", "corpus")
EXACT_PAIR_LIMIT = 20_000_000


def roc_auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """Area under the ROC curve: P(pos > neg) + P(pos == neg) / 2 (Mann-Whitney U)."""
    if not positives or not negatives:
        raise CrystalError("ROC AUC needs both positive and negative scores")
    labelled = sorted([(s, 1) for s in positives] + [(s, 0) for s in negatives])
    rank_sum = 0.0
    i = 0
    while i < len(labelled):
        j = i
        while j + 1 < len(labelled) and labelled[j + 1][0] == labelled[i][0]:
            j += 1
        average_rank = (i + j) / 2 + 1
        rank_sum += average_rank * sum(label for _, label in labelled[i : j + 1])
        i = j + 1
    n_pos, n_neg = len(positives), len(negatives)
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


@dataclass(frozen=True)
class Classification:
    """The threshold classifier's threshold and its test-set quality."""

    threshold: float
    accuracy: float
    precision: float
    recall: float
    f1: float


def threshold_classifier(
    train_pos: Sequence[float],
    train_neg: Sequence[float],
    test_pos: Sequence[float],
    test_neg: Sequence[float],
) -> Classification:
    """The paper's classifier: threshold at the midpoint of the training means."""
    threshold = (_mean(train_pos) + _mean(train_neg)) / 2
    tp = sum(s > threshold for s in test_pos)
    fn = len(test_pos) - tp
    fp = sum(s > threshold for s in test_neg)
    tn = len(test_neg) - fp
    total = tp + fn + fp + tn
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0  # the reference's formula, to the last bit
    return Classification(threshold, (tp + tn) / total if total else 0.0, precision, recall, f1)


def _mean(values: Sequence[float]) -> float:
    """``statistics.fmean`` (the reference's): a correctly rounded sum, divided."""
    if not values:
        raise CrystalError("no scores to average")
    return math.fsum(values) / len(values)


@dataclass
class MetricReport:
    """Everything measured for one metric."""

    metric: str
    signature: str
    intra_mean: float
    inter_mean: float
    distinguishability: float | None
    """``intra_mean / inter_mean``; None when ``inter_mean`` is 0 (undefined, never inf)."""
    auc: float
    classifier: Classification | None
    test_pairs: tuple[int, int]
    train_pairs: tuple[int, int]
    seconds: float
    cpu_seconds: float = 0.0
    """CPU time of this process spent scoring (the engine's workers not included)."""
    extra: dict[str, Any] = field(default_factory=dict)
    pair_scores: dict[str, list[float]] = field(default_factory=dict, repr=False)
    """Each pair's score, in pair order, by ``test_intra``, ``test_inter``, ``train_intra``,
    ``train_inter`` (not in the JSON summary)."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (without the pair scores)."""
        out = asdict(self)
        del out["pair_scores"]
        out["test_pairs"] = {"intra": self.test_pairs[0], "inter": self.test_pairs[1]}
        out["train_pairs"] = {"intra": self.train_pairs[0], "inter": self.train_pairs[1]}
        return out


def evaluate_metric(
    metric: PairMetric,
    test: PairSets,
    train: PairSets | None,
    aggregate: str = "mean",
    progress: Callable[[int], None] | None = None,
) -> MetricReport:
    """Score all pairs with one (prepared) metric and summarise."""
    if aggregate not in AGGREGATES:
        raise CrystalError(f"unknown aggregate {aggregate!r} (use mean or corpus)")
    started, cpu_started = time.perf_counter(), time.process_time()
    levels: Counter[str] = Counter()

    def run(pairs: list[Pair]) -> list[float]:
        out = []
        for index, (hyp, refs) in enumerate(pairs, 1):
            out.append(metric.score(hyp, refs))
            details = getattr(metric, "last_details", None)
            if isinstance(details, dict) and "level" in details:
                levels[str(details["level"])] += 1
            if progress is not None and index % 256 == 0:
                progress(256)
        if progress is not None:
            progress(len(pairs) % 256)
        return out

    intra = run(test.intra)
    inter = run(test.inter)
    if aggregate == "corpus":
        intra_value = metric.corpus(test.intra)
        inter_value = metric.corpus(test.inter)
    else:
        intra_value, inter_value = _mean(intra), _mean(inter)
    classifier = None
    train_sizes = (0, 0)
    scores = {"test_intra": intra, "test_inter": inter}
    if train is not None and train.intra and train.inter:
        train_intra, train_inter = run(train.intra), run(train.inter)
        classifier = threshold_classifier(train_intra, train_inter, intra, inter)
        train_sizes = (len(train.intra), len(train.inter))
        scores.update(train_intra=train_intra, train_inter=train_inter)
    return MetricReport(
        metric=metric.name,
        signature=metric.signature,
        intra_mean=intra_value,
        inter_mean=inter_value,
        distinguishability=intra_value / inter_value if inter_value > 0 else None,
        auc=roc_auc(intra, inter),
        classifier=classifier,
        test_pairs=(len(test.intra), len(test.inter)),
        train_pairs=train_sizes,
        seconds=time.perf_counter() - started,
        cpu_seconds=time.process_time() - cpu_started,
        extra=level_shares(levels),
        pair_scores=scores,
    )


def level_shares(levels: Counter[str]) -> dict[str, Any]:
    """The share of scored pairs each RUBY level gave (empty for metrics without levels)."""
    total = sum(levels.values())
    if not total:
        return {}
    return {"levels": {k: levels[k] / total for k in sorted(levels)}, "level_pairs": total}
