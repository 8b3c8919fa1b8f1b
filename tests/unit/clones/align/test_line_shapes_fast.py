"""``line_shapes`` (rewritten for the cold scan's speed) equals the straightforward definition."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from crystal_lsp.clones.align.regions import line_shapes
from crystal_lsp.text.entries import Heavy


def _reference(heavy: Heavy, start: int, end: int) -> list[tuple[int, str]]:
    """The definition: flush a line's words when the line changes and at the end."""
    out: list[tuple[int, str]] = []
    words: list[str] = []
    first = start
    for i in range(start, end + 1):
        if i == end or (i > start and heavy.lines[i] != heavy.lines[i - 1]):
            if words == ["LIT"] and heavy.cats[first] == "S":
                words = [heavy.texts[first]]
            out.append((first, " ".join(words)))
            words, first = [], i
        if i < end:
            cat = heavy.cats[i]
            words.append("ID" if cat in "NAB" else "LIT" if cat in "SM" else heavy.texts[i])
    return out


@st.composite
def heavies(draw: st.DrawFn) -> tuple[Heavy, int, int]:
    n = draw(st.integers(0, 30))
    cats = "".join(draw(st.lists(st.sampled_from("NABSMXPK"), min_size=n, max_size=n)))
    texts = draw(
        st.lists(st.sampled_from(["x", "'s'", "(", "1", "def", ":"]), min_size=n, max_size=n)
    )
    steps = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    lines, line = [], 0
    for step in steps:
        line += step
        lines.append(line)
    start = draw(st.integers(0, n))
    end = draw(st.integers(start, n))
    return Heavy(texts, cats, list(range(n)), lines), start, end


@given(case=heavies())
def test_line_shapes_equal_the_definition(case: tuple[Heavy, int, int]) -> None:
    heavy, start, end = case
    assert line_shapes(heavy, start, end) == _reference(heavy, start, end)
