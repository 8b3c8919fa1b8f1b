"""RUBY and its levels through the metric registry, ``crystal-lsp score`` and ``disting``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crystal_lsp.cli.main import main
from crystal_lsp.metric.registry import MetricConfig, PreparedItem, make_metric, metric_names
from crystal_lsp.text.tokens import tokenize

pytest.importorskip("tree_sitter_python")

DATASET = Path(__file__).resolve().parents[2] / "data" / "tiny_dataset.jsonl"
CODES = [
    "a = 1\nb = a + 1\n",  # 0: hypothesis
    "a = 1\nb = 2\n",  # 1
    "a = 1\nb = a + 1\n",  # 2: identical to 0
    "a = (1 +\n",  # 3: broken
]


def prepared() -> list[PreparedItem | None]:
    return [PreparedItem(code, tokenize(code, "python")) for code in CODES]


def test_registered() -> None:
    assert {"sts", "trs", "grs", "ruby"} <= set(metric_names())


@pytest.mark.parametrize("name", ["sts", "trs", "grs", "ruby"])
def test_signature_format(name: str) -> None:
    metric = make_metric(name, MetricConfig(language="python"))
    signature = metric.signature
    assert signature.startswith(f"{name}|") and "lang:python" in signature
    assert signature.endswith("|v:0.1.0")
    if name != "sts":
        assert "parser:ts-" in signature
    if name == "ruby":
        assert "level:auto" in signature and "ted:zs" in signature


def test_ruby_metric_scores_and_reports_the_level() -> None:
    metric = make_metric("ruby", MetricConfig(language="python"))
    metric.prepare(prepared())
    assert metric.score(0, [1]) == pytest.approx(10 / 11)
    assert metric.last_details == {"level": "grs"}  # type: ignore[attr-defined]
    # Several references: the best one wins and is named.
    assert metric.score(0, [1, 2]) == 1.0
    assert metric.last_details == {"level": "grs", "reference": 2}  # type: ignore[attr-defined]
    score = metric.score(3, [1])
    details = metric.last_details  # type: ignore[attr-defined]
    assert details["level"] == "sts" and "syntax error" in details["fallback"]
    assert metric.corpus([(0, [1]), (0, [2])]) == pytest.approx((10 / 11 + 1) / 2)
    assert 0 <= score <= 1


def test_level_metrics_fall_back_to_sts_on_broken_code() -> None:
    items = prepared()
    for name in ("trs", "grs"):
        metric = make_metric(name, MetricConfig(language="python"))
        metric.prepare(items)
        metric.score(0, [1])
        assert metric.last_details == {"level": name}  # type: ignore[attr-defined]
        sts_metric = make_metric("sts", MetricConfig(language="python"))
        sts_metric.prepare(items)
        assert metric.score(3, [0]) == sts_metric.score(3, [0])
        assert metric.last_details["level"] == "sts"  # type: ignore[attr-defined]


def test_unused_items_are_skipped() -> None:
    metric = make_metric("ruby", MetricConfig(language="python"))
    items = prepared()
    items[1] = None
    metric.prepare(items)
    assert metric.score(0, [2]) == 1.0


def test_score_cli_example(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["score", "--example", "--metric", "ruby,sts,trs,grs", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["language"] == "java"
    for name in ("ruby", "sts", "trs", "grs"):
        assert 0 < out[name] < 1
        assert out["signatures"][name].startswith(name + "|")
    assert out["details"]["ruby"]["level"] == "grs"
    assert out["ruby"] == out["grs"]


def test_disting_cli(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "disting",
        str(DATASET),
        "--n",
        "20",
        "--metric",
        "sts,trs,grs,ruby",
        "--format",
        "json",
    ]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    names = [m["metric"] for m in doc["metrics"]]
    assert names == ["sts", "trs", "grs", "ruby"]
    for report in doc["metrics"]:
        assert 0 <= report["auc"] <= 1
        assert report["inter_mean"] > 0
