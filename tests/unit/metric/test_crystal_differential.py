"""Differential tests: CrystalBLEU (removal) against the ``crystalbleu`` 0.2 package.

Every case is also checked against an *NLTK-semantics oracle*: NLTK 3.10.4's ``corpus_bleu``
with its ``modified_precision`` replaced by ``crystalbleu.modified_precision(..., ignoring=S)``
for the per-order precisions (smoothing method 5's extra 5-gram precision stays unfiltered, as
in both packages). crystal_lsp promises NLTK's arithmetic on crystalbleu's counts, so it must
equal the oracle bit for bit in every case, and equal ``crystalbleu`` wherever ``crystalbleu``
itself agrees with NLTK. Where it does not, the case must be one of the known divergences of
``crystalbleu`` 0.2 from NLTK 3.10.4:

``math-domain``
    a smoothed precision is exactly 0 (e.g. method 4 on a one-token hypothesis) and
    ``crystalbleu`` takes ``math.log(0)``; NLTK 3.10.4 skips the term.
``auto-reweigh``
    with ``auto_reweigh`` and fewer than 4 hypothesis tokens, ``crystalbleu`` shortens the
    weights *before* smoothing, NLTK after, so smoothing methods 5 and 7 average different
    neighbouring precisions; and with only empty hypotheses ``crystalbleu`` divides by zero
    (``1 / hyp_lengths``) where NLTK returns 0.
"""

from __future__ import annotations

import math
import sys
import warnings
from typing import Any
from unittest import mock

import crystalbleu
import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st
from nltk.translate import bleu_score as nltk_bleu

import crystal_lsp
from crystal_lsp import CrystalError
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import TriviallySharedSet

# the core differential/property tests run on both implementations (see conftest.core)
pytestmark = pytest.mark.usefixtures("core")

N_EXAMPLES = 1000
ALPHABET = "abcd"
DEFAULT_WEIGHTS = (0.25, 0.25, 0.25, 0.25)

letter = st.sampled_from(ALPHABET)
tokens = st.one_of(st.lists(letter, max_size=3), st.lists(letter, max_size=14))
references = st.lists(tokens, min_size=1, max_size=4)
pairs = st.one_of(
    # one short pair: where smoothed precisions reach exactly 0 (crystalbleu's math domain error)
    st.lists(st.tuples(references, st.lists(letter, max_size=2)), min_size=1, max_size=1),
    st.lists(st.tuples(references, tokens), min_size=1, max_size=4),
)
ngram = st.integers(1, 4).flatmap(lambda n: st.lists(letter, min_size=n, max_size=n).map(tuple))
counts = st.dictionaries(ngram, st.integers(1, 10**6), max_size=25)
positive = st.floats(min_value=1e-3, max_value=10.0)
weights = st.one_of(
    st.just(DEFAULT_WEIGHTS),
    st.lists(positive, min_size=1, max_size=5).map(tuple),
)


@st.composite
def ignoring(draw: st.DrawFn) -> Any:
    """S the way the crystalbleu README builds it (a dict n-gram -> count), or a set or list."""
    table = draw(counts)
    form = draw(st.sampled_from(["dict", "set", "list"]))
    if form == "set":
        return set(table)
    if form == "list":
        return list(table)
    return table


@st.composite
def smoothing(draw: st.DrawFn) -> tuple[int | None, float, float, float]:
    method = draw(st.sampled_from([None, 0, 1, 2, 3, 4, 5, 6, 7]))
    epsilon = draw(st.one_of(st.just(0.1), st.just(0.0), st.floats(1e-6, 1.0)))
    alpha = draw(st.one_of(st.just(5.0), st.floats(0.1, 10.0)))
    k = draw(st.one_of(st.just(5.0), st.floats(0.5, 10.0)))
    return method, epsilon, alpha, k


