"""``disting`` on pair-labeled sets (:mod:`crystal_lsp.metric.pairdata`).

The pairs are given: label 1 pairs are the equivalent (intra) ones, label 0 the others. The
``test`` split is scored; the ``train`` split's pairs set the classifier's threshold and its
programs build S. Without ``--exact``, ``--n`` pairs of each label are drawn from each split
(seeded, without replacement, uniformly over the given pairs).
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass

from crystal_lsp.cli.common import warn
from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.disting import Pair, PairSets
from crystal_lsp.metric.pairdata import LabeledPair, load_pair_dataset


@dataclass
class Inputs:
    """What a run scores: programs, their language, the test and train pairs."""

    ids: list[str]
    codes: list[str]
    langs: list[str]
    test: PairSets
    train: PairSets | None
    train_idx: list[int]
    description: str
    left_out: dict[str, int]
    test_items: int
    mode: str


def _drawn(pairs: list[LabeledPair], label: int, n: int | None, seed: int) -> list[Pair]:
    chosen = [p for p in pairs if p.label == label]
    if n is not None and len(chosen) > n:
        chosen = random.Random(seed).sample(chosen, n)
    return [(p.a, (p.b,)) for p in chosen]


def _pair_sets(pairs: list[LabeledPair], n: int | None, seed: int) -> PairSets:
    return PairSets(_drawn(pairs, 1, n, seed), _drawn(pairs, 0, n, seed + 7))


def pair_inputs(args: argparse.Namespace) -> Inputs:
    """The inputs of a pair-labeled folder."""
    data = load_pair_dataset(args.dataset)
    n = None if args.exact else args.n
    test = _pair_sets(data.split("test"), n, args.seed)
    if not test.intra or not test.inter:
        raise CrystalError(
            f"{args.dataset}: the test split needs pairs labeled 1 and 0 "
            f"({len(test.intra)} and {len(test.inter)} found)"
        )
    train_pairs = data.split("train")
    train = _pair_sets(train_pairs, n, args.seed + 1) if train_pairs else None
    if train is None or not train.intra or not train.inter:
        warn("the train split lacks pairs of both labels: no threshold classifier")
        train = None
    train_idx = sorted({i for p in train_pairs for i in (p.a, p.b)})
    counts = {s: len(data.split(s)) for s in ("train", "valid", "test")}
    given = ", ".join(f"{v:,} {k}" for k, v in counts.items() if v)
    return Inputs(
        data.ids,
        data.codes,
        data.langs,
        test,
        train,
        train_idx,
        f"{len(data.ids):,} programs, pairs given ({given}; {data.layout} layout)",
        dict(data.left_out),
        len({i for p in data.split("test") for i in (p.a, p.b)}),
        "labeled pairs" + ("" if args.exact else ", drawn uniformly from the given ones"),
    )
