"""Which pairs ``disting`` scores: every pair, or pairs drawn as the reference scripts draw them.

Pairs are ``(hypothesis, references)`` of item indices.

* ``pairs`` protocol (default): one reference per pair. *Exact* uses every ordered intra-class
  pair and every ordered inter-class pair. *Sampled* draws exactly what the reference evaluation
  of the shared datasets draws (``sample_class_pairs`` of ``reference_eval.py``, seed 0 for the
  published figures): one ``random.Random(seed)`` draws the test intra-class pairs, then the test
  inter-class pairs, then the train ones; pairs are distinct and unordered; ``class`` sampling
  picks a class uniformly (among those with two items or more), then two of its items, or two
  distinct classes, then one item of each; ``uniform`` sampling is uniform over all such pairs.
  The reference scores a drawn pair ``(a, b)`` as ``sentence_bleu([a], b)``: the first item is
  the *reference* (``first="reference"``); ``first="hypothesis"`` scores it the other way round.
* ``classwise`` protocol: Definition 3.1 of the paper literally. Intra: each item against all
  other items of its class as references; inter: each item against every other class as
  references (sampled: ``n`` of each).

Classes are ordered by their labels as strings.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from crystal_lsp.errors import CrystalError

Pair = tuple[int, tuple[int, ...]]
PROTOCOLS = ("pairs", "classwise")
SAMPLINGS = ("class", "uniform")
FIRSTS = ("reference", "hypothesis")
TRIES_PER_PAIR = 200
"""The reference gives up after ``200 n`` draws (duplicates included)."""


@dataclass(frozen=True)
class PairSets:
    """Intra-class (equivalent) and inter-class (non-equivalent) pairs."""

    intra: list[Pair]
    inter: list[Pair]


def by_class(classes: Sequence[str], indices: Sequence[int]) -> dict[str, list[int]]:
    """Items by class (classes sorted, items in the order given)."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i in indices:
        groups[classes[i]].append(i)
    return dict(sorted(groups.items()))


def count_exact_pairs(classes: Sequence[str], indices: Sequence[int]) -> tuple[int, int]:
    """How many ordered intra- and inter-class pairs ``exact`` would score."""
    sizes = [len(m) for m in by_class(classes, indices).values()]
    total = len(indices)
    intra = sum(s * (s - 1) for s in sizes)
    return intra, total * (total - 1) - intra


def exact_pairs(
    classes: Sequence[str], indices: Sequence[int], protocol: str = "pairs"
) -> PairSets:
    """Every pair of the protocol."""
    groups = by_class(classes, indices)
    intra: list[Pair] = []
    inter: list[Pair] = []
    if protocol == "classwise":
        for cls, members in groups.items():
            for a in members:
                others = tuple(m for m in members if m != a)
                if others:
                    intra.append((a, others))
                for other_cls, other in groups.items():
                    if other_cls != cls:
                        inter.append((a, tuple(other)))
        return PairSets(intra, inter)
    for members in groups.values():
        for a in members:
            intra.extend((a, (b,)) for b in members if b != a)
    ordered = list(indices)
    for a in ordered:
        ca = classes[a]
        inter.extend((a, (b,)) for b in ordered if classes[b] != ca)
    return PairSets(intra, inter)


def oriented(drawn: Sequence[tuple[int, int]], first: str) -> list[Pair]:
    """Drawn ``(a, b)`` pairs as ``(hypothesis, (reference,))`` (see the module docstring)."""
    if first not in FIRSTS:
        raise CrystalError(f"unknown pair order {first!r} (use {' or '.join(FIRSTS)})")
    if first == "reference":
        return [(b, (a,)) for a, b in drawn]
    return [(a, (b,)) for a, b in drawn]


