"""The engine versions of scan and disting, run on the local engine (no Dask needed).

They take the code paths the Dask engine takes (chunks, shipped tokens, remote metrics), so a
difference from the usual functions shows up here even where Dask is not installed.
"""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

import pytest
from scan_samples import ORIGINAL, UNRELATED, module, near_copy, renamed, write_tree

from crystal_lsp.clones.files import list_files
from crystal_lsp.clones.index import languagesets
from crystal_lsp.clones.scan import run_scan
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.distributed import disting as disting_module
from crystal_lsp.distributed import scan as scan_module
from crystal_lsp.distributed.disting import EngineSteps, RemoteMetric
from crystal_lsp.distributed.engine import LocalEngine
from crystal_lsp.distributed.scan import run_scan_on_engine
from crystal_lsp.metric.datasets import load_items
from crystal_lsp.metric.disting import evaluate_metric
from crystal_lsp.metric.registry import MetricConfig, PreparedItem, make_metric
from crystal_lsp.metric.sampling import sample_pairs
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import build_sset
from crystal_lsp.text.parallel import tokenize_many

DATASET = Path(__file__).resolve().parents[2] / "data" / "tiny_dataset.jsonl"


def test_scan_on_the_local_engine_equals_run_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(Path(sysconfig.get_paths()["stdlib"]) / "json", repo / "vendored_json", ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    write_tree(
        repo,
        {
            "orders.py": module(ORIGINAL, UNRELATED[0]),
            "billing/invoices.py": module(UNRELATED[1], renamed()),
            "reports/summary.py": module(near_copy(), UNRELATED[2]),
        },
    )
    monkeypatch.setattr(languagesets, "SMALL_CORPUS_TOKENS", 2_000)
    monkeypatch.setattr(scan_module, "CHUNK_PAIRS", 3)
    monkeypatch.setattr(scan_module, "CHUNK_JOBS", 2)
    monkeypatch.setattr(scan_module, "PART_TOKENS", 3_000)
    config = ScanConfig(k=80, threshold=0.5)
    paths = list_files(str(repo), config)
    results = []
    for name, scan in (("plain", run_scan), ("engine", run_scan_on_engine)):
        monkeypatch.setenv("CRYSTAL_LSP_CACHE_DIR", str(tmp_path / f"cache-{name}"))
        kwargs = {"engine": "local", "jobs": 2} if name == "engine" else {"jobs": 1}
        doc = scan(str(repo), paths, config, use_cache=False, **kwargs).to_json()
        doc.pop("timings")
        results.append(doc)
    assert results[0]["findings"] and results[0]["summary"]["scored"] > 0
    assert results[0] == results[1]


def test_disting_steps_on_the_local_engine_equal_the_usual_functions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(disting_module, "CHUNK_PAIRS", 11)
    monkeypatch.setattr(disting_module, "CHUNK_ITEMS", 3)
    items = load_items(DATASET)
    jobs = [(it.id, it.code, "python") for it in items]
    steps = EngineSteps(LocalEngine(2))
    tokens = steps.tokenize_many(jobs)
    assert tokens == tokenize_many(jobs, processes=1)
    train = [t.texts for t, it in zip(tokens, items) if it.split == "train"]
    sset = steps.build_sset(train, 30, 4, language="python", tokenizer="t")
    assert sset.to_json() == build_sset(train, 30, 4, language="python", tokenizer="t").to_json()
    classes = [it.cls for it in items]
    test_idx = [i for i, it in enumerate(items) if it.split == "test"]
    train_idx = [i for i, it in enumerate(items) if it.split == "train"]
    test = sample_pairs(classes, test_idx, 60, 0)
    train_pairs = sample_pairs(classes, train_idx, 60, 1)
    prepared = [PreparedItem(it.code, t) for it, t in zip(items, tokens)]
    for name in ("bleu", "crystalbleu", "crystalbleu-if"):
        for aggregate in ("mean", "corpus"):
            config = MetricConfig(sset=sset, smoothing=Smoothing.parse("m3"), language="python")
            local = make_metric(name, config)
            local.prepare(prepared)
            expected = evaluate_metric(local, test, train_pairs, aggregate)
            remote = steps.make_metric(name, config)
            assert isinstance(remote, RemoteMetric)
            remote.prepare(prepared)
            got = steps.evaluate_metric(remote, test, train_pairs, aggregate)
            expected.seconds = got.seconds = 0.0
            expected.cpu_seconds = got.cpu_seconds = 0.0
            assert got == expected
