"""Distinguishability, ROC AUC and the threshold classifier (CrystalBLEU paper, §3.2 and §4.3).

Pairs are ``(hypothesis, references)`` of item indices.

* ``pairs`` protocol (default): one reference per pair. *Exact* uses every ordered intra-class
  pair and every ordered inter-class pair; *sampled* draws ``n`` of each with a seeded RNG,
  class-balanced by default (the reference protocol of the shared datasets: classes chosen
  uniformly, then programs; see :func:`sample_pairs`), or uniformly over all pairs.
* ``classwise`` protocol: Definition 3.1 literally. Intra: each item against all other items of
  its class as references; inter: each item against every other class as references (sampled:
  ``n`` of each).

Distinguishability is ``mean(intra) / mean(inter)`` of sentence-level scores (the brief's and the
shared datasets' definition), or with ``aggregate="corpus"`` the ratio of the metric applied to the
whole intra set and the whole inter set (the paper's ``m(Pairs_intra) / m(Pairs_inter)``; for
BLEU-family metrics that is corpus-level BLEU). The ratio inflates when inter-class scores collapse
to the smoothing floor, so ROC AUC and the classifier's accuracy are reported next to it.

The threshold classifier is the paper's: the threshold is the midpoint of the mean intra-class and
the mean inter-class score on *training* pairs (drawn from the ``train`` split); a test pair is
predicted equivalent when its score is above the threshold.
"""

from __future__ import annotations

import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.registry import PairMetric

Pair = tuple[int, tuple[int, ...]]
PROTOCOLS = ("pairs", "classwise")
SAMPLINGS = ("class", "uniform")
AGGREGATES = ("mean", "corpus")
EXACT_PAIR_LIMIT = 20_000_000


@dataclass(frozen=True)
class PairSets:
    """Intra-class (equivalent) and inter-class (non-equivalent) pairs."""

    intra: list[Pair]
    inter: list[Pair]


