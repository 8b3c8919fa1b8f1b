"""The trivially shared set S: ranking, the reference recipe, files, knees and built-in sets."""

from __future__ import annotations

import gzip
import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.util import ngrams as nltk_ngrams

from crystal_lsp import CrystalError
from crystal_lsp.metric.sset import (
    FORMAT,
    FORMAT_VERSION,
    TriviallySharedSet,
    build_sset,
    builtin_sset,
    count_ngrams,
    frequency_curve,
    rank_key,
    suggest_k,
    top_k,
)

# the core differential/property tests run on both implementations (see conftest.core)
pytestmark = pytest.mark.usefixtures("core")

letter = st.sampled_from("abcde")
documents = st.lists(st.lists(letter, max_size=12), max_size=6)


def reference_counts(docs: list[list[str]], max_n: int = 4) -> Counter[tuple[str, ...]]:
    """The crystalbleu README's recipe: all 1..4-grams of every document, one Counter."""
    all_ngrams: list[tuple[str, ...]] = []
    for doc in docs:
        for n in range(1, max_n + 1):
            all_ngrams.extend(nltk_ngrams(doc, n))
    return Counter(all_ngrams)


@settings(max_examples=300)
@given(docs=documents, k=st.integers(0, 40))
def test_first_seen_tie_break_equals_counter_most_common(docs: list[list[str]], k: int) -> None:
    sset = build_sset(docs, k, tie_break="first-seen")
    expected = dict(reference_counts(docs).most_common(k))
    assert sset.counts == expected
    assert list(sset.counts) == list(expected)  # same order too


@settings(max_examples=300)
@given(docs=documents, k=st.integers(0, 40), seed=st.integers(0, 2**16))
def test_canonical_top_k_is_independent_of_document_order(
    docs: list[list[str]], k: int, seed: int
) -> None:
    shuffled = list(docs)
    random.Random(seed).shuffle(shuffled)
    a = build_sset(docs, k, tie_break="canonical")
    b = build_sset(shuffled, k, tie_break="canonical")
    assert list(a.counts.items()) == list(b.counts.items())
    # Canonical order: count desc, order asc, tokens asc; and these are the k best.
    ranked = sorted(reference_counts(docs).items(), key=rank_key)
    assert list(a.counts.items()) == ranked[:k]


@pytest.mark.parametrize(
    ("docs", "k", "expected"),
    [
        pytest.param(
            [["b", "a"], ["a", "b"]],
            4,
            [(("a",), 2), (("b",), 2), (("a", "b"), 1), (("b", "a"), 1)],
            id="ties-order-then-tokens",
        ),
        pytest.param(
            [["x", "x", "x"]],
            3,
            [(("x",), 3), (("x", "x"), 2), (("x", "x", "x"), 1)],
            id="count-first",
        ),
        pytest.param(
            [["(", ")"], ["(", ")"], ["A", "a"]],
            3,
            [(("(",), 2), ((")",), 2), (("(", ")"), 2)],
            id="code-point-order",
        ),
    ],
)
def test_canonical_ranking_table(
    docs: list[list[str]], k: int, expected: list[tuple[tuple[str, ...], int]]
) -> None:
    assert list(build_sset(docs, k, tie_break="canonical").counts.items()) == expected


def test_ngrams_never_span_documents() -> None:
    counts, docs, tokens = count_ngrams([["a", "b"], ["c", "d"]])
    assert (docs, tokens) == (2, 4)
    assert ("b", "c") not in counts
    assert set(counts) == {("a",), ("b",), ("c",), ("d",), ("a", "b"), ("c", "d")}


def test_build_sset_records_provenance() -> None:
    sset = build_sset([list("abcab"), list("ab")], 3, 2, language="x", tokenizer="T")
    assert (sset.k, sset.max_n, sset.language, sset.documents, sset.tokens) == (3, 2, "x", 2, 7)
    assert sset.tokenizer == "T" and sset.tie_break == "first-seen"
    assert sset.meta["curve"] == [3, 3, 3, 1, 1, 1]  # a b ab / c bc ca
    assert all(len(g) <= 2 for g in sset)


def test_build_sset_validation() -> None:
    with pytest.raises(CrystalError, match="k must be"):
        build_sset([["a"]], -1)
    with pytest.raises(CrystalError, match="max n"):
        build_sset([["a"]], 3, 0)
    with pytest.raises(CrystalError, match="tie-break"):
        build_sset([["a"]], 3, tie_break="random")


def test_top_k_accepts_plain_dicts() -> None:
    table = {("b",): 2, ("a",): 2, ("c",): 5}
    assert list(top_k(table, 2, "canonical")) == [("c",), ("a",)]
    assert list(top_k(table, 2, "first-seen")) == [("c",), ("b",)]
    assert top_k(table, 0) == {}


