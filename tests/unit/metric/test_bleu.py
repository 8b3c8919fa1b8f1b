"""Golden values for BLEU: NLTK 3.10.4's own doctests, as parametrized regression tables.

Each row names the NLTK docstring it comes from (``nltk/translate/bleu_score.py``). Values are
compared with the precision the doctest prints (``...`` ellipsis: the printed digits, exactly).
"""

from __future__ import annotations

import math
import sys

import pytest

import crystal_lsp
from crystal_lsp import CrystalError, SmoothingFunction, brevity_penalty, closest_ref_length
from crystal_lsp.metric.bleu import Fraction, bleu_from_counts, max_order, normalize_weights

# the core differential/property tests run on both implementations (see conftest.core)
pytestmark = pytest.mark.usefixtures("core")

# The running example of NLTK's sentence_bleu / modified_precision docstrings.
HYP1 = (
    "It is a guide to action which ensures that the military always obeys the commands of the party"
).split()
HYP2 = (
    "It is to insure the troops forever hearing the activity guidebook that party direct"
).split()
REF1 = (
    "It is a guide to action that ensures that the military will forever heed Party commands"
).split()
REF2 = (
    "It is the guiding principle which guarantees the military forces always being under the "
    "command of the Party"
).split()
REF3 = ("It is the practical guide for the army always to heed the directions of the party").split()
REFS = [REF1, REF2, REF3]

# corpus_bleu's docstring.
CORPUS_HYP2 = "he read the book because he was interested in world history".split()
CORPUS_REF2A = "he was interested in world history because he read the book".split()
CORPUS_REFS = [REFS, [CORPUS_REF2A]]
CORPUS_HYPS = [HYP1, CORPUS_HYP2]


def truncated(value: float, digits: int) -> str:
    """The first ``digits`` decimals, as NLTK's ``0.5920...`` doctests show them."""
    return f"{math.floor(value * 10**digits) / 10**digits:.{digits}f}"


SENTENCE_BLEU = [
    # (id, references, hypothesis, weights, smoothing, printed)
    pytest.param(REFS, HYP1, (0.25,) * 4, None, "0.5045", id="sentence_bleu-hyp1"),
    pytest.param(REFS, HYP1, (0.2,) * 5, None, "0.3920", id="sentence_bleu-bleu5"),
    pytest.param(REFS, HYP2, (0.25,) * 4, "method1", "0.0370", id="sentence_bleu-hyp2-method1"),
    # SmoothingFunction.__init__ docstring: hypothesis1 against reference1 only.
    pytest.param([REF1], HYP1, (0.25,) * 4, None, "0.4118", id="smoothing-none"),
    pytest.param([REF1], HYP1, (0.25,) * 4, "method0", "0.4118", id="smoothing-method0"),
    pytest.param([REF1], HYP1, (0.25,) * 4, "method1", "0.4118", id="smoothing-method1"),
    pytest.param([REF1], HYP1, (0.25,) * 4, "method2", "0.4452", id="smoothing-method2"),
    pytest.param([REF1], HYP1, (0.25,) * 4, "method3", "0.4118", id="smoothing-method3"),
    pytest.param([REF1], HYP1, (0.25,) * 4, "method4", "0.4118", id="smoothing-method4"),
    pytest.param([REF1], HYP1, (0.25,) * 4, "method5", "0.4905", id="smoothing-method5"),
    pytest.param([REF1], HYP1, (0.25,) * 4, "method6", "0.4135", id="smoothing-method6"),
    pytest.param([REF1], HYP1, (0.25,) * 4, "method7", "0.4905", id="smoothing-method7"),
]


@pytest.mark.parametrize(("refs", "hyp", "weights", "method", "printed"), SENTENCE_BLEU)
def test_sentence_bleu_golden(
    refs: list[list[str]],
    hyp: list[str],
    weights: tuple[float, ...],
    method: str | None,
    printed: str,
) -> None:
    smoothing = getattr(SmoothingFunction(), method) if method else None
    score = crystal_lsp.sentence_bleu(refs, hyp, weights, smoothing_function=smoothing)
    assert isinstance(score, float)
    assert truncated(score, 4) == printed


def test_sentence_bleu_golden_zero_without_smoothing() -> None:
    # "The following example has zero 3-gram and 4-gram overlaps" -> round(..., 4) == 0.0
    assert round(crystal_lsp.sentence_bleu(REFS, HYP2), 4) == 0.0


def test_sentence_bleu_golden_several_weights() -> None:
    weights = [(1 / 2, 1 / 2), (1 / 3, 1 / 3, 1 / 3), (1 / 4, 1 / 4, 1 / 4, 1 / 4)]
    scores = crystal_lsp.sentence_bleu(REFS, HYP1, weights)
    assert isinstance(scores, list)
    assert [truncated(s, 4) for s in scores] == ["0.7453", "0.6240", "0.5045"]