def draw_pairs(
    groups: dict[str, list[int]], n: int, rng: random.Random, intra: bool, sampling: str
) -> list[tuple[int, int]]:
    """Up to ``n`` distinct unordered pairs, drawn step for step as the reference draws them."""
    if sampling not in SAMPLINGS:
        raise CrystalError(f"unknown pair sampling {sampling!r} (use class or uniform)")
    classes = [c for c in sorted(groups) if len(groups[c]) >= (2 if intra else 1)]
    sizes = [len(groups[c]) for c in classes]
    if intra:
        total = sum(s * (s - 1) // 2 for s in sizes)
    else:
        total = (sum(sizes) ** 2 - sum(s * s for s in sizes)) // 2
    weights = [s * (s - 1) / 2 for s in sizes]
    flat = [(i, c) for c in classes for i in groups[c]]
    out: list[tuple[int, int]] = []
    seen: set[tuple[int, int]] = set()
    tries = 0
    while len(out) < min(n, total) and tries < TRIES_PER_PAIR * n:
        tries += 1
        if intra:
            c = rng.choice(classes) if sampling == "class" else rng.choices(classes, weights)[0]
            a, b = rng.sample(groups[c], 2)
        elif sampling == "class":
            c1, c2 = rng.sample(classes, 2)
            a, b = rng.choice(groups[c1]), rng.choice(groups[c2])
        else:
            (a, ca), (b, cb) = rng.sample(flat, 2)
            if ca == cb:
                continue
        key = (a, b) if a < b else (b, a)
        if key not in seen:
            seen.add(key)
            out.append((a, b))
    return out


def _check_classes(groups: dict[str, list[int]], split: str) -> None:
    where = f" of the {split} split" if split else ""
    if not groups:
        raise CrystalError(f"no item{where} has tokens: there are no pairs to draw")
    if not any(len(m) >= 2 for m in groups.values()):
        raise CrystalError(f"no class{where} has two items: there are no intra-class pairs")
    if len(groups) < 2:
        raise CrystalError(f"all items{where} are in one class: there are no inter-class pairs")


def sample_pairs(
    classes: Sequence[str],
    indices: Sequence[int],
    n: int,
    seed: int | random.Random,
    protocol: str = "pairs",
    sampling: str = "class",
    first: str = "reference",
    split: str = "",
) -> PairSets:
    """``n`` intra- and ``n`` inter-class pairs of one split (module docstring).

    ``seed`` may be an RNG already in use: the test and train pairs of the reference come from
    one RNG, in that order (:func:`sample_splits`).
    """
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    groups = by_class(classes, indices)
    _check_classes(groups, split)
    if protocol == "classwise":
        return _classwise_sample(rng, groups, classes, list(indices), n)
    intra = draw_pairs(groups, n, rng, True, sampling)
    inter = draw_pairs(groups, n, rng, False, sampling)
    return PairSets(oriented(intra, first), oriented(inter, first))


def sample_splits(
    classes: Sequence[str],
    test: Sequence[int],
    train: Sequence[int],
    n: int,
    seed: int,
    protocol: str = "pairs",
    sampling: str = "class",
    first: str = "reference",
) -> tuple[PairSets, PairSets | None]:
    """Test pairs, then train pairs, from one RNG (train None: it has no pair of one kind)."""
    rng = random.Random(seed)
    test_pairs = sample_pairs(classes, test, n, rng, protocol, sampling, first, "test")
    groups = by_class(classes, train)
    if len(groups) < 2 or not any(len(m) >= 2 for m in groups.values()):
        return test_pairs, None
    if protocol == "classwise":  # its own draws: the train split with seed + 1, as before
        rng = random.Random(seed + 1)
    return test_pairs, sample_pairs(classes, train, n, rng, protocol, sampling, first, "train")


def _classwise_sample(
    rng: random.Random,
    groups: dict[str, list[int]],
    classes: Sequence[str],
    pool: list[int],
    n: int,
) -> PairSets:
    multi = [(cls, m) for cls, m in groups.items() if len(m) >= 2]
    intra: list[Pair] = []
    inter: list[Pair] = []
    weights = [len(m) for _, m in multi]
    for _ in range(n):
        _, members = rng.choices(multi, weights=weights)[0]
        a = rng.choice(members)
        intra.append((a, tuple(m for m in members if m != a)))
    names = list(groups)
    for _ in range(n):
        a = rng.choice(pool)
        other = rng.choice([c for c in names if c != classes[a]])
        inter.append((a, tuple(groups[other])))
    return PairSets(intra, inter)


def sample_given(
    pairs: Sequence[tuple[int, int]], n: int | None, rng: random.Random, first: str
) -> list[Pair]:
    """``n`` of given pairs, drawn as the reference draws labeled pairs (all when ``n`` is None)."""
    chosen = list(pairs) if n is None else rng.sample(list(pairs), min(n, len(pairs)))
    return oriented(chosen, first)
