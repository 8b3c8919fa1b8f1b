"""Distinguishability: pair sampling, ROC AUC, the threshold classifier and evaluate_metric."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crystal_lsp import CrystalError
from crystal_lsp.metric.datasets import Item, assign_splits, first_duplicate, iter_items, load_items
from crystal_lsp.metric.disting import (
    MetricReport,
    evaluate_metric,
    roc_auc,
    threshold_classifier,
)
from crystal_lsp.metric.registry import (
    MetricConfig,
    PreparedItem,
    make_metric,
    metric_names,
    parse_metric_list,
)
from crystal_lsp.metric.sampling import PairSets, count_exact_pairs, exact_pairs, sample_pairs
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import build_sset
from crystal_lsp.text.tokens import tokenize

DATASET = Path(__file__).resolve().parents[2] / "data" / "tiny_dataset.jsonl"


def brute_force_auc(pos: Sequence[float], neg: Sequence[float]) -> float:
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


score = st.one_of(st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.floats(0, 1))


@settings(max_examples=500)
@given(pos=st.lists(score, min_size=1, max_size=30), neg=st.lists(score, min_size=1, max_size=30))
def test_roc_auc_equals_pairwise_count(pos: list[float], neg: list[float]) -> None:
    assert roc_auc(pos, neg) == pytest.approx(brute_force_auc(pos, neg), abs=1e-12)


@pytest.mark.parametrize(
    ("pos", "neg", "auc"),
    [
        pytest.param([0.9, 0.8], [0.1, 0.2], 1.0, id="separated"),
        pytest.param([0.1], [0.9], 0.0, id="inverted"),
        pytest.param([0.5, 0.5], [0.5], 0.5, id="all-tied"),
        pytest.param([0.3, 0.7], [0.5], 0.5, id="half"),
        pytest.param([0.5, 0.9], [0.5, 0.1], 0.875, id="one-tie"),
    ],
)
def test_roc_auc_table(pos: list[float], neg: list[float], auc: float) -> None:
    assert roc_auc(pos, neg) == auc


def test_roc_auc_needs_both_classes() -> None:
    with pytest.raises(CrystalError):
        roc_auc([], [0.1])
    with pytest.raises(CrystalError):
        roc_auc([0.1], [])


def test_threshold_classifier_hand_computed() -> None:
    # Threshold = (mean(0.75, 0.625) + mean(0.25, 0.0)) / 2 = (0.6875 + 0.125) / 2 = 0.40625
    # (binary fractions: no rounding).
    c = threshold_classifier([0.75, 0.625], [0.25, 0.0], [0.875, 0.5, 0.25], [0.125, 0.5, 0.40625])
    assert c.threshold == 0.40625
    # TP 2 (0.875, 0.5), FN 1 (0.25), FP 1 (0.5; 0.40625 is not above), TN 2.
    assert c.accuracy == pytest.approx(4 / 6)
    assert c.precision == pytest.approx(2 / 3)
    assert c.recall == pytest.approx(2 / 3)
    assert c.f1 == pytest.approx(2 / 3)


def test_threshold_classifier_without_positive_predictions() -> None:
    c = threshold_classifier([1.0], [0.0], [0.1], [0.2])
    assert (c.threshold, c.accuracy, c.precision, c.recall, c.f1) == (0.5, 0.5, 0.0, 0.0, 0.0)
    with pytest.raises(CrystalError, match="no scores"):
        threshold_classifier([], [0.0], [0.1], [0.2])


CLASSES = ["a", "a", "a", "b", "b", "c", "c", "c", "c", "d"]
INDICES = list(range(len(CLASSES)))


def test_exact_pairs_counts_match_count_exact_pairs() -> None:
    pairs = exact_pairs(CLASSES, INDICES)
    intra, inter = count_exact_pairs(CLASSES, INDICES)
    assert (len(pairs.intra), len(pairs.inter)) == (intra, inter) == (3 * 2 + 2 + 4 * 3, 90 - 20)
    assert len(set(pairs.intra)) == intra and len(set(pairs.inter)) == inter
    for hyp, (ref,) in pairs.intra:
        assert hyp != ref and CLASSES[hyp] == CLASSES[ref]
    for hyp, (ref,) in pairs.inter:
        assert CLASSES[hyp] != CLASSES[ref]


def test_exact_pairs_on_a_subset_of_indices() -> None:
    subset = [0, 1, 3, 9]
    pairs = exact_pairs(CLASSES, subset)
    assert count_exact_pairs(CLASSES, subset) == (2, 10) == (len(pairs.intra), len(pairs.inter))
    assert {i for p in pairs.intra + pairs.inter for i in (p[0], *p[1])} <= set(subset)


def test_classwise_exact_pairs_shapes() -> None:
    pairs = exact_pairs(CLASSES, INDICES, protocol="classwise")
    # One intra pair per item of a class with >= 2 items, one inter pair per (item, other class).
    assert len(pairs.intra) == 9
    assert len(pairs.inter) == sum(3 for _ in INDICES)
    for hyp, refs in pairs.intra:
        assert hyp not in refs
        assert sorted(refs) == [i for i in INDICES if CLASSES[i] == CLASSES[hyp] and i != hyp]
    for hyp, refs in pairs.inter:
        assert len({CLASSES[r] for r in refs}) == 1
        assert CLASSES[refs[0]] != CLASSES[hyp]
        assert sorted(refs) == [i for i in INDICES if CLASSES[i] == CLASSES[refs[0]]]


@pytest.mark.parametrize(("protocol", "sizes"), [("pairs", (10, 35)), ("classwise", (200, 200))])
def test_sample_pairs_is_deterministic_and_well_formed(
    protocol: str, sizes: tuple[int, int]
) -> None:
    a = sample_pairs(CLASSES, INDICES, 200, seed=7, protocol=protocol, sampling="uniform")
    b = sample_pairs(CLASSES, INDICES, 200, seed=7, protocol=protocol, sampling="uniform")
    c = sample_pairs(CLASSES, INDICES, 200, seed=8, protocol=protocol, sampling="uniform")
    assert a == b and a != c
    # the pairs protocol draws distinct unordered pairs: all 10 intra and 35 inter ones exist
    assert (len(a.intra), len(a.inter)) == sizes
    for hyp, refs in a.intra:
        assert refs and hyp not in refs
        assert all(CLASSES[r] == CLASSES[hyp] for r in refs)
    for hyp, refs in a.inter:
        assert refs and hyp not in refs
        assert all(CLASSES[r] != CLASSES[hyp] for r in refs)


def test_uniform_intra_pairs_follow_the_share_of_each_class() -> None:
    # 'c' has 6 of the 10 unordered intra pairs, 'a' 3, 'b' 1; 'd' has none: the first pair
    # drawn, over many seeds, is from 'c' six times in ten
    first = Counter(
        CLASSES[sample_pairs(CLASSES, INDICES, 1, seed=s, sampling="uniform").intra[0][0]]
        for s in range(3000)
    )
    assert set(first) == {"a", "b", "c"}
    assert first["c"] / 3000 == pytest.approx(6 / 10, abs=0.04)
    assert first["b"] / 3000 == pytest.approx(1 / 10, abs=0.03)


def test_sample_pairs_errors() -> None:
    with pytest.raises(CrystalError, match="has two items"):
        sample_pairs(["a", "b", "c"], [0, 1, 2], 5, 0)
    with pytest.raises(CrystalError, match="one class"):
        sample_pairs(["a", "a"], [0, 1], 5, 0)


# --- datasets and evaluate_metric on the tiny fixture ---------------------------------------


def test_tiny_dataset_fixture() -> None:
    items = load_items(DATASET)
    assert len(items) == 24
    assert Counter(it.cls for it in items) == dict.fromkeys(
        ["sum", "reverse", "factorial", "prime"], 6
    )
    assert Counter(it.split for it in items) == {"train": 8, "test": 16}
    assert {it.lang for it in items} == {"python"}
    assert DATASET.stat().st_size <= 30_000


def test_assign_splits_is_stratified_and_seeded() -> None:
    items = [Item(str(i), "ab"[i % 2], "python", "x") for i in range(20)]
    a = assign_splits(items, seed=3)
    assert a == assign_splits(items, seed=3)
    assert Counter((it.cls, it.split) for it in a) == {
        ("a", "train"): 3, ("a", "test"): 7, ("b", "train"): 3, ("b", "test"): 7,
    }  # fmt: skip


def test_load_items_assigns_splits_when_missing(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(
        "".join(f'{{"id": {i}, "class": "{"xy"[i % 2]}", "code": "x = {i}"}}\n' for i in range(10))
        + "\n",
        encoding="utf-8",
    )
    items = load_items(path)
    assert {it.split for it in items} == {"train", "test"}
    assert items[3] == Item("3", "y", "", "x = 3", items[3].split)


def test_gzipped_dataset(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "d.jsonl.gz"
    path.write_bytes(gzip.compress(DATASET.read_bytes()))
    assert list(iter_items(path)) == list(iter_items(DATASET))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(b'{"id": 1, "class": "a", "code": "x"}\nnot json\n', ":2: not a dataset line", id="bad-json"),
        pytest.param(b'{"id": 1, "code": "x"}\n', ":1: not a dataset line", id="missing-class"),
        pytest.param(b"[1, 2]\n", ":1: not a dataset line", id="not-an-object"),
        pytest.param(b"\n\n", "the dataset is empty", id="empty"),
        pytest.param(b'{"id": 1, "class": "a", "code": "\xff"}\n', "unreadable dataset", id="bad-utf8"),
    ],
)  # fmt: skip
def test_bad_datasets(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(content)
    with pytest.raises(CrystalError, match=message):
        load_items(path)


def test_missing_dataset(tmp_path: Path) -> None:
    with pytest.raises(CrystalError, match="cannot read dataset"):
        load_items(tmp_path / "nope.jsonl")


def _prepared() -> tuple[list[Item], list[PreparedItem]]:
    items = load_items(DATASET)
    return items, [PreparedItem(it.code, tokenize(it.code, "python")) for it in items]


@pytest.mark.parametrize("aggregate", ["mean", "corpus"])
@pytest.mark.parametrize("name", ["bleu", "crystalbleu", "crystalbleu-if"])
def test_evaluate_metric_on_tiny_dataset(name: str, aggregate: str) -> None:
    items, prepared = _prepared()
    classes = [it.cls for it in items]
    train_idx = [i for i, it in enumerate(items) if it.split == "train"]
    test_idx = [i for i, it in enumerate(items) if it.split == "test"]
    sset = build_sset([prepared[i].tokens.texts for i in train_idx], 30)
    config = MetricConfig(sset=sset, smoothing=Smoothing(), language="python")
    metric = make_metric(name, config)
    metric.prepare(prepared)
    test = exact_pairs(classes, test_idx)
    train = exact_pairs(classes, train_idx)
    progress: list[int] = []
    report = evaluate_metric(metric, test, train, aggregate, progress.append)
    assert isinstance(report, MetricReport)
    assert report.metric == name and report.signature.startswith(name + "|")
    assert (
        report.test_pairs
        == (len(test.intra), len(test.inter))
        == count_exact_pairs(classes, test_idx)
    )
    assert report.train_pairs == (len(train.intra), len(train.inter))
    assert sum(progress) == sum(report.test_pairs) + sum(report.train_pairs)
    intra = [metric.score(h, r) for h, r in test.intra]
    inter = [metric.score(h, r) for h, r in test.inter]
    if aggregate == "mean":
        assert report.intra_mean == pytest.approx(sum(intra) / len(intra))
        assert report.inter_mean == pytest.approx(sum(inter) / len(inter))
    else:
        assert report.intra_mean == metric.corpus(test.intra)
    assert report.distinguishability == pytest.approx(report.intra_mean / report.inter_mean)
    assert report.auc == roc_auc(intra, inter)
    assert report.classifier is not None and 0 <= report.classifier.accuracy <= 1
    doc = report.to_json()
    assert doc["test_pairs"] == {"intra": report.test_pairs[0], "inter": report.test_pairs[1]}
    if name == "bleu":
        assert report.intra_mean > report.inter_mean and report.auc > 0.5


def test_evaluate_metric_rejects_unknown_aggregate() -> None:
    metric = make_metric("bleu", MetricConfig())
    with pytest.raises(CrystalError, match="aggregate"):
        evaluate_metric(metric, PairSets([], []), None, "median")


def test_metric_registry() -> None:
    assert {"bleu", "crystalbleu", "crystalbleu-if"} <= set(metric_names())
    assert parse_metric_list(" BLEU, crystalbleu ,") == ["bleu", "crystalbleu"]
    with pytest.raises(CrystalError, match="unknown metric"):
        parse_metric_list("bleu,meteor")
    with pytest.raises(CrystalError, match="no metric"):
        parse_metric_list(" , ")
    with pytest.raises(CrystalError, match="needs a trivially shared set"):
        make_metric("crystalbleu", MetricConfig())


def test_duplicate_ids_are_an_error_naming_the_first(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    rows = [{"id": i, "class": "a", "code": "x"} for i in (1, 2, 3, 2, 1)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(CrystalError) as raised:
        load_items(path)
    assert str(raised.value) == f"{path}: duplicate id '2' (items 2 and 4); ids must be unique"
    assert first_duplicate(["a", "b", "c"]) is None
    assert first_duplicate(["a", "b", "b", "a"]) == ("b", 1, 2)


def test_a_zero_inter_class_value_leaves_distinguishability_undefined_not_inf() -> None:
    codes = ["a b c d", "a b c d", "w x y z", "w x y z"]
    prepared = [PreparedItem(c, tokenize(c, "generic")) for c in codes]
    metric = make_metric("bleu", MetricConfig(language="generic"))
    metric.prepare(prepared)
    report = evaluate_metric(metric, exact_pairs(["p", "p", "q", "q"], [0, 1, 2, 3]), None)
    assert (report.intra_mean, report.inter_mean) == (1.0, 0.0)
    assert report.distinguishability is None and report.to_json()["distinguishability"] is None
    assert report.pair_scores["test_inter"] == [0.0] * 8
