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

import re
from collections.abc import Sequence
from itertools import repeat

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]
_STEP = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
_P, _O, _S = ord("P"), ord("O"), ord("S")
_INDENT = re.compile(r"[ \t]*")


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


def indented_lines(
    texts: Sequence[str],
    cats: str,
    lines: Sequence[int],
    source: str,
    starts: Sequence[int],
) -> list[tuple[int, int, int]]:
    """``(first token, indentation, line)`` of every logical line (not inside brackets).

    ``starts`` are the offsets at which the source's lines begin; the indentation is in columns,
    tabs expanded to multiples of 8.

    A token begins one when it starts on a later line than the one the previous token *ends*
    on (strings span lines), outside brackets, and it does not continue a string: lexers split
    multi-line strings into several string tokens, whose lines continue the statement the string
    belongs to, whatever their indentation.
    """
    if not texts:
        return []
    line = np.asarray(lines, dtype=np.int64)
    previous_end = np.empty_like(line)
    previous_end[0] = -1
    previous_end[1:] = line[:-1] + newline_counts(texts)[:-1]
    depth_before = np.zeros_like(line)
    depth_before[1:] = depth_after(texts, cats)[:-1]
    codes = np.frombuffer(cats.encode("ascii"), dtype=np.uint8)
    continues_string = np.zeros(len(texts), dtype=bool)
    continues_string[1:] = (codes[1:] == _S) & (codes[:-1] == _S)
    begins = np.flatnonzero((line > previous_end) & (depth_before == 0) & ~continues_string)
    out: list[tuple[int, int, int]] = []
    match = _INDENT.match
    for i in begins.tolist():
        at = lines[i]
        begin = starts[at]
        found = match(source, begin)  # `[ \t]*` always matches, if only the empty string
        indent = found.group() if found else ""
        out.append((i, len(indent.expandtabs(8)) if "\t" in indent else len(indent), at))
    return out


def false_runs(flags: Sequence[bool]) -> list[tuple[int, int]]:
    """The maximal runs ``[start, end)`` of ``False`` in ``flags``."""
    padded = np.zeros(len(flags) + 2, dtype=np.int8)
    padded[1:-1] = np.logical_not(flags)
    edges = np.flatnonzero(np.diff(padded)).tolist()
    return list(zip(edges[::2], edges[1::2]))
