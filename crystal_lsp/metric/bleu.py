"""BLEU exactly as NLTK 3.10.4 computes it, from precomputed n-gram statistics.

Everything here follows ``nltk.translate.bleu_score`` operation by operation, including the
parts that look accidental, because research results are compared to the digit:

* precisions are fractions whose *unnormalised* numerator and denominator (corpus sums) feed the
  smoothing methods, e.g. method 1 adds ``epsilon / denominator``;
* in ``corpus_bleu`` the smoothing methods that look at a sentence (5, 6 and 7) see the *last*
  hypothesis and references of the corpus, and method 5 computes a 5-gram precision with no
  n-grams ignored (both NLTK and the ``crystalbleu`` package do this);
* zero precisions are skipped in the geometric mean (NLTK 3.10's ``if p_i > 0``), where
  ``crystalbleu`` 0.2 raises ``math domain error``; this is the only place the two references
  disagree, and we follow NLTK;
* the result is ``0`` when no unigram matches, before any smoothing.

Methods 0-4 are evaluated on plain numbers (the same float operations as NLTK, so bit-identical);
methods 5-7 and any user-supplied smoothing callable get NLTK-compatible ``Fraction`` objects.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from fractions import Fraction as _Fraction
from typing import Any

from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.ngrams import (
    as_sequence,
    build_profile,
    clipped_counts,
    merge_max,
    native_bleu_tail,
    ngrams,
)

Weights = Sequence[float]
SmoothingCallable = Callable[..., list[Any]]
Score = float | list[float]
DEFAULT_WEIGHTS = (0.25, 0.25, 0.25, 0.25)


class Fraction(_Fraction):
    """A ``Fraction`` that keeps its unnormalised numerator and denominator, as NLTK's does."""

    _normalize: bool
    _original_numerator: int
    _original_denominator: int

    def __new__(
        cls, numerator: int = 0, denominator: int | None = None, _normalize: bool = False
    ) -> Fraction:
        self: Fraction
        if sys.version_info >= (3, 12):
            self = super().__new__(cls, numerator, denominator)
        else:  # pragma: no cover - exercised on Python 3.10/3.11 only
            self = super().__new__(cls, numerator, denominator, _normalize=_normalize)  # type: ignore[call-overload]
        self._normalize = _normalize
        self._original_numerator = numerator
        self._original_denominator = denominator if denominator is not None else 1
        return self

    @property
    def numerator(self) -> int:  # type: ignore[override]
        if not self._normalize:
            return self._original_numerator
        return super().numerator

    @property
    def denominator(self) -> int:  # type: ignore[override]
        if not self._normalize:
            return self._original_denominator
        return super().denominator


