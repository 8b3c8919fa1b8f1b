"""Lines that correspond: how much of a reported pair's ranges actually aligns.

For each of the two ranges take the non-blank, non-comment lines, rename identifiers and
literals (keywords, operators and punctuation kept) using Pygments' tokens of the whole file,
and align the two lists of lines with difflib's SequenceMatcher: the share is the number of
lines in matching blocks over the number of lines of the smaller side.
"""

from __future__ import annotations

import difflib
from functools import lru_cache
from pathlib import Path

from pygments.lexers import get_lexer_for_filename
from pygments.token import Comment, Keyword, Literal, Name, Operator, Text
from pygments.util import ClassNotFound

Loc = tuple[str, int, int]
_SKIP = (Comment, Text.Whitespace)


def _placeholder(ttype: object) -> str | None:
    """What a token becomes: None (dropped), a placeholder, or "" (keep its text)."""
    if any(ttype in t for t in _SKIP):
        return None
    if ttype in Keyword or ttype in Operator.Word:
        return ""
    if ttype in Name:
        return "ID"
    if ttype in Literal:
        return "LIT"
    return ""


@lru_cache(maxsize=4096)
def normalized_lines(path: Path) -> tuple[str, ...]:
    """Per line of the file (index 0 = line 1): its normalized text, "" for blank/comment."""
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        lexer = get_lexer_for_filename(path.name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        lexer = None
    lines: list[list[str]] = [[] for _ in range(text.count("\n") + 1)]
    if lexer is None:
        return tuple(" ".join(ln.split()) for ln in text.split("\n"))
    lineno = 0
    for ttype, value in lexer.get_tokens(text):
        ph = _placeholder(ttype)
        pieces = value.split("\n")
        for k, piece in enumerate(pieces):
            if ph is None or not piece.strip():
                continue
            out = lines[lineno + k]
            word = ph or piece.strip()
            if not (ph and out and out[-1] == word):  # one placeholder per literal run
                out.append(word)
        lineno += len(pieces) - 1
    return tuple(" ".join(ws) for ws in lines)


def code_lines(root: Path, loc: Loc) -> list[str]:
    """The normalized non-blank, non-comment lines of a location."""
    path, first, last = loc
    lines = normalized_lines(root / path)
    return [ln for ln in lines[max(first - 1, 0) : last] if ln]


def share(root: Path, a: Loc, b: Loc) -> float:
    """Share of the smaller side's code lines that align with the other side."""
    la, lb = code_lines(root, a), code_lines(root, b)
    smaller = min(len(la), len(lb))
    if smaller == 0:
        return 0.0
    sm = difflib.SequenceMatcher(None, la, lb, autojunk=False)
    matched = sum(block.size for block in sm.get_matching_blocks())
    return round(matched / smaller, 4)
