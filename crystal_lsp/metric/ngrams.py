"""N-grams and the per-sequence n-gram statistics every BLEU variant is computed from.

A :class:`Profile` holds, for each order ``n``, the distinct n-grams of a token sequence with
their counts and the total number of n-grams, after dropping an optional set of ignored n-grams
(CrystalBLEU's trivially shared set). Two implementations give identical results:

:class:`NativeProfile` (the compiled ``crystal_lsp.metric._native`` module, used when it is importable
and ``CRYSTAL_LSP_PURE`` is not ``1``)
    tokens are interned into a process-wide :class:`Vocabulary` (str -> 32-bit id); per order,
    the distinct n-grams are kept in lexicographic order of their id tuples as (position of an
    occurrence, count) pairs next to the sequence's ids, and the clipped count of two profiles
    is a linear merge. Only sequences of ``str`` tokens (and ignore sets of tuples of ``str``)
    go this way; anything else is handled by the pure-Python profile.

:class:`SetProfile` (pure Python)
    the distinct n-grams as a set and the counts of those that occur more than once, so that

        sum_g min(h_g, r_g) = |distinct_h & distinct_r| + sum_{g repeated in both} (min(h_g, r_g) - 1)

    because ``min(h, r) = 1 + min(h - 1, r - 1)`` for counts of at least one; both terms are set
    operations CPython runs in C.

The profile of a sequence is built once and reused against any number of others. Profiles made
with different vocabularies (the vocabulary is replaced when it outgrows
:data:`VOCABULARY_LIMIT`) or of different kinds are still compared exactly, through their
pure-Python form.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence, Set
from itertools import compress
from types import ModuleType
from typing import TYPE_CHECKING, Any

from crystal_lsp.text.fastlex.columns import set_native_loop, set_native_tokens

if TYPE_CHECKING:
    from crystal_lsp.metric._native import (
        IgnoreSet,
        NgramCounter,
        ProfileCache,
        ProfileCore,
        Vocabulary,
    )

_native_module: ModuleType | None
try:
    from crystal_lsp.metric import _native as _native_module
except ImportError:  # not compiled (CRYSTAL_LSP_BUILD_NATIVE=0, no compiler): pure Python
    _native_module = None

PURE_ENV = "CRYSTAL_LSP_PURE"
VOCABULARY_LIMIT = 1 << 20
"""Distinct tokens after which new profiles start a fresh vocabulary (the old one lives on as
long as profiles made with it). A vocabulary keeps its strings alive: ~100 bytes a token."""

NATIVE_MAX_N = 1 << 20  # higher orders (never useful) are left to Python

_native: ModuleType | None = None if os.environ.get(PURE_ENV) == "1" else _native_module
_vocab: Vocabulary | None = None
_encoded: dict[int, tuple[Set[Any], Vocabulary, IgnoreSet | None]] = {}
_ENCODED_LIMIT = 32


def _install_loop() -> None:
    """The fastlex executor's loops follow the native core (on, off, not built)."""
    set_native_loop(getattr(_native, "lex_columns", None))
    set_native_tokens(getattr(_native, "lex_tokens", None))


_install_loop()

Ngram = tuple[Any, ...]


def ngrams(tokens: Sequence[Any], n: int) -> list[Ngram]:
    """All contiguous n-grams of ``tokens`` as tuples, in order (empty if too short)."""
    if n == 1:
        return list(zip(tokens))
    return list(zip(*[tokens[i:] for i in range(n)]))


def as_sequence(tokens: Iterable[Any]) -> Sequence[Any]:
    """A sliceable sequence of the tokens (lists and tuples are used as they are)."""
    texts = getattr(tokens, "texts", None)
    if texts is not None:
        return texts  # type: ignore[no-any-return]
    if isinstance(tokens, (list, tuple)):
        return tokens
    return list(tokens)


def native_available() -> bool:
    """Whether profiles and S-set counting use the compiled native core."""
    return _native is not None


def native_status() -> str:
    """``native``, or why the pure-Python implementation is in use."""
    if _native is not None:
        return "native"
    if _native_module is None:
        return "pure Python, native extension not built"
    return "pure Python, native core disabled"


def reset_vocabulary() -> None:
    """Start a fresh vocabulary for new native profiles (existing profiles keep theirs)."""
    global _vocab
    _vocab = None
    _encoded.clear()


def set_native(enabled: bool) -> bool:
    """Switch the native core on or off for new profiles and counts; returns the old setting.

    For tests and benchmarks (``CRYSTAL_LSP_PURE=1`` does the same at import). Existing
    profiles keep working either way. Switching on raises ``RuntimeError`` if the extension is
    not built.
    """
    global _native
    previous = _native is not None
    if enabled and _native_module is None:
        raise RuntimeError("crystal_lsp.metric._native is not built")
    _native = _native_module if enabled else None
    _install_loop()
    reset_vocabulary()
    return previous


