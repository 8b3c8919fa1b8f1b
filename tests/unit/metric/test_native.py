"""The native core (crystal_lsp/_native.c) against the pure-Python implementation it replaces.

Profiles, clipped counts, multi-reference maxima, S-set counts and BLEU's tail must be equal on
every input, including empty sequences, unicode of every width, very long tokens, tokens with
NUL characters, more than 2**16 distinct tokens, and inputs the native core declines (tokens
that are not ``str``), which must fall back to Python with the same results.
"""

from __future__ import annotations

import math
import os
import pickle
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import crystal_lsp
from crystal_lsp.metric import bleu, crystal, ngrams
from crystal_lsp.metric.ngrams import (
    NativeProfile,
    SetProfile,
    build_profile,
    build_set_profile,
    clipped_counts,
    merge_max,
    to_set_profile,
)
from crystal_lsp.metric.sset import build_sset, count_ngrams

needs_native = pytest.mark.skipif(
    not ngrams.native_available(), reason=f"native core not in use ({ngrams.native_status()})"
)

# short ASCII, 2- and 4-byte unicode, NUL characters, the empty string and a long token
ALPHABET = ["a", "b", "(", ")", "é", "字", "😀", "\x00", "a\x00b", "", "x" * 300]
token = st.sampled_from(ALPHABET)
tokens = st.lists(token, max_size=20)
gram = st.lists(token, min_size=0, max_size=6).map(tuple)
ignores = st.one_of(st.none(), st.frozensets(gram, max_size=12))


def fresh(seq: list[str]) -> list[str]:
    """The same tokens as new string objects (equal content, other identity)."""
    return ["".join(list(t)) for t in seq]


@pytest.fixture
def native() -> Iterator[None]:
    """The native core on, with empty caches and a fresh vocabulary."""
    if not ngrams.native_available():
        pytest.skip(f"native core not in use ({ngrams.native_status()})")
    crystal.clear_caches(vocabulary=True)
    yield
    crystal.clear_caches(vocabulary=True)


def assert_same_profile(got: Any, want: SetProfile, grams: list[tuple[Any, ...]] = ()) -> None:
    assert got.length == want.length
    assert got.totals == want.totals
    assert got.max_n == want.max_n
    for n in range(1, want.max_n + 1):
        assert got.counts(n) == want.counts(n)
    for g in grams:
        assert got.count(g) == want.count(g)
    as_sets = to_set_profile(got)
    assert as_sets.distinct == want.distinct
    assert as_sets.repeated == want.repeated


@needs_native
@settings(max_examples=400)
@given(seq=tokens, max_n=st.integers(1, 6), ignore=ignores, probes=st.lists(gram, max_size=8))
def test_profiles_equal_the_pure_profiles(
    seq: list[str],
    max_n: int,
    ignore: frozenset[tuple[str, ...]] | None,
    probes: list[tuple[str, ...]],
) -> None:
    profile = build_profile(fresh(seq), max_n, ignore)
    assert isinstance(profile, NativeProfile)
    assert_same_profile(profile, build_set_profile(seq, max_n, ignore), probes)


@needs_native
@settings(max_examples=300)
@given(
    hyp=tokens,
    refs=st.lists(tokens, min_size=1, max_size=5),
    max_n=st.integers(1, 5),
    ignore=ignores,
)
def test_clipped_counts_and_merges_equal_the_pure_ones(
    hyp: list[str], refs: list[list[str]], max_n: int, ignore: frozenset[tuple[str, ...]] | None
) -> None:
    native_refs = [build_profile(r, max_n, ignore) for r in refs]
    pure_refs = [build_set_profile(r, max_n, ignore) for r in refs]
    merged = merge_max(native_refs)
    want = merge_max(pure_refs)
    assert isinstance(merged, NativeProfile)
    assert_same_profile(merged, to_set_profile(want))
    native_hyp = build_profile(hyp, max_n, ignore)
    pure_hyp = build_set_profile(hyp, max_n, ignore)
    assert clipped_counts(native_hyp, merged) == clipped_counts(pure_hyp, want)
    # mixed kinds go through the pure-Python form
    assert clipped_counts(native_hyp, want) == clipped_counts(pure_hyp, want)
    assert clipped_counts(pure_hyp, merged) == clipped_counts(pure_hyp, want)
    assert to_set_profile(merge_max([native_hyp, *pure_refs])).counts(1) == merge_max(
        [pure_hyp, *pure_refs]
    ).counts(1)


