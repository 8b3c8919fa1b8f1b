"""Data tables among top-level statements: rows of literals a reviewer does not refactor.

A module-level table (Django's ``_connector_combinations = [{connector: [(fields.IntegerField,
...), ...] for connector in (...)}, ...]``) is a run of statements to the unit splitter, since
its rows name classes and constants rather than being literals only. Its rows look alike
because tables do: a copy finder that reports "lines 571-589 of statements" points a reviewer at
data. :func:`is_table` tells such tokens apart (no call, no statement keyword, mostly
punctuation, operators and literals), :func:`assigned_name` names the table.
"""

from __future__ import annotations

from collections.abc import Sequence

TABLE_SHARE = 0.5
"""Share of a table's tokens that are punctuation, operators or literals (``S``, ``M``, ``P``,
``O``), at least: rows of names with their separators."""
_ROW_KEYWORDS = frozenset(
    {"for", "in", "if", "else", "None", "True", "False", "null", "true", "false", "nil", "new"}
)
"""Keywords a table may hold: constants, and those of a comprehension building its rows."""
_CALLABLE = "NAB"
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")


def is_table(texts: Sequence[str], cats: str, start: int, end: int, depth: int = 0) -> bool:
    """Whether tokens ``[start, end)`` are rows of data (module docstring).

    No call, no statement keyword, mostly punctuation, operators and literals
    (:data:`TABLE_SHARE`), and at least two separators (rows). ``depth``: the brackets open at
    ``start`` (a range of rows inside the table's literal; :func:`depth_at`).
    """
    count = end - start
    if count < 8 or depth < 0:
        return False
    literal_like = rows = 0
    for j in range(start, end):
        cat, text = cats[j], texts[j]
        depth += (text in _OPEN) - (text in _CLOSE)
        if cat == "K" and (text not in _ROW_KEYWORDS or depth <= 0):
            return False  # a statement (a loop, a condition), or a keyword no row holds
        if text == "(" and j > start and cats[j - 1] in _CALLABLE:
            return False  # a call: code, not data
        literal_like += cat in "SMPO"
        rows += text == ","
    return rows >= 2 and literal_like >= TABLE_SHARE * count


def assigned_name(texts: Sequence[str], cats: str, start: int, end: int) -> str:
    """The name a run of statements assigns its table to (``NAME = [...]``), or ""."""
    j = start
    while j < end and texts[j] not in ("=", ":=") and cats[j] in "NAKP" and texts[j] not in "([{":
        j += 1
    if j < end and texts[j] in ("=", ":=") and j > start and cats[j - 1] in "NA":
        return texts[j - 1]
    return ""


def depth_at(texts: Sequence[str], cats: str, start: int, at: int) -> int:
    """The brackets opened between tokens ``start`` and ``at`` and still open at ``at``.

    -1 when one of them is a call's: the range lies in a call's arguments (code, not a table).
    """
    opened: list[int] = []
    for j in range(start, at):
        if texts[j] in _OPEN:
            opened.append(j)
        elif texts[j] in _CLOSE and opened:
            opened.pop()
    if any(texts[j] == "(" and j > start and cats[j - 1] in _CALLABLE for j in opened):
        return -1
    return len(opened)
