"""The fallback to Pygments' own code, per lexer and per rule, and the first-character sets."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pygments.lexer import RegexLexer, bygroups, default, include, using
from pygments.lexers.python import PythonLexer
from pygments.token import Keyword, Name, Punctuation, String, Text

from crystal_lsp.text.fastlex import get_tokens, program_for, select
from crystal_lsp.text.fastlex.firstchars import ASCII, first_chars
from crystal_lsp.text.lexers import lexer_by_language


class _Rules(RegexLexer):
    """Rules the executor cannot combine next to ones it can, and every kind of action."""

    name = "fastlex-rules"
    tokens = {  # noqa: RUF012 - Pygments' class-attribute protocol
        "root": [
            (r"(['\"])(.*?)\1", String),  # a backreference: tried alone
            (r"(?P<kw>if|else)\b", Keyword),  # a named group: tried alone
            (r"(?i)select\b", Keyword.Reserved),  # a global flag: scoped into (?i:...)
            (r"(def)(\s+)(\w+)", bygroups(Keyword, Text, Name.Function)),
            (r"<<", Punctuation, "python"),
            include("words"),
            (r"\{", Punctuation, "#push"),
            (r"\}", Punctuation, "#pop"),
            (r"\s+", Text),
        ],
        "words": [(r"[a-z]+", Name), (r"\d+", Name.Constant)],
        "python": [(r">>", Punctuation, "#pop"), (r"[^>]+", using(PythonLexer)), default("#pop")],
    }


class _Override(RegexLexer):
    """An override the executor cannot see into (``super()``): the whole lexer falls back."""

    name = "fastlex-override"
    tokens = {"root": [(r"\w+", Name), (r"\s+", Text)]}  # noqa: RUF012

    def get_tokens_unprocessed(self, text, stack=("root",)):  # type: ignore[no-untyped-def]
        for index, token, value in super().get_tokens_unprocessed(text, stack):
            yield index, (Keyword if value == "x" else token), value


RULES_TEXT = st.lists(
    st.sampled_from(["'a'", '"b"', "if", "else", "SeLeCt", "def  f", "<<x = 1>>", "{", "}"])
    | st.text(alphabet="ab1 \n{}<>'\"Sé\u212a", max_size=6),
    max_size=12,
).map(" ".join)


def test_uncombinable_rules_are_tried_alone_in_order() -> None:
    program = program_for(_Rules())
    assert program is not None
    sources = [rule.source for rule in program.tables["root"].rules]
    assert sources[0] is None and sources[1] is None
    assert sources[2] == r"(?i:select\b)"
    assert all(source is not None for source in sources[3:])


@given(text=RULES_TEXT)
def test_rules_lexer_gives_pygments_tokens(text: str) -> None:
    lexer = _Rules()
    assert list(get_tokens(lexer, text)) == list(lexer.get_tokens_unprocessed(text))


def test_an_override_it_cannot_rebind_falls_back() -> None:
    lexer = _Override()
    assert program_for(lexer) is None
    assert select.runner_for(lexer) is select._pygments
    assert [t[1] for t in get_tokens(lexer, "x y")] == [Keyword, Text, Name]


def test_extended_regex_lexers_fall_back() -> None:
    ruby = lexer_by_language("ruby")
    assert program_for(ruby) is None
    text = "def f(x) = x * 2 # ruby\n"
    assert list(get_tokens(ruby, text)) == list(ruby.get_tokens_unprocessed(text))


def test_c_family_override_runs_rebound() -> None:
    c = lexer_by_language("c")
    runner = select.runner_for(c)
    assert runner not in (select._pygments, select._plain)
    text = "size_t n = sizeof(int); uint8_t b;\n"
    assert list(get_tokens(c, text)) == list(c.get_tokens_unprocessed(text))


def test_a_listed_lexer_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(select, "FALLBACK_LEXERS", frozenset({"JavaLexer"}))
    monkeypatch.setattr(select, "_PROGRAMS", {})
    monkeypatch.setattr(select, "_RUNNERS", {})
    java = lexer_by_language("java")
    assert program_for(java) is None
    assert select.runner_for(java) is select._pygments


@pytest.mark.parametrize("language", ["python", "java", "javascript", "c", "cpp", "sql"])
def test_first_characters_are_an_over_approximation(language: str) -> None:
    """A rule left out of a character's bucket never matches text starting with it."""
    lexer = lexer_by_language(language)
    samples = ["", " ", "a", "0", "x = 1", "\n", "/*", "'", '"', "=="]
    for entries in lexer._tokens.values():
        for rexmatch, _action, _new in entries:
            pattern = rexmatch.__self__
            starts = first_chars(pattern)
            for code in ASCII - starts:
                for rest in samples:
                    assert pattern.match(chr(code) + rest) is None, (pattern.pattern, chr(code))


def test_first_characters_of_simple_patterns() -> None:
    assert first_chars(re.compile(r"ab|c")) == {ord("a"), ord("c")}
    assert first_chars(re.compile(r"(?i)k")) == {ord("k"), ord("K")}
    assert first_chars(re.compile("(?i)\u212a")) == ASCII  # KELVIN SIGN matches "k"
    assert re.compile("(?i)\u212a").match("k")
    assert first_chars(re.compile(r"[a-c]?d")) == {ord(c) for c in "abcd"}
    assert first_chars(re.compile(r"x*")) == ASCII  # can match empty
    assert first_chars(re.compile(r"(?=a)b")) == {ord("b")}