@needs_native
def test_profiles_of_different_vocabularies_are_compared_exactly() -> None:
    a = build_profile(list("abcab"))
    ngrams.reset_vocabulary()
    b = build_profile(list("cabba"))
    assert isinstance(a, NativeProfile) and isinstance(b, NativeProfile)
    assert a.core.vocabulary is not b.core.vocabulary
    want = clipped_counts(build_set_profile(list("abcab")), build_set_profile(list("cabba")))
    assert clipped_counts(a, b) == want
    assert merge_max([a, b]).counts(2) == merge_max(
        [build_set_profile(list("abcab")), build_set_profile(list("cabba"))]
    ).counts(2)


def test_tokens_that_are_not_str_use_the_pure_profile(native: None) -> None:
    seq = ["a", 1, "b", 1]
    profile = build_profile(seq)
    assert isinstance(profile, SetProfile)
    assert_same_profile(profile, build_set_profile(seq))

    class Text(str):
        pass

    assert isinstance(build_profile([Text("a"), "b"]), SetProfile)
    # an ignore set with a member that is not a tuple of str: Python decides membership
    ignore = frozenset({("a",), ("b", Text("c"))})
    assert isinstance(build_profile(list("abc"), 4, ignore), SetProfile)
    assert isinstance(build_profile(list("abc"), 4, frozenset({("a",), ("b", "c")})), NativeProfile)


def test_count_falls_back_for_grams_of_other_items(native: None) -> None:
    profile = build_profile(list("abab"))
    assert isinstance(profile, NativeProfile)
    assert profile.count(("a", "b")) == 2
    assert profile.count(("z",)) == 0
    assert profile.count((1,)) == 0
    assert profile.count(()) == build_set_profile(list("abab")).count(())
    with pytest.raises(IndexError):
        profile.counts(5)
    assert profile.counts(0) == build_set_profile(list("abab")).counts(0)


def test_many_distinct_tokens_and_long_sequences(native: None) -> None:
    seq = [f"t{i % 70_001}" for i in range(140_000)] + ["x" * 10_000, "y" * 10_000] * 3
    profile = build_profile(seq, 3)
    want = build_set_profile(seq, 3)
    assert isinstance(profile, NativeProfile)
    assert profile.totals == want.totals
    assert profile.counts(1) == want.counts(1)
    assert profile.counts(3) == want.counts(3)
    other = build_profile(seq[::-1], 3)
    assert clipped_counts(profile, other) == clipped_counts(want, build_set_profile(seq[::-1], 3))


def test_profiles_are_small(native: None) -> None:
    seq = [f"t{i % 97}" for i in range(5000)]
    profile = build_profile(seq)
    assert isinstance(profile, NativeProfile)
    # ids, and a position and a count per distinct n-gram: far below the ~250 bytes per token
    # of the pure-Python profile
    assert profile.nbytes < 40 * len(seq)


def test_pickling_gives_the_pure_profile(native: None) -> None:
    profile = build_profile(list("abcabd"), 4, frozenset({("a", "b")}))
    copy = pickle.loads(pickle.dumps(profile))
    assert isinstance(copy, SetProfile)
    assert_same_profile(copy, build_set_profile(list("abcabd"), 4, frozenset({("a", "b")})))


# --- S-set counting ---------------------------------------------------------------------------


def pure_count(docs: list[list[Any]], max_n: int) -> tuple[Counter[tuple[Any, ...]], int, int]:
    previous = ngrams.set_native(False)
    try:
        return count_ngrams(docs, max_n)
    finally:
        ngrams.set_native(previous)


@needs_native
@settings(max_examples=200)
@given(docs=st.lists(tokens, max_size=6), max_n=st.integers(1, 5), k=st.integers(0, 30))
def test_counts_and_sets_equal_the_pure_ones(docs: list[list[str]], max_n: int, k: int) -> None:
    counts, n_docs, n_tokens = count_ngrams(docs, max_n)
    want, want_docs, want_tokens = pure_count(docs, max_n)
    assert (n_docs, n_tokens) == (want_docs, want_tokens)
    assert list(counts.items()) == list(want.items())  # the same first-seen order
    for tie_break in ("first-seen", "canonical"):
        got = build_sset(docs, k, max_n, tie_break=tie_break)
        previous = ngrams.set_native(False)
        try:
            expected = build_sset(docs, k, max_n, tie_break=tie_break)
        finally:
            ngrams.set_native(previous)
        assert list(got.counts.items()) == list(expected.counts.items())
        assert got.meta == expected.meta
        assert (got.documents, got.tokens) == (expected.documents, expected.tokens)


