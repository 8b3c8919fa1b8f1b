"""The pairs ``disting`` draws are the reference evaluation's, pair for pair, seed for seed.

The oracle is ``sample_class_pairs`` of the shared datasets' ``reference_eval.py`` (the script
the published figures come from), copied verbatim below; when the script is on this machine, the
copy is checked against it.
"""

from __future__ import annotations

import inspect
import os
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crystal_lsp.metric.sampling import draw_pairs, sample_given, sample_splits

REFERENCE_SCRIPT = (
    Path(os.environ.get("CRYSTAL_REFERENCE_TOOLS", "/work/shared/tools")) / "reference_eval.py"
)


# ---- verbatim from reference_eval.py (the shared datasets' reference evaluation) -------------
# fmt: off
def sample_class_pairs(ids_by_cls, n, rng, intra, mode='class'):  # type: ignore[no-untyped-def]
    """Sample up to n distinct unordered pairs of the same (intra) / of different (inter) classes.
    mode='class'  : class-balanced -- intra: pick a class uniformly (among classes with >=2 programs), then two of
                    its programs; inter: pick two distinct classes uniformly, then one program of each.
    mode='uniform': uniform over all unordered program pairs of that kind (large classes dominate intra pairs,
                    like sc_clone_dataset.py's random program pairs)."""
    classes = [c for c in sorted(ids_by_cls) if len(ids_by_cls[c]) >= (2 if intra else 1)]
    out, seen = [], set()
    total = (sum(len(ids_by_cls[c]) * (len(ids_by_cls[c]) - 1) // 2 for c in classes) if intra else
             (sum(len(ids_by_cls[c]) for c in classes) ** 2 - sum(len(ids_by_cls[c]) ** 2 for c in classes)) // 2)
    target = min(n, total)
    weights = [len(ids_by_cls[c]) * (len(ids_by_cls[c]) - 1) / 2 for c in classes]
    flat = [(i, c) for c in classes for i in ids_by_cls[c]]
    tries = 0
    while len(out) < target and tries < 200 * n:
        tries += 1
        if intra:
            c = rng.choice(classes) if mode == 'class' else rng.choices(classes, weights)[0]
            a, b = rng.sample(ids_by_cls[c], 2)
        elif mode == 'class':
            c1, c2 = rng.sample(classes, 2)
            a, b = rng.choice(ids_by_cls[c1]), rng.choice(ids_by_cls[c2])
        else:
            (a, ca), (b, cb) = rng.sample(flat, 2)
            if ca == cb:
                continue
        key = (min(a, b), max(a, b))
        if key not in seen:
            seen.add(key)
            out.append((a, b))
    return out
# fmt: on
# ---- end of the verbatim copy -------------------------------------------------------------------


@pytest.mark.skipif(not REFERENCE_SCRIPT.exists(), reason="reference_eval.py is not here")
def test_the_oracle_is_the_reference_scripts_own_code() -> None:
    source = REFERENCE_SCRIPT.read_text(encoding="utf-8")
    assert (
        inspect.getsource(sample_class_pairs).replace("  # type: ignore[no-untyped-def]", "")
        in source
    )


@st.composite
def labeled(draw: st.DrawFn) -> tuple[list[str], list[int], list[int]]:
    """Classes of items (file order), and which items are test and train."""
    sizes = draw(st.lists(st.integers(1, 9), min_size=2, max_size=7))
    names = [f"c{k}" for k in range(len(sizes))]
    classes = [name for name, size in zip(names, sizes) for _ in range(size)]
    classes = draw(st.permutations(classes))
    train = [draw(st.booleans()) for _ in classes]
    return (
        list(classes),
        [i for i, t in enumerate(train) if not t],
        [i for i, t in enumerate(train) if t],
    )


def _by_class(classes: list[str], indices: list[int]) -> dict[str, list[str]]:
    """The reference's ``split_ids``: ids (strings) by class, in file order."""
    out: dict[str, list[str]] = {}
    for i in indices:
        out.setdefault(classes[i], []).append(f"p{i:03d}")
    return out


@settings(max_examples=300, deadline=None)
@given(
    data=labeled(),
    n=st.integers(1, 60),
    seed=st.integers(0, 2**32),
    mode=st.sampled_from(["class", "uniform"]),
)
def test_draws_equal_the_reference(
    data: tuple[list[str], list[int], list[int]], n: int, seed: int, mode: str
) -> None:
    classes, test, _ = data
    groups = {c: [int(x[1:]) for x in ids] for c, ids in _by_class(classes, test).items()}
    for intra in (True, False):
        if not any(len(m) >= 2 for m in groups.values()) or len(groups) < 2:
            return
        ours = draw_pairs(dict(sorted(groups.items())), n, random.Random(seed), intra, mode)
        theirs = sample_class_pairs(_by_class(classes, test), n, random.Random(seed), intra, mode)
        assert [(f"p{a:03d}", f"p{b:03d}") for a, b in ours] == theirs


@settings(max_examples=150, deadline=None)
@given(data=labeled(), n=st.integers(1, 40), seed=st.integers(0, 1000))
def test_test_and_train_pairs_come_from_one_rng_in_the_reference_order(
    data: tuple[list[str], list[int], list[int]], n: int, seed: int
) -> None:
    classes, test, train = data
    splits = [_by_class(classes, test), _by_class(classes, train)]
    if any(not any(len(m) >= 2 for m in g.values()) or len(g) < 2 for g in splits):
        return
    rng = random.Random(seed)
    expected = [
        sample_class_pairs(groups, n, rng, intra) for groups in splits for intra in (True, False)
    ]
    got_test, got_train = sample_splits(classes, test, train, n, seed)
    assert got_train is not None
    # the reference scores sentence_bleu([toks[a]], toks[b]): b is the hypothesis
    for got, want in zip(
        (got_test.intra, got_test.inter, got_train.intra, got_train.inter), expected
    ):
        assert [(f"p{r:03d}", f"p{h:03d}") for h, (r,) in got] == want
    flipped, _ = sample_splits(classes, test, train, n, seed, first="hypothesis")
    assert [(h, r) for h, (r,) in flipped.intra] == [(r, h) for h, (r,) in got_test.intra]


@settings(max_examples=100)
@given(count=st.integers(0, 30), n=st.integers(1, 40), seed=st.integers(0, 1000))
def test_labeled_pairs_are_drawn_as_the_reference_picks_them(count: int, n: int, seed: int) -> None:
    pairs = [(i, i + 100) for i in range(count)]
    got = sample_given(pairs, n, random.Random(seed), "reference")
    want = random.Random(seed).sample(pairs, min(n, len(pairs)))  # reference_eval.py's pick()
    assert [(r, h) for h, (r,) in got] == want
    assert sample_given(pairs, None, random.Random(seed), "hypothesis") == [
        (a, (b,)) for a, b in pairs
    ]
