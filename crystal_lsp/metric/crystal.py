"""CrystalBLEU: BLEU without the trivially shared n-grams (Eghbali & Pradel, ASE 2022).

Two ways of discounting the n-grams of S (Algorithm 1, line 22):

``remove`` (the paper's choice, and the ``crystalbleu`` package's ``ignoring=``)
    n-grams in S are dropped from the hypothesis counts and the reference max-counts.

``weight`` (inverse frequency)
    every n-gram ``g`` in S counts ``w(g) = 1 / max(1, ln f(g))`` times, where ``f(g)`` is its
    count in the corpus S was built from; other n-grams count once. The modified precision of
    order n is ``sum_g w(g) min(h_g, r_g) / max(1, sum_g w(g) h_g)`` (the floor of 1 is BLEU's
    ``max(1, count)``, and keeps smoothed precisions at most 1). ``w`` lies in (0, 1], falls as
    ``f`` grows and tends to 0 (removal) as ``f`` tends to infinity; with S empty the score is
    BLEU's. The paper's
    one-sentence description ("divide by the logarithm of counts in S") leaves ``f <= e``
    undefined or >1; the ``max(1, .)`` keeps S members from ever weighing more than other
    n-grams. Sums are exactly rounded (``math.fsum``), so results do not depend on hash order.

Everything else (clipping, brevity penalty, weights, smoothing) is NLTK's, see :mod:`bleu`.

``corpus_bleu`` and ``sentence_bleu`` are drop-in replacements for the ``crystalbleu`` package's
functions (and for NLTK's when ``ignoring`` is None). They cache the n-gram profile of every
sequence they see (bounded by ``PROFILE_CACHE_TOKENS``), so scoring many candidates against the
same references, or a corpus whose sequences repeat, does the counting once. Profiles are
native (see :mod:`crystal_lsp.metric.ngrams`) whenever the compiled core is available; the inverse
frequency variant uses pure-Python profiles. ``ignoring`` is
identified by object identity and length between calls: pass a frozenset or a
:class:`TriviallySharedSet`, or do not mutate the dict in place between calls.
"""

from __future__ import annotations

import math
import os
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.bleu import (
    DEFAULT_WEIGHTS,
    Score,
    SmoothingCallable,
    _check_pair_counts,
    bleu_from_counts,
    closest_ref_length,
    ignore_set,
    max_order,
    native_tail_spec,
)
from crystal_lsp.metric.bleu import modified_precision as modified_precision
from crystal_lsp.metric.ngrams import (
    NATIVE_MAX_N,
    NativeProfile,
    Ngram,
    Profile,
    as_sequence,
    build_profile,
    build_set_profile,
    clipped_counts,
    merge_max,
    native_cache,
    native_context,
    reset_vocabulary,
    to_set_profile,
)
from crystal_lsp.metric.signature import Signature
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import TriviallySharedSet
from crystal_lsp.text.lexers import tokenizer_name

if TYPE_CHECKING:
    from crystal_lsp.metric._native import ProfileCache

VARIANTS = ("remove", "weight")
PROFILE_CACHE_TOKENS = int(os.environ.get("CRYSTAL_LSP_PROFILE_CACHE_TOKENS", "24000000"))
# What a token of a pure-Python profile costs in the budget: ~250 bytes against ~20 for a native
# profile (plus 8 bytes for the cache key's tuple either way). 24M native tokens or 2M
# pure-Python ones come to roughly 500-700 MB.
SET_PROFILE_COST = 12


