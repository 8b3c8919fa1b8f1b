"""The executor's loop writing the kept tokens straight into columns (no generator per token).

:func:`columns` is :func:`crystal_lsp.text.fastlex.run.run` followed by the filtering of
:func:`crystal_lsp.text.tokens.lex` (no empty or whitespace-only values; no comments unless
asked), fused into one loop: this is the cold scan's hot path. :func:`pure_columns` is that loop
in Python, the reference; the native core's ``lex_columns`` is the same loop in C, installed by
:mod:`crystal_lsp.metric.ngrams` (the one module that selects the native core) through
:func:`set_native_loop`. It handles token-type rules, ``bygroups`` of token types, pops and
pushes itself and calls :func:`step_into` and :func:`~crystal_lsp.text.fastlex.run.move` for
everything else. Its unfiltered twin ``lex_tokens`` (installed by :func:`set_native_tokens`)
runs :func:`run_tokens`, the executor's ``get_tokens`` for lexers with an override (C, C++).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pygments.lexer import Lexer, _PseudoMatch
from pygments.token import Comment, Error, Whitespace, _TokenType

from crystal_lsp.text.fastlex.actions import TypeGroups
from crystal_lsp.text.fastlex.program import (
    CALLBACK,
    GROUPS,
    TOKEN,
    USING,
)
from crystal_lsp.text.fastlex.run import Program, TokenTuple, move, run

Columns = tuple[list[str], list[int], list[_TokenType]]
NativeLoop = Callable[[Any, Lexer, str, Any, tuple[Any, ...]], Columns]
"""``lex_columns(tables, lexer, text, keep_comments, helpers)`` or ``lex_tokens(tables, lexer,
text, stack, helpers)`` of the native core."""

# ``ttype in Comment`` walks the token-type hierarchy; its answer per type never changes.
_COMMENT_TYPES: dict[_TokenType, bool] = {}


def is_comment(ttype: _TokenType) -> bool:
    """Whether a token type is a comment (cached)."""
    found = _COMMENT_TYPES.get(ttype)
    if found is None:
        found = _COMMENT_TYPES[ttype] = ttype in Comment
    return found


def keep_all(out: Columns, tokens: Iterable[TokenTuple], keep_comments: bool) -> None:
    """Append the tokens :func:`crystal_lsp.text.tokens.lex` keeps to the columns ``out``."""
    texts, starts, types = out
    for start, ttype, value in tokens:
        if value and not value.isspace() and (keep_comments or not is_comment(ttype)):
            texts.append(value)
            starts.append(start)
            types.append(ttype)


def step_into(
    out: Columns,
    lexer: Lexer,
    text: str,
    pos: int,
    m: Any,
    group: int,
    step: Any,
    alone: bool,
    keep_comments: bool,
) -> None:
    """The kept tokens of one rule that matched at ``pos`` (for the native loop).

    ``m`` is the segment's match, ``group`` the rule's outer group in it (0 when the rule was
    tried ``alone``); the branches are those of :func:`pure_columns`.
    """
    keep_all(out, _tokens_of(lexer, text, pos, m, group, step, alone), keep_comments)


def raw_step_into(
    out: Columns,
    lexer: Lexer,
    text: str,
    pos: int,
    m: Any,
    group: int,
    step: Any,
    alone: bool,
    keep_comments: bool,
) -> None:
    """:func:`step_into` keeping every token, as :func:`~crystal_lsp.text.fastlex.run.run` yields."""
    texts, starts, types = out
    for start, ttype, value in _tokens_of(lexer, text, pos, m, group, step, alone):
        texts.append(value)
        starts.append(start)
        types.append(ttype)


def _tokens_of(
    lexer: Lexer, text: str, pos: int, m: Any, group: int, step: Any, alone: bool
) -> Iterable[TokenTuple]:
    kind, action, _, own, _, _ = step
    if kind == TOKEN:
        return ((pos, action, m.group(group)),)
    if kind == GROUPS:
        return action(lexer, m, group)  # type: ignore[no-any-return]
    if kind == USING:
        return action(lexer, _PseudoMatch(pos, m.group(group)))  # type: ignore[no-any-return]
    if kind == CALLBACK:
        return action(lexer, m if alone else own(text, pos))  # type: ignore[no-any-return]
    return ()


_HELPERS = (
    is_comment,
    _COMMENT_TYPES,
    step_into,
    move,
    re.Match,
    Error,
    TypeGroups,
    Whitespace,
    raw_step_into,
)
_native_loop: NativeLoop | None = None
_native_tokens: NativeLoop | None = None


def set_native_loop(loop: NativeLoop | None) -> NativeLoop | None:
    """Run :func:`columns` on ``loop`` (None: :func:`pure_columns`); returns the previous one."""
    global _native_loop
    previous, _native_loop = _native_loop, loop
    return previous


def set_native_tokens(loop: NativeLoop | None) -> NativeLoop | None:
    """Run :func:`run_tokens` on ``loop`` (None: Python's ``run``); returns the previous one."""
    global _native_tokens
    previous, _native_tokens = _native_tokens, loop
    return previous


def run_tokens(
    program: Program, lexer: Lexer, text: str, stack: tuple[str, ...] = ("root",)
) -> Iterator[TokenTuple]:
    """:func:`~crystal_lsp.text.fastlex.run.run`, on the native loop when it is installed.

    The native loop lexes the whole text at once; the tokens are the same.
    """
    loop = _native_tokens
    if loop is not None and type(text) is str:
        texts, starts, types = loop(program.tables, lexer, text, stack, _HELPERS)
        return zip(starts, types, texts)
    return run(program, lexer, text, stack)


def native_loop() -> NativeLoop | None:
    """The native loop :func:`columns` runs on, or None (:func:`pure_columns`)."""
    return _native_loop


def columns(program: Program, lexer: Lexer, text: str, keep_comments: bool) -> Columns:
    """The kept tokens' texts, starts and types of ``text`` (module docstring)."""
    loop = _native_loop
    if loop is not None and type(text) is str:
        return loop(program.tables, lexer, text, keep_comments, _HELPERS)
    return pure_columns(program, lexer, text, keep_comments)


def pure_columns(program: Program, lexer: Lexer, text: str, keep_comments: bool) -> Columns:
    """:func:`columns` in Python: the reference and the fallback of the native loop.

    The executor's own token stream (:func:`~crystal_lsp.text.fastlex.run.run`) filtered as
    :func:`crystal_lsp.text.tokens.lex` filters it: one loop to keep exact, the native one fast.
    """
    out: Columns = ([], [], [])
    keep_all(out, run(program, lexer, text), keep_comments)
    return out
