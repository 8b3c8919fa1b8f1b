"""A restartable run of a Pygments ``RegexLexer``: lexing from a recorded state, with checkpoints.

:mod:`crystal_lsp.text.incremental` re-lexes only the edited region of a buffer. For that, the
lexer must be restartable at a line start with the state stack it had there, and able to tell
when, past the edit, it is back in step with the old token stream. This module is that lexer
loop: :func:`scan` is :meth:`pygments.lexer.RegexLexer.get_tokens_unprocessed` (Pygments
2.17-2.21) with the filtering of :func:`crystal_lsp.text.tokens.lex` and the checkpoints added.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pygments.lexer import Lexer, RegexLexer
from pygments.token import Comment, Error, _TokenType

Stack = tuple[str, ...]
ROOT: Stack = ("root",)


def supports_incremental(lexer: Lexer) -> bool:
    """Whether ``lexer`` can be restarted mid-text (a plain ``RegexLexer``)."""
    method = getattr(type(lexer), "get_tokens_unprocessed", None)
    return isinstance(lexer, RegexLexer) and method is RegexLexer.get_tokens_unprocessed


@dataclass
class Checkpoints:
    """Line starts the lexer reached at a match boundary (first arrival at each offset)."""

    offsets: list[int]
    stacks: list[Stack]
    kept: list[int]
    """Tokens kept (not whitespace or comments) before each checkpoint."""


@dataclass
class Scan:
    """The tokens and checkpoints of one run of :func:`scan`."""

    texts: list[str]
    starts: list[int]
    types: list[_TokenType]
    checkpoints: Checkpoints
    synced_at: int | None
    """Index of the old checkpoint the stream re-synchronised with (None: lexed to the end)."""


@dataclass
class Sync:
    """When a re-lexing run may stop: back in step with the old token stream.

    That is the first checkpoint at or after ``sync_from`` that equals one of ``old`` shifted by
    ``delta``: from there on the lexer would repeat what it did on the old text.
    """

    old: Checkpoints
    delta: int
    sync_from: int

    def matches(self, pos: int, state: Stack) -> int | None:
        """The index of the old checkpoint ``(pos, state)`` equals, if any."""
        if pos < self.sync_from:
            return None
        offsets = self.old.offsets
        i = bisect.bisect_left(offsets, pos - self.delta)
        if i < len(offsets) and offsets[i] == pos - self.delta and self.old.stacks[i] == state:
            return i
        return None


def _enter(statestack: list[str], new_state: Any) -> None:
    """Apply a rule's state transition to the stack (as Pygments does)."""
    if isinstance(new_state, tuple):
        for state in new_state:
            if state == "#pop":
                if len(statestack) > 1:
                    statestack.pop()
            elif state == "#push":
                statestack.append(statestack[-1])
            else:
                statestack.append(state)
    elif isinstance(new_state, int):
        if abs(new_state) >= len(statestack):
            del statestack[1:]
        else:
            del statestack[new_state:]
    elif new_state == "#push":
        statestack.append(statestack[-1])
    else:  # pragma: no cover - Pygments validates state definitions
        raise ValueError(f"wrong state def: {new_state!r}")


def scan(
    lexer: Lexer, text: str, pos: int, stack: Stack, kept_before: int, sync: Sync | None = None
) -> Scan:
    """Lex ``text`` from ``pos`` in state ``stack``, recording checkpoints (module docstring).

    With ``sync``, stop at the first checkpoint where the stream is back in step with the old one.
    """
    tokendefs = lexer._tokens
    statestack = list(stack)
    statetokens = tokendefs[statestack[-1]]
    out = Scan([], [], [], Checkpoints([], [], []), None)
    texts, starts, types, cps = out.texts, out.starts, out.types, out.checkpoints
    last_cp, end = pos, len(text)

    def keep(start: int, ttype: _TokenType, value: str) -> None:
        if value and not value.isspace() and ttype not in Comment:
            texts.append(value)
            starts.append(start)
            types.append(ttype)

    while True:
        for rexmatch, action, new_state in statetokens:
            m = rexmatch(text, pos)
            if m:
                if action is not None:
                    if type(action) is _TokenType:
                        keep(pos, action, m.group())
                    else:
                        for start, ttype, value in action(lexer, m):
                            keep(start, ttype, value)
                pos = m.end()
                if new_state is not None:
                    _enter(statestack, new_state)
                    statetokens = tokendefs[statestack[-1]]
                break
        else:
            if pos >= end:
                break
            if text[pos] == "\n":
                statestack = ["root"]
                statetokens = tokendefs["root"]
            else:
                keep(pos, Error, text[pos])
            pos += 1
        if pos > last_cp and text[pos - 1] == "\n":
            last_cp = pos
            state = tuple(statestack)
            if sync is not None:
                out.synced_at = sync.matches(pos, state)
                if out.synced_at is not None:
                    break
            cps.offsets.append(pos)
            cps.stacks.append(state)
            cps.kept.append(kept_before + len(texts))
    return out


def full_scan(
    lexer: Lexer, text: str
) -> tuple[list[str], list[int], list[_TokenType], Checkpoints]:
    """Tokens (as :func:`crystal_lsp.text.tokens.lex` keeps them) and checkpoints of a whole text."""
    whole = scan(lexer, text, 0, ROOT, 0)
    cps = Checkpoints([0, *whole.checkpoints.offsets], [ROOT, *whole.checkpoints.stacks], [0])
    cps.kept.extend(whole.checkpoints.kept)
    return whole.texts, whole.starts, whole.types, cps


def after_blank_line(text: str, offset: int) -> bool:
    """Whether the line ending just before ``offset`` holds only white space."""
    start = text.rfind("\n", 0, max(0, offset - 1)) + 1
    return text[start:offset].isspace()


def first_error_before(types: Sequence[_TokenType], starts: Sequence[int], offset: int) -> int:
    """The offset of the first ``Error`` token before ``offset``, or ``offset`` if none.

    A rule that failed at an Error token may have scanned to the end of the text looking for a
    terminator (an unclosed quote): a restart must begin above it.
    """
    before = bisect.bisect_left(starts, offset)
    try:
        return starts[types.index(Error, 0, before)]
    except ValueError:
        return offset


def common_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    """Length of the common prefix of two strings or lists (binary search on slices)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix(a: Sequence[object], b: Sequence[object], limit: int) -> int:
    """Length of the common suffix of two strings or lists, at most ``limit``."""
    lo, hi = 0, min(len(a), len(b), limit)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def token_lines(starts: Sequence[int], starts_of_lines: Sequence[int]) -> list[int]:
    """The 0-based line of every token (as :func:`crystal_lsp.text.snippets.token_lines`).

    ``starts`` must be sorted; the first one may be anywhere in the text.
    """
    out: list[int] = []
    if not starts:
        return out
    append = out.append
    n = len(starts_of_lines)
    line = bisect.bisect_right(starts_of_lines, starts[0]) - 1
    for start in starts:
        # lines only move forward: step, and bisect when the jump is long
        if line + 1 < n and starts_of_lines[line + 1] <= start:
            if line + 8 < n and starts_of_lines[line + 8] <= start:
                line = bisect.bisect_right(starts_of_lines, start, line) - 1
            else:
                while line + 1 < n and starts_of_lines[line + 1] <= start:
                    line += 1
        append(line)
    return out