class _ProfileCache:
    """Profiles keyed by (token tuple, max n, ignore-set id), least recently used evicted first.

    The budget counts tokens of native profiles (~20 bytes per token); a token of a pure-Python
    profile (~250 bytes) counts ``SET_PROFILE_COST`` times. Set it with the
    ``CRYSTAL_LSP_PROFILE_CACHE_TOKENS`` environment variable or ``max_tokens``.
    """

    def __init__(self, max_tokens: int, pure: bool = False) -> None:
        self.max_tokens = max_tokens
        self._build = build_set_profile if pure else build_profile
        self._data: OrderedDict[tuple[Any, ...], tuple[Profile, int]] = OrderedDict()
        self._tokens = 0

    def get(
        self, seq: Sequence[Any], max_n: int, ignore: frozenset[Ngram] | None, ignore_id: int
    ) -> Profile:
        key = (tuple(seq), max_n, ignore_id)
        found = self._data.get(key)
        if found is not None:
            self._data.move_to_end(key)
            return found[0]
        profile = self._build(seq, max_n, ignore)
        cost = len(seq) if type(profile) is NativeProfile else len(seq) * SET_PROFILE_COST
        self._tokens += cost
        while self._tokens > self.max_tokens and self._data:
            oldest = next(iter(self._data))
            self._tokens -= self._data.pop(oldest)[1]
        self._data[key] = (profile, cost)
        return profile

    def clear(self) -> None:
        self._data.clear()
        self._tokens = 0


class _NativeCounts:
    """The drop-in functions' native path, in C: the pairs' loop and a profile cache.

    The cache is keyed by token ids (no tuple of the tokens is built) and is replaced when the
    vocabulary is.
    """

    def __init__(self, max_tokens: int) -> None:
        self.max_tokens = max_tokens
        self._cache: ProfileCache | None = None

    def corpus_counts(
        self,
        list_of_references: Sequence[Sequence[Any]],
        hypotheses: Sequence[Any],
        order: int,
        ignore: frozenset[Ngram] | None,
        tail: tuple[Any, ...] | None,
    ) -> float | tuple[list[int], list[int], int, int] | None:
        """The score, or what it is computed from.

        Given a ``tail`` the native core can finish, the score itself; else the summed clipped
        counts and denominators and the hypothesis and closest reference lengths. None when the
        native core cannot take these inputs (the Python loop then does).
        """
        context = native_context(ignore) if 1 <= order <= NATIVE_MAX_N else None
        if context is None:
            return None
        vocab, encoded = context
        cache = self._cache
        if cache is None or cache.vocabulary is not vocab:
            cache = self._cache = native_cache(vocab, self.max_tokens)
        found = cache.corpus_counts(list_of_references, hypotheses, order, encoded, tail)
        return None if found is NotImplemented else found

    def clear(self) -> None:
        self._cache = None


class _IgnoreRegistry:
    """Stable small ids for ``ignoring`` arguments, so profile cache keys stay cheap."""

    def __init__(self) -> None:
        self._by_object: dict[int, tuple[Any, int, frozenset[Ngram] | None, int]] = {}
        self._next = 1

    def resolve(self, ignoring: Any) -> tuple[frozenset[Ngram] | None, int]:
        if ignoring is None:
            return None, 0
        entry = self._by_object.get(id(ignoring))
        if entry is not None and entry[0] is ignoring and entry[1] == len(ignoring):
            return entry[2], entry[3]
        frozen = ignore_set(ignoring)
        ident = self._next
        self._next += 1
        if len(self._by_object) >= 16:
            self._by_object.clear()
        self._by_object[id(ignoring)] = (ignoring, len(ignoring), frozen, ident)
        return frozen, ident


_CACHE = _ProfileCache(PROFILE_CACHE_TOKENS)
_NATIVE = _NativeCounts(PROFILE_CACHE_TOKENS)
_IGNORES = _IgnoreRegistry()


def clear_caches(vocabulary: bool = False) -> None:
    """Forget every cached profile (for memory-sensitive callers and benchmarks).

    The token vocabulary of native profiles (and S encoded in it) is kept, as the conversion of
    ``ignoring`` arguments is: it is an interning table, bounded by
    :data:`crystal_lsp.metric.ngrams.VOCABULARY_LIMIT`. ``vocabulary=True`` starts a fresh one too.
    """
    _CACHE.clear()
    _NATIVE.clear()
    if vocabulary:
        reset_vocabulary()


