"""A restartable run of a Pygments ``RegexLexer``: lexing from a recorded state, with checkpoints.

:mod:`crystal_lsp.text.incremental` re-lexes only the edited region of a buffer. For that, the
lexer must be restartable at a line start with the state stack it had there, and able to tell
when, past the edit, it is back in step with the old token stream. This module is that lexer
loop: :func:`scan` is :meth:`pygments.lexer.RegexLexer.get_tokens_unprocessed` (Pygments
2.17-2.21, run by :mod:`crystal_lsp.text.fastlex` when it compiles the lexer) with the filtering of :func:`crystal_lsp.text.tokens.lex` and the checkpoints added.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pygments.lexer import Lexer, RegexLexer
from pygments.token import Comment, Error, _TokenType

from crystal_lsp.text.fastlex import next_match, program_for
from crystal_lsp.text.fastlex.run import enter
from crystal_lsp.text.fastlex.select import enabled as fastlex_enabled

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


Found = tuple[Any, Any, "re.Match[str]"]
"""A matching rule's action, state transition and own match."""


def _finder(lexer: Lexer) -> Callable[[str, str, int], Found | None]:
    """The first rule of a state that matches at a position.

    The executor's tables when it compiles the lexer (:mod:`crystal_lsp.text.fastlex`), else
    Pygments' rule list in order.
    """
    program = program_for(lexer) if fastlex_enabled() else None
    if program is not None:
        tables = program.tables

        def fast(state: str, text: str, pos: int) -> Found | None:
            found = next_match(tables[state], text, pos)
            if found is None:
                return None
            step, m = found
            return step[4], step[2], m

        return fast
    tokendefs = lexer._tokens

    def pygments(state: str, text: str, pos: int) -> Found | None:
        for rexmatch, action, new_state in tokendefs[state]:
            m = rexmatch(text, pos)
            if m:
                return action, new_state, m
        return None

    return pygments


def scan(
    lexer: Lexer, text: str, pos: int, stack: Stack, kept_before: int, sync: Sync | None = None
) -> Scan:
    """Lex ``text`` from ``pos`` in state ``stack``, recording checkpoints (module docstring).

    With ``sync``, stop at the first checkpoint where the stream is back in step with the old one.
    """
    find = _finder(lexer)
    statestack = list(stack)
    out = Scan([], [], [], Checkpoints([], [], []), None)
    texts, starts, types, cps = out.texts, out.starts, out.types, out.checkpoints
    last_cp, end = pos, len(text)

    def keep(start: int, ttype: _TokenType, value: str) -> None:
        if value and not value.isspace() and ttype not in Comment:
            texts.append(value)
            starts.append(start)
            types.append(ttype)

    while True:
        found = find(statestack[-1], text, pos)
        if found is not None:
            action, new_state, m = found
            if action is not None:
                if type(action) is _TokenType:
                    keep(pos, action, m.group())
                else:
                    for start, ttype, value in action(lexer, m):
                        keep(start, ttype, value)
            pos = m.end()
            if new_state is not None:
                enter(statestack, new_state)
        else:
            if pos >= end:
                break
            if text[pos] == "\n":
                statestack = ["root"]
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
