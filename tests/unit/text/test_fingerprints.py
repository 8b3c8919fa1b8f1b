"""Stable digests and shingles: golden values, n-gram order, and the same values in every process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from scan_samples import ORIGINAL

from crystal_lsp.text.fingerprints import (
    SHINGLE_N,
    content_sha,
    gram_hashes,
    ngram_hashes,
    shingles,
    text_sha,
    token_hashes,
)
from crystal_lsp.text.tokens import tokenize
from crystal_lsp.text.views import categories, normalized

# Golden values: a change means every cache and every finding id changes, so it must be deliberate.
GOLDEN = [
    pytest.param(content_sha(b""), "e3b0c44298fc1c149afbf4c8", id="content-empty"),
    pytest.param(content_sha(b"x = 1\n"), "9e26bf369911c45c243c6841", id="content"),
    pytest.param(text_sha(["a", "b"]), "2eacde9b82627f375d83", id="text-ab"),
    pytest.param(text_sha(["ab"]), "a32e71fc040bca5b534a", id="text-joined-differs"),
    pytest.param(text_sha([]), "6fa1d8fcfd719046d762", id="text-empty"),
    pytest.param(
        token_hashes(["ID", "("]).tolist(),
        [12687839945050695255, 3427233784913110363],
        id="token-hashes",
    ),
    pytest.param(
        shingles(["ID", "=", "ID", "(", "ID", ")"]).tolist(),
        [3868060549972752997, 11938003046770874989, 17416309635574151257],
        id="shingles",
    ),
]


@pytest.mark.parametrize(("value", "expected"), GOLDEN)
def test_golden(value: object, expected: object) -> None:
    assert value == expected


def test_token_hashes_are_uint64_and_deterministic() -> None:
    hashes = token_hashes(["a", "b", "a", "\ud800"])  # a lone surrogate is hashable too
    assert hashes.dtype == np.uint64 and len(hashes) == 4
    assert hashes[0] == hashes[2] != hashes[1]
    assert token_hashes([]).tolist() == []


def test_ngram_hashes_length_and_order() -> None:
    hashes = token_hashes(list("abcdef"))
    grams = ngram_hashes(hashes)
    assert len(grams) == 6 - SHINGLE_N + 1
    assert ngram_hashes(hashes[:3]).tolist() == []
    # order-sensitive: a permutation gives other hashes
    swapped = token_hashes(list("bacd"))
    assert ngram_hashes(swapped)[0] != grams[0]
    # the same 4 tokens anywhere give the same hash
    assert ngram_hashes(token_hashes(list("xabcd")))[1] == grams[0]
    assert len(ngram_hashes(hashes, 2)) == 5


def test_shingles_sorted_and_distinct() -> None:
    values = shingles(["a", "b", "c", "d"] * 5)
    assert values.tolist() == sorted(set(values.tolist()))
    assert len(values) == 4  # abcd, bcda, cdab, dabc


def test_gram_hashes_match_shingles_and_ignore_other_orders() -> None:
    grams = [("ID", "=", "ID", "("), ("a",), ("x", "y", "z")]
    assert gram_hashes(grams).tolist() == shingles(["ID", "=", "ID", "("]).tolist()
    assert gram_hashes([]).tolist() == []


_CHILD = """
import json, sys
from crystal_lsp.text.fingerprints import content_sha, shingles, text_sha
from crystal_lsp.text.tokens import tokenize
from crystal_lsp.text.views import categories, normalized
source = sys.stdin.read()
t = tokenize(source, "python")
view = normalized(t.texts, categories(t.texts, t.types))
print(json.dumps([shingles(view).tolist(), text_sha(t.texts), content_sha(source.encode()),
                  hash("salted")]))
"""


def test_shingles_are_the_same_in_every_process() -> None:
    outputs = []
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", _CHILD],
            input=ORIGINAL,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        outputs.append(json.loads(done.stdout))
    (sh1, sha1, csha1, salted1), (sh2, sha2, csha2, salted2) = outputs
    assert salted1 != salted2  # the seeds really differ
    assert (sh1, sha1, csha1) == (sh2, sha2, csha2)
    tokens = tokenize(ORIGINAL, "python")
    view = normalized(tokens.texts, categories(tokens.texts, tokens.types))
    assert sh1 == shingles(view).tolist() and len(sh1) > 50
    assert sha1 == text_sha(tokens.texts)
