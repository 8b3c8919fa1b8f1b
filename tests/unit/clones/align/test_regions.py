"""Regions: aligned tokens snapped to whole lines, trimmed to corresponding lines, grown by the
lines an edit left unaligned, and snapped to whole units."""

from __future__ import annotations

import bisect

import pytest
from scan_samples import ORIGINAL, UNRELATED, module, renamed

from crystal_lsp.clones.align.regions import (
    Region,
    as_unit,
    corresponding,
    enclosing,
    extended,
    finish,
    header_prefix,
    line_shapes,
    snap,
    whole_lines,
)
from crystal_lsp.text.entries import Entry, Heavy, build_entry


def lexed(source: str, path: str = "m.py") -> tuple[Entry, Heavy]:
    entry = build_entry(path, source, None, min_tokens=20, min_lines=3)
    assert entry.heavy is not None
    return entry, entry.heavy


def tokens_of_lines(heavy: Heavy, first: int, last: int) -> tuple[int, int]:
    """Tokens ``[start, end)`` of the 1-based lines ``first..last``."""
    return (
        bisect.bisect_left(heavy.lines, first - 1),
        bisect.bisect_right(heavy.lines, last - 1),
    )


def lines_of(heavy: Heavy, span: tuple[int, int]) -> tuple[int, int]:
    """The 1-based first and last line of tokens ``[start, end)``."""
    return heavy.lines[span[0]] + 1, heavy.lines[span[1] - 1] + 1


def unit_named(entry: Entry, name: str) -> int:
    (k,) = [k for k, m in enumerate(entry.snippets) if m.name == name]
    return k


# --- whole lines -----------------------------------------------------------------------------

#         line:  0  0  0  0  1  1  1  2  2  2  2  3  3
LINES = [0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3]


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        pytest.param(4, 11, (4, 11), id="already-whole"),
        pytest.param(5, 10, (4, 11), id="widened"),
        pytest.param(3, 11, (4, 11), id="first-line-barely-touched"),  # 1 of 4 tokens
        pytest.param(2, 11, (0, 11), id="first-line-half-held"),  # 2 of 4 tokens
        pytest.param(4, 12, (4, 13), id="last-line-half-held"),  # 1 of 2 tokens
        pytest.param(0, 8, (0, 7), id="last-line-one-of-four"),
        pytest.param(0, 9, (0, 11), id="last-line-two-of-four"),
        pytest.param(5, 6, (4, 7), id="within-one-line"),
        pytest.param(3, 5, (0, 7), id="dropping-both-would-empty"),
    ],
)
def test_whole_lines(start: int, end: int, expected: tuple[int, int]) -> None:
    assert whole_lines(LINES, start, end) == expected


# --- corresponding lines ---------------------------------------------------------------------

BODY = """    total = 0
    for item in items:
        total += item.price * item.quantity
    return total
"""


def test_line_shapes_abstract_names_and_literals() -> None:
    _, heavy = lexed('x = f(a, "s", 3)\nreturn x.size\n')
    assert [shape for _, shape in line_shapes(heavy, 0, len(heavy.texts))] == [
        "ID = ID ( ID , LIT LIT LIT , LIT )",
        "return ID . ID",
    ]


def test_corresponding_trims_edge_lines_without_a_counterpart() -> None:
    a_source = "def f(items):\n    print(items)\n" + BODY
    b_source = "def g(items):\n" + BODY + "    cache.clear()\n    return None\n"
    _, a = lexed(a_source)
    _, b = lexed(b_source)
    span_a = tokens_of_lines(a, 2, 6)  # the print line, then the body
    span_b = tokens_of_lines(b, 2, 7)  # the body, then two lines of its own
    got_a, got_b = corresponding(a, span_a, b, span_b)
    assert lines_of(a, got_a) == (3, 6)
    assert lines_of(b, got_b) == (2, 5)


def test_corresponding_keeps_an_edited_line_inside() -> None:
    _, a = lexed("def f(items):\n" + BODY)
    edited = BODY.replace("item.price * item.quantity", "item.cost")
    _, b = lexed("def g(items):\n" + edited)
    span_a, span_b = tokens_of_lines(a, 2, 5), tokens_of_lines(b, 2, 5)
    assert corresponding(a, span_a, b, span_b) == (span_a, span_b)