def test_default_tie_break_is_the_references_most_common() -> None:
    """One default S everywhere: build_sset and top_k rank ties as Counter.most_common does."""
    docs = [["b", "a"], ["a", "b"], ["c"]]
    assert list(build_sset(docs, 2, 1).counts) == [("b",), ("a",)]
    assert list(top_k({("b",): 2, ("a",): 2}, 1)) == [("b",)]
    assert TriviallySharedSet({}).tie_break == "first-seen"


def test_set_protocol_and_views() -> None:
    sset = TriviallySharedSet({("a",): 5, ("a", "b"): 3, ("b",): 2}, k=3)
    assert ("a",) in sset and ("z",) not in sset and len(sset) == 3
    assert list(sset) == [("a",), ("a", "b"), ("b",)]
    assert sset.as_frozenset() == frozenset(sset.counts)
    assert sset.as_frozenset() is sset.as_frozenset()
    assert sset.as_ignoring() == sset.counts and sset.as_ignoring() is not sset.counts
    assert sset.top(2) == [(("a",), 5), (("a", "b"), 3)]
    assert sset.top(order=1) == [(("a",), 5), (("b",), 2)]


def test_restricted() -> None:
    sset = build_sset([list("abcabcabd"), list("xabc")], 10)
    small = sset.restricted(4)
    assert small.k == 4
    assert list(small.counts.items()) == list(sset.counts.items())[:4]
    assert small.meta == sset.meta and small.meta is not sset.meta
    assert small.fingerprint() != sset.fingerprint()
    assert sset.restricted(10).fingerprint() == sset.fingerprint()
    with pytest.raises(CrystalError, match="top 11"):
        sset.restricted(11)


def test_fingerprint_depends_on_members_and_counts_only() -> None:
    a = TriviallySharedSet({("a",): 2}, k=5, language="x")
    assert a.fingerprint() == TriviallySharedSet({("a",): 2}, k=9).fingerprint()
    assert a.fingerprint() != TriviallySharedSet({("a",): 3}, k=5).fingerprint()
    assert len(a.fingerprint()) == 12 and int(a.fingerprint(), 16) >= 0


# --- files --------------------------------------------------------------------------------


@pytest.fixture
def sample() -> TriviallySharedSet:
    return build_sset(
        [[*list("abcabcabd"), "é", "😀"], ["x", "(", ")", "{"]],
        12,
        language="python",
        tokenizer="T",
    )


@pytest.mark.parametrize("name", ["s.json", "s.json.gz"])
def test_save_load_round_trip(tmp_path: Path, sample: TriviallySharedSet, name: str) -> None:
    path = tmp_path / name
    sample.save(path)
    raw = path.read_bytes()
    assert (raw[:2] == b"\x1f\x8b") == name.endswith(".gz")
    loaded = TriviallySharedSet.load(path)
    assert loaded == sample
    assert list(loaded.counts) == list(sample.counts)
    assert loaded.fingerprint() == sample.fingerprint()
    assert not list(tmp_path.glob("*.tmp-*"))


def test_gzip_output_is_reproducible(tmp_path: Path, sample: TriviallySharedSet) -> None:
    sample.save(tmp_path / "a.json.gz")
    sample.save(tmp_path / "b.json.gz")
    assert (tmp_path / "a.json.gz").read_bytes() == (tmp_path / "b.json.gz").read_bytes()


def _write_doc(path: Path, doc: object) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _edit(sample: TriviallySharedSet, **changes: object) -> dict[str, object]:
    doc = sample.to_json()
    doc.update(changes)
    return doc


