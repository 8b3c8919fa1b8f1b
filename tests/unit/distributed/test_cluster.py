"""The Dask engine on a loopback ``distributed.LocalCluster``: the same results as the local engine.

One cluster of two worker processes serves the whole module. ``sset build``, ``scan`` and
``disting`` run twice on the same inputs, ``--engine local`` and ``--scheduler ADDRESS``, and
their outputs must be identical (S sets to the byte, findings, every float of the reports).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import sysconfig
import tarfile
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

if importlib.util.find_spec("distributed") is None and os.environ.get("CI") != "true":
    pytest.skip("dask is not installed (pip install 'crystal-lsp[dask]')", allow_module_level=True)

import distributed
from scan_samples import ORIGINAL, UNRELATED, module, near_copy, renamed, write_tree

from crystal_lsp.cli.main import main
from crystal_lsp.clones.index import languagesets
from crystal_lsp.distributed import client as client_module
from crystal_lsp.distributed import disting as disting_module
from crystal_lsp.distributed import inputs
from crystal_lsp.distributed.build import survey_part
from crystal_lsp.distributed.engine import DaskEngine
from crystal_lsp.distributed.inputs import Part, Selection
from crystal_lsp.distributed.topk import count_token_part
from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.sset import TriviallySharedSet, build_sset

DATA = Path(__file__).resolve().parents[2] / "data"
CORPUS = DATA / "corpus"
DATASET = DATA / "tiny_dataset.jsonl"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=logging.ERROR,
    ) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def client(cluster: Any) -> Iterator[Any]:
    with distributed.Client(cluster) as client:
        yield client


@pytest.fixture
def address(cluster: Any) -> str:
    return str(cluster.scheduler_address)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------------ sset build
def test_sset_build_is_identical(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    address: str,
) -> None:
    archive = tmp_path / "corpus.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(CORPUS, "corpus")
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "blob.py").write_bytes(b"\x00")
    # small parts: several map tasks, every bucket reduced by a tree of merges
    monkeypatch.setattr(inputs, "DEFAULT_PART_BYTES", 400)
    cases = [
        [str(CORPUS), "--lang", "python", "-k", "60"],
        [str(archive), str(tmp_path / "extra"), "--lang", "python", "-k", "500"],
        [str(DATASET), "--split", "train", "-k", "25"],  # no --lang: the languages are surveyed
        [str(CORPUS / "*.py"), "-k", "0", "--max-n", "2"],
    ]
    for case in cases:
        outputs = []
        for engine in (["--engine", "local", "--jobs", "2"], ["--scheduler", address]):
            target = tmp_path / "s.json"
            argv = ["sset", "build", "-o", str(target), *case, "--tie-break", "canonical"]
            code, out, err = run([*argv, *engine], capsys)
            assert code == 0, err
            outputs.append((TriviallySharedSet.load(target).to_json(), out, err))
        assert outputs[0] == outputs[1]


def test_sset_build_errors_are_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], address: str
) -> None:
    argv = ["sset", "build", str(CORPUS), "-o", str(tmp_path / "s.json")]
    local = run([*argv, "--tie-break", "canonical", "--engine", "local"], capsys)
    dask = run([*argv, "--tie-break", "canonical", "--scheduler", address], capsys)
    assert local == dask
    assert local[0] == 2 and "the paths hold several languages" in local[2]
    # the default tie-break (first-seen) needs reading order: named, not silently changed
    code, _, err = run([*argv, "--lang", "python", "--scheduler", address], capsys)
    assert code == 2 and "pass --tie-break canonical" in err
    code, _, err = run([*argv, "--lang", "python", "--tie-break", "first-seen", "--scheduler", address], capsys)  # fmt: skip
    assert code == 2 and "use it with --engine local" in err


def test_exact_top_k_with_ties_at_the_boundary(client: Any) -> None:
    letters = [chr(c) for c in range(ord("a"), ord("a") + 26)]
    docs = [letters[i : i + 2] for i in range(0, 26, 2)] * 2 + [[t] for t in letters]
    for buckets, k, size in ((1, 30, 5), (3, 26, 5), (3, 30, 5), (5, 39, 5), (40, 30, 20)):
        # 40 buckets: more buckets than n-grams of some orders, several empty
        parts = [docs[i : i + size] for i in range(0, len(docs), size)]
        engine = DaskEngine(client, buckets=buckets)
        counted = engine.count(partial(count_token_part, max_n=4), parts, k)
        expected = build_sset(docs, k, tie_break="canonical")
        got = counted.to_sset(k, 4)
        assert list(got.counts.items()) == list(expected.counts.items())
        assert got.meta["curve"] == expected.meta["curve"]
        assert (got.documents, got.tokens) == (expected.documents, expected.tokens)


def test_worker_errors_reach_the_client(client: Any, tmp_path: Path) -> None:
    engine = DaskEngine(client)
    part = Part(inputs.ZIP, str(tmp_path / "gone.zip"), ("a.py",))
    with pytest.raises(CrystalError, match=r"gone\.zip: not a readable zip archive"):
        list(engine.map(partial(survey_part, selection=Selection()), [part]))
    assert list(engine.map(len, [[1], [1, 2], []])) == [1, 2, 0]


def test_version_mismatch_is_reported(address: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_module, "__version__", "0.0.0-other")
    with pytest.raises(CrystalError, match="crystal-lsp versions differ on the Dask workers"):
        with client_module.connect(address):
            pass


# ------------------------------------------------------------------------------ scan
def make_repository(root: Path) -> Path:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    shutil.copytree(stdlib / "json", root / "vendored_json", ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    shutil.copy(stdlib / "json" / "decoder.py", root / "decoder_copy.py")
    write_tree(
        root,
        {
            "orders.py": module(ORIGINAL, UNRELATED[0]),
            "billing/invoices.py": module(UNRELATED[1], renamed()),
            "reports/summary.py": module(near_copy(), UNRELATED[2]),
            "Util.java": "class Util {\n"
            + "".join(
                f"  int f{i}(int a, int b) {{\n    int s = a;\n    for (int j = 0; j < b; j++) {{\n"
                f"      s += j * {i};\n    }}\n    return s + {i};\n  }}\n"
                for i in range(12)
            )
            + "}\n",
        },
    )
    return root


def test_scan_findings_are_identical(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    address: str,
) -> None:
    repo = make_repository(tmp_path / "repo")
    # languages this small get their own S sets (counted on the engine), not the built-in ones
    monkeypatch.setattr(languagesets, "SMALL_CORPUS_TOKENS", 2_000)
    docs = []
    for name, engine in (("local", ["--engine", "local", "--jobs", "2"]), ("dask", ["--scheduler", address])):  # fmt: skip
        monkeypatch.setenv("CRYSTAL_LSP_CACHE_DIR", str(tmp_path / f"cache-{name}"))
        argv = ["scan", str(repo), "--format", "json", "-k", "80", "--threshold", "0.5", *engine]
        code, out, err = run(argv, capsys)
        assert code == 1, err
        doc = json.loads(out)
        doc.pop("timings")
        docs.append(doc)
    local, dask = docs
    assert local["findings"] and local["summary"]["scored"] > 0
    assert {"python", "java"} <= set(local["ssets"])
    assert dask == local
    # the second dask scan reuses the cached result without starting anything
    code, out, _ = run(["scan", str(repo), "--format", "json", "-k", "80", "--threshold", "0.5", "--scheduler", "tcp://127.0.0.1:9"], capsys)  # fmt: skip
    assert code == 1 and json.loads(out)["summary"]["cached"] is True


# ------------------------------------------------------------------------------ disting
@pytest.mark.parametrize(
    "options",
    [
        ["--metric", "bleu,crystalbleu,crystalbleu-if", "-k", "40", "--n", "300"],
        ["--metric", "crystalbleu", "--exact", "--aggregate", "corpus", "-k", "40"],
        [
            "--metric",
            "bleu,crystalbleu",
            "--protocol",
            "classwise",
            "--n",
            "50",
            "--smoothing",
            "m7",
        ],
    ],
    ids=["sampled", "exact-corpus", "classwise-m7"],
)
def test_disting_reports_are_identical(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    address: str,
    options: list[str],
) -> None:
    monkeypatch.setattr(disting_module, "CHUNK_PAIRS", 37)  # many scoring tasks
    monkeypatch.setattr(disting_module, "CHUNK_ITEMS", 5)  # many tokenizing tasks
    reports = []
    for engine in (["--engine", "local", "--jobs", "2"], ["--scheduler", address]):
        code, out, err = run(["disting", str(DATASET), "--format", "json", *options, *engine], capsys)  # fmt: skip
        assert code == 0, err
        doc = json.loads(out)
        for metric in doc["metrics"]:
            assert metric.pop("seconds") >= 0
            assert metric.pop("cpu_seconds") >= 0
        reports.append(doc)
    assert reports[0] == reports[1]
    assert all(m["auc"] > 0 for m in reports[0]["metrics"])