class Profile:
    """Sufficient n-gram statistics of one token sequence (orders 1..max_n).

    ``length`` is the number of tokens and ``totals[n - 1]`` the number of n-grams of order
    ``n`` left after removing ignored ones. Built by :func:`build_profile`; compared with
    :func:`clipped_counts` and :func:`merge_max`.
    """

    __slots__ = ("length", "totals")

    length: int
    totals: tuple[int, ...]

    @property
    def max_n(self) -> int:
        """The highest n-gram order held."""
        return len(self.totals)

    def count(self, gram: Ngram) -> int:
        """How often ``gram`` occurs (0 if absent or ignored)."""
        raise NotImplementedError

    def counts(self, n: int) -> dict[Ngram, int]:
        """All n-grams of order ``n`` with their counts."""
        raise NotImplementedError


class SetProfile(Profile):
    """The pure-Python profile (any hashable tokens).

    Per order, a set of the distinct n-grams and a dict of the counts of those occurring more
    than once.
    """

    __slots__ = ("distinct", "repeated")

    def __init__(
        self,
        length: int,
        distinct: tuple[set[Ngram], ...],
        repeated: tuple[dict[Ngram, int], ...],
        totals: tuple[int, ...],
    ) -> None:
        self.length = length
        self.distinct = distinct
        self.repeated = repeated
        self.totals = totals

    def count(self, gram: Ngram) -> int:
        """How often ``gram`` occurs (0 if absent or ignored)."""
        n = len(gram)
        if n > self.max_n or gram not in self.distinct[n - 1]:
            return 0
        return self.repeated[n - 1].get(gram, 1)

    def counts(self, n: int) -> dict[Ngram, int]:
        """All n-grams of order ``n`` with their counts."""
        out = dict.fromkeys(self.distinct[n - 1], 1)
        out.update(self.repeated[n - 1])
        return out