def test_corresponding_with_nothing_alike_changes_nothing() -> None:
    _, a = lexed("x = 1\n")
    _, b = lexed("print(y)\n")
    span_a, span_b = (0, len(a.texts)), (0, len(b.texts))
    assert corresponding(a, span_a, b, span_b) == (span_a, span_b)


# --- extending past the aligned lines --------------------------------------------------------

BEFORE = """def build(rows):
    out = []
    for row in rows:
        out.append(row.strip())
    out.sort()
    return out
"""
AFTER = """def build(rows):
    out = []
    for row in rows:
        out.append(row.strip())
    out.sort()
    log.debug("built %d rows", len(out))
    return out
"""


def test_extended_takes_a_line_added_after_the_last_aligned_line() -> None:
    _, a = lexed(BEFORE)
    _, b = lexed(AFTER)
    span_a, span_b = tokens_of_lines(a, 2, 5), tokens_of_lines(b, 2, 5)  # aligned: 2-5
    limit_a, limit_b = (0, len(a.texts)), (0, len(b.texts))
    got_a, got_b = extended(a, span_a, limit_a, b, span_b, limit_b)
    # the `return` lines correspond, one line further in the copy: the log line is taken along
    assert lines_of(a, got_a) == (1, 6)
    assert lines_of(b, got_b) == (1, 7)


def test_extended_stops_at_lines_that_do_not_correspond() -> None:
    _, a = lexed(BEFORE + "\n\nvalue = compute(1, 2)\n")
    _, b = lexed(BEFORE + "\n\nraise SystemExit\n")
    span_a, span_b = tokens_of_lines(a, 2, 6), tokens_of_lines(b, 2, 6)
    limit_a, limit_b = (0, len(a.texts)), (0, len(b.texts))
    got_a, got_b = extended(a, span_a, limit_a, b, span_b, limit_b)
    assert lines_of(a, got_a) == (1, 6) and lines_of(b, got_b) == (1, 6)


def test_extended_stays_within_the_limits() -> None:
    _, a = lexed(BEFORE)
    _, b = lexed(AFTER)
    span_a, span_b = tokens_of_lines(a, 2, 5), tokens_of_lines(b, 2, 5)
    got_a, got_b = extended(a, span_a, span_a, b, span_b, span_b)
    assert (got_a, got_b) == (span_a, span_b)


# --- snapping to units -----------------------------------------------------------------------

TWO_FUNCTIONS = module(ORIGINAL, UNRELATED[0])
N = ORIGINAL.count("\n")


def test_a_region_covering_a_body_under_a_renamed_signature_is_the_whole_unit() -> None:
    entry, heavy = lexed(TWO_FUNCTIONS)
    k = unit_named(entry, "summarize_orders")
    start, end = tokens_of_lines(heavy, 2, N)  # the body: every line but the signature
    region = snap("m.py", entry, heavy, start, end)
    meta = entry.snippets[k]
    assert region.whole and region.unit == k
    assert (region.start, region.end) == (meta.start, meta.end)
    assert (region.first_line, region.last_line) == (1, N)


def test_a_region_covering_half_a_body_is_lines_of_the_unit() -> None:
    entry, heavy = lexed(TWO_FUNCTIONS)
    start, end = tokens_of_lines(heavy, 5, 15)
    region = snap("m.py", entry, heavy, start, end)
    assert not region.whole
    assert region.unit == unit_named(entry, "summarize_orders")  # the enclosing unit
    assert (region.first_line, region.last_line) == (5, 15)
    assert (region.start, region.end) == (start, end)


def test_a_region_running_into_the_next_function_header_is_cut_before_it() -> None:
    entry, heavy = lexed(TWO_FUNCTIONS)
    next_header = N + 3  # two blank lines between the functions
    start, end = tokens_of_lines(heavy, 12, next_header)
    region = finish("m.py", entry, heavy, start, end)
    assert (region.first_line, region.last_line) == (12, N)
    assert not region.whole
    assert region.unit == unit_named(entry, "summarize_orders")


