"""Token categories and the normalized view; renaming invariance as a property."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scan_samples import ORIGINAL, UNRELATED, renamed

from crystal_lsp.text.fingerprints import shingles
from crystal_lsp.text.tokens import tokenize
from crystal_lsp.text.views import NUM, STR, categories, normalized, normalized_positions


def cats_of(source: str, language: str, **kwargs: bool) -> list[tuple[str, str]]:
    tokens = tokenize(source, language, **kwargs)
    return list(zip(tokens.texts, categories(tokens.texts, tokens.types)))


def view(source: str, language: str) -> list[str]:
    tokens = tokenize(source, language)
    return normalized(tokens.texts, categories(tokens.texts, tokens.types))


@pytest.mark.parametrize(
    ("source", "language", "expected"),
    [
        pytest.param(
            "x.append(len(y), 3.5)",
            "python",
            "NOAPBPNPPMP",
            id="python-member-builtin-number",
        ),
        pytest.param("def f(self): pass", "python", "KNPBPPK", id="python-keyword-self"),
        pytest.param("s = 'a'  # note", "python", "NOSSSC", id="python-comment-kept"),
        pytest.param("a?.b(this.c)", "javascript", "NOPAPKPAP", id="js-optional-chain"),
        pytest.param('System.out.println("x" + 1);', "java", "NPAPAPSSSOMPP", id="java-chain"),
        pytest.param("a::b(c)", "rust", "NPAPNP", id="rust-path"),
        pytest.param("p.x = q;", "c", "NPAONP", id="c-dot"),
    ],
)
def test_categories(source: str, language: str, expected: str) -> None:
    found = cats_of(source, language, keep_comments=True)
    assert "".join(c for _, c in found) == expected


@pytest.mark.parametrize(
    ("source", "language", "member"),
    [
        pytest.param("p->x = 1;", "c", "x", id="c-arrow"),
        pytest.param("A::b(1);", "cpp", "b", id="cpp-scope"),
    ],
)
def test_member_after_two_character_operators(source: str, language: str, member: str) -> None:
    assert [t for t, c in cats_of(source, language) if c == "A"] == [member]
    assert member in view(source, language)


def test_categories_per_token_and_cached_types() -> None:
    tokens = tokenize("a = b\nc = d\n", "python")
    assert len(categories(tokens.texts, tokens.types)) == len(tokens)
    assert categories([], []) == ""


@pytest.mark.parametrize(
    ("source", "language", "expected"),
    [
        pytest.param(
            "x.append(len(y), 3.5)",
            "python",
            ["ID", ".", "append", "(", "len", "(", "ID", ")", ",", NUM, ")"],
            id="names-and-numbers",
        ),
        pytest.param('"a" "b"', "python", [STR], id="adjacent-strings-collapse"),
        pytest.param('z = f"{q}!"', "python", ["ID", "=", STR, "ID", STR], id="fstring-parts"),
        pytest.param(
            'System.out.println("x" + 1);',
            "java",
            ["ID", ".", "out", ".", "println", "(", STR, "+", NUM, ")", ";"],
            id="java",
        ),
        pytest.param("return 0x1F, 'c'", "python", ["return", NUM, ",", STR], id="literals"),
    ],
)
def test_normalized(source: str, language: str, expected: list[str]) -> None:
    assert view(source, language) == expected


def test_normalized_positions_point_at_run_starts() -> None:
    tokens = tokenize('a = "x" "y" + 1', "python")
    cats = categories(tokens.texts, tokens.types)
    positions = normalized_positions(cats)
    norm = normalized(tokens.texts, cats)
    assert len(positions) == len(norm)
    assert [tokens.texts[i] for i in positions] == ["a", "=", '"', "+", "1"]
    assert positions == sorted(positions)


def test_renamed_sample_has_the_same_view() -> None:
    assert view(renamed(ORIGINAL), "python") == view(ORIGINAL, "python")
    assert view(ORIGINAL, "python") != view(UNRELATED[0], "python")


SOURCES = [ORIGINAL, *UNRELATED]
_FRESH = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True).map(lambda s: "v_" + s)


@given(data=st.data(), which=st.integers(0, len(SOURCES) - 1))
def test_consistent_renaming_keeps_view_and_shingles(data: st.DataObject, which: int) -> None:
    source = SOURCES[which]
    tokens = tokenize(source, "python")
    cats = categories(tokens.texts, tokens.types)
    names = sorted({t for t, c in zip(tokens.texts, cats) if c == "N"})
    fresh = data.draw(st.lists(_FRESH, min_size=len(names), max_size=len(names), unique=True))
    mapping = dict(zip(names, fresh))
    # rewrite the source token by token (offsets index the raw source)
    out, last = [], 0
    for text, start, cat in zip(tokens.texts, tokens.starts, cats):
        if cat == "N":
            out.append(source[last:start] + mapping[text])
            last = start + len(text)
    out.append(source[last:])
    changed = "".join(out)
    after = tokenize(changed, "python")
    after_cats = categories(after.texts, after.types)
    assert after.texts != tokens.texts
    before_view = normalized(tokens.texts, cats)
    after_view = normalized(after.texts, after_cats)
    assert after_view == before_view
    assert shingles(after_view).tolist() == shingles(before_view).tolist()