def test_counting_goes_on_in_python_after_a_token_that_is_not_str(native: None) -> None:
    docs: list[list[Any]] = [list("abab"), ["a", 7, "b"], list("ba"), ("a", "b")]
    assert list(count_ngrams(docs)[0].items()) == list(pure_count(docs, 4)[0].items())
    assert count_ngrams(docs)[1:] == pure_count(docs, 4)[1:]


def test_counting_many_distinct_tokens(native: None) -> None:
    docs = [[f"w{(i * 7 + j) % 80_000}" for j in range(2_000)] for i in range(60)]
    counts, _, _ = count_ngrams(docs, 2)
    want, _, _ = pure_count(docs, 2)
    assert list(counts.items()) == list(want.items())
    assert build_sset(docs, 50).counts == build_sset(docs, 50).counts


# --- the drop-in functions and BLEU's tail ------------------------------------------------------

EPSILONS = st.one_of(st.just(0.1), st.just(0.0), st.just(-0.0), st.floats(1e-9, 10.0), st.just(0))
KS = st.one_of(st.just(5.0), st.just(0.0), st.floats(-5.0, 50.0))


@needs_native
@settings(max_examples=600)
@given(
    nums=st.lists(st.integers(0, 60), min_size=1, max_size=6),
    extra=st.lists(st.integers(0, 40), min_size=6, max_size=6),
    hyp_len=st.integers(0, 80),
    ref_len=st.integers(0, 80),
    method=st.integers(0, 4),
    epsilon=EPSILONS,
    k=KS,
    weights=st.one_of(
        st.just((0.25, 0.25, 0.25, 0.25)),
        st.lists(st.floats(-2.0, 2.0), min_size=1, max_size=6).map(tuple),
        st.lists(st.integers(0, 2), min_size=1, max_size=4).map(tuple),
    ),
    auto_reweigh=st.booleans(),
)
def test_native_tail_equals_the_python_tail(
    nums: list[int],
    extra: list[int],
    hyp_len: int,
    ref_len: int,
    method: int,
    epsilon: float,
    k: float,
    weights: tuple[float, ...],
    auto_reweigh: bool,
) -> None:
    dens = [max(1, n + e) for n, e in zip(nums, extra)]
    nums = nums[: len(weights)] or [0]
    dens = dens[: len(nums)]
    smoother = getattr(crystal_lsp.SmoothingFunction(epsilon=epsilon, k=k), f"method{method}")
    args = (nums, dens, hyp_len, ref_len, weights, smoother, auto_reweigh)

    def outcome() -> Any:
        try:
            return bleu.bleu_from_counts(*args)
        except (ZeroDivisionError, OverflowError, ValueError) as exc:
            return type(exc)

    got = outcome()
    previous = ngrams.set_native(False)
    try:
        want = outcome()
    finally:
        ngrams.set_native(previous)
    if isinstance(want, float) and math.isnan(want):
        assert isinstance(got, float) and math.isnan(got)
    else:
        assert got == want and type(got) is type(want)


def test_drop_in_functions_accept_tokens_objects_and_odd_sequences(native: None) -> None:
    hyp = crystal_lsp.tokenize("def f(x):\n    return x + 1\n", "python")
    ref = crystal_lsp.tokenize("def g(x):\n    return x + 2\n", "python")
    smooth = crystal_lsp.SmoothingFunction().method1
    texts = crystal_lsp.sentence_bleu([ref.texts], hyp.texts, smoothing_function=smooth)
    assert crystal_lsp.sentence_bleu([ref], hyp, smoothing_function=smooth) == texts
    assert crystal_lsp.sentence_bleu([iter(ref.texts)], hyp.texts, smoothing_function=smooth) == (
        texts
    )
    assert crystal_lsp.sentence_bleu((ref.texts,), tuple(hyp.texts), smoothing_function=smooth) == (
        texts
    )
    with pytest.raises(crystal_lsp.CrystalError, match="at least one reference"):
        crystal_lsp.corpus_bleu([[]], [hyp.texts])


def test_the_drop_in_cache_respects_its_budget(native: None, monkeypatch: Any) -> None:
    monkeypatch.setattr(crystal._NATIVE, "max_tokens", 10)
    crystal.clear_caches()
    crystal_lsp.sentence_bleu([list("abcdefgh")], list("abcdefgz"))
    cache = crystal._NATIVE._cache
    assert cache is not None and cache.tokens <= 10 and len(cache) == 1
    crystal_lsp.sentence_bleu([list("abcdefgh")], list("abcdefgz"))  # evicts, still right
    assert cache.tokens <= 10
    cache.max_tokens = 0
    assert len(cache) == 0


