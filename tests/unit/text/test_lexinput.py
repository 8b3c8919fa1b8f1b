"""Tokens equal what Pygments gives the reference, whatever the line ends; offsets stay raw.

The reference (``crystalbleu``'s evaluation scripts) lexes with ``lexer.get_tokens(code)`` and
Pygments' default options, keeping every token that is not empty, whitespace (``\\s+``) or a
comment. Files are generated in every variant Pygments changes before lexing: LF, CRLF, CR and
mixed line ends, no final line end or several, leading blank lines, a byte-order mark, form feeds.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.token import Comment

from crystal_lsp.text.entries import lex_file
from crystal_lsp.text.fastlex import columns as loop
from crystal_lsp.text.lexers import lexer_by_language
from crystal_lsp.text.lexinput import lex_input, raw_end, unify_line_ends
from crystal_lsp.text.tokens import Tokens, lex

DATA = Path(__file__).resolve().parents[2] / "data" / "lexing"
WS = re.compile(r"\s+")
LANGUAGES = ["python", "java", "c", "cpp", "javascript", "go", "rust"]

LINES = {
    "python": [
        "def f(a, b=2):",
        '    """Doc',
        '    string.    """',
        "    return a + b  # note",
        "x = '''multi",
        "line''' + r'\\d'",
        "if x: \\",
        "    pass",
        "# a comment",
        "\tclass A: pass",
    ],
    "java": [
        "class A {",
        "  /* block",
        "     comment */ int x = 1;",
        '  String s = "a\\"b";',
        "  // line comment",
        "  void f() { return; }",
        "}",
        "// trailing comment words",
    ],
    "c": [
        "#include <stdio.h>",
        "#define MAX(a, b) \\",
        "    ((a) > (b) ? (a) : (b))",
        "int main() {",
        '  printf("%d\\n", MAX(1, 2));',
        "  return 0; /* done */",
        "}",
        "// trailing comment words",
    ],
    "cpp": [
        "#include <vector>",
        "#define SQ(x) \\",
        "  ((x) * (x))",
        "template <class T> T f(T t) { return SQ(t); }",
        "// c++ comment",
        'auto s = R"(raw)";',
    ],
    "javascript": [
        "const re = /ab+c/g;",
        "function f(a) { return `t ${a}`; }",
        "// comment",
        "/* block */ let x = 1;",
    ],
    "go": ["package main", "func main() {", '\tfmt.Println("x") // c', "}"],
    "rust": ["fn main() {", "    let r = 'a'; // c", '    /* b */ println!("x");', "}"],
}
ENDS = ["\n", "\r\n", "\r"]


def reference_tokens(lexer: Lexer, code: str) -> list[str]:
    """The reference's tokens: Pygments' defaults, no whitespace, no comments."""
    fresh = get_lexer_by_name(lexer.aliases[0])
    return [v for t, v in fresh.get_tokens(code) if v and not (WS.fullmatch(v) or t in Comment)]


def assert_offsets_index_source(tokens: Tokens, source: str) -> None:
    """Each token starts where its text starts in the raw source and covers its text there."""
    previous_end = 0
    for token in tokens:
        end = raw_end(source, token.start, token.text)
        covered = source[token.start : end].replace("\r\n", "\n").replace("\r", "\n")
        appended = end == len(source) and covered + "\n" == token.text
        assert covered == token.text or appended, (token, source[token.start : end])
        assert token.start >= previous_end
        previous_end = end


@st.composite
def files(draw: st.DrawFn, language: str) -> str:
    """A file of ``language`` lines in one variant of line ends, margins and marks."""
    lines = draw(st.lists(st.sampled_from(LINES[language]), min_size=1, max_size=12))
    style = draw(st.sampled_from(["lf", "crlf", "cr", "mixed"]))
    if style == "mixed":
        ends = [draw(st.sampled_from(ENDS)) for _ in lines]
    else:
        ends = [{"lf": "\n", "crlf": "\r\n", "cr": "\r"}[style]] * len(lines)
    body = "".join(line + end for line, end in zip(lines, ends))
    if draw(st.booleans()):
        body = body.replace(ends[0], "\f" + ends[0], 1)  # a form feed before a line end
    final = draw(st.sampled_from(["none", "one", "several"]))
    if final == "none":
        body = body[: -len(ends[-1])]
    elif final == "several":
        body += draw(st.sampled_from(["\n\n", "\r\n\r\n", "\n\r\n \n"]))
    lead = draw(st.sampled_from(["", "\n", "\r\n\r\n", "\n\f\n"]))
    bom = draw(st.sampled_from(["", "\ufeff"]))
    return bom + lead + body


