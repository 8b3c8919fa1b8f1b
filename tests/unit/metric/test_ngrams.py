"""N-gram profiles: the set-based sufficient statistics equal plain Counter arithmetic."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.util import ngrams as nltk_ngrams

from crystal_lsp.metric.ngrams import as_sequence, build_profile, clipped_counts, merge_max, ngrams
from crystal_lsp.text.tokens import tokenize

# the core differential/property tests run on both implementations (see conftest.core)
pytestmark = pytest.mark.usefixtures("core")

letter = st.sampled_from("abc")
tokens = st.lists(letter, max_size=15)
ngram = st.integers(1, 4).flatmap(lambda n: st.lists(letter, min_size=n, max_size=n).map(tuple))
ignores = st.one_of(st.none(), st.frozensets(ngram, max_size=10))


def counter(
    seq: list[str], n: int, ignore: frozenset[tuple[str, ...]] | None
) -> Counter[tuple[str, ...]]:
    return Counter(g for g in nltk_ngrams(seq, n) if not ignore or g not in ignore)


@settings(max_examples=300)
@given(seq=tokens, n=st.integers(1, 6))
def test_ngrams_equal_nltk(seq: list[str], n: int) -> None:
    assert ngrams(seq, n) == list(nltk_ngrams(seq, n))


@settings(max_examples=300)
@given(seq=tokens, max_n=st.integers(1, 5), ignore=ignores)
def test_profile_counts_equal_counter(
    seq: list[str], max_n: int, ignore: frozenset[tuple[str, ...]] | None
) -> None:
    profile = build_profile(seq, max_n, ignore)
    assert profile.length == len(seq) and profile.max_n == max_n
    for n in range(1, max_n + 1):
        expected = counter(seq, n, ignore)
        assert profile.counts(n) == expected
        assert profile.totals[n - 1] == sum(expected.values())
        for g in expected:
            assert profile.count(g) == expected[g]
    assert profile.count(("z",)) == 0
    assert profile.count(tuple("a" * (max_n + 1))) == 0


@settings(max_examples=300)
@given(hyp=tokens, refs=st.lists(tokens, min_size=1, max_size=4), ignore=ignores)
def test_clipped_counts_and_merge_max_equal_counter_arithmetic(
    hyp: list[str], refs: list[list[str]], ignore: frozenset[tuple[str, ...]] | None
) -> None:
    merged = merge_max([build_profile(r, 4, ignore) for r in refs])
    clipped = clipped_counts(build_profile(hyp, 4, ignore), merged)
    for n in range(1, 5):
        max_ref: Counter[tuple[str, ...]] = Counter()
        for r in refs:
            max_ref |= counter(r, n, ignore)
        assert merged.counts(n) == dict(max_ref)
        assert clipped[n - 1] == sum((counter(hyp, n, ignore) & max_ref).values())


def test_as_sequence() -> None:
    toks = tokenize("a + b", "python")
    assert as_sequence(toks) is toks.texts
    lst = ["a"]
    assert as_sequence(lst) is lst
    assert as_sequence(iter("ab")) == ["a", "b"]