def test_a_region_beginning_on_the_last_line_of_the_previous_function_is_cut_after_it() -> None:
    entry, heavy = lexed(TWO_FUNCTIONS)
    start, end = tokens_of_lines(heavy, N, N + 12)
    region = finish("m.py", entry, heavy, start, end)
    assert (region.first_line, region.last_line) == (N + 3, N + 12)
    assert region.unit == unit_named(entry, "parse_settings")


def test_import_lines_at_an_edge_are_no_part_of_a_region() -> None:
    source = "import os\nimport sys\n" + ORIGINAL
    entry, heavy = lexed(source)
    start, end = tokens_of_lines(heavy, 1, 12)
    region = finish("m.py", entry, heavy, start, end)
    assert region.first_line == 3


def test_as_unit_snaps_a_region_holding_most_of_a_body() -> None:
    entry, heavy = lexed(module(renamed()))
    header = header_prefix(entry)
    most = finish("m.py", entry, heavy, *tokens_of_lines(heavy, 2, N - 3))
    assert not most.whole
    snapped = as_unit(entry, most, header)
    assert snapped.whole and (snapped.first_line, snapped.last_line) == (1, N)
    little = finish("m.py", entry, heavy, *tokens_of_lines(heavy, 2, 6))
    assert as_unit(entry, little, header) == little


def test_enclosing_is_the_smallest_unit() -> None:
    source = "class Box:\n" + "".join("    " + line + "\n" for line in ORIGINAL.splitlines())
    entry, heavy = lexed(source)
    start, end = tokens_of_lines(heavy, 5, 8)
    assert entry.snippets[enclosing(entry.snippets, start, end)].name == "summarize_orders"
    assert enclosing(entry.snippets, 0, len(heavy.texts)) == unit_named(entry, "Box")
    assert enclosing([], 0, 1) == -1


def test_region_geometry() -> None:
    a = Region("a.py", 10, 30, 2, 1, 4, 9, -1, False)
    inner = Region("a.py", 12, 20, 2, 5, 3, 1, -1, False)
    elsewhere = Region("b.py", 12, 20, 2, 5, 3, 1, -1, False)
    assert (a.tokens, a.lines) == (20, 3)
    assert inner.within(a) and not a.within(inner) and not elsewhere.within(a)
    assert a.overlap(inner) == 8 and a.overlap(elsewhere) == 0
    assert a.overlap_tokens(25, 40) == 5 and a.overlap_tokens(30, 40) == 0


SIGNED = """class Table {
    int size;

    int first(int[] values, int from, int to) {
        int total = 0;
        for (int i = from; i < to; i++) {
            total += values[i] * size;
        }
        return total;
    }

    @SuppressWarnings("unchecked")
    public static <T> int mismatch(
            T[] a, int aFromIndex, int aToIndex,
            T[] b, int bFromIndex, int bToIndex) {
        int length = Math.min(aToIndex - aFromIndex, bToIndex - bFromIndex);
        for (int i = 0; i < length; i++) {
            if (a[aFromIndex + i] != b[bFromIndex + i]) {
                return i;
            }
        }
        return -1;
    }
}
"""


def _line_token(heavy: Heavy, line: int) -> int:
    """The first token on 1-based ``line``."""
    return bisect.bisect_left(heavy.lines, line - 1)


def test_no_range_starts_or_ends_inside_a_signature() -> None:
    """A range starting on the parameters' second line (or after the annotation) starts with the
    method; one ending inside a method's signature ends before the method."""
    entry, heavy = lexed(SIGNED, "Table.java")
    end = _line_token(heavy, 22)
    for line in (13, 14, 15):  # after the annotation; in the parameters
        region = finish("Table.java", entry, heavy, _line_token(heavy, line), end)
        assert region.first_line == 12, line
    into = finish("Table.java", entry, heavy, _line_token(heavy, 5), _line_token(heavy, 15))
    assert into.last_line == 10
    inside = finish("Table.java", entry, heavy, _line_token(heavy, 16), end)
    assert inside.first_line == 16  # from the body's first statement: no signature to include
