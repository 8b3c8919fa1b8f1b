"""Unit tests of :mod:`crystal_lsp.server.landing`: blocks that land, spans that move."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import TextDocument

from crystal_lsp.server.landing import (
    LineEdit,
    Moved,
    apply,
    breaks,
    follow,
    landed,
    lines_of,
    minimal,
    move,
    partial_edit,
    whole_edit,
)

BLOCK = "def f(x):\n    y = x + 1\n    return y\n"
TEXT = "import os\n\n\nclass A:\n    pass\n"


def _change(line: int, char: int, end_line: int, end_char: int, text: str) -> Any:
    return types.TextDocumentContentChangePartial(
        range=types.Range(
            start=types.Position(line=line, character=char),
            end=types.Position(line=end_line, character=end_char),
        ),
        text=text,
    )


def test_a_paste_on_an_empty_line_lands_its_lines() -> None:
    change = _change(1, 0, 1, 0, BLOCK)
    new = apply(TEXT, change, None)
    result = follow(TEXT, new, [change], [], 3)
    assert result.landed == [(1, 3)]
    assert lines_of(new)[1:4] == ["def f(x):", "    y = x + 1", "    return y"]


def test_blank_lines_around_a_block_are_not_part_of_it() -> None:
    change = _change(5, 0, 5, 0, "\n\n" + BLOCK + "\n")
    new = apply(TEXT, change, None)
    assert follow(TEXT, new, [change], [], 3).landed == [(7, 9)]


def test_keystrokes_and_short_pastes_do_not_land() -> None:
    for text in ("x", "\n", "a\nb\n", "\n\n\n\n", "    \n\t\n  \n"):
        change = _change(1, 0, 1, 0, text)
        assert follow(TEXT, apply(TEXT, change, None), [change], [], 3).landed == []


def test_re_pasting_the_same_lines_is_no_insertion() -> None:
    text = TEXT + BLOCK
    change = _change(5, 0, 8, 0, BLOCK)  # the block replaced by itself
    assert follow(text, apply(text, change, None), [change], [], 3).landed == []


def test_a_replacement_lands_only_the_lines_it_changes() -> None:
    text = TEXT + BLOCK
    edited = BLOCK.replace("y = x + 1", "y = x + 2\n    z = y * y\n    w = z - y")
    change = _change(5, 0, 8, 0, edited)
    new = apply(text, change, None)
    assert follow(text, new, [change], [], 3).landed == [(6, 8)]
    assert follow(text, new, [change], [], 4).landed == []


def test_min_lines_none_lands_nothing() -> None:
    change = _change(1, 0, 1, 0, BLOCK)
    assert follow(TEXT, apply(TEXT, change, None), [change], [], None).landed == []


def test_spans_move_with_edits_above_and_stay_for_edits_below() -> None:
    assert move((5, 8), LineEdit(0, 0, 2)) == Moved((7, 10))  # lines inserted above
    assert move((5, 8), LineEdit(5, 0, 2)) == Moved((7, 10))  # ... right above its first line
    assert move((5, 8), LineEdit(1, 2, 0)) == Moved((3, 6))  # lines deleted above
    assert move((5, 8), LineEdit(9, 1, 3)) == Moved((5, 8))  # an edit below
    assert move((5, 8), LineEdit(2, 1, 1)) == Moved((5, 8))  # typing on a line above


def test_an_edit_reaching_a_span_touches_it_and_joins_it() -> None:
    assert move((5, 8), LineEdit(6, 1, 1)) == Moved((5, 8), touched=True)  # typing inside
    assert move((5, 8), LineEdit(8, 1, 3)) == Moved((5, 10), touched=True)  # its last line
    assert move((5, 8), LineEdit(4, 2, 2)) == Moved((4, 8), touched=True)  # from above
    assert move((5, 8), LineEdit(7, 0, 2)) == Moved((5, 10), touched=True)  # lines inside
    assert move((5, 8), LineEdit(4, 6, 0)) == Moved(None, touched=True)  # all deleted


def test_partial_edits_of_whole_lines_leave_the_next_line_alone() -> None:
    assert partial_edit(_change(3, 0, 3, 0, BLOCK)) == LineEdit(3, 0, 3)
    assert partial_edit(_change(3, 0, 5, 0, "")) == LineEdit(3, 2, 0)
    assert partial_edit(_change(3, 4, 3, 4, "x")) == LineEdit(3, 1, 1)
    assert partial_edit(_change(3, 4, 4, 2, "a\nb\nc")) == LineEdit(3, 2, 3)


def test_lines_added_at_the_end_of_a_line_leave_that_line_alone() -> None:
    lines = ["def f():", "    return 1", "x = 2"]
    enter = _change(1, 12, 1, 12, "\n    ")
    assert partial_edit(enter, lines) == LineEdit(2, 0, 1)
    assert partial_edit(enter) == LineEdit(1, 1, 2)  # without the text: the line is reached
    assert partial_edit(_change(1, 5, 1, 5, "\n"), lines) == LineEdit(1, 1, 2)  # mid-line
    text = "\n".join(lines) + "\n"
    new = apply(text, enter, None)
    assert follow(text, new, [enter], [(0, 1)], 3).moved == [Moved((0, 1))]
    appended = _change(2, 5, 2, 5, "\n" + BLOCK.rstrip("\n"))  # Neovim appending lines
    result = follow(text, apply(text, appended, None), [appended], [(0, 2)], 3)
    assert result.moved == [Moved((0, 2))] and result.landed == [(3, 5)]


def test_neovim_appending_lines_does_not_reach_the_last_block() -> None:
    text = "a = 1\n" + BLOCK  # the block is lines 1-3, the buffer ends with a line break
    appended = _change(3, 12, 4, 0, "\n\ndef g(a):\n    c = a\n    return c\n")
    new = apply(text, appended, None)
    assert new == text + "\ndef g(a):\n    c = a\n    return c\n"
    assert minimal(text, appended, None) == _change(
        4, 0, 4, 0, "\ndef g(a):\n    c = a\n    return c\n"
    )
    result = follow(text, new, [appended], [(1, 3)], 3)
    assert result.moved == [Moved((1, 3))] and result.landed == [(5, 7)]
    typed = _change(2, 4, 2, 4, "z")  # typing inside the block still reaches it
    assert follow(text, apply(text, typed, None), [typed], [(1, 3)], 3).moved[0].touched


def test_whole_document_changes_are_reduced_to_the_lines_they_change() -> None:
    old = lines_of(TEXT)
    assert whole_edit(old, lines_of(TEXT.replace("pass", "passx"))) == LineEdit(4, 1, 1)
    new = lines_of(TEXT[:10] + BLOCK + TEXT[10:])
    assert whole_edit(old, new) == LineEdit(1, 0, 3)
    assert whole_edit(old, old) == LineEdit(len(old), 0, 0)


def test_whole_document_typing_moves_blocks_as_incremental_typing_does() -> None:
    text = TEXT + BLOCK
    typed = text.replace("import os", "import os, sys")
    change = types.TextDocumentContentChangeWholeDocument(text=typed)
    result = follow(text, typed, [change], [(5, 7)], 3)
    assert result.moved == [Moved((5, 7))] and result.landed == []


def test_line_breaks_are_lsp_line_breaks() -> None:
    assert breaks("a\r\nb\rc\nd") == 3 and breaks("abc") == 0
    assert lines_of("a\r\nb\rc\nd") == ["a", "b", "c", "d"]
    assert landed(["x"], ["a", "b", "c", "x"], LineEdit(0, 0, 3), 3) == (0, 2)


def test_changes_that_do_not_replay_lose_the_spans() -> None:
    change = _change(1, 0, 1, 0, BLOCK)
    result = follow(TEXT, TEXT + "something else", [change], [(0, 0)], 3)
    assert result.lost and result.moved == [Moved((0, 0), touched=True)] and not result.landed


# --- properties -------------------------------------------------------------------------------
LINE = st.text(alphabet="ab \t", max_size=6)
DOC = st.lists(LINE, min_size=1, max_size=12).map("\n".join)


@st.composite
def _edit(draw: Any) -> tuple[str, Any]:
    text = draw(DOC)
    lines = text.split("\n")
    a = draw(st.integers(0, len(lines) - 1))
    b = draw(st.integers(a, len(lines) - 1))
    ca = draw(st.integers(0, len(lines[a])))
    cb = draw(st.integers(ca if a == b else 0, len(lines[b])))
    inserted = draw(st.lists(LINE, max_size=6).map("\n".join))
    return text, _change(a, ca, b, cb, inserted)


@settings(max_examples=300, deadline=None)
@given(_edit())
def test_apply_is_what_pygls_applies(case: tuple[str, Any]) -> None:
    text, change = case
    doc = TextDocument("file:///x.py", text)
    doc.apply_change(change)
    assert apply(text, change, None) == doc.source


@settings(max_examples=300, deadline=None)
@given(_edit(), st.integers(0, 11), st.integers(0, 3))
def test_untouched_spans_keep_their_lines(case: tuple[str, Any], first: int, size: int) -> None:
    text, change = case
    old = lines_of(text)
    first = min(first, len(old) - 1)
    span = (first, min(first + size, len(old) - 1))
    new_text = apply(text, change, None)
    result = follow(text, new_text, [change], [span], 2)
    [moved] = result.moved
    if not moved.touched:
        assert moved.span is not None
        new = lines_of(new_text)
        assert new[moved.span[0] : moved.span[1] + 1] == old[span[0] : span[1] + 1]
    for a, b in result.landed:
        block = lines_of(new_text)[a : b + 1]
        assert sum(1 for line in block if line.strip()) >= 2
        assert block[0].strip() and block[-1].strip()