CORPUS_BLEU = [
    pytest.param((0.25,) * 4, ["0.5920"], id="corpus_bleu-default"),
    pytest.param((0.1, 0.3, 0.5, 0.1), ["0.5818"], id="corpus_bleu-custom-weights"),
    pytest.param(
        [(0.5, 0.5), (0.333, 0.333, 0.334), (0.25, 0.25, 0.25, 0.25), (0.2, 0.2, 0.2, 0.2, 0.2)],
        ["0.8242", "0.7067", "0.5920", "0.4719"],
        id="corpus_bleu-several-weights",
    ),
]


@pytest.mark.parametrize(("weights", "printed"), CORPUS_BLEU)
def test_corpus_bleu_golden(weights: object, printed: list[str]) -> None:
    scores = crystal_lsp.corpus_bleu(CORPUS_REFS, CORPUS_HYPS, weights)
    values = scores if isinstance(scores, list) else [scores]
    assert [truncated(s, 4) for s in values] == printed


def test_corpus_bleu_differs_from_mean_sentence_bleu_golden() -> None:
    score1 = crystal_lsp.sentence_bleu(REFS, HYP1)
    score2 = crystal_lsp.sentence_bleu([CORPUS_REF2A], CORPUS_HYP2)
    assert truncated((score1 + score2) / 2, 4) == "0.6223"


MODIFIED_PRECISION = [
    # (references, hypothesis, n, printed float)
    pytest.param(
        ["the cat is on the mat".split(), "there is a cat on the mat".split()],
        "the the the the the the the".split(),
        1,
        "0.2857",
        id="the-the-the",
    ),
    pytest.param(REFS, ["of", "the"], 1, "1.0000", id="of-the-1"),
    pytest.param(REFS, ["of", "the"], 2, "1.0000", id="of-the-2"),
    pytest.param(REFS, HYP1, 1, "0.9444", id="hyp1-1"),
    pytest.param(REFS, HYP2, 1, "0.5714", id="hyp2-1"),
    pytest.param(REFS, HYP1, 2, "0.5882", id="hyp1-2"),
    pytest.param(REFS, HYP2, 2, "0.0769", id="hyp2-2"),
]


@pytest.mark.parametrize(("refs", "hyp", "n", "printed"), MODIFIED_PRECISION)
def test_modified_precision_golden(
    refs: list[list[str]], hyp: list[str], n: int, printed: str
) -> None:
    assert truncated(float(crystal_lsp.modified_precision(refs, hyp, n)), 4) == printed


def test_modified_precision_hyp1_bigrams_exact() -> None:
    # Printed in full by the doctest: 0.5882352941176471 (10/17).
    p = crystal_lsp.modified_precision(REFS, HYP1, 2)
    assert float(p) == 0.5882352941176471
    assert (p.numerator, p.denominator) == (10, 17)


A = ["a"]
BREVITY = [
    # (reference lengths, hypothesis length, closest, penalty printed)
    pytest.param([12, 15, 17], 12, 12, "1.0", id="paper-example"),
    pytest.param([28, 28], 12, 28, "0.2635971381157267", id="short-hypothesis"),
    pytest.param([13, 2], 12, 13, "0.9200", id="closest-is-longer"),
    pytest.param([13, 11], 12, 11, "1.0", id="tie-takes-shorter"),
    pytest.param([11, 13], 12, 11, "1.0", id="tie-takes-shorter-reversed"),
    pytest.param([11, 8], 7, 8, "0.8668", id="mteval-705"),
    pytest.param([11, 8, 6, 7], 7, 7, "1.0", id="mteval-exact-length"),
]


@pytest.mark.parametrize(("ref_lens", "hyp_len", "closest", "printed"), BREVITY)
def test_closest_ref_length_and_brevity_penalty_golden(
    ref_lens: list[int], hyp_len: int, closest: int, printed: str
) -> None:
    refs = [A * n for n in ref_lens]
    assert closest_ref_length(refs, hyp_len) == closest
    bp = brevity_penalty(closest, hyp_len)
    if len(printed) > 6:
        assert bp == float(printed)
    elif printed == "1.0":
        assert bp == 1
    else:
        assert truncated(bp, 4) == printed


def test_brevity_penalty_of_empty_hypothesis_is_zero() -> None:
    assert brevity_penalty(5, 0) == 0


def test_closest_ref_length_needs_references() -> None:
    with pytest.raises(CrystalError):
        closest_ref_length([], 3)


def test_fraction_keeps_unnormalised_parts() -> None:
    f = Fraction(2, 4, _normalize=False)
    assert (f.numerator, f.denominator) == (2, 4)
    assert float(f) == 0.5
    g = Fraction(2, 4, _normalize=True)
    assert (g.numerator, g.denominator) == (1, 2)


