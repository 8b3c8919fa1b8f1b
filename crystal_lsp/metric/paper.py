"""The paper's Table-2 protocol for class-labeled sets, as two scripts draw it.

Both score hypotheses against several references of one class (intra) or of another class
(inter) and take the corpus score of each set; S is the ``k`` most frequent n-grams
(``Counter.most_common``) of a random 30 % of the programs. Splits are not used.

* ``paper`` -- the authors' ``small_v1.py`` (sola-st/crystalbleu), with Python's ``random`` seeded
  by ``seed`` (the script itself is unseeded: ``random.seed(seed)`` before it runs gives the same
  draws). Classes in the order they first appear, programs in file order, every program (even
  one without tokens). In order: each program of a *counted* class enters S's corpus with
  probability 0.3; intra candidates: per class, its first programs (at most 20) that have at
  least 20 others, each with 20 of them drawn; inter candidates: per counted class, each other
  counted class kept with probability 0.4 gives every program of the first class 20 programs of
  it as references (classes with fewer than 20 programs give none), until 20 were made for the
  first class; then ``n`` candidates of each kind are drawn. *Counted* is the script's ShareCode
  problem-name filter (``A_B`` with ``int(A) <= 1`` and ``len(B) <= 4``), applied when every class
  name has that form; otherwise every class is counted (the script would fail on such names).
* ``paper-multiref`` -- the multi-reference protocol of the shared reference evaluation
  (``reference_eval.py``'s ``multiref``, its ``d_multiref``): items without tokens left out, one
  ``random.Random(seed + 1)``; R = 20 references when at least 5 classes have 21 programs (else
  10, 5, 2, 1); S's corpus a random 30 % of the items; then ``n`` times: an intra hypothesis from
  a class drawn among those with R + 1 programs, with R others of it; an inter hypothesis from any
  class, with R programs of another class with at least R.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.sampling import Pair, PairSets

PAPER_PROTOCOLS = ("paper", "paper-multiref")
SAMPLE_RATE = 0.3
REFERENCES = 20
_SHARECODE = re.compile(r"\d+_[^_]*(?:_.*)?", re.S)


@dataclass(frozen=True)
class PaperDraw:
    """The scored sets and the items S is counted over, in the order they are counted."""

    pairs: PairSets
    sset_docs: list[int]
    references: int


def ordered_classes(classes: Sequence[str], indices: Sequence[int]) -> dict[str, list[int]]:
    """Items by class, classes in the order they first appear (a JSON object's order)."""
    groups: dict[str, list[int]] = {}
    for i in indices:
        groups.setdefault(classes[i], []).append(i)
    return groups


def counted(names: Sequence[str]) -> set[str]:
    """The classes ``small_v1.py`` keeps for S and inter pairs (module docstring)."""
    if not all(_SHARECODE.fullmatch(name) for name in names):
        return set(names)
    keep = set()
    for name in names:
        first, second = name.split("_")[:2]
        if int(first) <= 1 and len(second) <= 4:
            keep.add(name)
    return keep


def draw_small_v1(classes: Sequence[str], n: int, seed: int) -> PaperDraw:
    """``small_v1.py``'s draws over every item (module docstring)."""
    rng = random.Random(seed)
    groups = ordered_classes(classes, range(len(classes)))
    kept = counted(list(groups))
    docs = [i for name, members in groups.items() if name in kept for i in members]
    sset_docs = [i for i in docs if rng.random() < SAMPLE_RATE]
    intra: list[Pair] = []
    for members in groups.values():
        made = 0
        for i in members:
            others = [j for j in members if j != i]
            if len(others) >= REFERENCES:
                intra.append((i, tuple(rng.sample(others, REFERENCES))))
                made += 1
            if made >= REFERENCES:
                break
    intra = _draw_n(rng, intra, n, "intra-class", "classes with 21 programs or more")
    inter: list[Pair] = []
    for first in (name for name in groups if name in kept):
        made = 0
        for second in (name for name in groups if name in kept):
            if first == second or rng.random() < 0.6:
                continue
            for i in groups[first]:
                if len(groups[second]) >= REFERENCES:
                    inter.append((i, tuple(rng.sample(groups[second], REFERENCES))))
                    made += 1
            if made >= REFERENCES:
                break
    inter = _draw_n(rng, inter, n, "inter-class", "classes with 20 programs or more")
    return PaperDraw(PairSets(intra, inter), sset_docs, REFERENCES)


def _draw_n(rng: random.Random, candidates: list[Pair], n: int, kind: str, need: str) -> list[Pair]:
    if len(candidates) < n:
        raise CrystalError(
            f"the paper protocol draws {n:,} {kind} hypotheses but the dataset gives "
            f"{len(candidates):,} candidates ({need}); lower --n"
        )
    return rng.sample(candidates, n)


def draw_multiref(classes: Sequence[str], usable: Sequence[bool], n: int, seed: int) -> PaperDraw:
    """``reference_eval.py``'s ``multiref`` draws over the items with tokens (module docstring)."""
    rng = random.Random(seed + 1)
    items = [i for i, ok in enumerate(usable) if ok]
    groups = ordered_classes(classes, items)
    refs = next(
        (r for r in (20, 10, 5, 2) if sum(len(m) >= r + 1 for m in groups.values()) >= 5), 1
    )
    sset_docs = [i for i in items if rng.random() < SAMPLE_RATE]
    names = sorted(groups)
    big = [c for c in names if len(groups[c]) >= refs + 1]
    big_inter = [c for c in names if len(groups[c]) >= refs]
    if not big or len(big_inter) < 2:
        raise CrystalError(
            f"the paper-multiref protocol needs classes of {refs + 1} programs and two classes "
            f"of {refs}: this dataset has {len(big)} and {len(big_inter)}"
        )
    intra: list[Pair] = []
    inter: list[Pair] = []
    for _ in range(n):
        cls = rng.choice(big)
        hyp = rng.choice(groups[cls])
        intra.append((hyp, tuple(rng.sample([i for i in groups[cls] if i != hyp], refs))))
        first = rng.choice(names)
        hyp = rng.choice(groups[first])
        other = rng.choice([c for c in big_inter if c != first])
        inter.append((hyp, tuple(rng.sample(groups[other], refs))))
    return PaperDraw(PairSets(intra, inter), sset_docs, refs)
