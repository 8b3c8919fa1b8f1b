"""STS, RUBY's lexical level: ``1 − Levenshtein(tokens_R, tokens_T) / max(|R|, |T|)``.

Tokens are the Pygments tokens BLEU and CrystalBLEU use (whitespace and comments dropped), mapped
to integer ids. The distance is the unit-cost Levenshtein distance on token sequences (insert,
delete, substitute one token), which never exceeds the longer length, so STS lies in [0, 1]. Two
empty sequences are identical (STS 1).

``rapidfuzz`` computes the distance when installed; otherwise an exact pure-Python version of the
same bit-parallel algorithm (Myers 1999, Hyyrö 2001) runs with Python's unbounded integers as bit
vectors, so one Python step handles a whole column of the DP table. Both give identical integers.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

_Levenshtein: Any
try:
    from rapidfuzz.distance import Levenshtein as _Levenshtein
except ImportError:  # pragma: no cover - exercised by simulating the import failure
    _Levenshtein = None


def backend() -> str:
    """Which implementation :func:`levenshtein` uses: ``rapidfuzz`` or ``python``."""
    return "rapidfuzz" if _Levenshtein is not None else "python"


def levenshtein(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Unit-cost edit distance between two sequences of hashable symbols."""
    if _Levenshtein is not None:
        return int(_Levenshtein.distance(a, b))
    return levenshtein_bitparallel(a, b)


def levenshtein_bitparallel(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Levenshtein distance by Hyyrö's bit-vector recurrence, in pure Python."""
    if len(a) < len(b):
        a, b = b, a
    # ``a`` (the longer) becomes the bit vector, so the Python loop runs over the shorter one.
    m = len(a)
    if not b:
        return m
    peq: dict[Hashable, int] = {}
    for i, symbol in enumerate(a):
        peq[symbol] = peq.get(symbol, 0) | (1 << i)
    full = (1 << m) - 1
    last = 1 << (m - 1)
    vp, vn, score = full, 0, m
    for symbol in b:
        eq = peq.get(symbol, 0)
        xv = eq | vn
        xh = (((eq & vp) + vp) ^ vp) | eq
        hp = vn | (~(xh | vp) & full)
        hn = vp & xh
        if hp & last:
            score += 1
        elif hn & last:
            score -= 1
        hp = ((hp << 1) | 1) & full
        hn = (hn << 1) & full
        vp = hn | (~(xv | hp) & full)
        vn = hp & xv
    return score


def sts_from_ids(a: Sequence[int], b: Sequence[int]) -> float:
    """STS of two token-id sequences."""
    longest = max(len(a), len(b))
    if longest == 0:
        return 1.0
    return 1.0 - levenshtein(a, b) / longest


class TokenIds:
    """Interns token texts as small integers (shared by all items of one evaluation)."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}

    def __call__(self, texts: Sequence[str]) -> list[int]:
        """The id sequence of a token-text sequence."""
        ids = self._ids
        return [ids.setdefault(text, len(ids)) for text in texts]