def corpus_bleu(
    list_of_references: Sequence[Sequence[Sequence[Any]]],
    hypotheses: Sequence[Sequence[Any]],
    weights: Any = DEFAULT_WEIGHTS,
    smoothing_function: SmoothingCallable | None = None,
    auto_reweigh: bool = False,
    ignoring: Any = None,
) -> Score:
    """Corpus-level (Crystal)BLEU, identical to NLTK 3.10.4 and to ``crystalbleu`` 0.2.

    ``ignoring`` is S (a dict, set, frozenset, list of n-gram tuples, or a
    :class:`TriviallySharedSet`); its n-grams are removed from both sides. Several weight tuples
    give a list of scores, as in NLTK.
    """
    _check_pair_counts(list_of_references, hypotheses)
    order = max_order(weights)
    ignore, ignore_id = _IGNORES.resolve(ignoring)
    tail = native_tail_spec(weights, smoothing_function, auto_reweigh)
    counted = _NATIVE.corpus_counts(list_of_references, hypotheses, order, ignore, tail)
    if type(counted) is float:
        return counted
    refs: list[Sequence[Any]] = []
    hyp: Sequence[Any] = ()
    if counted is not None:
        assert isinstance(counted, tuple)
        nums, dens, hyp_total, ref_total = counted
        # NLTK hands the corpus's last pair to the smoothing function
        refs = [as_sequence(r) for r in list_of_references[-1]]
        hyp = as_sequence(hypotheses[-1])
    else:
        nums = [0] * order
        dens = [0] * order
        hyp_total = ref_total = 0
        for references, hypothesis in zip(list_of_references, hypotheses):
            hyp = as_sequence(hypothesis)
            refs = [as_sequence(r) for r in references]
            if not refs:
                raise CrystalError("a hypothesis needs at least one reference")
            hp = _CACHE.get(hyp, order, ignore, ignore_id)
            rp = merge_max([_CACHE.get(r, order, ignore, ignore_id) for r in refs])
            clipped = clipped_counts(hp, rp)
            for i in range(order):
                nums[i] += clipped[i]
                dens[i] += max(1, hp.totals[i])
            hyp_total += len(hyp)
            ref_total += closest_ref_length(refs, len(hyp))
    return bleu_from_counts(
        nums,
        dens,
        hyp_total,
        ref_total,
        weights,
        smoothing_function,
        auto_reweigh,
        references=refs,
        hypothesis=hyp,
    )


def sentence_bleu(
    references: Sequence[Sequence[Any]],
    hypothesis: Sequence[Any],
    weights: Any = DEFAULT_WEIGHTS,
    smoothing_function: SmoothingCallable | None = None,
    auto_reweigh: bool = False,
    ignoring: Any = None,
) -> Score:
    """Sentence-level (Crystal)BLEU: ``corpus_bleu([references], [hypothesis], ...)``."""
    return corpus_bleu(
        [references], [hypothesis], weights, smoothing_function, auto_reweigh, ignoring
    )


def inverse_frequency_weight(count: int) -> float:
    """``1 / max(1, ln count)``: the weight of an n-gram of S seen ``count`` times in the corpus."""
    return 1.0 / max(1.0, math.log(count)) if count > 0 else 1.0


@dataclass(frozen=True)
class Counts:
    """Summed modified-precision counts of one or more pairs, ready to become a score."""

    numerators: tuple[float, ...]
    denominators: tuple[float, ...]
    hyp_len: int
    ref_len: int