def _call(fn: Any, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return True, fn(*args, **kwargs)
        except Exception as exc:
            return False, exc


def nltk_semantics(
    list_of_references: Any,
    hypotheses: Any,
    weights: Any,
    smoothing_function: Any,
    auto_reweigh: bool,
    ignoring: Any,
) -> Any:
    """NLTK 3.10.4's corpus BLEU on crystalbleu's filtered modified precisions."""
    unfiltered = nltk_bleu.modified_precision

    def precision(references: Any, hypothesis: Any, n: int) -> Any:
        if sys._getframe(1).f_code.co_name == "corpus_bleu":
            return crystalbleu.modified_precision(references, hypothesis, n, ignoring=ignoring)
        return unfiltered(references, hypothesis, n)  # method 5's 5-gram precision

    with mock.patch.object(nltk_bleu, "modified_precision", precision):
        return nltk_bleu.corpus_bleu(
            list_of_references, hypotheses, weights, smoothing_function, auto_reweigh
        )


def _smoothers(spec: tuple[int | None, float, float, float]) -> tuple[Any, Any, Any]:
    method, epsilon, alpha, k = spec
    if method is None:
        return None, None, None
    name = f"method{method}"
    return tuple(  # type: ignore[return-value]
        getattr(cls(epsilon=epsilon, alpha=alpha, k=k), name)
        for cls in (
            crystal_lsp.SmoothingFunction,
            crystalbleu.SmoothingFunction,
            nltk_bleu.SmoothingFunction,
        )
    )


def _auto_reweighed(hypotheses: list[list[str]], weights: Any, auto_reweigh: bool) -> bool:
    return auto_reweigh and weights == DEFAULT_WEIGHTS and sum(map(len, hypotheses)) < 4


def compare_with_crystalbleu(
    corpus: list[tuple[list[list[str]], list[str]]],
    weights: Any,
    spec: tuple[int | None, float, float, float],
    auto_reweigh: bool,
    ignore: Any,
) -> str:
    """Check one case; returns how it was classified (for hypothesis' statistics)."""
    list_of_references = [refs for refs, _ in corpus]
    hypotheses = [hyp for _, hyp in corpus]
    ours_fn, cb_fn, nltk_fn = _smoothers(spec)
    ok_ours, ours = _call(
        crystal_lsp.corpus_bleu,
        list_of_references,
        hypotheses,
        weights,
        ours_fn,
        auto_reweigh,
        ignoring=ignore,
    )
    ok_oracle, oracle = _call(
        nltk_semantics, list_of_references, hypotheses, weights, nltk_fn, auto_reweigh, ignore
    )
    ok_cb, theirs = _call(
        crystalbleu.corpus_bleu,
        list_of_references,
        hypotheses,
        weights,
        cb_fn,
        auto_reweigh,
        ignoring=ignore,
    )
    # 1. NLTK semantics, always and exactly.
    assert ok_ours == ok_oracle, (ours, oracle)
    if not ok_oracle:
        assert not ok_cb, f"crystalbleu returned {theirs!r}, NLTK semantics raise {oracle!r}"
        return f"all raise ({type(theirs).__name__} in crystalbleu)"
    assert math.isfinite(ours) and ours >= 0
    assert math.isclose(ours, oracle, rel_tol=0.0, abs_tol=1e-12), (ours, oracle)
    assert ours == oracle
    # 2. crystalbleu, except for its two known divergences from NLTK.
    if ok_cb and math.isclose(ours, theirs, rel_tol=0.0, abs_tol=1e-12):
        assert ours == theirs, f"not bit-identical: {ours!r} != {theirs!r}"
        return "equal to crystalbleu"
    if not ok_cb and isinstance(theirs, ValueError) and str(theirs) == "math domain error":
        return "divergence: math-domain"
    assert _auto_reweighed(hypotheses, weights, auto_reweigh), (ours, theirs)
    if ok_cb:  # reweighed before smoothing: only methods 5 and 7 look at later orders
        assert spec[0] in (5, 7), (spec, ours, theirs)
    else:
        assert isinstance(theirs, ZeroDivisionError), repr(theirs)
        assert sum(map(len, hypotheses)) == 0
    return "divergence: auto-reweigh"


@settings(max_examples=N_EXAMPLES)
@given(
    corpus=pairs,
    weights=weights,
    spec=smoothing(),
    auto_reweigh=st.booleans(),
    ignore=ignoring(),
)
@example(  # math domain error in crystalbleu: method 4 on a one-token hypothesis
    corpus=[([list("ab")], list("a"))],
    weights=DEFAULT_WEIGHTS,
    spec=(4, 0.1, 5.0, 5.0),
    auto_reweigh=False,
    ignore={("z",): 1},
)
@example(  # crystalbleu divides by zero: auto_reweigh on an empty hypothesis
    corpus=[([list("ab")], [])],
    weights=DEFAULT_WEIGHTS,
    spec=(1, 0.1, 5.0, 5.0),
    auto_reweigh=True,
    ignore={("a",): 3},
)
@example(  # crystalbleu reweighs before method 7 smooths
    corpus=[([list("abca")], list("abc"))],
    weights=DEFAULT_WEIGHTS,
    spec=(7, 0.1, 5.0, 5.0),
    auto_reweigh=True,
    ignore={("z",): 3},
)
def test_corpus_bleu_ignoring_equals_crystalbleu(
    corpus: list[tuple[list[list[str]], list[str]]],
    weights: Any,
    spec: tuple[int | None, float, float, float],
    auto_reweigh: bool,
    ignore: Any,
) -> None:
    event(compare_with_crystalbleu(corpus, weights, spec, auto_reweigh, ignore))


KNOWN_DIVERGENCES = [
    # (corpus, smoothing spec, auto_reweigh, S, kind)
    pytest.param(
        [([list("ab")], list("a"))],
        (4, 0.1, 5.0, 5.0),
        False,
        {("z",): 1},
        "math-domain",
        id="m4-one-token-hypothesis",
    ),
    pytest.param(
        [([list("abc")], list("abc"))],
        (6, 0.1, 5.0, 5.0),
        False,
        {("a", "b"): 9, ("b", "c"): 9},
        "math-domain",
        id="m6-all-bigrams-ignored",
    ),
    pytest.param(
        [([list("ab")], [])],
        (1, 0.1, 5.0, 5.0),
        True,
        {("a",): 3},
        "auto-reweigh",
        id="auto-reweigh-empty-hypothesis",
    ),
    pytest.param(
        [([list("abca")], list("abc"))],
        (7, 0.1, 5.0, 5.0),
        True,
        {("z",): 3},
        "auto-reweigh",
        id="auto-reweigh-m7-three-tokens",
    ),
]


@pytest.mark.parametrize(("corpus", "spec", "auto_reweigh", "ignore", "kind"), KNOWN_DIVERGENCES)
def test_known_divergences_from_crystalbleu(
    corpus: list[tuple[list[list[str]], list[str]]],
    spec: tuple[int | None, float, float, float],
    auto_reweigh: bool,
    ignore: dict[tuple[str, ...], int],
    kind: str,
) -> None:
    outcome = compare_with_crystalbleu(corpus, DEFAULT_WEIGHTS, spec, auto_reweigh, ignore)
    assert outcome == f"divergence: {kind}"


@settings(max_examples=N_EXAMPLES)
@given(
    refs=st.lists(tokens, max_size=4),
    hyp=tokens,
    n=st.integers(1, 5),
    ignore=st.one_of(st.none(), ignoring()),
)
def test_modified_precision_equals_crystalbleu(
    refs: list[list[str]], hyp: list[str], n: int, ignore: Any
) -> None:
    ok_cb, theirs = _call(crystalbleu.modified_precision, refs, hyp, n, ignoring=ignore)
    ok_ours, ours = _call(crystal_lsp.modified_precision, refs, hyp, n, ignoring=ignore)
    assert ok_ours == ok_cb, (ours, theirs)
    if not ok_cb:
        assert isinstance(ours, CrystalError)
        event("both raise (no references)")
        return
    assert (ours.numerator, ours.denominator) == (theirs.numerator, theirs.denominator)
    assert float(ours) == float(theirs)
    event("equal")


def _crystal_smoothing(spec: tuple[int | None, float, float, float]) -> tuple[Smoothing, Any]:
    method, epsilon, alpha, k = spec
    method = 0 if method is None else method
    ours = Smoothing(method, epsilon=epsilon, alpha=alpha, k=k)
    theirs = getattr(
        crystalbleu.SmoothingFunction(epsilon=epsilon, alpha=alpha, k=k), f"method{method}"
    )
    return ours, theirs


@settings(max_examples=N_EXAMPLES)
@given(
    corpus=pairs,
    spec=smoothing(),
    table=counts,
    max_n=st.integers(1, 4),
)
def test_crystalbleu_class_remove_equals_crystalbleu(
    corpus: list[tuple[list[list[str]], list[str]]],
    spec: tuple[int | None, float, float, float],
    table: dict[tuple[str, ...], int],
    max_n: int,
) -> None:
    sset = TriviallySharedSet(table, k=len(table))
    ours_smoothing, cb_fn = _crystal_smoothing(spec)
    metric = CrystalBLEU(sset, variant="remove", smoothing=ours_smoothing, max_n=max_n)
    weights = (1.0 / max_n,) * max_n
    nltk_fn = getattr(
        nltk_bleu.SmoothingFunction(epsilon=spec[1], alpha=spec[2], k=spec[3]),
        f"method{ours_smoothing.method}",
    )
    hyps = [hyp for _, hyp in corpus]
    list_of_refs = [refs for refs, _ in corpus]

    def check(ours: tuple[bool, Any], cases: list[tuple[list[list[str]], list[str]]]) -> str:
        refs_list = [r for r, _ in cases]
        hyp_list = [h for _, h in cases]
        ok_cb, theirs = _call(
            crystalbleu.corpus_bleu, refs_list, hyp_list, weights, cb_fn, ignoring=sset.counts
        )
        ok_or, oracle = _call(
            nltk_semantics, refs_list, hyp_list, weights, nltk_fn, False, sset.counts
        )
        ok_ours, value = ours
        assert ok_ours == ok_or, (value, oracle)
        if not ok_or:
            assert not ok_cb
            return "all raise"
        assert value == oracle
        if ok_cb:
            assert value == theirs, (value, theirs)
            return "equal to crystalbleu"
        assert str(theirs) == "math domain error"
        return "divergence: math-domain"

    refs0, hyp0 = corpus[0]
    if hyp0 or ours_smoothing.method < 5:
        event("sentence: " + check(_call(metric.sentence_score, hyp0, refs0), [corpus[0]]))
    else:  # see test_sentence_score_of_an_empty_hypothesis_with_methods_5_to_7
        event("sentence: skipped (empty hypothesis, method 5-7)")
    event("corpus: " + check(_call(metric.corpus_score, hyps, list_of_refs), corpus))


@pytest.mark.parametrize("method", [5, 6, 7])
def test_sentence_score_of_an_empty_hypothesis_with_methods_5_to_7(method: int) -> None:
    sset = TriviallySharedSet({("z",): 4}, k=1)
    metric = CrystalBLEU(sset, smoothing=Smoothing(method))
    refs = [list("abcd")]
    expected = crystalbleu.sentence_bleu(
        refs, [], ignoring=sset.counts, smoothing_function=Smoothing(method).function
    )
    assert expected == 0
    assert metric.sentence_score([], refs) == expected


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_ignoring_accepts_a_trivially_shared_set_and_a_frozenset() -> None:
    table = {("a", "b"): 5, ("c",): 3}
    refs, hyp = [list("abcabd")], list("abcdab")
    expected = crystalbleu.sentence_bleu(refs, hyp, ignoring=table)
    for form in (table, frozenset(table), TriviallySharedSet(table, k=2), list(table)):
        assert crystal_lsp.sentence_bleu(refs, hyp, ignoring=form) == expected


def test_ignoring_is_re_read_when_a_new_object_is_passed() -> None:
    refs, hyp = [list("abcabd")], list("abcdab")
    method1 = crystalbleu.SmoothingFunction().method1
    scores = []
    for table in ({("a", "b"): 1}, {("c", "d"): 1}, {("b", "c"): 1, ("a",): 1}, None):
        ours = crystal_lsp.sentence_bleu(refs, hyp, smoothing_function=method1, ignoring=table)
        assert ours == crystalbleu.sentence_bleu(
            refs, hyp, smoothing_function=method1, ignoring=table
        )
        scores.append(ours)
    assert len(set(scores)) == len(scores)
