"""Token categories and the normalized view of a token stream.

The *raw* view is the token texts, as BLEU sees them. The *normalized* view replaces what a
consistent renaming or a changed constant would change: identifiers become ``ID`` and literals
``STR``/``NUM`` (a run of string tokens, e.g. a Pygments-split f-string, becomes one ``STR``).
Names right after a member-access operator (``x.append``, ``a->b``, ``A::b``), builtins and
keywords keep their text: renaming a local variable does not rename the API it calls, and those
names are what tells two renamed-alike functions apart.

Categories are one character per token so that they can be stored compactly with an index:
``K`` keyword, ``N`` name, ``A`` name after a member access, ``B`` builtin/pseudo name,
``S`` string, ``M`` number, ``O`` operator, ``P`` punctuation, ``C`` comment, ``X`` other.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from pygments.token import (
    Comment,
    Keyword,
    Literal,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    _TokenType,
)

ID, STR, NUM = "ID", "STR", "NUM"
_MEMBER_ACCESS = {".", "->", "::", "?.", "!."}
_CATEGORY_CACHE: dict[_TokenType, str] = {}


def _category(ttype: _TokenType) -> str:
    if ttype in Keyword:
        return "K"
    if ttype in Name.Builtin or ttype in Name.Builtin.Pseudo:
        return "B"
    if ttype in Name:
        return "N"
    if ttype in String:
        return "S"
    if ttype in Number:
        return "M"
    if ttype in Literal:
        return "S"
    if ttype in Operator:
        return "O"
    if ttype in Punctuation:
        return "P"
    if ttype in Comment:
        return "C"
    return "X"


def categories(texts: Sequence[str], types: Sequence[_TokenType]) -> str:
    """One category character per token (see the module docstring)."""
    out = []
    cache = _CATEGORY_CACHE
    previous = before = ""
    for text, ttype in zip(texts, types):
        cat = cache.get(ttype)
        if cat is None:
            cat = cache[ttype] = _category(ttype)
        # Some lexers (C, C++) emit `->` and `::` as two one-character tokens.
        if cat == "N" and (previous in _MEMBER_ACCESS or before + previous in _MEMBER_ACCESS):
            cat = "A"
        out.append(cat)
        before, previous = previous, text
    return "".join(out)


def normalized(texts: Sequence[str], cats: str) -> list[str]:
    """The normalized view: identifiers → ``ID``, literals → ``STR``/``NUM`` (runs collapsed)."""
    out: list[str] = []
    previous = ""
    for text, cat in zip(texts, cats):
        if cat == "N":
            out.append(ID)
        elif cat == "S":
            if previous != "S":
                out.append(STR)
        elif cat == "M":
            out.append(NUM)
        else:
            out.append(text)
        previous = cat
    return out


def normalized_positions(cats: str) -> list[int]:
    """For each normalized token, the index of the raw token it starts at."""
    out: list[int] = []
    previous = ""
    for i, cat in enumerate(cats):
        if not (cat == "S" and previous == "S"):
            out.append(i)
        previous = cat
    return out


_N, _S, _M = ord("N"), ord("S"), ord("M")


def file_view(texts: Sequence[str], cats: str) -> tuple[list[str], npt.NDArray[np.uint32]]:
    """:func:`normalized` and :func:`normalized_positions` of a whole file, in one numpy pass.

    The same values; the token loops above are the definition (and faster on a few tokens).
    """
    count = len(texts)
    if not count:
        return [], np.empty(0, dtype=np.uint32)
    codes = np.frombuffer(cats.encode("ascii"), dtype=np.uint8)
    string = codes == _S
    starts = np.ones(count, dtype=bool)
    starts[1:] = ~(string[1:] & string[:-1])
    view = np.empty(count, dtype=object)
    view[:] = texts
    view[codes == _N] = ID
    view[codes == _M] = NUM
    view[string] = STR
    positions = np.flatnonzero(starts)
    return view[positions].tolist(), positions.astype(np.uint32)
