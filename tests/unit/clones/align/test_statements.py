"""Statement edges of a range: grown to whole statements, or shrunk to those it holds."""

from __future__ import annotations

import bisect

from crystal_lsp.clones.align.statements import function_extents, whole_statements, within_units
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


JAVA = """class A {
    int size() { return size; }

    @Override
    public int hash(long[] a) {
        int h = 1;
        for (long x : a) {
            h = 31 * h + (int) x;
        }
        return h;
    }
}
"""


def test_small_functions_are_units_a_range_does_not_straddle() -> None:
    entry = build_entry("A.java", JAVA, None, min_tokens=50, min_lines=5)
    heavy = entry.heavy
    assert heavy is not None
    extents = function_extents(entry, heavy, False)
    # the class, the one-line getter and the method with its annotation, though under the
    # unit size
    assert [_lines(heavy, e) for e in extents] == [(1, 12), (2, 2), (4, 11)]
    # lines 6-11 leave the method at its end: no straddle
    assert within_units(extents, heavy.lines, *_span(heavy, 6, 11)) is None
    # entering the method for 4 of its 8 lines: that part is left out either way
    best, cut = within_units(extents, heavy.lines, *_span(heavy, 2, 7)) or ((0, 0), None)
    assert _lines(heavy, best) == _lines(heavy, cut) == (2, 2)
    # for 7 of its 8 lines: best takes it whole, cut leaves it out
    best, cut = within_units(extents, heavy.lines, *_span(heavy, 2, 10)) or ((0, 0), None)
    assert (_lines(heavy, best), _lines(heavy, cut)) == ((2, 11), (2, 2))
    # leaving the method after its first lines (5-11 of it) and entering nothing
    best, cut = within_units(extents, heavy.lines, *_span(heavy, 7, 12)) or ((0, 0), None)
    assert (_lines(heavy, best), _lines(heavy, cut)) == ((4, 12), (12, 12))


def test_an_indented_function_ends_where_its_body_does() -> None:
    entry = build_entry("m.py", PYTHON + "\n\nx = 1\n", None, min_tokens=50, min_lines=5)
    assert entry.heavy is not None
    extents = function_extents(entry, entry.heavy, True)
    assert [_lines(entry.heavy, e) for e in extents] == [(1, 12)]