class NativeProfile(Profile):
    """A profile held by the native core (sorted arrays of token ids, ~20 bytes per token)."""

    __slots__ = ("core",)

    def __init__(self, core: ProfileCore) -> None:
        self.core = core
        self.length = core.length
        self.totals = core.totals

    def count(self, gram: Ngram) -> int:
        """How often ``gram`` occurs (0 if absent or ignored)."""
        found = self.core.count(gram)
        if found is NotImplemented:  # not a tuple of str: Python's equality decides
            return to_set_profile(self).count(gram)
        return found

    def counts(self, n: int) -> dict[Ngram, int]:
        """All n-grams of order ``n`` with their counts."""
        if not 1 <= n <= self.max_n:  # the same IndexError (or negative index) as a tuple's
            return to_set_profile(self).counts(n)
        return self.core.counts(n)

    @property
    def nbytes(self) -> int:
        """Memory held by the native arrays."""
        return self.core.nbytes

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (and copied) as the equivalent pure-Python profile."""
        set_profile = to_set_profile(self)
        return (
            SetProfile,
            (set_profile.length, set_profile.distinct, set_profile.repeated, set_profile.totals),
        )


def to_set_profile(profile: Profile) -> SetProfile:
    """The pure-Python form of a profile (the profile itself if it is one)."""
    if isinstance(profile, SetProfile):
        return profile
    if isinstance(profile, NativeProfile):
        distinct, repeated = profile.core.export()
        return SetProfile(profile.length, distinct, repeated, profile.totals)
    raise TypeError(f"not a profile: {type(profile).__name__}")


def _vocabulary(native: ModuleType) -> Vocabulary:
    global _vocab
    vocab = _vocab
    if vocab is None or len(vocab) > VOCABULARY_LIMIT:
        vocab = _vocab = native.Vocabulary()
        _encoded.clear()
    return vocab


def _encoded_ignore(native: ModuleType, vocab: Vocabulary, ignore: Set[Any]) -> Any:
    """``ignore`` as an IgnoreSet of ``vocab`` (NotImplemented: not all tuples of str).

    Frozensets (what every caller in crystal_lsp passes) are encoded once per vocabulary.
    """
    if not isinstance(ignore, frozenset):
        return native.encode_ignore(vocab, ignore)
    found = _encoded.get(id(ignore))
    if found is not None and found[0] is ignore and found[1] is vocab:
        return found[2]
    encoded = native.encode_ignore(vocab, ignore)
    if len(_encoded) >= _ENCODED_LIMIT:
        _encoded.clear()
    _encoded[id(ignore)] = (ignore, vocab, encoded)
    return encoded


def native_context(ignore: Set[Ngram] | None) -> tuple[Vocabulary, IgnoreSet | None] | None:
    """The vocabulary and encoded ``ignore`` new native profiles use (None: pure Python)."""
    native = _native
    if native is None:
        return None
    vocab = _vocabulary(native)
    encoded = _encoded_ignore(native, vocab, ignore) if ignore else None
    if encoded is NotImplemented:
        return None
    return vocab, encoded


def native_bleu_tail() -> Callable[..., Any] | None:
    """The native BLEU tail (see :func:`crystal_lsp.metric.bleu.bleu_from_counts`), if in use."""
    return _native.bleu_tail if _native is not None else None


def native_chain_pairs() -> Callable[..., Any] | None:
    """The native chaining of seed runs (:mod:`crystal_lsp.clones.align.chains`), if in use."""
    return getattr(_native, "chain_pairs", None) if _native is not None else None


def native_cache(vocab: Vocabulary, max_tokens: int) -> ProfileCache:
    """A native profile cache (keyed by token ids) for profiles of ``vocab``."""
    assert _native_module is not None
    cache: ProfileCache = _native_module.ProfileCache(vocab, max_tokens)
    return cache


def build_profile(
    tokens: Sequence[Any], max_n: int = 4, ignore: Set[Ngram] | None = None
) -> Profile:
    """Count the n-grams of ``tokens`` up to ``max_n``, leaving out those in ``ignore``.

    Native when the core is available and the tokens (and ignored n-grams) are ``str``.
    """
    context = native_context(ignore) if 1 <= max_n <= NATIVE_MAX_N else None
    if context is not None:
        assert _native is not None
        seq = tokens if type(tokens) is list or type(tokens) is tuple else list(tokens)
        core = _native.build(context[0], seq, max_n, context[1])
        if core is not NotImplemented:
            return NativeProfile(core)
    return build_set_profile(tokens, max_n, ignore)


def build_set_profile(
    tokens: Sequence[Any], max_n: int = 4, ignore: Set[Ngram] | None = None
) -> SetProfile:
    """:func:`build_profile` in pure Python (any hashable tokens)."""
    distinct_all: list[set[Ngram]] = []
    repeated_all: list[dict[Ngram, int]] = []
    totals: list[int] = []
    for n in range(1, max_n + 1):
        grams = ngrams(tokens, n)
        total = len(grams)
        distinct = set(grams)
        repeated: dict[Ngram, int]
        if len(distinct) < total:
            counts = Counter(grams)
            repeated = dict(compress(counts.items(), map((1).__lt__, counts.values())))
        else:
            repeated = {}
        if ignore:
            hit = distinct & ignore
            if hit:
                distinct -= hit
                pop = repeated.pop
                total -= sum([pop(g, 1) for g in hit])
        distinct_all.append(distinct)
        repeated_all.append(repeated)
        totals.append(total)
    return SetProfile(len(tokens), tuple(distinct_all), tuple(repeated_all), tuple(totals))


def clipped_counts(hyp: Profile, ref: Profile) -> list[int]:
    """BLEU's clipped n-gram counts of ``hyp`` against ``ref``, one per order."""
    if type(hyp) is NativeProfile and type(ref) is NativeProfile:
        clipped = hyp.core.clip(ref.core)
        if clipped is not NotImplemented:
            return clipped
    h, r = to_set_profile(hyp), to_set_profile(ref)
    out = []
    for hd, hr, rd, rr in zip(h.distinct, h.repeated, r.distinct, r.repeated):
        clipped_n = len(hd & rd)
        if hr and rr:
            for g in hr.keys() & rr.keys():
                clipped_n += min(hr[g], rr[g]) - 1
        out.append(clipped_n)
    return out


def merge_max(profiles: Sequence[Profile]) -> Profile:
    """One profile whose counts are the maximum over ``profiles`` (BLEU's multi-reference max).

    Only the counts are meaningful in the result; ``totals`` and ``length`` are the maxima.
    """
    if len(profiles) == 1:
        return profiles[0]
    if profiles and _native_module is not None:
        cores = [p.core for p in profiles if type(p) is NativeProfile]
        if len(cores) == len(profiles):
            core = _native_module.merge_max(cores)
            if core is not NotImplemented:
                return NativeProfile(core)
    sets = [to_set_profile(p) for p in profiles]
    max_n = min(p.max_n for p in sets)
    distinct: list[set[Ngram]] = []
    repeated: list[dict[Ngram, int]] = []
    for i in range(max_n):
        distinct.append(set().union(*(p.distinct[i] for p in sets)))
        merged: dict[Ngram, int] = {}
        for p in sets:
            for g, c in p.repeated[i].items():
                if c > merged.get(g, 0):
                    merged[g] = c
        repeated.append(merged)
    totals = tuple(max(p.totals[i] for p in sets) for i in range(max_n))
    return SetProfile(max(p.length for p in sets), tuple(distinct), tuple(repeated), totals)


def native_counter(max_n: int) -> NgramCounter | None:
    """A native n-gram counter (see :func:`crystal_lsp.metric.sset.count_ngrams`), if available."""
    if _native is None or not 1 <= max_n <= NATIVE_MAX_N:
        return None
    counter: NgramCounter = _native.NgramCounter(max_n)
    return counter
