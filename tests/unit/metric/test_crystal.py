"""The configured metric object (``crystal_lsp.metric.crystal.CrystalBLEU``) and its two variants.

The removal variant is checked differentially in ``test_crystal_differential.py``; here are the
properties of the inverse-frequency variant (``variant="weight"``, ``w(g) = 1 / max(1, ln f(g))``),
the paper's Fig. 1 values, and the object's API.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import crystal_lsp
from crystal_lsp import CrystalError
from crystal_lsp.metric.crystal import CrystalBLEU, inverse_frequency_weight
from crystal_lsp.metric.signature import Signature
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import TriviallySharedSet

# the core differential/property tests run on both implementations (see conftest.core)
pytestmark = pytest.mark.usefixtures("core")

Grams = dict[tuple[str, ...], int]

letter = st.sampled_from("abcd")
tokens = st.lists(letter, max_size=14)
references = st.lists(tokens, min_size=1, max_size=3)
ngram = st.integers(1, 4).flatmap(lambda n: st.lists(letter, min_size=n, max_size=n).map(tuple))
counts = st.dictionaries(ngram, st.integers(1, 10**6), max_size=25)
methods = st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7])


def _sset(table: Grams) -> TriviallySharedSet:
    return TriviallySharedSet(dict(table), k=len(table))


def _score_or_error(metric: CrystalBLEU, hyp: list[str], refs: list[list[str]]) -> object:
    try:
        return metric.sentence_score(hyp, refs)
    except (CrystalError, IndexError) as exc:  # method 6 on short inputs, as in NLTK
        return type(exc)


# --- the paper's Fig. 1 ---------------------------------------------------------------------


def _example(name: str) -> list[str]:
    text = resources.files("crystal_lsp").joinpath("examples", name).read_text(encoding="utf-8")
    return crystal_lsp.tokenize(text, "java").texts


FIG1 = [
    # (hypothesis file, value in the paper, exact value today)
    pytest.param("fig1_hypothesis1.java", 0.48, 0.4824715549602628, id="fig1-hypothesis1"),
    pytest.param("fig1_hypothesis2.java", 0.55, 0.5458007320208397, id="fig1-hypothesis2"),
]


@pytest.mark.parametrize(("hypothesis", "paper", "exact"), FIG1)
def test_fig1_sentence_bleu_reproduces_the_paper(
    hypothesis: str, paper: float, exact: float
) -> None:
    ref = _example("fig1_reference.java")
    hyp = _example(hypothesis)
    score = crystal_lsp.sentence_bleu([ref], hyp)
    assert round(score, 2) == paper
    assert score == pytest.approx(exact, abs=1e-15)
    assert CrystalBLEU(None, smoothing=Smoothing(0)).sentence_score(hyp, [ref]) == score


def test_fig1_crystalbleu_is_below_bleu_with_the_builtin_java_set() -> None:
    from crystal_lsp.metric.sset import builtin_sset

    sset = builtin_sset("java")
    assert sset is not None
    ref = _example("fig1_reference.java")
    for name in ("fig1_hypothesis1.java", "fig1_hypothesis2.java"):
        hyp = _example(name)
        bleu = CrystalBLEU(None).sentence_score(hyp, [ref])
        crystal = CrystalBLEU(sset.restricted(500)).sentence_score(hyp, [ref])
        assert 0 <= crystal < bleu


# --- inverse frequency weights ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "weight"),
    [
        pytest.param(0, 1.0, id="absent"),
        pytest.param(1, 1.0, id="once"),
        pytest.param(2, 1.0, id="ln-below-1"),
        pytest.param(3, 1 / math.log(3), id="just-above-e"),
        pytest.param(1000, 1 / math.log(1000), id="thousand"),
        pytest.param(10**300, 1 / (300 * math.log(10)), id="1e300"),
    ],
)
def test_inverse_frequency_weight_table(count: int, weight: float) -> None:
    assert inverse_frequency_weight(count) == pytest.approx(weight, rel=1e-15)


@settings(max_examples=500)
@given(
    a=st.one_of(st.integers(1, 10**6), st.integers(1, 10**400)),
    b=st.one_of(st.integers(1, 10**6), st.integers(1, 10**400)),
)
def test_inverse_frequency_weight_is_in_unit_interval_and_non_increasing(a: int, b: int) -> None:
    lo, hi = sorted((a, b))
    w_lo, w_hi = inverse_frequency_weight(lo), inverse_frequency_weight(hi)
    assert 0 < w_hi <= w_lo <= 1


def test_weighted_precision_hand_computed() -> None:
    # Unigrams: a (in S, weight w) b c vs a b d -> (w + 1) / (w + 2); bigrams: ab bc vs ab bd -> 1/2.
    f = 20
    w = 1 / math.log(f)
    metric = CrystalBLEU(
        _sset({("a",): f}), variant="weight", max_n=2, smoothing=Smoothing(0), weights=(0.5, 0.5)
    )
    expected = math.sqrt((w + 1) / (w + 2) * 0.5)
    assert metric.sentence_score(list("abc"), [list("abd")]) == pytest.approx(expected, rel=1e-15)
    counts_ = metric.counts(metric.profile(list("abc")), [metric.profile(list("abd"))])
    assert counts_.numerators == pytest.approx((w + 1, 1))
    assert counts_.denominators == pytest.approx((w + 2, 2))


@settings(max_examples=300)
@given(hyp=tokens, refs=references, method=methods)
def test_weight_with_empty_sset_is_bleu(hyp: list[str], refs: list[list[str]], method: int) -> None:
    smoothing = Smoothing(method, epsilon=0.1)
    weighted = _score_or_error(
        CrystalBLEU(_sset({}), variant="weight", smoothing=smoothing), hyp, refs
    )
    plain = _score_or_error(CrystalBLEU(None, smoothing=smoothing), hyp, refs)
    assert weighted == plain
    if isinstance(plain, float):
        expected = crystal_lsp.sentence_bleu(refs, hyp, smoothing_function=smoothing.function)
        assert plain == expected


@settings(max_examples=300)
@given(
    hyp=tokens,
    refs=references,
    table=st.dictionaries(
        st.lists(st.sampled_from("xyz"), min_size=1, max_size=4).map(tuple),
        st.integers(1, 10**9),
        min_size=1,
        max_size=10,
    ),
    method=methods,
)
def test_ngrams_outside_s_are_unaffected(
    hyp: list[str], refs: list[list[str]], table: Grams, method: int
) -> None:
    """With no n-gram of S in the pair, weight == remove == BLEU."""
    smoothing = Smoothing(method, epsilon=0.1)
    sset = _sset(table)
    weight = _score_or_error(CrystalBLEU(sset, variant="weight", smoothing=smoothing), hyp, refs)
    remove = _score_or_error(CrystalBLEU(sset, variant="remove", smoothing=smoothing), hyp, refs)
    bleu = _score_or_error(CrystalBLEU(None, smoothing=smoothing), hyp, refs)
    assert remove == bleu
    if method < 5:
        assert weight == bleu
    elif isinstance(bleu, float):
        # Methods 5-7 see float precisions instead of NLTK's Fractions: equal up to rounding.
        assert isinstance(weight, float)
        assert math.isclose(weight, bleu, rel_tol=0.0, abs_tol=1e-12)
    else:
        assert weight == bleu


@settings(max_examples=500)
@given(hyp=tokens, refs=references, table=counts, method=st.sampled_from([0, 1, 2]))
def test_weight_scores_are_in_unit_interval(
    hyp: list[str], refs: list[list[str]], table: Grams, method: int
) -> None:
    metric = CrystalBLEU(_sset(table), variant="weight", smoothing=Smoothing(method))
    score = metric.sentence_score(hyp, refs)
    assert 0.0 <= score <= 1.0
    corpus = metric.corpus_score([hyp, *refs[:1]], [refs, refs])
    assert 0.0 <= corpus <= 1.0


@pytest.mark.parametrize(
    ("smoothing", "f"),
    [
        pytest.param(Smoothing(3), 100, id="m3-f100"),
        pytest.param(Smoothing(4), 10**6, id="m4-f1e6"),
        pytest.param(Smoothing(1, epsilon=0.1), 10**5, id="m1-eps0.1-f1e5"),
    ],
)
def test_weight_score_exceeds_one_with_smoothing(smoothing: Smoothing, f: int) -> None:
    # Orders 1-3 of "abcd" all match (p = 1, brevity penalty 1 thanks to the 4-token reference);
    # its only 4-gram is in S and unmatched: smoothed p4 = (smoothing count) / w(f) > 1.
    metric = CrystalBLEU(_sset({tuple("abcd"): f}), variant="weight", smoothing=smoothing)
    score = metric.sentence_score(list("abcd"), [list("abcxbcd"), list("abce")])
    assert score <= 1.0


def _shared_prefix_case(draw: st.DrawFn) -> tuple[list[str], list[str], Grams]:
    common = draw(st.lists(st.sampled_from("ab"), min_size=4, max_size=8))
    noise = st.lists(st.sampled_from("cd"), min_size=1, max_size=6)
    hyp = common + draw(noise)
    ref = common + draw(noise)
    grams = [
        tuple(seq[i : i + n])
        for seq in (hyp, ref)
        for n in range(1, 5)
        for i in range(len(seq) - n + 1)
    ]
    in_noise = sorted({g for g in grams if set(g) <= {"c", "d"}})
    chosen = draw(st.lists(st.sampled_from(in_noise), min_size=1, unique=True))
    return hyp, ref, dict.fromkeys(chosen, 1)


@settings(max_examples=200)
@given(data=st.data())
def test_weight_approaches_remove_as_counts_grow(data: st.DataObject) -> None:
    hyp, ref, table = _shared_prefix_case(data.draw)
    remove = CrystalBLEU(_sset(table), variant="remove").sentence_score(hyp, [ref])
    huge = {g: 10**30000 for g in table}
    assert inverse_frequency_weight(10**30000) < 2e-5
    weight = CrystalBLEU(_sset(huge), variant="weight").sentence_score(hyp, [ref])
    assert weight == pytest.approx(remove, rel=1e-2)


def test_weight_distance_to_remove_shrinks_with_frequency() -> None:
    hyp = list("ababcdcc")
    ref = list("ababdcdc")
    table = {("c",): 1, ("d",): 1, ("c", "d"): 1}
    remove = CrystalBLEU(_sset(table), variant="remove").sentence_score(hyp, [ref])
    distances = []
    for f in (10, 10**3, 10**30, 10**300, 10**3000, 10**30000):
        metric = CrystalBLEU(_sset(dict.fromkeys(table, f)), variant="weight")
        distances.append(abs(metric.sentence_score(hyp, [ref]) - remove))
    assert distances == sorted(distances, reverse=True)
    assert distances[-1] < 1e-4 < distances[0]


_HASHSEED_SCRIPT = """
import json
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import TriviallySharedSet
words = ["self", ".", "(", ")", ":", "return", "x", "y", "=", ",", "if", "for", "in"]
docs = [[words[(i * 7 + j * j) % len(words)] for j in range(60)] for i in range(6)]
table = {}
for doc in docs:
    for n in range(1, 5):
        for i in range(len(doc) - n + 1):
            g = tuple(doc[i:i + n])
            table[g] = table.get(g, 0) + 1