@pytest.fixture(params=["native", "python", "pygments"])
def loops(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Lex with the native loop, the pure Python loop, or Pygments' own loop."""
    if request.param == "python":
        previous = loop.set_native_loop(None)
        yield request.param
        loop.set_native_loop(previous)
        return
    if request.param == "pygments":
        monkeypatch.setenv("CRYSTAL_LSP_FASTLEX", "0")
    yield request.param


@pytest.mark.parametrize("language", LANGUAGES)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_tokens_equal_the_reference_in_every_variant(language: str, data: st.DataObject) -> None:
    source = data.draw(files(language))
    lexer = lexer_by_language(language)
    tokens = lex(source, lexer)
    assert tokens.texts == reference_tokens(lexer, source)
    assert_offsets_index_source(tokens, source)
    assert_offsets_index_source(lex(source, lexer, keep_comments=True), source)


@pytest.mark.parametrize("language", ["python", "c", "java"])
def test_every_loop_gives_the_reference_tokens(language: str, loops: str) -> None:
    lexer = lexer_by_language(language)
    body = "\n".join(LINES[language])
    for source in (body, body.replace("\n", "\r\n"), "\ufeff\r\n" + body + "\r\n\r\n"):
        tokens = lex(source, lexer)
        assert tokens.texts == reference_tokens(lexer, source), loops
        assert_offsets_index_source(tokens, source)


PREPARE = st.lists(
    st.sampled_from(["\r\n", "\r", "\n", "\ufeff", "\f", " ", "x", "é", "\\", "\n\r"]), max_size=20
).map("".join)


@settings(max_examples=400)
@given(source=PREPARE)
def test_prepared_text_is_pygments_own(source: str) -> None:
    prepared = lex_input(source)
    assert prepared.text == get_lexer_by_name("python")._preprocess_lexer_input(source)
    # every offset of the prepared text maps to the source character it came from
    for q, char in enumerate(prepared.text):
        raw = prepared.raw_offset(q)
        if raw == len(source):
            assert q == len(prepared.text) - 1 and char == "\n"  # the appended line end
        elif char == "\n":
            assert source[raw] in "\r\n"
            if source[raw] == "\r" and source.startswith("\r\n", raw):
                assert prepared.raw_offset(q + 1) in (raw + 2, len(source))
        else:
            assert source[raw] == char
    starts = list(range(len(prepared.text)))
    assert prepared.raw_starts(starts) == [prepared.raw_offset(q) for q in starts]


@pytest.mark.parametrize(
    ("source", "language", "expected"),
    [
        pytest.param(
            "int main() {\n  return 0;\n}\n// trailing comment words",
            "c",
            ["int", "main", "(", ")", "{", "return", "0", ";", "}"],
            id="c-comment-on-a-last-line-without-line-end",
        ),
        pytest.param(
            "#define X \\\r\n  1 + 2\r\nint y;\r\n",
            "c",
            ["int", "y", ";"],
            id="c-continued-define-with-crlf",
        ),
        pytest.param(
            '\ufeffdef f():\r\n    """a\r\n    b"""\r\n',
            "python",
            ["def", "f", "(", ")", ":", '"""a\n    b"""'],
            id="python-crlf-docstring-with-bom",
        ),
    ],
)
def test_the_cases_that_differed(source: str, language: str, expected: list[str]) -> None:
    lexer = lexer_by_language(language)
    tokens = lex(source, lexer)
    assert tokens.texts == expected == reference_tokens(lexer, source)
    assert_offsets_index_source(tokens, source)


def test_committed_dataset_sample_equals_the_reference() -> None:
    rows = [json.loads(line) for line in (DATA / "gcj_java_sample.jsonl").open(encoding="utf-8")]
    assert len(rows) == 5
    for row in rows:
        lexer = lexer_by_language(row["lang"])
        tokens = lex(row["code"], lexer)
        assert tokens.texts == reference_tokens(lexer, row["code"]), row["id"]
        assert_offsets_index_source(tokens, row["code"])


def test_raw_end_spans_crlf_inside_a_token() -> None:
    source = 'def f():\r\n    """a\r\n    bc"""\r\n'
    tokens = lex(source, lexer_by_language("python"))
    doc = next(t for t in tokens if "\n" in t.text)
    assert doc.text == '"""a\n    bc"""'
    assert source[doc.start : raw_end(source, doc.start, doc.text)] == '"""a\r\n    bc"""'
    assert doc.end == raw_end(source, doc.start, doc.text) - 1  # one \r inside


SHARED = Path(os.environ.get("CRYSTAL_BENCH_DATA", "/work/shared/data")) / "gcj_java"


@pytest.mark.slow
@pytest.mark.skipif(not (SHARED / "items.jsonl.gz").exists(), reason="the shared sets are not here")
def test_every_file_of_a_shared_set_equals_the_reference() -> None:
    """gcj_java, all 1,665 programs (3 end in a comment without a line end, 995 use CRLF);
    bench/exactness_bench.py does all three shared sets and the standard library."""
    with gzip.open(SHARED / "items.jsonl.gz", "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    lexer = lexer_by_language("java")
    differ = [
        r["id"] for r in rows if lex(r["code"], lexer).texts != reference_tokens(lexer, r["code"])
    ]
    assert len(rows) == 1665 and differ == []


@settings(max_examples=400)
@given(source=PREPARE)
def test_unified_line_ends_keep_offsets_lines_and_pygments_text(source: str) -> None:
    # issue 33: one line-numbering rule (the LSP's \r\n, \r, \n), tokens still Pygments'
    unified = unify_line_ends(source)
    assert len(unified) == len(source)
    assert unified.count("\n") == len(re.findall(r"\r\n|\r|\n", source))
    assert lex_input(unified).text == lex_input(source).text


@pytest.mark.parametrize("language", LANGUAGES)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_indexed_tokens_of_every_line_end_variant_are_the_reference(
    language: str, data: st.DataObject
) -> None:
    source = data.draw(files(language))
    lexer = lexer_by_language(language)
    _, heavy = lex_file(f"x.{lexer.filenames[0].split('.')[-1]}", source, language)
    assert list(heavy.texts) == reference_tokens(lexer, source)
    # each token's line is the LSP line of its start in the raw source
    for start, line in zip(heavy.starts, heavy.lines):
        assert line == len(re.findall(r"\r\n|\r|\n", source[:start]))  # 0-based
