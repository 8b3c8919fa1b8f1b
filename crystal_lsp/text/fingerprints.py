"""Stable hashes: of file contents, of snippets, and of normalized n-grams (shingles).

Python's ``hash()`` is salted per process, so everything stored uses keyed-free BLAKE2b digests.
Shingles are the 64-bit hashes of the normalized view's 4-grams; they only *retrieve* candidate
pairs (a collision can at worst propose an extra candidate), every reported score is computed
exactly on the tokens.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from crystal_lsp.text.sources import content_sha
from crystal_lsp.text.views import file_view

__all__ = [
    "SHINGLE_N",
    "U64",
    "content_sha",
    "gram_hashes",
    "ngram_hashes",
    "positional_shingles",
    "shingles",
    "text_sha",
    "token_hashes",
]

SHINGLE_N = 4
_P1, _P2, _P3 = (
    np.uint64(0x9E3779B97F4A7C15),
    np.uint64(0xC2B2AE3D27D4EB4F),
    np.uint64(0x165667B19E3779F9),
)


class _TokenHashes(dict[str, int]):
    def __missing__(self, text: str) -> int:
        value = int.from_bytes(
            hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little"
        )
        self[text] = value
        return value


_TOKEN_HASHES = _TokenHashes()

U64 = npt.NDArray[np.uint64]


def text_sha(texts: Sequence[str]) -> str:
    """Digest of a token sequence (identifies a snippet's content across files and runs)."""
    joined = "\x00".join(texts).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(joined, digest_size=10).hexdigest()


def token_hashes(texts: Sequence[str]) -> U64:
    """A stable 64-bit hash per token."""
    if len(_TOKEN_HASHES) > 2_000_000:
        _TOKEN_HASHES.clear()
    return np.fromiter(map(_TOKEN_HASHES.__getitem__, texts), dtype=np.uint64, count=len(texts))


def ngram_hashes(hashes: U64, n: int = SHINGLE_N) -> U64:
    """Order-sensitive 64-bit hashes of every n-gram (``n`` <= 4) of a token-hash array."""
    if len(hashes) < n:
        return np.empty(0, dtype=np.uint64)
    out: U64 = hashes[: len(hashes) - n + 1].copy()
    with np.errstate(over="ignore"):
        for k, prime in zip(range(1, n), (_P1, _P2, _P3)):
            out *= prime  # in place: the same wrapping arithmetic, no new array per step
            out += hashes[k : len(hashes) - n + 1 + k]
    return out


def shingles(normalized_texts: Sequence[str]) -> U64:
    """Sorted distinct shingles (normalized 4-gram hashes) of a snippet."""
    out: U64 = np.unique(ngram_hashes(token_hashes(normalized_texts)))
    return out


def gram_hashes(grams: Sequence[tuple[str, ...]]) -> U64:
    """Shingle hashes of explicit n-grams of length ``SHINGLE_N`` (to drop S members)."""
    values = [int(ngram_hashes(token_hashes(list(g)))[0]) for g in grams if len(g) == SHINGLE_N]
    out: U64 = np.unique(np.array(values, dtype=np.uint64))
    return out


def positional_shingles(texts: Sequence[str], cats: str) -> tuple[U64, npt.NDArray[np.uint32]]:
    """Every normalized 4-gram hash of a file by position, and each normalized token's raw index.

    Position ``i`` of the first array is the 4-gram starting at normalized token ``i`` (the
    normalized view collapses runs of string tokens, so the second array maps back to the raw
    tokens).
    """
    norm, npos = file_view(texts, cats)
    return ngram_hashes(token_hashes(norm)), npos