class CrystalBLEU:
    """A configured CrystalBLEU (or BLEU, with ``sset=None``) for scoring many pairs.

    Profiles of token sequences are cached per instance (by content), so a reference scored
    against many hypotheses is counted once. Use :meth:`profile` to precompute profiles of items
    you will pair up repeatedly (distinguishability, clone search) and :meth:`score_profiles`.
    """

    def __init__(
        self,
        sset: TriviallySharedSet | None = None,
        *,
        variant: str = "remove",
        max_n: int = 4,
        smoothing: Smoothing | None = None,
        weights: Sequence[float] | None = None,
        language: str = "-",
        comments: bool = False,
        cache_tokens: int = PROFILE_CACHE_TOKENS,
    ) -> None:
        if variant not in VARIANTS:
            raise CrystalError(f"unknown CrystalBLEU variant {variant!r} (use remove or weight)")
        if max_n < 1:
            raise CrystalError(f"max n must be at least 1, not {max_n}")
        self.sset = sset
        self.variant = variant
        self.max_n = max_n
        self.smoothing = smoothing if smoothing is not None else Smoothing()
        self.weights = tuple(weights) if weights is not None else (1.0 / max_n,) * max_n
        if len(self.weights) != max_n:
            raise CrystalError(f"{len(self.weights)} weights given for max n {max_n}")
        self._smoothing_function = self.smoothing.function
        # the inverse-frequency weights look at the n-grams themselves: pure-Python profiles
        weighted = sset is not None and variant == "weight"
        self._cache = _ProfileCache(cache_tokens, pure=weighted)
        self._ignore = sset.as_frozenset() if sset is not None and variant == "remove" else None
        self._weights_by_gram: dict[Ngram, float] = {}
        if weighted:
            assert sset is not None
            self._weights_by_gram = {g: inverse_frequency_weight(c) for g, c in sset.counts.items()}
        self._weighted_grams = [
            frozenset(g for g in self._weights_by_gram if len(g) == n) for n in range(1, max_n + 1)
        ]
        self.language = language
        self.comments = comments

    @property
    def name(self) -> str:
        """``bleu`` without S, else ``crystalbleu`` (or ``crystalbleu-if`` for weighting)."""
        if self.sset is None:
            return "bleu"
        return "crystalbleu" if self.variant == "remove" else "crystalbleu-if"

    @property
    def signature(self) -> Signature:
        """What every score of this instance depends on."""
        return Signature(
            metric=self.name,
            tokenizer=tokenizer_name(self.language),
            language=self.language,
            comments="yes" if self.comments else "no",
            k=self.sset.k if self.sset is not None else 0,
            max_n=self.max_n,
            smoothing=self.smoothing.label,
            variant=self.variant,
            sset=self.sset.fingerprint() if self.sset is not None else "-",
            tie_break=self.sset.tie_break if self.sset is not None else "-",
        )

    def profile(self, tokens: Iterable[Any]) -> Profile:
        """The (cached) n-gram profile of a token sequence under this instance's S."""
        seq = as_sequence(tokens)
        return self._cache.get(seq, self.max_n, self._ignore, 1 if self._ignore is not None else 0)

    def counts(
        self, hyp: Profile, refs: Sequence[Profile], ref_lengths: Sequence[int] | None = None
    ) -> Counts:
        """Modified-precision counts of one pair of profiles."""
        if not refs:
            raise CrystalError("a hypothesis needs at least one reference")
        ref = merge_max(refs)
        lengths = ref_lengths if ref_lengths is not None else [r.length for r in refs]
        closest = min(lengths, key=lambda r: (abs(r - hyp.length), r))
        if not self._weights_by_gram:
            clipped = clipped_counts(hyp, ref)
            return Counts(tuple(clipped), tuple(max(1, t) for t in hyp.totals), hyp.length, closest)
        return self._weighted_counts(hyp, ref, closest)

    def _weighted_counts(self, hyp_profile: Profile, ref_profile: Profile, closest: int) -> Counts:
        nums: list[float] = []
        dens: list[float] = []
        weight_of = self._weights_by_gram
        hyp, ref = to_set_profile(hyp_profile), to_set_profile(ref_profile)
        for i in range(self.max_n):
            hd, hr, rd, rr = hyp.distinct[i], hyp.repeated[i], ref.distinct[i], ref.repeated[i]
            grams_s = self._weighted_grams[i]
            common = hd & rd
            common_s = common & grams_s
            hyp_s = hd & grams_s
            plain_clipped = len(common) - len(common_s)
            for g in (hr.keys() & rr.keys()) - common_s:
                plain_clipped += min(hr[g], rr[g]) - 1
            num_terms: list[float] = [plain_clipped]
            num_terms.extend(weight_of[g] * min(hr.get(g, 1), rr.get(g, 1)) for g in common_s)
            plain_total = hyp.totals[i] - sum(hr.get(g, 1) for g in hyp_s)
            den_terms: list[float] = [plain_total]
            den_terms.extend(weight_of[g] * hr.get(g, 1) for g in hyp_s)
            nums.append(math.fsum(num_terms))
            # BLEU guards its denominator with max(1, count); weighted counts get the same floor,
            # which also keeps smoothed precisions (eps / den, 1 / (2^k den), ...) at most 1.
            dens.append(max(1.0, math.fsum(den_terms)))
        return Counts(tuple(nums), tuple(dens), hyp.length, closest)

    def score_counts(
        self,
        counts: Counts,
        *,
        references: Sequence[Sequence[Any]] = (),
        hypothesis: Sequence[Any] = (),
    ) -> float:
        """Turn counts into a score (smoothing, weights, brevity penalty)."""
        score = bleu_from_counts(
            counts.numerators,
            counts.denominators,
            counts.hyp_len,
            counts.ref_len,
            self.weights,
            self._smoothing_function,
            False,
            references=references,
            hypothesis=hypothesis,
            precision=_FloatPrecision if self._weights_by_gram else None,
        )
        assert isinstance(score, float)
        return score

    def score_profiles(
        self,
        hyp: Profile,
        refs: Sequence[Profile],
        *,
        hypothesis: Sequence[Any] | None = None,
        references: Sequence[Sequence[Any]] | None = None,
    ) -> float:
        """Sentence-level score of one hypothesis profile against reference profiles.

        Smoothing methods 5-7 need the token sequences themselves; pass them too.
        """
        if self.smoothing.method >= 5 and (hypothesis is None or references is None):
            raise CrystalError("smoothing methods 5-7 need the hypothesis and reference tokens")
        return self.score_counts(
            self.counts(hyp, refs), references=references or (), hypothesis=hypothesis or ()
        )

    def sentence_score(
        self, hypothesis: Iterable[Any], references: Sequence[Iterable[Any]]
    ) -> float:
        """Score one hypothesis against its references (token sequences)."""
        hyp = as_sequence(hypothesis)
        refs = [as_sequence(r) for r in references]
        return self.score_profiles(
            self.profile(hyp), [self.profile(r) for r in refs], hypothesis=hyp, references=refs
        )

    def corpus_score(
        self,
        hypotheses: Sequence[Iterable[Any]],
        list_of_references: Sequence[Sequence[Iterable[Any]]],
    ) -> float:
        """Corpus-level score: counts summed over all pairs before dividing (NLTK semantics)."""
        _check_pair_counts(list_of_references, hypotheses)
        nums = [0.0] * self.max_n
        dens = [0.0] * self.max_n
        hyp_total = ref_total = 0
        hyp: Sequence[Any] = ()
        refs: list[Sequence[Any]] = []
        for hypothesis, references in zip(hypotheses, list_of_references):
            hyp = as_sequence(hypothesis)
            refs = [as_sequence(r) for r in references]
            c = self.counts(self.profile(hyp), [self.profile(r) for r in refs])
            for i in range(self.max_n):
                nums[i] += c.numerators[i]
                dens[i] += c.denominators[i]
            hyp_total += c.hyp_len
            ref_total += c.ref_len
        if not self._weights_by_gram:
            nums_out: tuple[float, ...] = tuple(int(x) for x in nums)
            dens_out: tuple[float, ...] = tuple(int(x) for x in dens)
        else:
            nums_out, dens_out = tuple(nums), tuple(dens)
        return self.score_counts(
            Counts(nums_out, dens_out, hyp_total, ref_total), references=refs, hypothesis=hyp
        )


class _FloatPrecision(float):
    """A float precision that also answers ``numerator``/``denominator`` (for methods 5-7)."""

    numerator: float
    denominator: float

    def __new__(cls, numerator: float, denominator: float) -> _FloatPrecision:
        self = super().__new__(cls, numerator / denominator)
        self.numerator = numerator
        self.denominator = denominator
        return self
