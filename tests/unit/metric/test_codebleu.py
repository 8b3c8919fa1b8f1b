"""CodeBLEU through the ``codebleu`` package: our metric's numbers are the package's own."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from crystal_lsp.cli.main import main
from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.registry import MetricConfig, PreparedItem, make_metric
from crystal_lsp.text.lexers import resolve_lexer
from crystal_lsp.text.tokens import lex

codebleu = pytest.importorskip("codebleu")

DATASET = Path(__file__).resolve().parents[2] / "data" / "tiny_dataset.jsonl"
ITEMS = [json.loads(line) for line in DATASET.read_text(encoding="utf-8").splitlines()][:12]


def prepared(codes: list[str]) -> list[PreparedItem | None]:
    lexer = resolve_lexer("python")
    return [PreparedItem(code, lex(code, lexer)) for code in codes]


def test_every_pair_equals_the_package() -> None:
    codes = [it["code"] for it in ITEMS]
    metric = make_metric("codebleu", MetricConfig(language="python"))
    metric.prepare(prepared(codes))
    for h, hyp in enumerate(codes):
        for r, ref in enumerate(codes):
            if h != r:
                want = codebleu.calc_codebleu([[ref]], [hyp], lang="python")["codebleu"]
                assert metric.score(h, [r]) == want, (ITEMS[h]["id"], ITEMS[r]["id"])


def test_several_references_and_corpus_equal_the_package() -> None:
    codes = [it["code"] for it in ITEMS]
    metric = make_metric("codebleu", MetricConfig(language="python"))
    metric.prepare(prepared(codes))
    pairs = [(0, [1, 2, 3]), (6, [7, 8]), (4, [9])]
    refs = [[codes[r] for r in group] for _, group in pairs]
    hyps = [codes[h] for h, _ in pairs]
    assert metric.corpus(pairs) == codebleu.calc_codebleu(refs, hyps, lang="python")["codebleu"]
    assert (
        metric.score(0, [1, 2, 3])
        == (codebleu.calc_codebleu([refs[0]], [hyps[0]], lang="python")["codebleu"])
    )


def test_language_coverage_is_stated() -> None:
    with pytest.raises(CrystalError, match="covers python, java, javascript, c, cpp, go"):
        make_metric("codebleu", MetricConfig(language="haskell"))


def test_score_jsonl_corpus_equals_the_package(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"id": str(i), "hypothesis": ITEMS[i]["code"], "references": [ITEMS[i + 1]["code"]]}
        for i in range(0, 10, 2)
    ]
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    argv = ["score", "--jsonl", str(path), "--lang", "python", "--metric", "bleu,codebleu"]
    assert main([*argv, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    want = codebleu.calc_codebleu(
        [[r["references"][0]] for r in rows], [r["hypothesis"] for r in rows], lang="python"
    )
    assert doc["codebleu"] == want["codebleu"]
    assert doc["details"]["codebleu"]["syntax_match_score"] == want["syntax_match_score"]
    assert doc["signatures"]["codebleu"].startswith("codebleu|lang:python|")
    assert doc["signatures"]["codebleu"].endswith(
        "|hashseed:" + (os.environ.get("PYTHONHASHSEED") or "random")
    )
