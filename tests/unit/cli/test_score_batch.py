"""``crystal-lsp score`` corpus mode: ids, folders, per-item output, bootstrap, paired test."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import crystal_lsp
from crystal_lsp.cli.main import main
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.statistics import CorpusCounts, bootstrap, paired_bootstrap

REFS = [
    "def add(a, b):\n    return a + b\n",
    "def area(w, h):\n    return w * h\n",
    "for item in items:\n    print(item.name)\n",
    "with open(path) as fh:\n    data = fh.read()\n",
]
GOOD = [
    "def add(x, y):\n    return x + y\n",
    "def area(w, h):\n    return w * h\n",
    "for item in items:\n    print(item.title)\n",
    "with open(path) as fh:\n    text = fh.read()\n",
]
POOR = ["x = 1\n", "print(2)\n", "y = f(z)\n", "pass\n"]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _jsonl(path: Path, hyps: list[str], ids: list[str]) -> Path:
    rows = [{"id": i, "hypothesis": h, "references": [r]} for i, h, r in zip(ids, hyps, REFS)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _tokens(text: str) -> list[str]:
    return list(crystal_lsp.tokenize(text, "python").texts)


def test_jsonl_keeps_ids_and_writes_per_item_jsonl_and_csv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = ["q7", "q3", "q9", "q1"]
    data = _jsonl(tmp_path / "sys.jsonl", GOOD, ids)
    argv = ["score", "--jsonl", str(data), "--lang", "python", "--metric", "bleu"]
    code, out, _ = run(
        [*argv, "--per-item", str(tmp_path / "items.jsonl"), "--format", "json"], capsys
    )
    assert code == 0
    doc = json.loads(out)
    stats = doc["statistics"]["bleu"]
    assert doc["bleu"] == stats["score"]
    assert {
        "matches",
        "totals",
        "precisions",
        "brevityPenalty",
        "ratio",
        "hypLen",
        "refLen",
    } <= set(stats)
    rows = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ids
    bleu = CrystalBLEU(None, smoothing=crystal_lsp.Smoothing.parse("m1:eps=0.0001"))
    assert rows[0]["bleu"] == bleu.sentence_score(_tokens(GOOD[0]), [_tokens(REFS[0])])
    assert sum(r["statistics"]["bleu"]["matches"][0] for r in rows) == stats["matches"][0]
    code, _, _ = run([*argv, "--per-item", str(tmp_path / "items.csv")], capsys)
    with open(tmp_path / "items.csv", encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert [r["id"] for r in table] == ids and float(table[1]["bleu"]) == pytest.approx(1.0)
    assert table[0]["bleu_matches"].count(" ") == 3


def test_two_folders_matched_by_file_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hyp_dir, ref_dir = tmp_path / "hyp", tmp_path / "ref"
    for d, texts in ((hyp_dir, GOOD), (ref_dir, REFS)):
        d.mkdir()
        for k, text in enumerate(texts):
            (d / f"t{k}.py").write_text(text, encoding="utf-8")
    (hyp_dir / "extra.py").write_text("x = 1\n", encoding="utf-8")
    argv = ["score", "--hyp-dir", str(hyp_dir), "--ref-dir", str(ref_dir), "--sentences"]
    code, out, err = run([*argv, "--format", "json"], capsys)
    assert code == 0 and "1 file(s)" in err  # the unmatched file is counted, not silent
    doc = json.loads(out)
    assert doc["pairs"] == 4 and [s["pair"] for s in doc["sentences"]] == [
        f"t{k}.py" for k in range(4)
    ]
    hyps, refs = [_tokens(t) for t in GOOD], [[_tokens(t)] for t in REFS]
    assert doc["bleu"] == CrystalBLEU(None).corpus_score(hyps, refs)


def test_bootstrap_and_paired_test_are_seeded_and_match_the_library(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = ["a", "b", "c", "d"]
    system = _jsonl(tmp_path / "sys.jsonl", GOOD, ids)
    baseline = _jsonl(tmp_path / "base.jsonl", POOR, ids)
    argv = ["score", "--jsonl", str(system), "--lang", "python", "--metric", "bleu"]
    argv += ["--bootstrap", "200", "--seed", "5", "--baseline", str(baseline), "--format", "json"]
    code, out, _ = run(argv, capsys)
    assert code == 0
    doc = json.loads(out)
    assert json.loads(run(argv, capsys)[1]) == doc
    metric = CrystalBLEU(None)
    refs = [[_tokens(t)] for t in REFS]
    ours = CorpusCounts(metric, [_tokens(t) for t in GOOD], refs)
    theirs = CorpusCounts(metric, [_tokens(t) for t in POOR], refs)
    assert doc["bootstrap"]["bleu"] == bootstrap(ours, 200, 5).to_json()
    assert doc["paired"]["bleu"] == paired_bootstrap(ours, theirs, 200, 5).to_json()
    text = run(argv[:-2], capsys)[1]
    assert "95% CI" in text and "vs baseline" in text and "BP = " in text


def test_paired_test_needs_the_same_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    system = _jsonl(tmp_path / "sys.jsonl", GOOD, ["a", "b", "c", "d"])
    baseline = _jsonl(tmp_path / "base.jsonl", POOR, ["a", "b", "c", "x"])
    code, _, err = run(["score", "--jsonl", str(system), "--baseline", str(baseline)], capsys)
    assert code == 2 and len(err.splitlines()) == 1 and "1 of 4 items missing" in err


def test_duplicate_ids_are_an_error_naming_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _jsonl(tmp_path / "pairs.jsonl", GOOD, ["a", "b", "a", "b"])
    code, out, err = run(["score", "--jsonl", str(path), "--metric", "bleu"], capsys)
    assert (code, out) == (2, "")
    assert err == f"crystal-lsp: error: {path}:3: duplicate id 'a' (first on line 1)\n"


def test_lines_end_only_at_line_ends(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a form feed, a vertical tab or U+2028 inside a snippet (raw in a JSON string too) does not
    # split it, as str.splitlines would; \r\n, \r and \n do
    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    hyp.write_text("x = 1\f y = 2\r\nz = f(a)\u2028 + b\rw = 3\n", encoding="utf-8", newline="")
    ref.write_text("x = 1\v y = 2\nz = f(a) + b\nw = 3", encoding="utf-8", newline="")
    argv = ["score", "--lines", "--hyp", str(hyp), "--ref", str(ref), "--lang", "python"]
    code, out, err = run([*argv, "--metric", "bleu", "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["pairs"] == 3
    rows = [{"id": "p", "hypothesis": "a\u2028b", "references": ["a b"]}]
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(rows[0], ensure_ascii=False) + "\n", encoding="utf-8")
    code, out, err = run(
        ["score", "--jsonl", str(path), "--lang", "python", "--metric", "bleu"], capsys
    )
    assert code == 0, err
