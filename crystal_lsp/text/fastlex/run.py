"""The executor's loop: Pygments' ``RegexLexer.get_tokens_unprocessed`` over dispatch tables.

Step for step the same as Pygments 2.17-2.21: at each position the first rule of the current
state that matches wins, its action yields the tokens (token type, ``bygroups``, ``using`` or any
callback, called with the rule's own match object), its transition moves the state stack; with no
match a newline resets to ``root`` and anything else is an ``Error`` character.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pygments.lexer import Lexer, _PseudoMatch
from pygments.token import Error, Whitespace, _TokenType

from crystal_lsp.text.fastlex.program import (
    CALLBACK,
    GROUPS,
    NON_ASCII,
    POPS,
    PUSHES,
    TOKEN,
    USING,
    StateTable,
    Step,
)

TokenTuple = tuple[int, _TokenType, str]


@dataclass
class Program:
    """The compiled states of one lexer class."""

    tables: dict[str, StateTable]


def enter(statestack: list[str], new_state: Any) -> None:
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


def move(statestack: list[str], trans: int, new_state: Any) -> None:
    """A rule's state transition of kind ``trans`` (the common ones without :func:`enter`)."""
    if trans == POPS:
        if -new_state >= len(statestack):
            del statestack[1:]
        else:
            del statestack[new_state:]
    elif trans == PUSHES:
        statestack.extend(new_state)
    else:
        enter(statestack, new_state)


def next_match(table: StateTable, text: str, pos: int) -> tuple[Step, re.Match[str]] | None:
    """The step of the first rule of a state matching at ``pos``, and the rule's own match."""
    code = ord(text[pos]) if pos < len(text) else NON_ASCII
    for match, steps, step in table.bucket(code if code < NON_ASCII else NON_ASCII):
        m = match(text, pos)
        if m is not None:
            if steps is None:
                return step, m  # type: ignore[return-value]
            found = steps[m.lastindex]  # type: ignore[index]
            return found, found[3](text, pos)  # type: ignore[return-value]
    return None


def run(
    program: Program, lexer: Lexer, text: str, stack: tuple[str, ...] = ("root",)
) -> Iterator[TokenTuple]:
    """``lexer.get_tokens_unprocessed(text, stack)`` on the compiled ``program``."""
    tables = program.tables
    statestack = list(stack)
    table = tables[statestack[-1]]
    buckets = table.buckets
    pos, end = 0, len(text)
    while True:
        code = ord(text[pos]) if pos < end else NON_ASCII
        if code > NON_ASCII:
            code = NON_ASCII
        bucket = buckets[code]
        if bucket is None:
            bucket = table.bucket(code)
        for match, steps, step in bucket:
            m = match(text, pos)
            if m is None:
                continue
            if steps is None:
                kind, action, new_state, own, _, trans = step  # type: ignore[misc]
                group = 0
            else:
                group = m.lastindex  # type: ignore[assignment]
                kind, action, new_state, own, _, trans = steps[group]  # type: ignore[index]
            if kind == TOKEN:
                yield pos, action, m.group(group)
            elif kind == GROUPS:
                yield from action(lexer, m, group)
            elif kind == USING:
                yield from action(lexer, _PseudoMatch(pos, m.group(group)))
            elif kind == CALLBACK:
                yield from action(lexer, m if steps is None else own(text, pos))
            pos = m.end()
            if trans:
                move(statestack, trans, new_state)
                table = tables[statestack[-1]]
                buckets = table.buckets
            break
        else:
            if pos >= end:
                break
            if text[pos] == "\n":
                statestack = ["root"]
                table = tables["root"]
                buckets = table.buckets
                yield pos, Whitespace, "\n"
            else:
                yield pos, Error, text[pos]
            pos += 1
