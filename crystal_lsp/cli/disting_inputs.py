"""What ``disting`` scores: a dataset's items, and the pairs drawn from those with tokens.

Both kinds of dataset are read whole and every item is tokenized first: items without tokens are
left out (and counted) before any pair is drawn, as the reference evaluation does, so the same
seed draws the same pairs.

* class-labeled JSONL (:mod:`crystal_lsp.metric.datasets`): pairs drawn from the classes of the
  ``test`` split, then of the ``train`` split (:func:`crystal_lsp.metric.sampling.sample_splits`),
  or all of them (``--exact``); S is counted over the train items class by class, classes in the
  order they first appear, as the reference counts them;
* pair-labeled folders (:mod:`crystal_lsp.metric.pairdata`): label 1 pairs are the equivalent
  (intra) ones, label 0 the others; ``--n`` of each label are drawn from the test split, then from
  the train split, with one RNG (all of them with ``--exact``); S is counted over the programs of
  the train pairs, ordered by id.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.datasets import SPLIT_SEED, TRAIN_FRACTION, load_dataset
from crystal_lsp.metric.disting import EXACT_PAIR_LIMIT
from crystal_lsp.metric.pairdata import LabeledPair, load_pair_dataset
from crystal_lsp.metric.paper import PAPER_PROTOCOLS, draw_multiref, draw_small_v1
from crystal_lsp.metric.sampling import (
    PairSets,
    count_exact_pairs,
    exact_pairs,
    sample_given,
    sample_splits,
)


@dataclass
class Drawn:
    """The pairs a run scores and the documents S is counted over."""

    test: PairSets
    train: PairSets | None
    train_docs: list[int]
    """Items S is built from, in the order the reference counts them."""
    test_items: int
    short: dict[str, int] = field(default_factory=dict)
    """Pairs fewer than ``--n``, by kind (all distinct ones were taken)."""
    references: int = 0
    """References per hypothesis of a paper protocol (0: another protocol)."""


@dataclass
class Dataset:
    """The items of a dataset and their labels (classes and splits, or labeled pairs)."""

    ids: list[str]
    codes: list[str]
    langs: list[str]
    description: str
    left_out: dict[str, int]
    classes: list[str] = field(default_factory=list)
    splits: list[str] = field(default_factory=list)
    pairs: list[LabeledPair] | None = None
    """The labeled pairs of a pair-labeled folder (None: a class-labeled dataset)."""
    assigned_split: str = ""
    """How the splits were assigned when the file has none (``""``: the file's own)."""


def read_dataset(path: str, pair_labeled: bool) -> Dataset:
    """A class-labeled JSONL dataset, or a pair-labeled folder."""
    if pair_labeled:
        data = load_pair_dataset(path)
        counts = {s: len(data.split(s)) for s in ("train", "valid", "test")}
        given = ", ".join(f"{v:,} {k}" for k, v in counts.items() if v)
        return Dataset(
            data.ids,
            data.codes,
            data.langs,
            f"{len(data.ids):,} programs, pairs given ({given}; {data.layout} layout)",
            dict(data.left_out),
            pairs=data.pairs,
        )
    items, assigned = load_dataset(path)
    train = sum(it.split == "train" for it in items)
    return Dataset(
        [it.id for it in items],
        [it.code for it in items],
        [it.lang for it in items],
        f"{len(items):,} items ({train:,} train / {len(items) - train:,} test)",
        {},
        [it.cls for it in items],
        [it.split for it in items],
        assigned_split=f"seeded-{TRAIN_FRACTION:.0%}-train:{SPLIT_SEED}" if assigned else "",
    )


def draw(data: Dataset, usable: Sequence[bool], args: argparse.Namespace) -> Drawn:
    """The pairs of the items with tokens (``usable``), by the options (module docstring)."""
    if args.protocol in PAPER_PROTOCOLS:
        return _paper(data, usable, args)
    if data.pairs is not None:
        return _given_pairs(data, data.pairs, usable, args)
    classes = data.classes
    keep = [i for i, ok in enumerate(usable) if ok]
    test_idx = [i for i in keep if data.splits[i] == "test"]
    train_idx = [i for i in keep if data.splits[i] == "train"]
    if args.exact:
        test, train = _exact(classes, test_idx, args), None
        if len({classes[i] for i in train_idx}) > 1:
            train = _exact(classes, train_idx, args)
    else:
        test, train = sample_splits(
            classes,
            test_idx,
            train_idx,
            args.n,
            args.seed,
            args.protocol,
            args.pair_sampling,
            args.first_is,
        )
    order: dict[str, list[int]] = {}
    for i in train_idx:
        order.setdefault(classes[i], []).append(i)
    docs = [i for members in order.values() for i in members]
    short = {} if args.exact else _shortfall(test, train, args.n)
    return Drawn(test, train, docs, len(test_idx), short)


def _paper(data: Dataset, usable: Sequence[bool], args: argparse.Namespace) -> Drawn:
    """A paper protocol's draws (:mod:`crystal_lsp.metric.paper`): no splits, no train pairs."""
    if data.pairs is not None:
        raise CrystalError(f"--protocol {args.protocol} needs a class-labeled dataset")
    if args.exact:
        raise CrystalError(f"--protocol {args.protocol} draws its hypotheses: drop --exact")
    if args.protocol == "paper":
        drawn = draw_small_v1(data.classes, args.n, args.seed)
        items = len(data.classes)
    else:
        drawn = draw_multiref(data.classes, usable, args.n, args.seed)
        items = sum(1 for ok in usable if ok)
    return Drawn(drawn.pairs, None, drawn.sset_docs, items, references=drawn.references)


def _shortfall(test: PairSets, train: PairSets | None, n: int) -> dict[str, int]:
    """Pairs fewer than ``n`` by kind: a split holds fewer distinct ones."""
    out: dict[str, int] = {}
    for split, pairs in (("test", test), ("train", train)):
        if pairs is None:
            continue
        for kind, got in (("intra", pairs.intra), ("inter", pairs.inter)):
            if len(got) < n:
                out[f"{kind}-class {split} pairs fewer than --n (all distinct ones taken)"] = (
                    n - len(got)
                )
    return out


def _exact(classes: list[str], indices: list[int], args: argparse.Namespace) -> PairSets:
    intra, inter = count_exact_pairs(classes, indices)
    total = intra + inter if args.protocol == "pairs" else len(indices) * 2
    if total > EXACT_PAIR_LIMIT:
        raise CrystalError(
            f"--exact would score {total:,} pairs (limit {EXACT_PAIR_LIMIT:,}); sample with --n"
        )
    return exact_pairs(classes, indices, args.protocol)


def _given_pairs(
    data: Dataset, pairs: list[LabeledPair], usable: Sequence[bool], args: argparse.Namespace
) -> Drawn:
    """Labeled pairs drawn as the reference draws them: test 1, test 0, train 1, train 0."""
    if args.protocol != "pairs":
        raise CrystalError("a pair-labeled dataset has its pairs given: use --protocol pairs")
    kept = [p for p in pairs if usable[p.a] and usable[p.b]]
    rng = random.Random(args.seed)
    n = None if args.exact else args.n

    def pick(split: str, label: int) -> list[tuple[int, int]]:
        return [(p.a, p.b) for p in kept if p.split == split and p.label == label]

    test = PairSets(
        sample_given(pick("test", 1), n, rng, args.first_is),
        sample_given(pick("test", 0), n, rng, args.first_is),
    )
    if not test.intra or not test.inter:
        raise CrystalError(
            f"{args.dataset}: the test split needs pairs labeled 1 and 0 "
            f"({len(test.intra)} and {len(test.inter)} found)"
        )
    drawn_train = PairSets(
        sample_given(pick("train", 1), n, rng, args.first_is),
        sample_given(pick("train", 0), n, rng, args.first_is),
    )
    train = drawn_train if drawn_train.intra and drawn_train.inter else None
    docs = sorted(
        {i for p in kept if p.split == "train" for i in (p.a, p.b)}, key=data.ids.__getitem__
    )
    test_items = len({i for p in kept if p.split == "test" for i in (p.a, p.b)})
    return Drawn(test, train, docs, test_items)