CORRUPTIONS = [
    # (id, how to corrupt the saved file, message pattern)
    ("truncated-gzip", lambda raw, s: raw[: len(raw) // 2], "not a readable S-set file"),
    ("garbled-json", lambda raw, s: b'{"format": "crystal-lsp/sset", "vers', "not a readable"),
    ("not-utf8", lambda raw, s: b"\xff\xfe\x00garbage", "not a readable"),
    ("empty-file", lambda raw, s: b"", "not a readable"),
    ("json-list", lambda raw, s: b"[1, 2, 3]", "not a crystal-lsp S-set file"),
    (
        "wrong-format",
        lambda raw, s: json.dumps(_edit(s, format="other/thing")).encode(),
        "not a crystal-lsp S-set file",
    ),
    (
        "unsupported-version",
        lambda raw, s: json.dumps(_edit(s, version=FORMAT_VERSION + 1)).encode(),
        "version 2 is not supported",
    ),
    (
        "fingerprint-mismatch",
        lambda raw, s: json.dumps(
            _edit(
                s,
                ngrams=[
                    [g, c + 1 if i == 0 else c] for i, (g, c) in enumerate(s.to_json()["ngrams"])
                ],
            )
        ).encode(),
        "corrupted \\(fingerprint mismatch\\)",
    ),
    (
        "missing-k",
        lambda raw, s: json.dumps({k: v for k, v in s.to_json().items() if k != "k"}).encode(),
        "malformed S-set file",
    ),
    (
        "ngram-not-strings",
        lambda raw, s: json.dumps(_edit(s, ngrams=[[[1, 2], 3]], fingerprint=None)).encode(),
        "malformed S-set file",
    ),
    (
        "bad-count",
        lambda raw, s: json.dumps(_edit(s, ngrams=[[["a"], "many"]], fingerprint=None)).encode(),
        "malformed S-set file",
    ),
]


@pytest.mark.parametrize(
    ("mutate", "message"), [pytest.param(m, msg, id=i) for i, m, msg in CORRUPTIONS]
)
def test_corrupted_files_raise_crystal_error(
    tmp_path: Path, sample: TriviallySharedSet, mutate: object, message: str
) -> None:
    good = tmp_path / "good.json.gz"
    sample.save(good)
    assert gzip.decompress(good.read_bytes())
    bad = tmp_path / "bad.json"
    bad.write_bytes(mutate(good.read_bytes(), sample))  # type: ignore[operator]
    with pytest.raises(CrystalError, match=message) as info:
        TriviallySharedSet.load(bad)
    assert str(bad) in str(info.value)
    assert "\n" not in str(info.value)


def test_fingerprint_may_be_absent(tmp_path: Path, sample: TriviallySharedSet) -> None:
    doc = sample.to_json()
    del doc["fingerprint"]
    assert TriviallySharedSet.load(_write_doc(tmp_path / "s.json", doc)) == sample


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CrystalError, match="cannot read S-set file"):
        TriviallySharedSet.load(tmp_path / "nope.json")


def test_corrupted_deflate_stream_raises_crystal_error(
    tmp_path: Path, sample: TriviallySharedSet
) -> None:
    good = tmp_path / "good.json.gz"
    sample.save(good)
    raw = bytearray(good.read_bytes())
    raw[20] ^= 0xFF  # inside the compressed data, past the 10-byte gzip header
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(bytes(raw))
    with pytest.raises(CrystalError, match="not a readable S-set file"):
        TriviallySharedSet.load(bad)


def test_to_json_shape(sample: TriviallySharedSet) -> None:
    doc = sample.to_json()
    assert doc["format"] == FORMAT and doc["version"] == FORMAT_VERSION
    assert doc["fingerprint"] == sample.fingerprint()
    assert doc["ngrams"][0] == [list(next(iter(sample.counts))), next(iter(sample.counts.values()))]


# --- the frequency curve and its knee -------------------------------------------------------


def test_frequency_curve() -> None:
    counts = Counter({("a",): 5, ("b",): 9, ("c",): 1, ("d",): 5})
    assert frequency_curve(counts) == [9, 5, 5, 1]
    assert frequency_curve(counts, points=2) == [9, 5]


def test_suggest_k_finds_an_obvious_elbow() -> None:
    # A steep straight line down to rank 50, then a long, almost flat one: the corner is rank 50.
    steep = [round(10_000 - (r - 1) * 9_900 / 49) for r in range(1, 51)]
    flat = [round(100 - (r - 50) * 100 / 4_950) for r in range(51, 5_001)]
    assert suggest_k(steep + flat) == 50
    assert suggest_k(steep + flat, hi=1_000) == 50


@settings(max_examples=200)
@given(st.lists(st.integers(0, 10**6), min_size=0, max_size=300))
def test_suggest_k_is_a_rank_inside_the_curve(values: list[int]) -> None:
    curve = sorted(values, reverse=True)
    k = suggest_k(curve)
    assert 1 <= k <= max(1, len(curve))
    assert suggest_k(curve, hi=10) <= max(1, min(10, len(curve)))


@pytest.mark.parametrize(
    ("curve", "expected"),
    [
        pytest.param([], 1, id="empty"),
        pytest.param([5], 1, id="one"),
        pytest.param([5, 3], 2, id="two"),
        pytest.param([7, 7, 7, 7], 1, id="flat"),
    ],
)
def test_suggest_k_small_curves(curve: list[int], expected: int) -> None:
    assert suggest_k(curve) == expected


@pytest.mark.parametrize("language", ["python", "java"])
def test_builtin_sets(language: str) -> None:
    sset = builtin_sset(language)
    assert sset is not None
    assert sset.k == 1000 and len(sset) == 1000
    assert sset.language == language and sset.max_n == 4
    assert all(1 <= len(g) <= 4 for g in sset)
    counts = list(sset.counts.values())
    assert counts == sorted(counts, reverse=True)
    assert 1 <= suggest_k(sset.meta["curve"]) <= 5000


def test_builtin_set_of_unknown_language_is_none() -> None:
    assert builtin_sset("cobol") is None


def test_without_unigrams_keeps_rank_order_and_counts() -> None:
    sset = build_sset([list("abcabcabd")], k=8)
    kept = sset.without_unigrams()
    assert list(kept.counts) == [g for g in sset.counts if len(g) > 1]
    assert kept.k == sset.k and kept.meta["orders"] == "2-4"