def test_concurrent_scoring_gives_the_same_scores(native: None) -> None:
    pairs = [([list(f"abc{i}de{i % 3}")], list(f"ab{i}cde{i % 5}")) for i in range(200)]
    smooth = crystal_lsp.SmoothingFunction().method1
    want = [crystal_lsp.sentence_bleu(r, h, smoothing_function=smooth) for r, h in pairs]
    metric = crystal_lsp.CrystalBLEU(None)
    want_metric = [metric.sentence_score(h, r) for r, h in pairs]
    results: list[list[float]] = []

    def work() -> None:
        crystal.clear_caches()
        got = [crystal_lsp.sentence_bleu(r, h, smoothing_function=smooth) for r, h in pairs]
        got += [metric.sentence_score(h, r) for r, h in pairs]
        results.append(got)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [want + want_metric] * 4


# --- switching the core off ---------------------------------------------------------------------


def test_set_native_switches_new_profiles(native: None) -> None:
    assert isinstance(build_profile(list("ab")), NativeProfile)
    assert ngrams.set_native(False) is True
    try:
        assert not ngrams.native_available()
        assert isinstance(build_profile(list("ab")), SetProfile)
        assert ngrams.native_counter(4) is None
    finally:
        ngrams.set_native(True)


def test_pure_environment_variable_and_a_missing_module_fall_back() -> None:
    script = (
        "import sys\n"
        "if sys.argv[1] == 'missing':\n"
        "    sys.modules['crystal_lsp.metric._native'] = None\n"  # import fails as if never built
        "import crystal_lsp\n"
        "from crystal_lsp.metric import ngrams\n"
        "print(crystal_lsp.native_available(), ngrams.native_status())\n"
        "print(crystal_lsp.sentence_bleu([list('abcd')], list('abce'),"
        " smoothing_function=crystal_lsp.SmoothingFunction().method1))\n"
        "print(type(ngrams.build_profile(list('ab'))).__name__)\n"
        "print(len(crystal_lsp.build_sset([list('abab')], 3)))\n"
    )
    outputs = {}
    for mode in ("missing", "pure", "default"):
        env = dict(os.environ)
        env.pop("CRYSTAL_LSP_PURE", None)
        if mode == "pure":
            env["CRYSTAL_LSP_PURE"] = "1"
        proc = subprocess.run(
            [sys.executable, "-c", script, mode],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs[mode] = proc.stdout.splitlines()
    assert outputs["missing"][0] == "False pure Python, native extension not built"
    assert outputs["pure"][0].startswith("False pure Python")
    assert outputs["missing"][2] == outputs["pure"][2] == "SetProfile"
    # the same numbers whichever implementation computed them
    assert outputs["missing"][1:2] == outputs["pure"][1:2] == outputs["default"][1:2]
    assert outputs["missing"][3] == outputs["pure"][3] == outputs["default"][3] == "3"
    if ngrams._native_module is not None:
        assert outputs["default"][0] == "True native"
        assert outputs["default"][2] == "NativeProfile"


@needs_native
def test_the_native_tail_computes_the_common_cases_itself() -> None:
    tail = ngrams.native_bleu_tail()
    assert tail is not None
    spec = (bleu.DEFAULT_WEIGHTS, 1, 0.1, False)
    score = tail([3, 2, 1, 0], [4, 3, 2, 1], 4, 5, spec)
    previous = ngrams.set_native(False)
    try:
        smoother = crystal_lsp.SmoothingFunction(epsilon=0.1).method1
        assert score == bleu.bleu_from_counts(
            [3, 2, 1, 0], [4, 3, 2, 1], 4, 5, smoothing_function=smoother
        )
    finally:
        ngrams.set_native(previous)
    assert tail([0, 0], [1, 1], 2, 2, ((0.5, 0.5), 0, None, False)) == 0.0
    # what it leaves to Python
    assert tail([3, 2, 1, 0], [4, 3, 2, 1], 4, 5, ((1, 0, 0, 0), 1, 0.1, False)) is NotImplemented
    assert tail([3, 2, 1, 0], [4, 3, 2, 1], 4, 5, (bleu.DEFAULT_WEIGHTS, 1, 1, False)) is (
        NotImplemented
    )
    assert tail([3.0, 2, 1, 0], [4, 3, 2, 1], 4, 5, spec) is NotImplemented
    assert tail([3, 2, 1, 0], [4, 3, 2, 1], 0, 5, spec) is NotImplemented
    assert tail([2**60, 2, 1, 0], [2**61, 3, 2, 1], 4, 5, spec) is NotImplemented
