"""The paper's Table-2 protocols draw what the scripts draw, and score as NLTK/crystalbleu do.

``paper`` is the authors' ``small_v1.py`` (sola-st/crystalbleu; not copied here): its loops are
restated below on item indices, with Python's ``random`` seeded. ``paper-multiref`` is the shared
reference evaluation's ``multiref``, whose draws are restated the same way.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crystal_lsp.cli.main import main
from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.paper import draw_multiref, draw_small_v1


def script_small_v1(data: dict[str, list[int]], n: int, seed: int) -> tuple[list, list, list]:
    """small_v1.py's draws (its order of random calls), on a dict like its lang<L>.json."""
    rng = random.Random(seed)  # what random.seed(seed) gives the script's module-level calls

    def skipped(name: str) -> bool:  # its ShareCode problem-name filter
        parts = name.split("_")
        return int(parts[0]) > 1 or len(parts[1]) > 4

    sample_docs = [i for k, v in data.items() if not skipped(k) for i in v if rng.random() < 0.3]
    pairs = []
    for v in data.values():
        made = 0
        for i in range(len(v)):
            refs = [v[j] for j in range(len(v)) if j != i]
            if len(refs) >= 20:
                pairs.append((v[i], tuple(rng.sample(refs, 20))))
                made += 1
            if made >= 20:
                break
    intra = rng.sample(pairs, n)
    pairs = []
    for k1, v1 in data.items():
        if skipped(k1):
            continue
        made = 0
        for k2, v2 in data.items():
            if skipped(k2):
                continue
            if k1 == k2 or rng.random() < 0.6:
                continue
            for i in v1:
                if len(v2) >= 20:
                    pairs.append((i, tuple(rng.sample(list(v2), 20))))
                    made += 1
            if made >= 20:
                break
    return sample_docs, intra, rng.sample(pairs, n)


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 26), min_size=3, max_size=9),
    sharecode=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_small_v1_draws_are_the_scripts(sizes: list[int], sharecode: bool, seed: int) -> None:
    if sum(min(20, s) for s in sizes if s >= 21) < 5:
        sizes = [*sizes, 22]
    # ShareCode-like names: the filter keeps 0_x and 1_xxxx, drops 2_x and 1_xxxxx
    names = ["1_ab", "0_c", "2_d", "1_abcde", "1_e", "0_ff", "3_g", "1_h", "0_ij"]
    labels = names if sharecode else [f"task{i}" for i in range(len(names))]
    classes = [labels[c] for c, size in enumerate(sizes) for _ in range(size)]
    data: dict[str, list[int]] = {}
    for i, cls in enumerate(classes):
        data.setdefault(cls if sharecode else f"1_{labels.index(cls)}", []).append(i)
    try:
        docs, intra, inter = script_small_v1(data, 5, seed)
    except ValueError:  # the script fails: fewer candidates than it samples
        with pytest.raises(CrystalError, match="lower --n"):
            draw_small_v1(classes, 5, seed)
        return
    got = draw_small_v1(classes, 5, seed)
    assert got.sset_docs == docs
    assert got.pairs.intra == intra and got.pairs.inter == inter


def reference_multiref(by_cls: dict[str, list[int]], items: list[int], n: int, seed: int):  # type: ignore[no-untyped-def]
    """reference_eval.py's multiref draws (R, the 30 % sample, then n of each kind)."""
    rng = random.Random(seed + 1)
    R = next((r for r in (20, 10, 5, 2) if sum(len(v) >= r + 1 for v in by_cls.values()) >= 5), 1)
    sample_ids = [i for i in items if rng.random() < 0.3]
    big = [c for c in sorted(by_cls) if len(by_cls[c]) >= R + 1]
    big_inter = [c for c in sorted(by_cls) if len(by_cls[c]) >= R]
    intra, inter = [], []
    for _ in range(n):
        c = rng.choice(big)
        h = rng.choice(by_cls[c])
        refs = rng.sample([i for i in by_cls[c] if i != h], R)
        intra.append((h, tuple(refs)))
        c1 = rng.choice(sorted(by_cls))
        h = rng.choice(by_cls[c1])
        c2 = rng.choice([c for c in big_inter if c != c1])
        inter.append((h, tuple(rng.sample(by_cls[c2], R))))
    return R, sample_ids, intra, inter


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(2, 24), min_size=2, max_size=8), seed=st.integers(0, 99))
def test_multiref_draws_are_the_reference_evaluations(sizes: list[int], seed: int) -> None:
    classes = [f"c{c % 5}{c}" for c, size in enumerate(sizes) for _ in range(size)]
    usable = [i % 7 != 3 for i in range(len(classes))]  # items without tokens are left out
    items = [i for i, ok in enumerate(usable) if ok]
    by_cls: dict[str, list[int]] = {}
    for i in items:
        by_cls.setdefault(classes[i], []).append(i)
    got = draw_multiref(classes, usable, 6, seed)
    R, docs, intra, inter = reference_multiref(by_cls, items, 6, seed)
    assert (got.references, got.sset_docs) == (R, docs)
    assert got.pairs.intra == intra and got.pairs.inter == inter


def test_paper_protocol_scores_are_nltk_and_crystalbleu_corpus_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nltk_bleu = pytest.importorskip("nltk.translate.bleu_score")
    crystalbleu = pytest.importorskip("crystalbleu")
    from crystal_lsp.metric.sset import build_sset
    from crystal_lsp.text.tokens import tokenize

    rows = [
        {"id": f"{c}-{i}", "class": f"t{c}", "lang": "python",
         "code": f"def f{c}(x):\n    y = x * {i % (c + 2)} + {c}\n    return y - {i}\n"}
        for c in range(6) for i in range(22 + c)
    ]  # fmt: skip
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "pairs.jsonl"
    argv = ["disting", str(path), "--protocol", "paper", "--n", "20", "-k", "40"]
    assert main([*argv, "--format", "json", "--pairs-out", str(out), "--seed", "4"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["protocol_signature"].startswith("disting|paper:small_v1|first:reference|agg:corpus")
    toks = {r["id"]: list(tokenize(r["code"], "python").texts) for r in rows}
    draw = draw_small_v1([r["class"] for r in rows], 20, 4)
    ignoring = build_sset([toks[rows[i]["id"]] for i in draw.sset_docs], 40).as_ignoring()
    scored = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    smooth = nltk_bleu.SmoothingFunction(epsilon=0.0001).method1
    for label, key in ((1, "intra_mean"), (0, "inter_mean")):
        group = [r for r in scored if r["label"] == label]
        refs = [[toks[i] for i in r["references"]] for r in group]
        hyps = [toks[r["hypothesis"]] for r in group]
        want_bleu = nltk_bleu.corpus_bleu(refs, hyps, smoothing_function=smooth)
        want_crystal = crystalbleu.corpus_bleu(
            refs, hyps, smoothing_function=smooth, ignoring=ignoring
        )
        got = {m["metric"]: m[key] for m in doc["metrics"]}
        assert abs(got["bleu"] - want_bleu) <= 1e-12
        assert abs(got["crystalbleu"] - want_crystal) <= 1e-12
