"""``crystal-lsp score`` through ``main(argv)``: outputs, corpus modes and input errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import crystal_lsp
from crystal_lsp.cli.main import main
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import builtin_sset

DATA = Path(__file__).resolve().parents[2] / "data"
ADD = "def add(a, b):\n    return a + b\n"
ADD2 = "def add(x, y):\n    total = x + y\n    return total\n"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_error_line(code: int, err: str, *fragments: str) -> None:
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("crystal-lsp: error:")
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    ref, hyp = tmp_path / "ref.py", tmp_path / "hyp.py"
    ref.write_text(ADD, encoding="utf-8")
    hyp.write_text(ADD2, encoding="utf-8")
    return ref, hyp


def test_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["score", "--example"], capsys)
    assert code == 0 and err == ""
    assert "BLEU" in out and "CrystalBLEU" in out
    assert "fig1_hypothesis1.java" in out and "fig1_hypothesis2.java" in out
    assert "0.4825" in out and "0.5458" in out  # the paper's 0.48 and 0.55
    assert "crystalbleu|tok:pygments-" in out and "|lang:java|" in out and "bleu|tok:" in out


def test_example_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["score", "--example", "--format", "json"], capsys)
    assert code == 0
    rows = json.loads(out)
    assert [round(r["bleu"], 2) for r in rows] == [0.48, 0.55]
    for row in rows:
        assert {"bleu", "crystalbleu", "signatures", "hypothesis", "references"} <= set(row)
        assert set(row["signatures"]) == {"bleu", "crystalbleu"}
        assert 0 <= row["crystalbleu"] < row["bleu"]


def test_score_files_json_values(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    ref, hyp = pair
    code, out, err = run(
        ["score", "--ref", str(ref), "--hyp", str(hyp), "--format", "json"], capsys
    )
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert {"bleu", "crystalbleu", "signatures"} <= set(doc)
    assert doc["language"] == "python"
    hyp_t = crystal_lsp.tokenize(ADD2, "python")
    ref_t = crystal_lsp.tokenize(ADD, "python")
    assert doc["bleu"] == CrystalBLEU(None).sentence_score(hyp_t, [ref_t])
    sset = builtin_sset("python")
    assert sset is not None
    expected = CrystalBLEU(sset.restricted(500)).sentence_score(hyp_t, [ref_t])
    assert doc["crystalbleu"] == expected
    assert f"|S:{sset.restricted(500).fingerprint()}|" in doc["signatures"]["crystalbleu"]


def test_score_with_sset_file_metric_and_smoothing(
    pair: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref, hyp = pair
    sset = crystal_lsp.build_sset([crystal_lsp.tokenize(ADD, "python").texts], 5)
    sset.save(tmp_path / "s.json")
    argv = ["score", "--ref", str(ref), "--hyp", str(hyp), "--sset", str(tmp_path / "s.json")]
    argv += ["--metric", "crystalbleu,crystalbleu-if", "--smoothing", "m2", "--format", "json"]
    code, out, _ = run(argv, capsys)
    assert code == 0
    doc = json.loads(out)
    assert set(doc["signatures"]) == {"crystalbleu", "crystalbleu-if"}
    assert "|smooth:m2|" in doc["signatures"]["crystalbleu"]
    hyp_t = crystal_lsp.tokenize(ADD2, "python")
    ref_t = crystal_lsp.tokenize(ADD, "python")
    weight = CrystalBLEU(sset, variant="weight", smoothing=Smoothing(2))
    assert doc["crystalbleu-if"] == weight.sentence_score(hyp_t, [ref_t])


def test_score_with_corpus(pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    ref, hyp = pair
    argv = ["score", "--ref", str(ref), "--hyp", str(hyp), "--corpus", str(DATA / "corpus")]
    code, out, _ = run([*argv, "-k", "50", "--format", "json"], capsys)
    assert code == 0
    assert "|k:50|" in json.loads(out)["signatures"]["crystalbleu"]


def test_lines_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hyps = ["x = a + b", "print(x)", "return f(y, 1)"]
    refs = ["x = a + c", "print(y)", "return f(y, 2)"]
    (tmp_path / "h.txt").write_text("\n".join(hyps) + "\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("\n".join(refs) + "\n", encoding="utf-8")
    argv = ["score", "--lines", "--hyp", str(tmp_path / "h.txt"), "--ref", str(tmp_path / "r.txt")]
    code, out, err = run([*argv, "--lang", "python", "--format", "json", "--sentences"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["pairs"] == 3 and doc["language"] == "python"
    assert {"bleu", "crystalbleu", "signatures", "sentences"} <= set(doc)
    h = [crystal_lsp.tokenize(t, "python").texts for t in hyps]
    r = [[crystal_lsp.tokenize(t, "python").texts] for t in refs]
    method1 = crystal_lsp.SmoothingFunction(epsilon=1e-4).method1
    assert doc["bleu"] == crystal_lsp.corpus_bleu(r, h, smoothing_function=method1)
    assert len(doc["sentences"]) == 3
    assert doc["sentences"][0]["bleu"] == crystal_lsp.sentence_bleu(
        r[0], h[0], smoothing_function=method1
    )
    code, out, _ = run([*argv, "--lang", "python"], capsys)
    assert code == 0 and out.startswith("corpus of 3 pairs (python)")


def test_jsonl_mode(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["score", "--jsonl", str(DATA / "pairs.jsonl"), "--lang", "python", "--format", "json"]
    code, out, err = run(argv, capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["pairs"] == 4
    rows = [json.loads(line) for line in (DATA / "pairs.jsonl").read_text().splitlines()]
    hyps = [crystal_lsp.tokenize(r.get("hypothesis", r.get("hyp")), "python") for r in rows]
    refs = [
        [
            crystal_lsp.tokenize(t, "python")
            for t in r.get("references", r.get("refs", [r.get("reference")]))
        ]
        for r in rows
    ]
    assert doc["bleu"] == CrystalBLEU(None).corpus_score(hyps, refs)
    assert set(doc["signatures"]) == {"bleu", "crystalbleu"}


def test_undecodable_bytes_warn_but_succeed(
    pair: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref, _ = pair
    bad = tmp_path / "bad.py"
    bad.write_bytes(b"def f(x):\n    return 'caf\xe9 \xff'\n")
    code, out, err = run(["score", "--ref", str(ref), "--hyp", str(bad)], capsys)
    assert code == 0
    lines = err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("crystal-lsp: warning:")
    assert "bad.py" in lines[0] and "2 undecodable" in lines[0]
    assert "BLEU" in out


ERRORS = [
    # (id, how to build argv from the two good files and a tmp dir, expected fragments)
    ("missing-file", lambda r, h, d: ["--ref", str(d / "nope.py"), "--hyp", str(h)], ["nope.py", "no such file"]),
    ("binary-file", lambda r, h, d: ["--ref", str(r), "--hyp", str(d / "bin.py")], ["bin.py", "binary file"]),
    ("empty-file", lambda r, h, d: ["--ref", str(d / "empty.py"), "--hyp", str(h)], ["empty.py", "no code tokens"]),
    ("comments-only", lambda r, h, d: ["--ref", str(r), "--hyp", str(d / "comment.py")], ["no code tokens"]),
    ("directory", lambda r, h, d: ["--ref", str(d), "--hyp", str(h)], ["is a directory"]),
    ("unknown-lang", lambda r, h, d: ["--ref", str(r), "--hyp", str(h), "--lang", "klingon"], ["unknown language 'klingon'"]),
    ("bad-smoothing", lambda r, h, d: ["--ref", str(r), "--hyp", str(h), "--smoothing", "m9"], ["bad smoothing 'm9'"]),
    ("bad-smoothing-param", lambda r, h, d: ["--ref", str(r), "--hyp", str(h), "--smoothing", "m1:eps=x"], ["bad smoothing parameter"]),
    ("unknown-metric", lambda r, h, d: ["--ref", str(r), "--hyp", str(h), "--metric", "rouge"], ["unknown metric 'rouge'"]),
    ("missing-sset", lambda r, h, d: ["--ref", str(r), "--hyp", str(h), "--sset", str(d / "s.json")], ["cannot read S-set file"]),
    ("no-hyp", lambda r, h, d: ["--ref", str(r)], ["--hyp"]),
    ("malformed-jsonl", lambda r, h, d: ["--jsonl", str(d / "bad.jsonl")], ["bad.jsonl:2", "bad pair line"]),
    ("jsonl-wrong-types", lambda r, h, d: ["--jsonl", str(d / "types.jsonl")], ["types.jsonl:1", "bad pair line"]),
    ("jsonl-empty", lambda r, h, d: ["--jsonl", str(d / "empty.jsonl")], ["no pairs to score"]),
    ("jsonl-no-references", lambda r, h, d: ["--jsonl", str(d / "norefs.jsonl")], ["at least one reference"]),
    ("lines-mismatch", lambda r, h, d: ["--lines", "--hyp", str(d / "three.txt"), "--ref", str(d / "two.txt")], ["two.txt has 2 lines", "three.txt has 3"]),
    ("example-with-files", lambda r, h, d: ["--example", "--hyp", str(h)], ["--example takes no"]),
    ("jsonl-with-hyp", lambda r, h, d: ["--jsonl", str(d / "bad.jsonl"), "--hyp", str(h)], ["--jsonl replaces"]),
]  # fmt: skip


@pytest.fixture
def bad_inputs(tmp_path: Path) -> Path:
    d = tmp_path / "inputs"
    d.mkdir()
    (d / "bin.py").write_bytes(b"x = 1\x00\x01\x02")
    (d / "empty.py").write_bytes(b"")
    (d / "comment.py").write_text("# only a comment\n")
    (d / "bad.jsonl").write_text('{"hypothesis": "x", "references": ["x"]}\n{"hypothesis": \n')
    (d / "types.jsonl").write_text('{"hypothesis": 3, "references": "x"}\n')
    (d / "empty.jsonl").write_text("")
    (d / "norefs.jsonl").write_text('{"hypothesis": "x = 1", "references": []}\n')
    (d / "three.txt").write_text("a\nb\nc\n")
    (d / "two.txt").write_text("a\nb\n")
    return d


@pytest.mark.parametrize(
    ("make_argv", "fragments"), [pytest.param(m, f, id=i) for i, m, f in ERRORS]
)
def test_input_errors_exit_2_with_one_line(
    pair: tuple[Path, Path],
    bad_inputs: Path,
    capsys: pytest.CaptureFixture[str],
    make_argv: object,
    fragments: list[str],
) -> None:
    ref, hyp = pair
    code, out, err = run(["score", *make_argv(ref, hyp, bad_inputs)], capsys)  # type: ignore[operator]
    assert out == ""
    assert_one_error_line(code, err, *fragments)


def test_zero_k_smoothing_is_a_usage_error(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    ref, hyp = pair
    code, _, err = run(
        ["score", "--ref", str(ref), "--hyp", str(hyp), "--smoothing", "m4:k=0"], capsys
    )
    assert_one_error_line(code, err, "k")


def test_usage_errors_from_argparse_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["score", "--format", "xml"])
    assert info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