class SmoothingFunction:
    """Chen & Cherry (2014) smoothing methods 0-7, arithmetic identical to NLTK 3.10.4.

    Unlike NLTK, method 0 does not emit a ``UserWarning`` for zero counts.
    """

    def __init__(self, epsilon: float = 0.1, alpha: float = 5, k: float = 5) -> None:
        self.epsilon = epsilon
        self.alpha = alpha
        self.k = k

    def method0(self, p_n: list[Any], *args: Any, **kwargs: Any) -> list[Any]:
        """No smoothing: zero precisions become the smallest positive float."""
        return [p_i if p_i.numerator != 0 else sys.float_info.min for p_i in p_n]

    def method1(self, p_n: list[Any], *args: Any, **kwargs: Any) -> list[Any]:
        """Add ``epsilon`` counts to precisions with zero matches."""
        return [
            (p_i.numerator + self.epsilon) / p_i.denominator if p_i.numerator == 0 else p_i
            for p_i in p_n
        ]

    def method2(self, p_n: list[Any], *args: Any, **kwargs: Any) -> list[Any]:
        """Add 1 to numerator and denominator of orders above 1 (Lin & Och 2004)."""
        return [
            Fraction(p_n[i].numerator + 1, p_n[i].denominator + 1, _normalize=False)
            if i != 0
            else p_n[0]
            for i in range(len(p_n))
        ]

    def method3(self, p_n: list[Any], *args: Any, **kwargs: Any) -> list[Any]:
        """NIST geometric sequence smoothing: 1 / 2^k for the k-th zero precision."""
        incvnt = 1
        for i, p_i in enumerate(p_n):
            if p_i.numerator == 0:
                p_n[i] = 1 / (2**incvnt * p_i.denominator)
                incvnt += 1
        return p_n

    def method4(
        self,
        p_n: list[Any],
        references: Any = None,
        hypothesis: Any = None,
        hyp_len: int | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> list[Any]:
        """Smaller smoothed counts for shorter hypotheses (Chen & Cherry's method 4)."""
        incvnt = 1
        hyp_len = hyp_len if hyp_len else len(hypothesis)
        for i, p_i in enumerate(p_n):
            if p_i.numerator == 0 and hyp_len > 1:
                numerator = 1 / (2**incvnt * self.k / math.log(hyp_len))
                p_n[i] = numerator / p_i.denominator
                incvnt += 1
        return p_n

    def method5(
        self,
        p_n: list[Any],
        references: Any = None,
        hypothesis: Any = None,
        hyp_len: int | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> list[Any]:
        """Average the n-1, n and n+1 gram precisions (uses the 5-gram precision, unfiltered)."""
        m: dict[int, Any] = {}
        p_n_plus1 = [*p_n, modified_precision(references, hypothesis, 5)]
        m[-1] = p_n[0] + 1
        for i, p_i in enumerate(p_n):
            p_n[i] = (m[i - 1] + p_i + p_n_plus1[i + 1]) / 3
            m[i] = p_n[i]
        return p_n

    def method6(
        self,
        p_n: list[Any],
        references: Any = None,
        hypothesis: Any = None,
        hyp_len: int | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> list[Any]:
        """Interpolate with a prior from the ratio of lower-order precisions (Gao & He 2013)."""
        if not p_n[2]:
            raise CrystalError("This smoothing method requires non-zero precision for bigrams.")
        for i, p_i in enumerate(p_n):
            if i in (0, 1):
                continue
            pi0 = 0 if p_n[i - 2] == 0 else p_n[i - 1] ** 2 / p_n[i - 2]
            m = p_i.numerator
            length = max(0, len(hypothesis) - i)
            p_n[i] = (m + self.alpha * pi0) / (length + self.alpha)
        return p_n

    def method7(
        self,
        p_n: list[Any],
        references: Any = None,
        hypothesis: Any = None,
        hyp_len: int | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> list[Any]:
        """Method 4 followed by method 5."""
        hyp_len = hyp_len if hyp_len else len(hypothesis)
        p_n = self.method4(p_n, references, hypothesis, hyp_len)
        return self.method5(p_n, references, hypothesis, hyp_len)


def closest_ref_length(references: Sequence[Sequence[Any]], hyp_len: int) -> int:
    """The reference length closest to ``hyp_len`` (ties: the shorter one)."""
    if not references:
        raise CrystalError("a hypothesis needs at least one reference")
    return min((len(r) for r in references), key=lambda r: (abs(r - hyp_len), r))


def brevity_penalty(closest_ref_len: int, hyp_len: int) -> float:
    """BLEU's brevity penalty."""
    if hyp_len > closest_ref_len:
        return 1
    if hyp_len == 0:
        return 0
    return math.exp(1 - closest_ref_len / hyp_len)


def modified_precision(
    references: Sequence[Sequence[Any]],
    hypothesis: Sequence[Any],
    n: int,
    ignoring: Any = None,
) -> Fraction:
    """BLEU's modified n-gram precision, with the n-grams in ``ignoring`` left out."""
    ignore = ignore_set(ignoring)
    hyp = build_profile(as_sequence(hypothesis), n, ignore)
    refs = (
        merge_max([build_profile(as_sequence(r), n, ignore) for r in references])
        if references
        else None
    )
    if refs is None:
        if hyp.totals[n - 1]:
            raise CrystalError("a hypothesis needs at least one reference")
        return Fraction(0, 1, _normalize=False)
    clipped = clipped_counts(hyp, refs)[n - 1]
    return Fraction(clipped, max(1, hyp.totals[n - 1]), _normalize=False)


def ignore_set(ignoring: Any) -> frozenset[tuple[Any, ...]] | None:
    """The n-grams of an ``ignoring=`` argument (dict, set or list of tuples) as a frozenset.

    Only tuples can equal an n-gram, so other members are dropped, exactly as they would never
    match in the reference implementation's ``ngram not in ignoring`` test.
    """
    if ignoring is None:
        return None
    if isinstance(ignoring, frozenset):
        return ignoring
    as_frozenset = getattr(ignoring, "as_frozenset", None)
    if as_frozenset is not None:
        return as_frozenset()  # type: ignore[no-any-return]
    return frozenset(g for g in ignoring if isinstance(g, tuple))


def normalize_weights(weights: Any) -> tuple[list[Any], bool]:
    """NLTK's weight handling: one tuple, or a list of tuples scored at once."""
    if type(weights) is tuple and weights and type(weights[0]) is float:
        return [weights], True  # a float is not subscriptable: what the test below finds
    try:
        weights[0][0]
    except (TypeError, IndexError):
        return [weights], True
    listed = list(weights)
    return listed, len(listed) == 1


_FAST_METHODS = {"method0", "method1", "method2", "method3", "method4"}
_KNOWN_SMOOTHERS = {
    ("crystal_lsp.metric.bleu", "SmoothingFunction"),
    ("nltk.translate.bleu_score", "SmoothingFunction"),
    ("crystalbleu", "SmoothingFunction"),
}


_last_smoother: tuple[Any, tuple[str, Any] | None] = (None, ("method0", None))


def _fast_method(smoothing_function: Any) -> tuple[str, Any] | None:
    """``(method name, instance)`` if the callable is a method 0-4 we can evaluate on numbers.

    The answer for the last callable is remembered (callers pass the same bound method again
    and again); it cannot change for one bound method, whose function and owner are fixed.
    """
    global _last_smoother
    last = _last_smoother
    if last[0] is smoothing_function:
        return last[1]
    found = _classify_smoother(smoothing_function)
    _last_smoother = (smoothing_function, found)
    return found


def _classify_smoother(smoothing_function: Any) -> tuple[str, Any] | None:
    if smoothing_function is None:
        return "method0", None
    owner = getattr(smoothing_function, "__self__", None)
    name = getattr(smoothing_function, "__name__", "")
    if owner is None or name not in _FAST_METHODS:
        return None
    cls = type(owner)
    if (cls.__module__, cls.__qualname__) not in _KNOWN_SMOOTHERS:
        return None
    if getattr(cls, name) is not getattr(smoothing_function, "__func__", None):
        return None
    return name, owner


def native_tail_spec(
    weights: Any, smoothing_function: SmoothingCallable | None, auto_reweigh: bool
) -> tuple[Any, int, Any, bool] | None:
    """What the native tail needs: ``(weights, method, epsilon or k, auto_reweigh)``.

    None unless the smoothing is one of methods 0-4 evaluated on numbers (the native tail
    itself declines anything else it cannot compute exactly as the Python code does).
    """
    fast = _fast_method(smoothing_function)
    if fast is None:
        return None
    name, owner = fast
    method = int(name[-1])
    param = owner.epsilon if method == 1 else owner.k if method == 4 else None
    return weights, method, param, auto_reweigh


def _smooth_numbers(
    method: str,
    owner: Any,
    nums: Sequence[Any],
    dens: Sequence[Any],
    hyp_len: int,
    hypothesis: Sequence[Any],
) -> list[Any]:
    """Methods 0-4 on (numerator, denominator) pairs; each value is what NLTK's ``float(p_i)`` is."""
    out: list[Any] = []
    if method == "method0":
        for num, den in zip(nums, dens):
            out.append(num / den if num != 0 else sys.float_info.min)
    elif method == "method1":
        eps = owner.epsilon
        for num, den in zip(nums, dens):
            out.append((num + eps) / den if num == 0 else num / den)
    elif method == "method2":
        for i, (num, den) in enumerate(zip(nums, dens)):
            out.append((num + 1) / (den + 1) if i != 0 else num / den)
    elif method == "method3":
        incvnt = 1
        for num, den in zip(nums, dens):
            if num == 0:
                out.append(1 / (2**incvnt * den))
                incvnt += 1
            else:
                out.append(num / den)
    else:  # method4
        incvnt = 1
        length = hyp_len if hyp_len else len(hypothesis)
        for num, den in zip(nums, dens):
            if num == 0 and length > 1:
                numerator = 1 / (2**incvnt * owner.k / math.log(length))
                out.append(numerator / den)
                incvnt += 1
            else:
                out.append(num / den)
    return out


def bleu_from_counts(
    numerators: Sequence[float],
    denominators: Sequence[float],
    hyp_len: int,
    ref_len: int,
    weights: Any = DEFAULT_WEIGHTS,
    smoothing_function: SmoothingCallable | None = None,
    auto_reweigh: bool = False,
    *,
    references: Sequence[Sequence[Any]] = (),
    hypothesis: Sequence[Any] = (),
    precision: Callable[[Any, Any], Any] | None = None,
) -> Score:
    """NLTK's ``corpus_bleu`` tail: smoothing, weights and brevity penalty on summed counts.

    ``numerators``/``denominators`` hold one entry per order up to the longest weight tuple.
    ``references``/``hypothesis`` are the last pair of the corpus, which NLTK hands to the
    smoothing function. ``precision(numerator, denominator)`` builds the precision objects
    handed to smoothing callables other than methods 0-4 (default: NLTK's ``Fraction``).

    With the native core, one weight tuple of floats and methods 0-4 are computed in C with the
    same floating-point operations in the same order (see ``tail_score`` in ``_bleu.c``).
    """
    tail = native_bleu_tail()
    if tail is not None:
        spec = native_tail_spec(weights, smoothing_function, auto_reweigh)
        if spec is not None:
            score = tail(numerators, denominators, hyp_len, ref_len, spec)
            if score is not NotImplemented:
                return score  # type: ignore[no-any-return]
    weight_list, single = normalize_weights(weights)
    if not numerators or numerators[0] == 0:
        return 0.0 if single else [0.0] * len(weight_list)
    bp = brevity_penalty(ref_len, hyp_len)
    fast = _fast_method(smoothing_function)
    p_n: list[Any]
    if fast is not None:
        p_n = _smooth_numbers(fast[0], fast[1], numerators, denominators, hyp_len, hypothesis)
    else:
        assert smoothing_function is not None
        make = precision if precision is not None else _fraction
        p_n = [make(n, d) for n, d in zip(numerators, denominators)]
        p_n = smoothing_function(p_n, references=references, hypothesis=hypothesis, hyp_len=hyp_len)
    scores = []
    for weight in weight_list:
        if auto_reweigh and hyp_len < 4 and weight == DEFAULT_WEIGHTS:
            weight = (1 / hyp_len,) * hyp_len
        s = math.fsum([w_i * math.log(p_i) for w_i, p_i in zip(weight, p_n) if p_i > 0])
        scores.append(bp * math.exp(s))
    return scores[0] if single else scores


def _fraction(numerator: Any, denominator: Any) -> Fraction:
    return Fraction(numerator, denominator, _normalize=False)


def max_order(weights: Any) -> int:
    """How many n-gram orders a weights argument needs."""
    if type(weights) is tuple and weights and type(weights[0]) is float:
        return len(weights)  # one tuple (see normalize_weights)
    weight_list, _ = normalize_weights(weights)
    return max((len(w) for w in weight_list), default=0)


def _check_pair_counts(list_of_references: Sequence[Any], hypotheses: Sequence[Any]) -> None:
    if len(list_of_references) != len(hypotheses):
        raise CrystalError(
            f"the number of hypotheses ({len(hypotheses)}) and of reference lists "
            f"({len(list_of_references)}) differ"
        )
    if not hypotheses:
        raise CrystalError("no hypotheses to score")


def ngram_count(tokens: Sequence[Any], n: int) -> int:
    """How many n-grams a sequence has."""
    return len(ngrams(tokens, n))
