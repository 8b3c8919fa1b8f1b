"""Differential tests: ``crystal_lsp`` BLEU against NLTK 3.10.4 (``ignoring=None``).

Random token streams over a five-letter alphabet (so n-grams repeat), 1-5 references per
hypothesis, 1-4 pairs per corpus, sequences of length 0..3 included, every smoothing method with
random parameters, odd weights (one tuple or a list of tuples), ``auto_reweigh`` on and off.
The two implementations are bit-identical, so results are compared with ``==`` (and, for a
readable failure, with an absolute tolerance of 1e-12 first).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st
from nltk.translate import bleu_score as nltk_bleu

import crystal_lsp
from crystal_lsp import CrystalError

# the core differential/property tests run on both implementations (see conftest.core)
pytestmark = pytest.mark.usefixtures("core")

N_EXAMPLES = 1000
ALPHABET = "abcde"
DEFAULT_WEIGHTS = (0.25, 0.25, 0.25, 0.25)

short_tokens = st.lists(st.sampled_from(ALPHABET), max_size=3)
tokens = st.one_of(short_tokens, st.lists(st.sampled_from(ALPHABET), max_size=14))
references = st.lists(tokens, min_size=1, max_size=5)
pairs = st.lists(st.tuples(references, tokens), min_size=1, max_size=4)
positive = st.floats(min_value=1e-6, max_value=1e3, allow_nan=False, allow_infinity=False)
weight_tuple = st.lists(positive, min_size=1, max_size=5).map(tuple)
weights = st.one_of(
    st.just(DEFAULT_WEIGHTS),
    weight_tuple,
    # Lists of two or more tuples; a list of exactly one tuple is the xfail test below.
    st.lists(st.one_of(st.just(DEFAULT_WEIGHTS), weight_tuple), min_size=2, max_size=4),
)


@st.composite
def smoothing(draw: st.DrawFn) -> tuple[int | None, float, float, float]:
    """``(method or None, epsilon, alpha, k)``."""
    method = draw(st.sampled_from([None, 0, 1, 2, 3, 4, 5, 6, 7]))
    epsilon = draw(st.one_of(st.just(0.1), st.floats(0.0, 1.0)))
    alpha = draw(st.one_of(st.just(5.0), st.floats(0.1, 10.0)))
    k = draw(st.one_of(st.just(5.0), st.floats(0.1, 10.0)))
    return method, epsilon, alpha, k


def _call(fn: Any, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return True, fn(*args, **kwargs)
        except Exception as exc:  # both sides may raise; only "both raise" is compared
            return False, exc


def assert_identical(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, list):
        assert isinstance(ours, list)
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_identical(a, b)
        return
    assert math.isclose(ours, theirs, rel_tol=0.0, abs_tol=1e-12), (ours, theirs)
    assert ours == theirs, f"not bit-identical: {ours!r} != {theirs!r}"


def _smoothers(spec: tuple[int | None, float, float, float]) -> tuple[Any, Any, Any]:
    method, epsilon, alpha, k = spec
    if method is None:
        return None, None, None
    name = f"method{method}"
    ours = getattr(crystal_lsp.SmoothingFunction(epsilon=epsilon, alpha=alpha, k=k), name)
    theirs = getattr(nltk_bleu.SmoothingFunction(epsilon=epsilon, alpha=alpha, k=k), name)
    # A second, independent NLTK instance: NLTK's callables must be accepted by our functions.
    nltk_for_ours = getattr(nltk_bleu.SmoothingFunction(epsilon=epsilon, alpha=alpha, k=k), name)
    return ours, theirs, nltk_for_ours


def check_corpus(
    corpus: list[tuple[list[list[str]], list[str]]],
    weights: Any,
    spec: tuple[int | None, float, float, float],
    auto_reweigh: bool,
) -> None:
    list_of_references = [refs for refs, _ in corpus]
    hypotheses = [hyp for _, hyp in corpus]
    ours_fn, theirs_fn, nltk_for_ours = _smoothers(spec)
    ok_nltk, expected = _call(
        nltk_bleu.corpus_bleu, list_of_references, hypotheses, weights, theirs_fn, auto_reweigh
    )
    for smoother in (ours_fn, nltk_for_ours):
        ok_ours, got = _call(
            crystal_lsp.corpus_bleu, list_of_references, hypotheses, weights, smoother, auto_reweigh
        )
        if not ok_nltk:
            event(f"NLTK raises {type(expected).__name__}")
            assert not ok_ours, f"NLTK raised {expected!r} but crystal_lsp returned {got!r}"
            continue
        assert ok_ours, f"crystal_lsp raised {got!r} where NLTK returned {expected!r}"
        assert_identical(got, expected)
    if ok_nltk:
        event("both return a score")
    if len(corpus) == 1:
        ok_s, sentence = _call(
            crystal_lsp.sentence_bleu, corpus[0][0], corpus[0][1], weights, ours_fn, auto_reweigh
        )
        ok_n, nltk_sentence = _call(
            nltk_bleu.sentence_bleu, corpus[0][0], corpus[0][1], weights, theirs_fn, auto_reweigh
        )
        assert ok_s == ok_n
        if ok_n:
            assert_identical(sentence, nltk_sentence)


@settings(max_examples=N_EXAMPLES)
@given(corpus=pairs, weights=weights, spec=smoothing(), auto_reweigh=st.booleans())
# NLTK's method 6 assertion on a hypothesis without trigram matches.
@example(
    corpus=[([list("abc")], list("abd"))],
    weights=DEFAULT_WEIGHTS,
    spec=(6, 0.1, 5.0, 5.0),
    auto_reweigh=False,
)
# auto_reweigh on a 2-token corpus with smoothing methods that look at later orders.
@example(
    corpus=[([list("abca")], list("ab"))],
    weights=DEFAULT_WEIGHTS,
    spec=(7, 0.1, 5.0, 5.0),
    auto_reweigh=True,
)
# Several weight tuples of different lengths at once.
@example(
    corpus=[([list("abcabd"), list("bca")], list("abcab")), ([list("e")], [])],
    weights=[(0.5, 0.5), (0.2,) * 5, DEFAULT_WEIGHTS],
    spec=(5, 0.1, 5.0, 5.0),
    auto_reweigh=False,
)
def test_corpus_and_sentence_bleu_equal_nltk(
    corpus: list[tuple[list[list[str]], list[str]]],
    weights: Any,
    spec: tuple[int | None, float, float, float],
    auto_reweigh: bool,
) -> None:
    check_corpus(corpus, weights, spec, auto_reweigh)


@settings(max_examples=300)
@given(hyp=tokens, weights=weights, spec=smoothing())
def test_empty_reference_list_raises_like_nltk(
    hyp: list[str], weights: Any, spec: tuple[int | None, float, float, float]
) -> None:
    ours_fn, theirs_fn, _ = _smoothers(spec)
    ok_nltk, _ = _call(nltk_bleu.corpus_bleu, [[]], [hyp], weights, theirs_fn)
    assert not ok_nltk
    with pytest.raises(CrystalError):
        crystal_lsp.corpus_bleu([[]], [hyp], weights, ours_fn)


def test_mismatched_corpus_lengths_raise_like_nltk() -> None:
    refs = [[list("abc")], [list("abd")]]
    hyps = [list("abc")]
    ok_nltk, _ = _call(nltk_bleu.corpus_bleu, refs, hyps)
    assert not ok_nltk
    with pytest.raises(CrystalError, match="differ"):
        crystal_lsp.corpus_bleu(refs, hyps)


@pytest.mark.parametrize(
    ("refs", "hyp", "weights"),
    [
        pytest.param([list("abcab")], list("abcab"), [DEFAULT_WEIGHTS], id="matching"),
        pytest.param([list("abcab")], list("xy"), [(0.5, 0.5)], id="no-unigram-match"),
    ],
)
def test_list_of_one_weight_tuple_returns_a_float_like_nltk(
    refs: list[list[str]], hyp: list[str], weights: list[tuple[float, ...]]
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = nltk_bleu.sentence_bleu(refs, hyp, weights)
    assert not isinstance(expected, list)
    assert crystal_lsp.sentence_bleu(refs, hyp, weights) == expected


def test_empty_corpus_raises_like_nltk() -> None:
    ok_nltk, _ = _call(nltk_bleu.corpus_bleu, [], [])  # Fraction(0, 0): ZeroDivisionError
    assert not ok_nltk
    with pytest.raises(CrystalError, match="no hypotheses"):
        crystal_lsp.corpus_bleu([], [])


def test_method6_error_is_a_crystal_error_with_nltks_message() -> None:
    with pytest.raises(CrystalError, match="requires non-zero precision for bigrams"):
        crystal_lsp.sentence_bleu(
            [list("abc")], list("abd"), smoothing_function=crystal_lsp.SmoothingFunction().method6
        )


def test_crystal_error_is_a_value_error() -> None:
    assert issubclass(CrystalError, ValueError)


def test_method0_does_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        score = crystal_lsp.sentence_bleu([list("abcd")], list("abxy"))
    assert score == nltk_bleu_quiet([list("abcd")], list("abxy"))


def nltk_bleu_quiet(refs: list[list[str]], hyp: list[str]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(nltk_bleu.sentence_bleu(refs, hyp))


def test_tokens_objects_are_accepted_as_sequences() -> None:
    ref = crystal_lsp.tokenize("x = f(a, b) + 1", "python")
    hyp = crystal_lsp.tokenize("x = f(a, c) + 1", "python")
    assert crystal_lsp.sentence_bleu([ref], hyp) == nltk_bleu_quiet([ref.texts], hyp.texts)
