"""The first characters of the character sets of the lexers the index uses: read per set item
(``_charset``) as the old code read them per character code (``loop_references``)."""

from __future__ import annotations

import re
from typing import Any

import loop_references as ref
import pytest
from pygments.lexer import RegexLexer

from crystal_lsp.text.fastlex.firstchars import _C, _charset, sre_parse
from crystal_lsp.text.lexers import PROGRAMMING_LANGUAGES, lexer_by_language

LANGUAGES = sorted(PROGRAMMING_LANGUAGES)


def _charsets(items: Any, flags: int) -> list[tuple[list[Any], int]]:
    """Every ``IN`` item of a parsed pattern, with the flags in force there."""
    out: list[tuple[list[Any], int]] = []
    for op, arg in items:
        if op is _C.IN:
            out.append((list(arg), flags))
        elif op is _C.SUBPATTERN:
            out += _charsets(arg[3], (flags | arg[1]) & ~arg[2])
        elif op is _C.BRANCH:
            for alternative in arg[1]:
                out += _charsets(alternative, flags)
        elif op in (_C.MAX_REPEAT, _C.MIN_REPEAT, getattr(_C, "POSSESSIVE_REPEAT", None)):
            out += _charsets(arg[2], flags)
        elif op is getattr(_C, "ATOMIC_GROUP", None) or op in (_C.ASSERT, _C.ASSERT_NOT):
            out += _charsets(
                arg if op is not _C.ASSERT and op is not _C.ASSERT_NOT else arg[1], flags
            )
    return out


@pytest.mark.parametrize("chunk", range(2))
def test_character_sets_of_the_programming_languages(chunk: int) -> None:
    seen: set[Any] = set()
    for language in LANGUAGES[chunk::2]:
        lexer = lexer_by_language(language)
        if not isinstance(lexer, RegexLexer):
            continue
        for entries in lexer._tokens.values():
            for rexmatch, _action, _new in entries:
                pattern = getattr(rexmatch, "__self__", None)
                if not isinstance(pattern, re.Pattern) or not isinstance(pattern.pattern, str):
                    continue
                try:
                    parsed = sre_parse.parse(pattern.pattern, pattern.flags)
                except Exception:
                    continue
                for items, flags in _charsets(list(parsed), pattern.flags):
                    key = (repr(items), flags)  # lexers share most of their sets
                    if key in seen:
                        continue
                    seen.add(key)
                    assert _charset(items, flags) == ref.first_chars_charset(items, flags), (
                        language,
                        pattern.pattern,
                    )
    assert len(seen) > 300
