"""``crystal-lsp score --against PATH``, language checks and plain text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scan_samples import GETTERS_A, ORIGINAL, UNRELATED, module, renamed, write_tree

from crystal_lsp.cli.main import main
from crystal_lsp.clones.settings import ScanConfig


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path / "repo",
        {
            "a_models.py": GETTERS_A,
            "b_util.py": module(*UNRELATED),
            "z_orders.py": module(*UNRELATED[:1], ORIGINAL),
        },
    )


def test_against_lists_the_best_regions(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hyp = tmp_path / "hyp.py"
    hyp.write_text(renamed(ORIGINAL), encoding="utf-8")
    code, out, err = run(
        ["score", "--hyp", str(hyp), "--against", str(repo), "--format", "json"], capsys
    )
    assert code == 0, err
    doc = json.loads(out)
    regions = doc["references"]["regions"]
    assert regions[0]["label"].startswith("z_orders.py:")
    scores = [r["crystalbleu"] for r in regions]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    assert doc["crystalbleu"] >= regions[0]["crystalbleu"] > 0.3
    # the per-order statistics of the score against the regions, as with --ref
    stats = doc["statistics"]["crystalbleu"]
    assert stats["score"] == doc["crystalbleu"]
    code, out, _ = run(["score", "--hyp", str(hyp), "--against", str(repo)], capsys)
    assert code == 0 and "reference z_orders.py:" in out and "regions aligned" in out
    assert "BP = " in out and "hyp_len = " in out


def test_against_gives_the_clone_finders_verdict_and_no_trivial_regions(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hyp = tmp_path / "hyp.py"
    hyp.write_text(renamed(ORIGINAL), encoding="utf-8")
    argv = ["score", "--hyp", str(hyp), "--against", str(repo)]
    code, out, err = run([*argv, "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    # raw CrystalBLEU of a renamed copy is low; the finder says what it is, as scan and MCP do
    assert doc["crystalbleu"] < 0.5
    verdict = doc["verdict"]
    assert verdict["type"] == "renamed" and verdict["similarity"] == pytest.approx(1.0)
    assert verdict["original"].startswith("z_orders.py:")
    assert verdict["text"] == (
        f"renamed copy of {verdict['original']} (function summarize_orders), similarity 1.00"
    )
    # 1-2-line regions (a shared `return` line) are left out and counted, not references
    assert [r["label"] for r in doc["references"]["regions"]] == [verdict["original"]]
    assert doc["references"]["leftOut"]["fewer than 5 lines"] >= 1
    code, out, _ = run(argv, capsys)
    lines = out.splitlines()
    assert lines[0].endswith(f"the 1 best region of {repo}")
    assert lines[1] == f"  verdict: {verdict['text']}"


def test_against_says_when_nothing_is_copied(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hyp = tmp_path / "hyp.py"
    hyp.write_text(module(*UNRELATED[1:3]), encoding="utf-8")
    (repo / "b_util.py").write_text(module(*UNRELATED[:1]), encoding="utf-8")
    code, out, err = run(["score", "--hyp", str(hyp), "--against", str(repo)], capsys)
    assert code == 0, err
    threshold = ScanConfig().threshold
    assert f"  verdict: no copy found (clone finder threshold {threshold:g})" in out.splitlines()


def test_a_hypothesis_inside_the_folder_is_not_its_own_copy(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hyp = repo / "c_copy.py"
    hyp.write_text(renamed(ORIGINAL), encoding="utf-8")
    argv = ["score", "--hyp", str(hyp), "--against", str(repo), "--format", "json"]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["verdict"]["original"].startswith("z_orders.py:")
    assert not any(r["label"].startswith("c_copy.py") for r in doc["references"]["regions"])


def test_against_a_file_means_its_best_regions(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hyp = tmp_path / "hyp.py"
    hyp.write_text(renamed(ORIGINAL), encoding="utf-8")
    argv = ["score", "--hyp", str(hyp), "--against", str(repo / "z_orders.py"), "--format", "json"]
    code, out, _ = run(argv, capsys)
    doc = json.loads(out)
    whole = run(
        ["score", "--hyp", str(hyp), "--ref", str(repo / "z_orders.py"), "--format", "json"], capsys
    )[1]
    # the best region is the copied function, not the whole file (no brevity penalty)
    assert code == 0 and doc["crystalbleu"] > json.loads(whole)["crystalbleu"]
    assert all(r["label"].startswith("z_orders.py:") for r in doc["references"]["regions"])


def test_against_errors_are_one_line(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hyp = tmp_path / "hyp.py"
    hyp.write_text(ORIGINAL, encoding="utf-8")
    code, _, err = run(["score", "--hyp", str(hyp), "--against", str(tmp_path / "nope")], capsys)
    assert code == 2 and len(err.splitlines()) == 1 and "no such file" in err
    code, _, err = run(
        ["score", "--hyp", str(hyp), "--against", str(repo), "--ref", str(hyp)], capsys
    )
    assert code == 2 and len(err.splitlines()) == 1


def test_language_mismatch_is_an_error_unless_lang_is_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hyp, ref = tmp_path / "hyp.py", tmp_path / "ref.js"
    hyp.write_text("x = f(a, b)\n", encoding="utf-8")
    ref.write_text("let x = f(a, b);\n", encoding="utf-8")
    code, _, err = run(["score", "--hyp", str(hyp), "--ref", str(ref)], capsys)
    assert code == 2 and len(err.splitlines()) == 1
    assert "ref.js is javascript" in err and "--lang" in err
    code, out, _ = run(["score", "--hyp", str(hyp), "--ref", str(ref), "--lang", "python"], capsys)
    assert code == 0 and "lang:python" in out


def test_plain_text_is_tokenized_by_whitespace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    hyp.write_text("A B E C D\n", encoding="utf-8")
    ref.write_text("A B C D\n", encoding="utf-8")
    argv = ["score", "--hyp", str(hyp), "--ref", str(ref), "--lang", "text", "--metric", "sts"]
    code, out, _ = run([*argv, "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["sts"] == pytest.approx(0.8)
