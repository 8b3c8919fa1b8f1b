"""The native loops give exactly the Python loops' output, and Pygments' tokens.

Columns are compared three ways on each text and both ``keep_comments``: the native core's
``lex_columns``, :func:`~crystal_lsp.text.fastlex.columns.pure_columns` (the reference), and
Pygments' own ``get_tokens_unprocessed`` filtered as :func:`crystal_lsp.text.tokens.lex`
filters. Token streams three ways too: the native ``lex_tokens``,
:func:`~crystal_lsp.text.fastlex.run.run` and Pygments.
"""

from __future__ import annotations

import re
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastlex_samples import FRAGMENTS
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import Lexer, RegexLexer, bygroups, default, using
from pygments.lexers import get_all_lexers, get_lexer_by_name
from pygments.lexers.python import PythonLexer
from pygments.token import Comment, Keyword, Name, Operator, Punctuation, String, Text

from crystal_lsp.metric import ngrams
from crystal_lsp.text.fastlex import columns as loop
from crystal_lsp.text.fastlex import get_tokens
from crystal_lsp.text.fastlex.actions import TypeGroups
from crystal_lsp.text.fastlex.run import run
from crystal_lsp.text.fastlex.select import columns_for, program_for
from crystal_lsp.text.lexers import PROGRAMMING_LANGUAGES, lexer_by_language
from crystal_lsp.text.tokens import lex

NATIVE = loop.native_loop()
NATIVE_TOKENS = loop._native_tokens
needs_native = pytest.mark.skipif(
    NATIVE is None, reason=f"native core not in use ({ngrams.native_status()})"
)
pytestmark = needs_native

STDLIB = Path(sysconfig.get_paths()["stdlib"])
# every 5th module of the standard library, offset from test_executor's every 7th
STDLIB_FILES = sorted(STDLIB.glob("*.py"))[2::5]
TEXT = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), min_size=1, max_size=10
).map("".join)


def _pygments_columns(lexer: Lexer, text: str, keep_comments: bool) -> loop.Columns:
    out: loop.Columns = ([], [], [])
    loop.keep_all(out, lexer.get_tokens_unprocessed(text), keep_comments)
    return out


def _native(lexer: Lexer, text: str, keep_comments: bool) -> loop.Columns:
    program = program_for(lexer)
    assert program is not None and NATIVE is not None
    return NATIVE(program.tables, lexer, text, keep_comments, loop._HELPERS)


def _same(lexer: Lexer, text: str) -> None:
    program = program_for(lexer)
    assert program is not None
    for keep_comments in (False, True):
        native = _native(lexer, text, keep_comments)
        assert native == loop.pure_columns(program, lexer, text, keep_comments)
        assert native == _pygments_columns(lexer, text, keep_comments)
    _same_tokens(lexer, text)


def _same_tokens(lexer: Lexer, text: str, stack: tuple[str, ...] = ("root",)) -> None:
    program = program_for(lexer)
    assert program is not None and NATIVE_TOKENS is not None
    texts, starts, types = NATIVE_TOKENS(program.tables, lexer, text, stack, loop._HELPERS)
    native = list(zip(starts, types, texts))
    assert native == list(run(program, lexer, text, stack))
    assert native == list(lexer.get_tokens_unprocessed(text, stack))  # type: ignore[attr-defined]
    assert native == list(loop.run_tokens(program, lexer, text, stack))


def _plain_languages() -> list[str]:
    return sorted(
        n for n in PROGRAMMING_LANGUAGES if columns_for(lexer_by_language(n), "", False) is not None
    )


def test_the_native_loop_follows_the_native_core() -> None:
    assert loop.native_loop() is not None
    previous = ngrams.set_native(False)
    try:
        assert loop.native_loop() is None and loop._native_tokens is None
        lexer = lexer_by_language("python")
        assert lex("x = 1  # c\n", lexer).texts == ["x", "=", "1"]
    finally:
        ngrams.set_native(previous)
    assert loop.native_loop() is not None and loop._native_tokens is not None


def test_the_scan_languages_run_the_native_loop() -> None:
    for name in ("python", "java", "javascript", "typescript"):
        assert name in _plain_languages()


@pytest.mark.parametrize("path", STDLIB_FILES, ids=lambda p: p.name)
def test_stdlib_file_gives_the_same_columns(path: Path) -> None:
    _same(lexer_by_language("python"), path.read_text(encoding="utf-8", errors="replace"))


@pytest.mark.parametrize("language", _plain_languages())
@settings(max_examples=25)
@given(text=TEXT)
def test_generated_text_gives_the_same_columns(language: str, text: str) -> None:
    _same(lexer_by_language(language), text)


@given(text=TEXT)
def test_lex_is_the_same_on_the_pure_loop(text: str) -> None:
    lexer = lexer_by_language("javascript")
    native = lex(text, lexer, keep_comments=True)
    previous = loop.set_native_loop(None)
    try:
        pure = lex(text, lexer, keep_comments=True)
    finally:
        loop.set_native_loop(previous)
    assert (native.texts, native.starts, native.types) == (pure.texts, pure.starts, pure.types)


