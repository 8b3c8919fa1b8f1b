"""``crystal-lsp disting`` on the tiny class-labeled fixture (4 classes x 6 Python programs)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from crystal_lsp.cli.main import main

DATASET = Path(__file__).resolve().parents[2] / "data" / "tiny_dataset.jsonl"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_disting_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["disting", str(DATASET), "--n", "20", "--pair-sampling", "uniform"]
    code, out, err = run([*argv, "--format", "json"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert (doc["items"], doc["train_items"], doc["test_items"]) == (24, 8, 16)
    assert doc["language"] == "python" and doc["n"] == 20 and doc["seed"] == 0
    assert [m["metric"] for m in doc["metrics"]] == ["bleu", "crystalbleu"]
    assert doc["protocol_signature"] == (
        "disting|pairs:uniform|first:reference|agg:mean|ties:first-seen|n:20|seed:0"
    )
    for m in doc["metrics"]:
        assert m["test_pairs"] == {"intra": 20, "inter": 20}
        # 8 train programs, 2 per class: 4 distinct intra-class pairs exist, all are taken
        assert m["train_pairs"] == {"intra": 4, "inter": 20}
        assert 0 <= m["auc"] <= 1
        assert {"threshold", "accuracy", "precision", "recall", "f1"} <= set(m["classifier"])
        assert m["signature"].startswith(m["metric"] + "|")
    assert doc["sset_fingerprint"] in doc["metrics"][1]["signature"]


def test_disting_is_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["disting", str(DATASET), "--n", "30", "--seed", "3", "--format", "json", "-k", "20"]
    argv += ["--metric", "bleu,crystalbleu,crystalbleu-if"]
    first = json.loads(run(argv, capsys)[1])
    second = json.loads(run(argv, capsys)[1])
    for doc in (first, second):
        for m in doc["metrics"]:
            m.pop("seconds")
            m.pop("cpu_seconds")
    assert first == second


def test_disting_exact_classwise_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["disting", str(DATASET), "--exact", "--protocol", "classwise", "--aggregate", "corpus"]
    code, out, _ = run([*argv, "-k", "20", "--format", "json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["exact"] is True and doc["n"] is None
    # 16 test items, 4 per class: one intra pair each, one inter pair per other class.
    assert doc["metrics"][0]["test_pairs"] == {"intra": 16, "inter": 48}


def test_disting_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["disting", str(DATASET), "--n", "10", "--metric", "bleu"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert (
        "24 items (8 train / 16 test), python, 10 intra + 10 inter test pairs (--n 10), seed 0"
        in lines[0]
    )
    # the defaults are the reference protocol, and the protocol line says so
    assert lines[1] == (
        "  protocol: disting|pairs:class|first:reference|agg:mean|ties:first-seen|n:10|seed:0"
        "|reference"
    )
    # 8 train programs, 2 per class, hold only 4 distinct intra-class pairs: the shortfall is said
    assert lines[2].startswith("  left out: 6 intra-class train pairs fewer than --n")
    assert lines[3].split()[:5] == ["metric", "intra", "inter", "disting", "AUC"]
    assert lines[3].split()[-2:] == ["sec", "cpu"]
    assert lines[4].startswith("bleu")
    assert lines[5].strip().startswith("bleu|tok:pygments-")


@pytest.mark.parametrize(
    ("options", "signature"),
    [
        pytest.param(["--first-is", "hypothesis"], "pairs:class|first:hypothesis|agg:mean|ties:first-seen|n:10|seed:0", id="direction"),
        pytest.param(["--tie-break", "canonical"], "pairs:class|first:reference|agg:mean|ties:canonical|n:10|seed:0", id="ties"),
        pytest.param(["--exact", "--aggregate", "corpus"], "pairs:all|first:reference|agg:corpus|ties:first-seen", id="exact-corpus"),
        pytest.param(["--protocol", "classwise"], "classwise:drawn|first:reference|agg:mean|ties:first-seen|n:10|seed:0", id="classwise"),
    ],
)  # fmt: skip
def test_other_protocols_are_named(
    capsys: pytest.CaptureFixture[str], options: list[str], signature: str
) -> None:
    argv = ["disting", str(DATASET), "--n", "10", "-k", "20", "--format", "json", *options]
    code, out, _ = run(argv, capsys)
    assert code == 0
    assert json.loads(out)["protocol_signature"] == "disting|" + signature


def test_pair_direction_and_per_pair_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = {}
    for first in ("reference", "hypothesis"):
        path = tmp_path / f"{first}.jsonl"
        argv = ["disting", str(DATASET), "--n", "10", "--metric", "bleu", "--first-is", first]
        assert run([*argv, "--pairs-out", str(path)], capsys)[0] == 0
        rows[first] = [json.loads(line) for line in path.read_text().splitlines()]
    ref, hyp = rows["reference"], rows["hypothesis"]
    assert len(ref) == len(hyp) == 10 + 10 + 4 + 10
    assert [(r["split"], r["label"]) for r in ref][:11] == [("test", 1)] * 10 + [("test", 0)]
    # the same pairs, scored the other way round
    assert [(r["hypothesis"], r["references"]) for r in ref] == [
        (h["references"][0], [h["hypothesis"]]) for h in hyp
    ]
    assert all(0.0 <= r["bleu"] <= 1.0 for r in ref)


def test_duplicate_ids_and_empty_code_are_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "d.jsonl"
    rows = [
        {"id": i % 3, "class": "ab"[i % 2], "code": "x = 1", "lang": "python"} for i in range(5)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = run(["disting", str(path)], capsys)
    assert (code, out) == (2, "")
    assert (
        err
        == "crystal-lsp: error: "
        + f"{path}: duplicate id '0' (items 1 and 4); ids must be unique\n"
    )
    rows = [
        {"id": i, "class": "ab"[i % 2], "code": "# only a comment\n", "lang": "python"}
        for i in range(6)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = run(["disting", str(path)], capsys)
    assert (code, out) == (2, "")
    assert err == f"crystal-lsp: error: {path}: no item has python tokens: nothing to score\n"


def test_items_without_tokens_are_left_out_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [json.loads(line) for line in DATASET.read_text().splitlines() if line.strip()]
    rows[0]["code"] = rows[5]["code"] = "   \n"
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pairs = tmp_path / "pairs.jsonl"
    argv = ["disting", str(path), "--n", "30", "--format", "json", "-k", "20"]
    code, out, _ = run([*argv, "--pairs-out", str(pairs)], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["left_out"]["items without tokens (left out before drawing pairs)"] == 2
    assert doc["items"] == 24 and doc["test_items"] + doc["train_items"] == 22
    empty = {str(rows[0]["id"]), str(rows[5]["id"])}
    for line in pairs.read_text().splitlines():
        row = json.loads(line)
        assert not empty & {row["hypothesis"], *row["references"]}


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        pytest.param('{"id": 1, "class": "a", "code": "x"}\n{broken\n', ":2: not a dataset line", id="malformed-line"),
        pytest.param("", "the dataset is empty", id="empty"),
        pytest.param('{"id": 1, "class": "a", "code": "x", "lang": "python", "split": "test"}\n', "no class of the test split has two items", id="one-item"),
    ],
)  # fmt: skip
def test_disting_input_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, fragment: str
) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(content)
    code, out, err = run(["disting", str(path), "--n", "5"], capsys)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("crystal-lsp: error:")
    assert fragment in err


def test_disting_mixed_languages_need_lang(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(
        '{"id": 1, "class": "a", "code": "x", "lang": "python"}\n'
        '{"id": 2, "class": "b", "code": "y", "lang": "java"}\n'
    )
    code, _, err = run(["disting", str(path)], capsys)
    assert code == 2 and "--lang" in err


def _pair_folder(root: Path) -> Path:
    """A pair-labeled folder from the tiny class-labeled fixture: same class = label 1."""
    rows = [json.loads(line) for line in DATASET.read_text().splitlines() if line.strip()]
    root.mkdir()
    (root / "code.jsonl").write_text(
        "".join(
            json.dumps({"id": r["id"], "lang": "python", "code": r["code"]}) + "\n" for r in rows
        )
    )
    lines = []
    for i, a in enumerate(rows):
        for b in rows[i + 1 :]:
            if a["split"] == b["split"]:
                label = int(a["class"] == b["class"])
                lines.append({"a": a["id"], "b": b["id"], "label": label, "split": a["split"]})
    (root / "pairs.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return root


def test_disting_reads_a_pair_labeled_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _pair_folder(tmp_path / "pairs")
    argv = ["disting", str(folder), "--n", "10", "--metric", "bleu,crystalbleu", "-k", "20"]
    code, out, err = run([*argv, "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert "pairs given" in doc["description"] and doc["items"] == 24
    for m in doc["metrics"]:
        assert m["test_pairs"] == {"intra": 10, "inter": 10}
        assert m["train_pairs"]["intra"] == 4  # all 4 same-class train pairs
        assert m["classifier"] is not None
    code, out, _ = run(argv, capsys)
    assert code == 0 and "pairs given" in out.splitlines()[0]


GCJ = (
    Path(os.environ.get("CRYSTAL_BENCH_DATA", "/work/shared/data")) / "gcj_java" / "items.jsonl.gz"
)


@pytest.mark.skipif(not GCJ.exists(), reason="the shared labeled sets are not here")
def test_the_defaults_reproduce_the_reference_figures_of_gcj_java(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The data README (reference_eval.py, seed 0): distinguishability BLEU 1.58 / CrystalBLEU
    3.40, AUC 0.791 / 0.800, threshold accuracy 0.717 / 0.752; full precision from the script's
    own output (bench/disting_bench.py checks all three sets pair by pair)."""
    code, out, _ = run(["disting", str(GCJ), "--format", "json"], capsys)
    assert code == 0
    got = {m["metric"]: m for m in json.loads(out)["metrics"]}
    assert got["bleu"]["distinguishability"] == pytest.approx(1.575213469927123, abs=1e-12)
    assert got["crystalbleu"]["distinguishability"] == pytest.approx(3.398582485394056, abs=1e-12)
    assert (got["bleu"]["auc"], got["crystalbleu"]["auc"]) == (0.791086, 0.800422)
    assert got["bleu"]["classifier"]["accuracy"] == 0.717
    assert got["crystalbleu"]["classifier"]["accuracy"] == 0.7525
