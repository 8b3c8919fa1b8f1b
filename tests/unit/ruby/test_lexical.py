"""STS: token edit distance, its pure-Python fallback, and hand-computed values."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crystal_lsp.ruby import lexical, sts
from crystal_lsp.ruby.lexical import TokenIds, levenshtein_bitparallel, sts_from_ids


def dp_levenshtein(a: list[int], b: list[int]) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y))
        previous = current
    return previous[-1]


def test_sts_of_one_inserted_token_is_four_fifths() -> None:
    # reference A B C D, hypothesis A B E C D: one insertion, longer length 5.
    assert sts("A B E C D", "A B C D", "generic") == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("hyp", "ref", "expected"),
    [
        ("A B C D", "A B C D", 1.0),
        ("A X C D", "A B C D", 0.75),  # one substitution
        ("D C B A", "A B C D", 0.0),  # four edits, length 4
        ("A", "A B C D", 0.25),  # three deletions
        ("", "", 1.0),
        ("A B", "", 0.0),
    ],
)
def test_sts_hand_values(hyp: str, ref: str, expected: float) -> None:
    assert sts(hyp, ref, "generic") == pytest.approx(expected)


def test_sts_uses_the_pygments_tokens_of_bleu() -> None:
    # Comments and whitespace are not tokens: only ``1`` -> ``2`` differs (1 of 3 tokens).
    assert sts("x = 2  # two", "x = 1", "python") == pytest.approx(2 / 3)


def test_token_ids_are_shared() -> None:
    ids = TokenIds()
    assert ids(["a", "b", "a"]) == [0, 1, 0]
    assert ids(["b", "c"]) == [1, 2]


@settings(max_examples=60)
@given(
    st.lists(st.integers(0, 4), max_size=90),
    st.lists(st.integers(0, 4), max_size=90),
)
def test_bitparallel_equals_dynamic_programming(a: list[int], b: list[int]) -> None:
    assert levenshtein_bitparallel(a, b) == dp_levenshtein(a, b)
    assert lexical.levenshtein(a, b) == dp_levenshtein(a, b)


def test_bitparallel_beyond_one_machine_word() -> None:
    a = [i % 7 for i in range(300)]
    b = [i % 5 for i in range(170)]
    assert levenshtein_bitparallel(a, b) == dp_levenshtein(a, b)


def test_without_rapidfuzz_results_are_identical(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = [1, 2, 3, 4, 5, 6], [1, 3, 4, 9, 6, 6, 6]
    expected = lexical.levenshtein(a, b)
    monkeypatch.setattr(lexical, "_Levenshtein", None)
    assert lexical.backend() == "python"
    assert lexical.levenshtein(a, b) == expected == dp_levenshtein(a, b)


def test_empty_sequences() -> None:
    assert sts_from_ids([], []) == 1.0
    assert sts_from_ids([1], []) == 0.0
