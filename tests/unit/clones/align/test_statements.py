"""Statement edges of a range: grown to whole statements, or shrunk to those it holds."""

from __future__ import annotations

import bisect

from crystal_lsp.clones.align.statements import whole_statements
from crystal_lsp.text.entries import Heavy, build_entry

PYTHON = """def build(app, label):
    total = compute(
        app,
        label,
    )
    if total:
        app.log(f"{label}: {total}")
    values = {
        "a": 1,
        "b": 2,
    }
    return values
"""

GO = """package main

func build(app App, label string) int {
	total := compute(
		app,
		label,
	)
	if total > 0 {
		app.Log(label)
	}
	return total
}
"""


def _heavy(path: str, source: str) -> Heavy:
    entry = build_entry(path, source, None, min_tokens=1, min_lines=1)
    assert entry.heavy is not None
    return entry.heavy


def _span(heavy: Heavy, first: int, last: int) -> tuple[int, int]:
    """Tokens of 1-based lines ``first..last``."""
    return bisect.bisect_left(heavy.lines, first - 1), bisect.bisect_right(heavy.lines, last - 1)


def _lines(heavy: Heavy, span: tuple[int, int] | None) -> tuple[int, int] | None:
    if span is None:
        return None
    return heavy.lines[span[0]] + 1, heavy.lines[span[1] - 1] + 1


def test_python_ranges_grow_and_shrink_to_whole_statements() -> None:
    heavy = _heavy("m.py", PYTHON)
    # from a call's second argument to the middle of a dict: the call and the dict whole
    grown, shrunk = whole_statements(heavy, True, *_span(heavy, 4, 9))
    assert _lines(heavy, grown) == (2, 11)
    assert _lines(heavy, shrunk) == (6, 7)
    # on the edges already: unchanged both ways
    grown, shrunk = whole_statements(heavy, True, *_span(heavy, 6, 7))
    assert _lines(heavy, grown) == _lines(heavy, shrunk) == (6, 7)
    # inside one statement: nothing to shrink to
    assert whole_statements(heavy, True, *_span(heavy, 9, 10))[1] is None


def test_go_statements_end_at_line_ends() -> None:
    heavy = _heavy("m.go", GO)
    grown, shrunk = whole_statements(heavy, False, *_span(heavy, 6, 9))
    # from the call's first line; the if's statement ends its line (no ";" needed)
    assert _lines(heavy, grown) == (4, 9)
    assert _lines(heavy, shrunk) == (8, 9)
