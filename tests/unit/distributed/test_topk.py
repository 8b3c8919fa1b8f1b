"""The exact distributed top-k (crystal_lsp.distributed.topk) against build_sset, without a cluster.

The map-reduce is simulated in-process: documents split into parts, each part counted and
hash-partitioned into buckets, buckets summed, each bucket's top-k taken, the top-ks merged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from functools import partial
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crystal_lsp.distributed.engine import LocalEngine
from crystal_lsp.distributed.topk import (
    Counted,
    bucket_top,
    count_documents,
    count_token_part,
    merge_tables,
    merge_tops,
    split_counts,
    stable_bucket,
)
from crystal_lsp.metric.sset import build_sset, count_ngrams, top_k


def map_reduce(
    docs: list[list[str]],
    cuts: list[int],
    k: int,
    buckets: int,
    max_n: int = 4,
    points: int = 10_000,
) -> Counted:
    bounds = sorted({0, len(docs), *(c % (len(docs) + 1) for c in cuts)})
    parts = [docs[a:b] for a, b in pairwise(bounds)]
    mapped = [count_documents(part, max_n, buckets) for part in parts]
    tops = [
        bucket_top(merge_tables(*(m.tables[b] for m in mapped)), k, points) for b in range(buckets)
    ]
    best = merge_tops(tops, k, points)
    return Counted(
        best.top,
        best.curve,
        sum(m.documents for m in mapped),
        sum(m.tokens for m in mapped),
        [],
    )


def assert_same_as_build_sset(
    docs: list[list[str]], counted: Counted, k: int, max_n: int = 4
) -> None:
    expected = build_sset(docs, k, max_n, tie_break="canonical")
    got = counted.to_sset(k, max_n)
    assert list(got.counts.items()) == list(expected.counts.items())  # members and rank order
    assert got.meta["curve"] == expected.meta["curve"]
    assert (got.documents, got.tokens) == (expected.documents, expected.tokens)
    assert got.fingerprint() == expected.fingerprint()


# A two-letter alphabet makes most n-grams of an order tie with each other.
docs_strategy = st.lists(st.lists(st.sampled_from("ab"), max_size=12), min_size=1, max_size=8)


@settings(max_examples=100, deadline=None)
@given(
    docs=docs_strategy,
    cuts=st.lists(st.integers(0, 8), max_size=4),
    k=st.integers(0, 40),
    buckets=st.integers(1, 9),
    points=st.integers(1, 30),
)
def test_map_reduce_equals_build_sset(
    docs: list[list[str]], cuts: list[int], k: int, buckets: int, points: int
) -> None:
    counted = map_reduce(docs, cuts, k, buckets, points=points)
    expected = build_sset(docs, k, tie_break="canonical")
    assert counted.top == expected.counts and list(counted.top) == list(expected.counts)
    counts, _, _ = count_ngrams(docs)
    assert counted.curve == sorted(counts.values(), reverse=True)[:points]


def test_ties_at_the_boundary_are_resolved_like_build_sset() -> None:
    # Every unigram occurs 3 times and every bigram twice: with k inside a block of equal counts,
    # the choice is made by order and then by the tokens, in every bucket and in the merge.
    letters = [chr(c) for c in range(ord("a"), ord("a") + 26)]
    docs = [letters[i : i + 2] for i in range(0, 26, 2)] * 2 + [[t] for t in letters]
    counts, _, _ = count_ngrams(docs)
    assert set(counts.values()) == {2, 3}
    for k in range(1, 45):
        for buckets in (1, 2, 3, 5, 16, 64):
            counted = map_reduce(docs, [3, 11, 20], k, buckets)
            assert_same_as_build_sset(docs, counted, k)
    boundary = map_reduce(docs, [5], 30, 7).top
    # 26 unigrams (count 3), then the first 4 bigrams in code-point order (count 2)
    assert list(boundary)[26:] == [("a", "b"), ("c", "d"), ("e", "f"), ("g", "h")]


def test_ties_across_buckets_with_a_bucket_holding_only_losers() -> None:
    docs = [["x", "y"], ["x", "y"], ["p", "q"], ["p", "q"], ["z"]]
    for buckets in range(1, 12):
        counted = map_reduce(docs, [1, 2, 3], 3, buckets)
        assert counted.top == top_k(count_ngrams(docs)[0], 3, "canonical")


def test_stable_bucket_is_the_same_in_every_process() -> None:
    grams = [("def", "f", "("), ("é", "\U0001f600"), ("x",), ("\x1f", "")]
    here = [stable_bucket(g, 13) for g in grams]
    script = (
        "import json,sys\nfrom crystal_lsp.distributed.topk import stable_bucket\n"
        "grams=[tuple(g) for g in json.loads(sys.argv[1])]\n"
        "print(json.dumps([stable_bucket(g,13) for g in grams]))"
    )
    for seed in ("1", "2", "random"):
        out = subprocess.run(
            [sys.executable, "-c", script, json.dumps(grams)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert json.loads(out.stdout) == here


def test_split_counts_partitions_every_ngram_once() -> None:
    counts: Counter[tuple[str, ...]] = Counter(
        {("a",): 3, ("a", "b"): 2, ("b",): 1, ("c", "d", "e"): 7}
    )
    tables = split_counts(counts, 4)
    assert sum(len(t) for t in tables) == len(counts)
    for gram, count in counts.items():
        assert tables[stable_bucket(gram, 4)][gram] == count
    assert split_counts(counts, 1) == [counts]


def test_merge_tables_sums_and_leaves_inputs_alone() -> None:
    a = {("x",): 1, ("y",): 2}
    b = {("y",): 5, ("z",): 1}
    assert merge_tables(a, b) == {("x",): 1, ("y",): 7, ("z",): 1}
    assert a == {("x",): 1, ("y",): 2} and b == {("y",): 5, ("z",): 1}
    assert merge_tables() == {}


def test_count_token_part_counts_documents_and_tokens() -> None:
    part = count_token_part([["a", "b"], [], ["a"]], 3, max_n=2)
    assert (part.documents, part.tokens) == (3, 3)
    assert merge_tables(*part.tables) == {("a",): 2, ("b",): 1, ("a", "b"): 1}


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("tie_break", ["canonical", "first-seen"])
def test_local_engine_count_equals_build_sset(jobs: int, tie_break: str) -> None:
    docs = [list("abcabcab"), list("bca"), [], list("cccab"), list("abab")] * 3
    parts = [docs[i : i + 4] for i in range(0, len(docs), 4)]
    counted = LocalEngine(jobs).count(
        partial(count_token_part, max_n=4), parts, 7, tie_break=tie_break
    )
    expected = build_sset(docs, 7, tie_break=tie_break)
    got = counted.to_sset(7, 4, tie_break=tie_break)
    assert list(got.counts.items()) == list(expected.counts.items())
    assert got.meta == expected.meta
