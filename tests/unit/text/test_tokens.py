"""Tokens with offsets: what is kept, what is dropped, and that offsets index the raw source."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.token import Comment, Name, String

from crystal_lsp import Token, Tokens, tokenize
from crystal_lsp.text.lexers import resolve_lexer
from crystal_lsp.text.lexinput import raw_end
from crystal_lsp.text.tokens import lex, token_texts

FRAGMENTS = [
    "\r\n", "\n", "\r", "\t", " ", "  ", "\u00a0", "\u2028", "\f", "\v",
    "def", "class", "x", "y1", "_", "=", "==", "+", "->", "=>", ":", ";", ",", ".",
    "(", ")", "[", "]", "{", "}", "'", '"', '"""', "`", "\\", "#", "//", "/*", "*/", "<!--",
    "0", "42", "0x1F", "1.5e3", "@", "$", "%", "é", "中文", "😀", "🇩🇪", "\u0301", "\x00",
]  # fmt: skip
source_text = st.tuples(
    st.lists(st.sampled_from(["", "\n", "\r\n", "  \n", "\t\n"]), max_size=3).map("".join),
    st.one_of(
        st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join),
        st.text(max_size=60),
    ),
).map("".join)
LANGUAGES = ["python", "java", "javascript", "c", "cpp", "go", "rust", "generic", None]


def assert_offsets_index_source(tokens: Tokens, source: str) -> None:
    """Tokens start where their text starts in the raw source (line ends there may be CRLF/CR)."""
    previous_end = 0
    for token in tokens:
        end = raw_end(source, token.start, token.text)
        covered = source[token.start : end].replace("\r\n", "\n").replace("\r", "\n")
        # a token may end with the line end Pygments appends to a text without one
        assert covered == token.text or (end == len(source) and covered + "\n" == token.text)
        assert token.end == token.start + len(token.text)
        assert token.start >= previous_end
        previous_end = end
        assert token.text and not token.text.isspace()


@settings(max_examples=150)
@given(source=source_text, language=st.sampled_from(LANGUAGES), keep=st.booleans())
def test_every_token_indexes_the_raw_source(source: str, language: str | None, keep: bool) -> None:
    tokens = tokenize(source, language, keep_comments=keep)
    assert_offsets_index_source(tokens, source)
    if not keep:
        assert not any(t.type in Comment for t in tokens)


@pytest.mark.parametrize(
    ("source", "language", "expected"),
    [
        pytest.param("x = f(1)  # note", "python", ["x", "=", "f", "(", "1", ")"], id="doctest"),
        pytest.param(
            "int a = 1; // c\n/* d */ return a;",
            "java",
            ["int", "a", "=", "1", ";", "return", "a", ";"],
            id="java-comments",
        ),
        pytest.param(
            "\n\n\tif (x) {\r\n  y();\r\n}\r\n",
            "c",
            ["if", "(", "x", ")", "{", "y", "(", ")", ";", "}"],
            id="crlf-tabs-leading-blank-lines",
        ),
        pytest.param(
            'name = "café 😀"', "python", ["name", "=", '"', "café 😀", '"'], id="unicode-string"
        ),
        pytest.param(
            "foo(bar, 0x1F) -> baz;",
            "generic",
            ["foo", "(", "bar", ",", "0x1F", ")", "->", "baz", ";"],
            id="generic",
        ),
    ],
)
def test_token_texts(source: str, language: str, expected: list[str]) -> None:
    assert tokenize(source, language).texts == expected


def test_comments_are_kept_on_request() -> None:
    source = "x = 1  # the answer\n# alone\n"
    plain = tokenize(source, "python")
    kept = tokenize(source, "python", keep_comments=True)
    assert "# the answer" not in plain.texts
    assert [t.text for t in kept if t.type in Comment] == ["# the answer", "# alone"]
    assert_offsets_index_source(kept, source)


def test_offsets_with_leading_newlines_and_crlf() -> None:
    source = "\r\n\n  x\r\n = 'é😀'\r\n"
    tokens = tokenize(source, "python")
    assert tokens[0] == Token("x", source.index("x"), Name)
    assert_offsets_index_source(tokens, source)