def _by_class(classes: Sequence[str], indices: Sequence[int]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = defaultdict(list)
    for i in indices:
        groups[classes[i]].append(i)
    return dict(sorted(groups.items()))


def count_exact_pairs(classes: Sequence[str], indices: Sequence[int]) -> tuple[int, int]:
    """How many ordered intra- and inter-class pairs ``exact`` would score."""
    sizes = [len(m) for m in _by_class(classes, indices).values()]
    total = len(indices)
    intra = sum(s * (s - 1) for s in sizes)
    return intra, total * (total - 1) - intra


def exact_pairs(
    classes: Sequence[str], indices: Sequence[int], protocol: str = "pairs"
) -> PairSets:
    """Every pair of the protocol."""
    groups = _by_class(classes, indices)
    intra: list[Pair] = []
    inter: list[Pair] = []
    if protocol == "classwise":
        for cls, members in groups.items():
            for a in members:
                others = tuple(m for m in members if m != a)
                if others:
                    intra.append((a, others))
                for other_cls, other in groups.items():
                    if other_cls != cls:
                        inter.append((a, tuple(other)))
        return PairSets(intra, inter)
    for members in groups.values():
        for a in members:
            intra.extend((a, (b,)) for b in members if b != a)
    ordered = list(indices)
    for a in ordered:
        ca = classes[a]
        inter.extend((a, (b,)) for b in ordered if classes[b] != ca)
    return PairSets(intra, inter)


def sample_pairs(
    classes: Sequence[str],
    indices: Sequence[int],
    n: int,
    seed: int,
    protocol: str = "pairs",
    sampling: str = "class",
) -> PairSets:
    """``n`` intra- and ``n`` inter-class pairs drawn with a seeded RNG.

    ``sampling="class"`` (the reference protocol of the shared datasets): an intra-class pair
    picks a class uniformly among those with two items or more, then two distinct items of it;
    an inter-class pair picks two distinct classes uniformly, then one item of each; pairs are
    distinct and unordered (fewer than ``n`` when fewer exist). ``"uniform"``: uniformly over all
    intra-class pairs (large classes dominate) and over all inter-class pairs.
    """
    if sampling not in SAMPLINGS:
        raise CrystalError(f"unknown pair sampling {sampling!r} (use class or uniform)")
    rng = random.Random(seed)
    groups = _by_class(classes, indices)
    multi = [(cls, m) for cls, m in groups.items() if len(m) >= 2]
    if not multi:
        raise CrystalError("no class has two items: there are no intra-class pairs")
    if len(groups) < 2:
        raise CrystalError("all items are in one class: there are no inter-class pairs")
    if protocol == "classwise":
        return _classwise_sample(rng, groups, multi, classes, list(indices), n)
    if sampling == "class":
        return _class_balanced(rng, groups, multi, n)
    pool = list(indices)
    intra: list[Pair] = []
    inter: list[Pair] = []
    weights = [len(m) * (len(m) - 1) for _, m in multi]
    for _ in range(n):
        _, members = rng.choices(multi, weights=weights)[0]
        a, b = rng.sample(members, 2)
        intra.append((a, (b,)))
    while len(inter) < n:
        a, b = rng.choice(pool), rng.choice(pool)
        if classes[a] != classes[b]:
            inter.append((a, (b,)))
    return PairSets(intra, inter)


def _class_balanced(
    rng: random.Random,
    groups: dict[str, list[int]],
    multi: list[tuple[str, list[int]]],
    n: int,
) -> PairSets:
    """Class-balanced, distinct, unordered pairs (see :func:`sample_pairs`)."""
    intra_possible = sum(len(m) * (len(m) - 1) // 2 for _, m in multi)
    sizes = [len(m) for m in groups.values()]
    inter_possible = (sum(sizes) ** 2 - sum(x * x for x in sizes)) // 2

    def draw(limit: int, one: Callable[[], tuple[int, int]]) -> list[Pair]:
        seen: set[tuple[int, int]] = set()
        out: list[Pair] = []
        while len(out) < min(n, limit):
            a, b = one()
            key = (a, b) if a < b else (b, a)
            if key not in seen:
                seen.add(key)
                out.append((a, (b,)))
        return out

    def intra_pair() -> tuple[int, int]:
        _, members = rng.choice(multi)
        a, b = rng.sample(members, 2)
        return a, b

    names = list(groups)

    def inter_pair() -> tuple[int, int]:
        x, y = rng.sample(names, 2)
        return rng.choice(groups[x]), rng.choice(groups[y])

    return PairSets(draw(intra_possible, intra_pair), draw(inter_possible, inter_pair))


def _classwise_sample(
    rng: random.Random,
    groups: dict[str, list[int]],
    multi: list[tuple[str, list[int]]],
    classes: Sequence[str],
    pool: list[int],
    n: int,
) -> PairSets:
    intra: list[Pair] = []
    inter: list[Pair] = []
    weights = [len(m) for _, m in multi]
    for _ in range(n):
        _, members = rng.choices(multi, weights=weights)[0]
        a = rng.choice(members)
        intra.append((a, tuple(m for m in members if m != a)))
    names = list(groups)
    for _ in range(n):
        a = rng.choice(pool)
        other = rng.choice([c for c in names if c != classes[a]])
        inter.append((a, tuple(groups[other])))
    return PairSets(intra, inter)


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
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Classification(threshold, (tp + tn) / total if total else 0.0, precision, recall, f1)


def _mean(values: Sequence[float]) -> float:
    if not values:
        raise CrystalError("no scores to average")
    return sum(values) / len(values)


@dataclass
class MetricReport:
    """Everything measured for one metric."""

    metric: str
    signature: str
    intra_mean: float
    inter_mean: float
    distinguishability: float
    auc: float
    classifier: Classification | None
    test_pairs: tuple[int, int]
    train_pairs: tuple[int, int]
    seconds: float
    cpu_seconds: float = 0.0
    """CPU time of this process spent scoring (the engine's workers not included)."""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out = asdict(self)
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
    if train is not None and train.intra and train.inter:
        train_intra, train_inter = run(train.intra), run(train.inter)
        classifier = threshold_classifier(train_intra, train_inter, intra, inter)
        train_sizes = (len(train.intra), len(train.inter))
    return MetricReport(
        metric=metric.name,
        signature=metric.signature,
        intra_mean=intra_value,
        inter_mean=inter_value,
        distinguishability=intra_value / inter_value if inter_value > 0 else float("inf"),
        auc=roc_auc(intra, inter),
        classifier=classifier,
        test_pairs=(len(test.intra), len(test.inter)),
        train_pairs=train_sizes,
        seconds=time.perf_counter() - started,
        cpu_seconds=time.process_time() - cpu_started,
        extra=level_shares(levels),
    )


def level_shares(levels: Counter[str]) -> dict[str, Any]:
    """The share of scored pairs each RUBY level gave (empty for metrics without levels)."""
    total = sum(levels.values())
    if not total:
        return {}
    return {"levels": {k: levels[k] / total for k in sorted(levels)}, "level_pairs": total}
