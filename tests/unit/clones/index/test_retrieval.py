"""Candidate retrieval: postings of shingles, all-pairs and single queries against brute force."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from crystal_lsp.clones.index.retrieval import Postings


def arr(*values: int) -> np.ndarray:
    return np.array(sorted(set(values)), dtype=np.uint64)


def brute_pairs(
    shingles: list[set[int]], excluded: set[int], max_df: int, min_share: float
) -> dict[tuple[int, int], int]:
    """The documented rule: share ``min_share`` of the smaller one's remaining shingles."""
    df: dict[int, int] = {}
    for s in shingles:
        for h in s - excluded:
            df[h] = df.get(h, 0) + 1
    useful = [{h for h in s - excluded if df[h] <= max_df} for s in shingles]
    out = {}
    for a in range(len(shingles)):
        for b in range(a + 1, len(shingles)):
            shared = len(useful[a] & useful[b])
            smaller = min(len(useful[a]), len(useful[b]))
            if shared and shared >= max(1, math.ceil(min_share * smaller)):
                out[(a, b)] = shared
    return out


SETS = st.lists(st.sets(st.integers(0, 40), max_size=25), max_size=12)


@given(
    shingles=SETS,
    excluded=st.sets(st.integers(0, 40), max_size=6),
    max_df=st.integers(2, 6),
    min_share=st.sampled_from([0.1, 0.35, 0.5, 1.0]),
)
def test_all_pairs_matches_brute_force(
    shingles: list[set[int]], excluded: set[int], max_df: int, min_share: float
) -> None:
    postings = Postings([arr(*s) for s in shingles], arr(*excluded), max_df)
    a, b, shared = postings.all_pairs(min_share, top=1000)
    found = dict(zip(zip(a.tolist(), b.tolist()), shared.tolist()))
    assert all(x < y for x, y in found)
    assert found == brute_pairs(shingles, excluded, max_df, min_share)


@given(shingles=SETS, max_df=st.integers(2, 6), which=st.integers(0, 11))
def test_query_of_an_indexed_snippet_matches_all_pairs(
    shingles: list[set[int]], max_df: int, which: int
) -> None:
    if which >= len(shingles):
        return
    postings = Postings([arr(*s) for s in shingles], arr(), max_df)
    owners, shared = postings.query(arr(*shingles[which]), 0.35, 1000, exclude=which)
    got = dict(zip(owners.tolist(), shared.tolist()))
    expected = {
        (b if a == which else a): n
        for (a, b), n in brute_pairs(shingles, set(), max_df, 0.35).items()
        if which in (a, b)
    }
    assert got == expected


def test_sizes_count_useful_shingles() -> None:
    postings = Postings([arr(1, 2, 3), arr(2, 3, 4), arr(3, 9)], arr(9), max_df=2)
    # 3 is in three snippets (> max_df), 9 is excluded
    assert postings.sizes.tolist() == [2, 2, 0]
    assert postings.count == 3
    assert postings.hashes.tolist() == sorted(postings.hashes.tolist())


def test_excluded_and_too_common_shingles_do_not_pair() -> None:
    common = list(range(100, 110))
    shingles = [arr(*common, 1), arr(*common, 2), arr(*common, 3)]
    a, _, _ = Postings(shingles, arr(*common), max_df=50).all_pairs(0.35, 10)
    assert len(a) == 0
    a, _, _ = Postings(shingles, arr(), max_df=2).all_pairs(0.35, 10)
    assert len(a) == 0  # every shared shingle is in three snippets
    a, b, shared = Postings(shingles, arr(), max_df=3).all_pairs(0.35, 10)
    assert list(zip(a.tolist(), b.tolist(), shared.tolist())) == [
        (0, 1, 10),
        (0, 2, 10),
        (1, 2, 10),
    ]


def test_top_keeps_the_partners_sharing_most() -> None:
    base = list(range(20))
    shingles = [arr(*base)] + [arr(*base[: 10 + k]) for k in range(5)]  # partners share 10..14
    a, b, shared = Postings(shingles, arr(), max_df=50).all_pairs(0.1, top=2)
    # each snippet keeps its two partners sharing most (ties: lower index); a pair stays when
    # either side keeps it
    assert set(zip(a.tolist(), b.tolist())) == {
        (0, 5), (0, 4),  # 0's best
        (0, 1), (1, 2),  # 1 shares 10 with everyone
        (0, 2), (2, 3),
        (0, 3), (3, 4),
        (4, 5),
    }  # fmt: skip
    assert dict(zip(zip(a.tolist(), b.tolist()), shared.tolist()))[(0, 5)] == 14


def test_empty_postings() -> None:
    postings = Postings([], arr(), max_df=5)
    a, b, shared = postings.all_pairs(0.35, 10)
    assert (len(a), len(b), len(shared)) == (0, 0, 0)
    owners, counts = postings.query(arr(1, 2), 0.35, 10)
    assert (len(owners), len(counts)) == (0, 0)
    postings = Postings([arr(1, 2), arr()], arr(), max_df=5)
    owners, _ = postings.query(arr(), 0.35, 10)
    assert len(owners) == 0
    owners, _ = postings.query(arr(7, 8), 0.35, 10)
    assert len(owners) == 0


def test_query_top_limits_candidates() -> None:
    shingles = [arr(*range(k + 1)) for k in range(10)]
    owners, shared = Postings(shingles, arr(), max_df=50).query(arr(*range(10)), 0.0, top=3)
    assert owners.tolist() == [9, 8, 7] and shared.tolist() == [10, 9, 8]


def test_all_pairs_uses_every_remaining_shingle_of_both() -> None:
    # Q has 40 shingles, 4 of them among A's 20: 35 % of the smaller one (7) is not reached
    a, _, _ = Postings([arr(*range(20)), arr(*range(16, 56))], arr(), 50).all_pairs(0.35, 10)
    assert len(a) == 0


def test_query_outside_the_index_follows_the_documented_rule() -> None:
    a_shingles = arr(*range(20))
    q_shingles = arr(*range(16, 56))
    owners, _ = Postings([a_shingles], arr(), 50).query(q_shingles, 0.35, 10)
    assert owners.tolist() == []


@given(
    st.lists(st.integers(0, 2**62), max_size=60),
    st.sampled_from([2**8, 2**32 - 1, 2**32, 2**62]),
)
def test_counting_pair_keys_equals_numpy_unique(values: list[int], bound: int) -> None:
    from crystal_lsp.clones.index.retrieval import _count_keys

    keys = np.array([v % (bound + 1) for v in values], dtype=np.int64)
    got_keys, got_counts = _count_keys(keys)
    want_keys, want_counts = np.unique(keys, return_counts=True)
    assert got_keys.dtype == np.int64 and got_counts.dtype == np.int64
    assert got_keys.tolist() == want_keys.tolist()
    assert got_counts.tolist() == want_counts.tolist()
