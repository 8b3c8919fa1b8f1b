"""Where a token stream's lines and brackets are: per-token arrays, computed once per file.

Splitting a file into logical lines, physical lines and units asks the same questions of every
token: how deep inside brackets it is, on which line it ends, whether it starts a new line. Asked
token by token in Python, that was most of an index entry's cost outside lexing; here each answer
is one numpy pass over the file. The results are exactly those of the token loops they replace
(``tests/unit/text/test_layout.py`` compares them on real and random token streams).

A bracket is a one-character ``(``, ``[`` or ``{`` (opening) or ``)``, ``]``, ``}`` (closing)
token of category ``P`` or ``O``; depth never goes below zero (a stray closing bracket is ignored).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]
_STEP = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
_P, _O = ord("P"), ord("O")


def bracket_steps(texts: Sequence[str], cats: str) -> Ints:
    """+1 for an opening bracket token, -1 for a closing one, 0 for any other token."""
    steps: Ints = np.fromiter(map(_STEP.get, texts, repeat(0)), dtype=np.int64, count=len(texts))
    codes = np.frombuffer(cats.encode("ascii"), dtype=np.uint8)
    steps[(codes != _P) & (codes != _O)] = 0
    return steps


def depth_after(texts: Sequence[str], cats: str) -> Ints:
    """The bracket depth after each token (``max(0, depth + step)`` from 0, token by token).

    A walk floored at zero is its running sum minus the lowest (negative) running sum so far.
    """
    total = np.cumsum(bracket_steps(texts, cats))
    floor = np.minimum(np.minimum.accumulate(total), 0) if len(total) else total
    out: Ints = total - floor
    return out


def line_changes(lines: Sequence[int]) -> Ints:
    """The indices ``i >= 1`` at which a token starts on another line than token ``i - 1``."""
    if len(lines) < 2:
        return np.empty(0, dtype=np.int64)
    values = np.asarray(lines, dtype=np.int64)
    out: Ints = np.flatnonzero(values[1:] != values[:-1]) + 1
    return out


def newline_counts(texts: Sequence[str]) -> Ints:
    """How many ``\\n`` each token's text holds (multi-line strings, mostly)."""
    count = len(texts)
    if not count:
        return np.zeros(0, dtype=np.int64)
    joined = "\n".join(texts)
    # a token's newlines are those before its end that are not the separators
    codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    newlines = np.flatnonzero(codes == 10)
    ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=count) + 1) - 1
    before_end = np.searchsorted(newlines, ends, side="left")
    out: Ints = np.diff(before_end, prepend=0) - 1
    out[0] += 1
    return out