@pytest.mark.parametrize(
    ("a", "b"),
    [((2, 4), (1, 2)), ((0, 3), (0, 1)), ((3, 3), (1, 1)), ((1, 2), (1, 2))],
)
def test_fraction_comparisons_behave_like_nltks(a: tuple[int, int], b: tuple[int, int]) -> None:
    # NLTK's Fraction compares its unnormalised parts on Python 3.11 (Fraction(0, 3) != 0), and
    # smoothing method 6 tests `p == 0`: the quirk is part of the arithmetic to reproduce.
    from nltk.translate.bleu_score import Fraction as NltkFraction

    ours_a, ours_b = Fraction(*a, _normalize=False), Fraction(*b, _normalize=False)
    theirs_a, theirs_b = NltkFraction(*a, _normalize=False), NltkFraction(*b, _normalize=False)
    assert (ours_a == ours_b) == (theirs_a == theirs_b)
    assert (ours_a == 0) == (theirs_a == 0)
    assert bool(ours_a) == bool(theirs_a)


def test_smoothing_methods_on_hand_computed_precisions() -> None:
    sf = SmoothingFunction(epsilon=0.1, alpha=5, k=5)

    def p() -> list[Fraction]:
        return [Fraction(3, 4), Fraction(0, 3), Fraction(0, 2)]

    assert sf.method0(p())[1:] == [sys.float_info.min, sys.float_info.min]
    assert sf.method1(p()) == [Fraction(3, 4), 0.1 / 3, 0.1 / 2]
    assert [float(x) for x in sf.method2(p())] == [0.75, 1 / 4, 1 / 3]
    assert sf.method3(p())[1:] == [1 / (2 * 3), 1 / (4 * 2)]
    smoothed = sf.method4(p(), hypothesis=list("abcd"), hyp_len=4)
    assert smoothed[1:] == pytest.approx(
        [math.log(4) / (2 * 5) / 3, math.log(4) / (4 * 5) / 2], rel=1e-15
    )


def test_method4_leaves_one_token_hypotheses_alone() -> None:
    sf = SmoothingFunction()
    assert sf.method4([Fraction(1, 1), Fraction(0, 1)], hypothesis=["a"], hyp_len=1)[1] == 0


@pytest.mark.parametrize(
    ("weights", "expected", "single"),
    [
        pytest.param((0.5, 0.5), [(0.5, 0.5)], True, id="tuple"),
        pytest.param([0.5, 0.5], [[0.5, 0.5]], True, id="flat-list"),
        pytest.param([(1.0,), (0.5, 0.5)], [(1.0,), (0.5, 0.5)], False, id="list-of-tuples"),
    ],
)
def test_normalize_weights(weights: object, expected: list[object], single: bool) -> None:
    assert normalize_weights(weights) == (expected, single)


def test_max_order() -> None:
    assert max_order((0.25,) * 4) == 4
    assert max_order([(1.0,), (0.2,) * 5, (0.5, 0.5)]) == 5


def test_bleu_from_counts_matches_corpus_bleu() -> None:
    # NLTK's corpus example as summed counts: orders 1-4.
    nums, dens = [], []
    for n in range(1, 5):
        ps = [crystal_lsp.modified_precision(r, h, n) for r, h in zip(CORPUS_REFS, CORPUS_HYPS)]
        nums.append(sum(p.numerator for p in ps))
        dens.append(sum(p.denominator for p in ps))
    hyp_len = sum(len(h) for h in CORPUS_HYPS)
    ref_len = sum(closest_ref_length(r, len(h)) for r, h in zip(CORPUS_REFS, CORPUS_HYPS))
    assert bleu_from_counts(nums, dens, hyp_len, ref_len) == crystal_lsp.corpus_bleu(
        CORPUS_REFS, CORPUS_HYPS
    )


def test_no_unigram_match_is_zero_before_smoothing() -> None:
    sf = SmoothingFunction()
    for method in ("method1", "method3", "method7"):
        assert (
            crystal_lsp.sentence_bleu(
                [list("abc")], list("xyz"), smoothing_function=getattr(sf, method)
            )
            == 0.0
        )
    assert crystal_lsp.sentence_bleu([list("abc")], list("xyz"), [(0.5, 0.5), (1.0,)]) == [0.0, 0.0]


def test_auto_reweigh_on_short_hypothesis() -> None:
    # Two tokens, both matched: weights become (1/2, 1/2) and the 3-/4-gram zeros disappear.
    assert crystal_lsp.sentence_bleu([list("ab")], list("ab"), auto_reweigh=True) == 1.0
    assert crystal_lsp.sentence_bleu([list("ab")], list("ab"), auto_reweigh=False) < 1e-70