BROKEN = [
    pytest.param("s = 'unterminated\nx = 1\n", "python", id="python-unterminated-string"),
    pytest.param('String s = "oops;\nint y = 2;\n', "java", id="java-unterminated-string"),
    pytest.param("def f(:\n    return ((]\n", "python", id="python-unbalanced"),
    pytest.param("class A { void f( { } } } ) ]", "java", id="java-unbalanced"),
    pytest.param('"""docstring without end\n', "python", id="python-unterminated-docstring"),
    pytest.param("`template ${x", "javascript", id="js-unterminated-template"),
    pytest.param("'\"`", "generic", id="generic-unterminated-quotes"),
]


@pytest.mark.parametrize(("source", "language"), BROKEN)
def test_broken_code_still_tokenizes(source: str, language: str) -> None:
    tokens = tokenize(source, language)
    assert len(tokens) > 0
    assert_offsets_index_source(tokens, source)


def test_unterminated_comment_swallows_the_rest() -> None:
    source = "int y;\n/* never closed\nint x;"
    assert tokenize(source, "c").texts == ["int", "y", ";"]
    kept = tokenize(source, "c", keep_comments=True)
    assert kept.texts[:3] == ["int", "y", ";"]
    # the comment runs to the end, which is the line end Pygments appends
    assert "".join(kept.texts[3:]) == "/* never closed\nint x;\n"
    assert_offsets_index_source(kept, source)


def test_unterminated_generic_string_is_one_token() -> None:
    tokens = tokenize("x = 'abc", "generic")
    assert tokens.texts == ["x", "=", "'abc"]
    assert tokens.types[-1] in String


@pytest.mark.parametrize("seed", range(6))
def test_random_bytes_decoded_still_tokenize(seed: int) -> None:
    rng = random.Random(seed)
    data = bytes(rng.randrange(256) for _ in range(400))
    source = data.decode("utf-8", errors="replace")
    for language in ("python", "java", "generic", None):
        assert_offsets_index_source(tokenize(source, language), source)


def test_tokens_sequence_api() -> None:
    source = "a = b + 1"
    tokens = tokenize(source, "python")
    assert len(tokens) == 5
    assert tokens[0] == Token("a", 0, tokens.types[0])
    assert tokens[-1].text == "1"
    assert [t.text for t in tokens] == tokens.texts == ["a", "=", "b", "+", "1"]
    assert list(tokens)[2] == tokens[2]
    head = tokens[1:3]
    assert isinstance(head, Tokens)
    assert head.texts == ["=", "b"] and head.starts == [2, 4]
    assert head.language == tokens.language == "python"
    assert tokens[::2].texts == ["a", "b", "1"]
    assert "Tokens(python, 5 tokens)" == repr(tokens)
    assert tokens == tokenize(source, "python")
    assert tokens != tokenize("a = b + 2", "python")
    assert tokens != tokens.texts  # a Tokens is not equal to a plain list
    assert tokens.index(tokens[2]) == 2
    assert Token("b", 4, tokens.types[2]) in tokens
    with pytest.raises(IndexError):
        tokens[5]
    with pytest.raises(TypeError):
        hash(tokens)


def test_tokens_equality_ignores_nothing_but_language() -> None:
    a = Tokens(["x"], [0], [Name], "python")
    assert a == Tokens(["x"], [0], [Name], "generic")
    assert a != Tokens(["x"], [1], [Name], "python")
    assert a != Tokens(["x"], [0], [String], "python")


def test_empty_source() -> None:
    tokens = tokenize("", "python")
    assert len(tokens) == 0 and list(tokens) == [] and tokens.texts == []
    assert not tokenize("   \n\t\r\n", "java")


def test_tokenize_uses_filename_and_records_language() -> None:
    assert tokenize("int x;", filename="A.java").language == "java"
    assert tokenize("zz", filename="x.unknownext").language == "generic"


def test_lex_with_a_given_lexer_and_token_texts() -> None:
    tokens = lex("a+b", resolve_lexer("c"))
    assert token_texts(tokens) is tokens.texts
    plain = ["a", "+"]
    assert token_texts(plain) is plain