sset = TriviallySharedSet(table, k=len(table))
out = []
for method in (1, 5, 7):
    m = CrystalBLEU(sset, variant="weight", smoothing=Smoothing(method))
    out.append(m.sentence_score(docs[0], docs[1:3]).hex())
    out.append(m.corpus_score(docs[:3], [docs[3:], docs[4:], docs[5:]]).hex())
print(json.dumps(out))
"""


def test_weight_variant_does_not_depend_on_hash_order() -> None:
    outputs = []
    for seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run(
            [sys.executable, "-c", _HASHSEED_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]
    assert len(set(outputs[0])) > 1


# --- the object's API ------------------------------------------------------------------------


def test_constructor_validation() -> None:
    with pytest.raises(CrystalError, match="variant"):
        CrystalBLEU(None, variant="scale")
    with pytest.raises(CrystalError, match="max n"):
        CrystalBLEU(None, max_n=0)
    with pytest.raises(CrystalError, match="weights"):
        CrystalBLEU(None, max_n=3, weights=(0.5, 0.5))


@pytest.mark.parametrize(
    ("sset", "variant", "name"),
    [
        pytest.param(None, "remove", "bleu", id="bleu"),
        pytest.param(_sset({("a",): 3}), "remove", "crystalbleu", id="remove"),
        pytest.param(_sset({("a",): 3}), "weight", "crystalbleu-if", id="weight"),
    ],
)
def test_name_and_signature(sset: TriviallySharedSet | None, variant: str, name: str) -> None:
    metric = CrystalBLEU(sset, variant=variant, smoothing=Smoothing(4, k=3), language="java")
    assert metric.name == name
    sig = metric.signature
    assert isinstance(sig, Signature)
    assert (sig.metric, sig.language, sig.smoothing, sig.variant) == (
        name,
        "java",
        "m4:k=3",
        variant,
    )
    assert sig.k == (sset.k if sset is not None else 0)
    assert sig.sset == (sset.fingerprint() if sset is not None else "-")
    assert str(sig).startswith(name + "|")


def test_counts_need_references() -> None:
    metric = CrystalBLEU(None)
    with pytest.raises(CrystalError, match="at least one reference"):
        metric.counts(metric.profile(list("abc")), [])


def test_score_profiles_needs_tokens_for_methods_5_to_7() -> None:
    metric = CrystalBLEU(None, smoothing=Smoothing(5))
    with pytest.raises(CrystalError, match="methods 5-7"):
        metric.score_profiles(metric.profile(list("abc")), [metric.profile(list("abd"))])


def test_profiles_are_cached_by_content() -> None:
    metric = CrystalBLEU(_sset({("a",): 2}))
    assert metric.profile(list("abc")) is metric.profile(("a", "b", "c"))
    assert metric.profile(list("abc")) is not metric.profile(list("abd"))


def test_score_profiles_equals_sentence_score() -> None:
    metric = CrystalBLEU(_sset({("a", "b"): 2}), smoothing=Smoothing(2))
    hyp, refs = list("abcabd"), [list("abcd"), list("dabc")]
    by_profiles = metric.score_profiles(metric.profile(hyp), [metric.profile(r) for r in refs])
    assert by_profiles == metric.sentence_score(hyp, refs)


def test_corpus_score_sums_counts_before_dividing() -> None:
    metric = CrystalBLEU(None, smoothing=Smoothing(1, epsilon=0.1))
    hyps = [list("abcd"), list("xyz")]
    refs = [[list("abce")], [list("xyw")]]
    expected = crystal_lsp.corpus_bleu(
        refs, hyps, smoothing_function=crystal_lsp.SmoothingFunction(epsilon=0.1).method1
    )
    assert metric.corpus_score(hyps, refs) == expected
    mean = sum(metric.sentence_score(h, r) for h, r in zip(hyps, refs)) / 2
    assert metric.corpus_score(hyps, refs) != mean


def test_corpus_score_checks_pair_counts() -> None:
    with pytest.raises(CrystalError, match="differ"):
        CrystalBLEU(None).corpus_score([list("ab")], [])
    with pytest.raises(CrystalError, match="no hypotheses"):
        CrystalBLEU(None).corpus_score([], [])


def test_tokens_objects_are_scored_like_their_texts() -> None:
    hyp = crystal_lsp.tokenize("def f(x):\n    return x + 1\n", "python")
    ref = crystal_lsp.tokenize("def g(x):\n    return x + 2\n", "python")
    metric = CrystalBLEU(_sset({("return",): 9}))
    assert metric.sentence_score(hyp, [ref]) == metric.sentence_score(hyp.texts, [ref.texts])
