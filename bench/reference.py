"""The reference evaluation of the shared labeled sets, run pair by pair for the benchmarks.

``reference_eval.py`` (NLTK 3.10.4 and crystalbleu 0.2, seed 0) is the script the data README's
figures come from. Its ``run()`` prints figures but returns no pairs, so this module runs the
script's own functions in the same order -- ``load``, ``tokenize``, ``sample_class_pairs`` on one
``random.Random(seed)`` (test intra, test inter, train intra, train inter), ``count_ngrams`` and
``most_common(k)``, ``sent_scores``, ``auc``, ``classify`` -- and keeps every pair and score.
The script is loaded from ``--reference-tools`` / ``$CRYSTAL_REFERENCE_TOOLS`` (default
``/work/shared/tools``), never copied into the project.
"""

from __future__ import annotations

import collections
import importlib.util
import os
import random
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

DEFAULT_TOOLS = os.environ.get("CRYSTAL_REFERENCE_TOOLS", "/work/shared/tools")
GROUPS = ("test_intra", "test_inter", "train_intra", "train_inter")
METRICS = {"bleu": "BLEU", "crystalbleu": "CrystalBLEU"}


def load_reference(tools: str | Path, data: str | Path) -> ModuleType | None:
    """``reference_eval.py`` as a module reading ``data``, or None when it is not there."""
    path = Path(tools) / "reference_eval.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("reference_eval", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["reference_eval"] = module
    spec.loader.exec_module(module)
    module.DATA = str(data)
    return module


@dataclass
class ReferenceRun:
    """One set as the reference evaluates it: tokens, pairs, S, every score, the figures."""

    name: str
    lang: str
    items: list[dict[str, Any]]
    tokens: dict[str, list[str]]
    pairs: dict[str, list[tuple[str, str]]]
    """By group (:data:`GROUPS`): ``(a, b)`` id pairs, scored as ``sentence_bleu([a], b)``."""
    train_ids: list[str]
    ignoring: dict[tuple[str, ...], int]
    scores: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    """By metric (``bleu``, ``crystalbleu``), then group."""
    figures: dict[str, dict[str, float]] = field(default_factory=dict)


def run_reference(
    ref: ModuleType,
    name: str,
    seed: int = 0,
    n: int = 1000,
    k: int = 500,
    score: bool = True,
    mode: str = "class",
) -> ReferenceRun:
    """The reference's tokens, pairs, S and (with ``score``) scores and figures of one set.

    ``mode`` is the script's ``--pair-sampling`` (``class``, the published figures, or
    ``uniform``).
    """
    rng = random.Random(seed)
    meta, items, _ = ref.load(name)
    if meta["kind"] != "class-labeled":
        raise SystemExit(f"{name}: only class-labeled sets are run here")
    lang = items[0]["lang"]
    lexer = ref.LEXERS[lang]()
    toks = {it["id"]: ref.tokenize(it["code"], lexer) for it in items}
    empty = {i for i, v in toks.items() if not v}
    split_ids: dict[str, Any] = {
        "train": collections.defaultdict(list),
        "test": collections.defaultdict(list),
    }
    for it in items:
        if it["id"] not in empty:
            split_ids[it["split"]][it["class"]].append(it["id"])
    train_ids = [i for v in split_ids["train"].values() for i in v]
    pairs = {
        f"{split}_{kind}": ref.sample_class_pairs(
            split_ids[split], n, rng, intra=kind == "intra", mode=mode
        )
        for split in ("test", "train")
        for kind in ("intra", "inter")
    }
    ignoring = dict(ref.count_ngrams(toks[i] for i in train_ids).most_common(k))
    out = ReferenceRun(name, lang, items, toks, pairs, train_ids, ignoring)
    if score:
        for group, drawn in pairs.items():
            bleu, crystal, _, _ = ref.sent_scores(drawn, toks, ignoring)
            out.scores.setdefault("bleu", {})[group] = bleu
            out.scores.setdefault("crystalbleu", {})[group] = crystal
        out.figures = {metric: _figures(ref, out.scores[metric]) for metric in METRICS}
    return out


def _figures(ref: ModuleType, scores: dict[str, list[float]]) -> dict[str, float]:
    """Distinguishability, ROC AUC and threshold accuracy as the reference computes them."""
    pos, neg = scores["test_intra"], scores["test_inter"]
    labels = [1] * len(pos) + [0] * len(neg)
    classified = ref.classify(scores["train_intra"], scores["train_inter"], pos + neg, labels)
    return {
        "disting": ref.ratio(statistics.fmean(pos), statistics.fmean(neg)),
        "auc": ref.auc(pos, neg),
        "accuracy": classified["accuracy"],
        "threshold": classified["threshold"],
    }
