"""Which lexers the executor runs, and how: the fallback to Pygments' own code per lexer.

A plain ``RegexLexer`` (not overriding ``get_tokens_unprocessed``) is compiled. A lexer whose
override post-processes ``RegexLexer.get_tokens_unprocessed(self, text, stack)`` (C, C++, Lua,
PHP, Elixir, Swift) runs Pygments' override itself with that one name rebound to the executor.
Everything else -- ``ExtendedRegexLexer`` (Ruby, Crystal), delegating lexers, overrides calling
``super()`` or another lexer, the lexers of :data:`FALLBACK_LEXERS` -- runs Pygments' own loop.
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pygments.lexer import Lexer, RegexLexer

from crystal_lsp.text.fastlex.columns import Columns, columns, run_tokens
from crystal_lsp.text.fastlex.program import StateTable, compile_rule
from crystal_lsp.text.fastlex.run import Program, TokenTuple
from crystal_lsp.text.fastlex.tables import tables_for

FALLBACK_LEXERS: frozenset[str] = frozenset()
"""Lexer classes (by name) the executor must not run: their tokens were found to differ."""

Runner = Callable[..., Iterator[TokenTuple]]

_PROGRAMS: dict[type, Program | None] = {}
_RUNNERS: dict[type, Runner] = {}


def enabled() -> bool:
    """Whether the executor is on (``CRYSTAL_LSP_FASTLEX=0`` turns it off)."""
    return os.environ.get("CRYSTAL_LSP_FASTLEX", "1") != "0"


def program_for(lexer: Lexer) -> Program | None:
    """The compiled states of a lexer's class, or None when its rules must run in Pygments."""
    cls = type(lexer)
    if cls not in _PROGRAMS:
        _PROGRAMS[cls] = _compile(lexer) if _compilable(cls) else None
    return _PROGRAMS[cls]


def _compilable(cls: type) -> bool:
    if not issubclass(cls, RegexLexer) or cls.__name__ in FALLBACK_LEXERS:
        return False
    method = cls.get_tokens_unprocessed  # type: ignore[attr-defined]
    return method is RegexLexer.get_tokens_unprocessed or _rebindable(method)


def _compile(lexer: Lexer) -> Program:
    flags = type(lexer).flags
    stored = tables_for(type(lexer))
    tables = {
        state: StateTable(
            [compile_rule(rex, act, new, flags, runner_for, stored) for rex, act, new in entries],
            flags,
            stored.compile,
            stored.has,
        )
        for state, entries in lexer._tokens.items()
    }
    return Program(tables)


def _rebindable(method: Any) -> bool:
    """Whether an override reaches the rule loop only as ``RegexLexer.get_tokens_unprocessed``."""
    code = getattr(method, "__code__", None)
    if code is None or code.co_freevars or method.__closure__:
        return False
    names = set(code.co_names)
    return "RegexLexer" in names and not names & {"super", "isinstance", "issubclass", "type"}


class _Loop:
    """Stands in for ``RegexLexer`` in a rebound override: its loop is the executor's."""

    @staticmethod
    def get_tokens_unprocessed(
        lexer: Lexer, text: str, stack: Sequence[str] = ("root",)
    ) -> Iterator[TokenTuple]:
        program = program_for(lexer)
        assert program is not None
        return run_tokens(program, lexer, text, tuple(stack))


def _rebound(method: Any) -> Runner:
    function = types.FunctionType(
        method.__code__,
        {**method.__globals__, "RegexLexer": _Loop},
        method.__name__,
        method.__defaults__,
        method.__closure__,
    )
    function.__kwdefaults__ = method.__kwdefaults__
    return function  # type: ignore[return-value]


def _pygments(lexer: Lexer, text: str, **kwargs: Any) -> Iterator[TokenTuple]:
    return lexer.get_tokens_unprocessed(text, **kwargs)  # type: ignore[no-any-return]


def _plain(lexer: Lexer, text: str, stack: Sequence[str] = ("root",)) -> Iterator[TokenTuple]:
    program = program_for(lexer)
    assert program is not None
    return run_tokens(program, lexer, text, tuple(stack))


def runner_for(lexer: Lexer) -> Runner:
    """How to lex with ``lexer``: the executor, a rebound override, or Pygments' own method."""
    if not enabled():
        return _pygments
    cls = type(lexer)
    found = _RUNNERS.get(cls)
    if found is None:
        if program_for(lexer) is None:
            found = _pygments
        elif cls.get_tokens_unprocessed is RegexLexer.get_tokens_unprocessed:
            found = _plain
        else:
            found = _rebound(cls.get_tokens_unprocessed)
        _RUNNERS[cls] = found
    return found


def get_tokens(lexer: Lexer, text: str) -> Iterator[TokenTuple]:
    """``lexer.get_tokens_unprocessed(text)``, on the executor whenever it can run the lexer."""
    return runner_for(lexer)(lexer, text)


def columns_for(lexer: Lexer, text: str, keep_comments: bool) -> Columns | None:
    """The kept tokens of ``text`` as columns, or None.

    None unless the executor runs ``lexer`` without an override (a plain ``RegexLexer``); see
    :mod:`crystal_lsp.text.fastlex.columns`.
    """
    if runner_for(lexer) is not _plain:
        return None
    program = program_for(lexer)
    assert program is not None
    return columns(program, lexer, text, keep_comments)