@pytest.mark.slow
def test_every_plain_compiled_lexer_gives_the_same_columns() -> None:
    text = "".join(FRAGMENTS) + "".join(reversed(FRAGMENTS))
    checked, differing = 0, []
    for alias in sorted(a[0] for _n, a, _f, _m in get_all_lexers() if a):
        lexer = get_lexer_by_name(alias, stripnl=False, ensurenl=False)
        if columns_for(lexer, "", False) is None:
            continue
        checked += 1
        try:
            _same(lexer, text)
        except AssertionError:
            differing.append(alias)
    assert checked >= 300
    assert not differing


def _word_callback(lexer: Any, match: Any) -> Iterator[tuple[int, Any, str]]:
    yield match.start(), Name.Builtin, match.group()


class _Matcher:
    """A rule matcher that is not a compiled pattern's (Pygments allows any callable)."""

    def __init__(self) -> None:
        self.pattern = re.compile(r"@+")

    def __call__(self, text: str, pos: int) -> Any:
        return self.pattern.match(text, pos)


class _Kinds(RegexLexer):
    """Every kind of action and transition the native loop hands over or runs itself."""

    name = "fastlex-native-kinds"
    tokens = {  # noqa: RUF012 - Pygments' class-attribute protocol
        "root": [
            (r"@+", Operator),  # replaced by a _Matcher in one test
            (r"#.*", Comment.Single),
            (r"(def)(\s+)(\w+)?", bygroups(Keyword, Text, Name.Function)),  # TypeGroups
            (r"(<<)([^>]*)(>>)", bygroups(Punctuation, using(PythonLexer), Punctuation)),
            (r"py:[^;\n]*", using(PythonLexer)),
            (r"\$\w+", _word_callback),
            (r"\(", Punctuation, ("string", "inner")),  # a plain push of two states
            (r"\{", Punctuation, "#push"),
            (r"\}", Punctuation, "#pop"),
            (r"'", String, "string"),
            (r"[a-z]+", Name),
            (r"[ \t]+", Text),
        ],
        "inner": [
            (r"\)", Punctuation, "#pop:2"),
            (r"\]", Punctuation, "#pop:3"),
            (r"[a-z]+", Name.Variable),
            (r"[+*]", Operator, ("#push", "root")),
            default("#pop"),
        ],
        "string": [(r"[^'\\\n]+", String), (r"\\.", String.Escape), (r"'", String, "#pop")],
    }


KINDS_TEXT = st.lists(
    st.sampled_from(
        [
            "# note",
            "def  f",
            "def ",
            "<<x = 1 # c>>",
            "py:import os",
            "$abc",
            "(a",
            ")",
            "]",
            "+",
            "{",
            "}",
            "'s\\n'",
            "'open",
            "@@",
            "\n",
            "é",
            "?",
        ]
    )
    | st.text(alphabet="ab( )]{}'\\\n+é\u2028", max_size=6),
    max_size=14,
).map("".join)


@given(text=KINDS_TEXT)
def test_every_kind_of_rule_gives_the_same_columns(text: str) -> None:
    _same(_Kinds(), text)


@given(text=KINDS_TEXT, stack=st.sampled_from([("root", "string"), ("root", "inner", "inner")]))
def test_a_starting_stack_gives_the_same_tokens(text: str, stack: tuple[str, ...]) -> None:
    _same_tokens(_Kinds(), text, stack)


@pytest.mark.parametrize("language", ["c", "cpp"])
@settings(max_examples=40)
@given(text=TEXT)
def test_an_override_runs_on_the_native_tokens(language: str, text: str) -> None:
    lexer = lexer_by_language(language)
    assert columns_for(lexer, "", False) is None
    assert list(get_tokens(lexer, text)) == list(lexer.get_tokens_unprocessed(text))
    previous = loop.set_native_tokens(None)
    try:
        pure = lex(text, lexer, keep_comments=True)
    finally:
        loop.set_native_tokens(previous)
    native = lex(text, lexer, keep_comments=True)
    assert (native.texts, native.starts, native.types) == (pure.texts, pure.starts, pure.types)


def test_plain_bygroups_become_type_groups() -> None:
    program = program_for(_Kinds())
    assert program is not None
    actions = [rule.run_action for rule in program.tables["root"].rules]
    assert isinstance(actions[2], TypeGroups)
    assert not isinstance(actions[3], TypeGroups)


def test_a_matcher_that_is_not_a_pattern_gives_the_same_columns() -> None:
    class Odd(_Kinds):
        name = "fastlex-native-odd"

    lexer = Odd()
    program = program_for(lexer)
    assert program is not None
    table = program.tables["root"]
    first = table.rules[0]
    table.rules[0] = type(first)(
        _Matcher(),
        *(getattr(first, f) for f in ("action", "new_state", "kind", "run_action")),
        None,
        first.starts,
        0,
    )
    _same(lexer, "@@ a @ (b\n@")


def test_a_str_subclass_runs_the_pure_loop() -> None:
    class Source(str):
        pass

    lexer = lexer_by_language("python")
    text = Source("x = 'a'  # c\n")
    assert lex(text, lexer).texts == ["x", "=", "'", "a", "'"]
