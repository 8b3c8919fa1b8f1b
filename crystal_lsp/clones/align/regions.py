"""Regions: the lines of a file a chain aligned, snapped to lines and to whole units.

A chain (:mod:`crystal_lsp.clones.align.chains`) aligns normalized tokens. What a reviewer reads are
lines: a region starts at the start of the line of its first aligned token and ends at the end of
the line of its last one. A chain that ran on into the first line of the next function (whose
header looks alike) is cut before it, one that began on the closing line of the previous
function after it; a region that covers all but a sliver of a unit (a function, a class) *is*
that unit, and is reported as such. Every region knows the smallest unit that encloses it, so a
report can say "lines 120-151 of function main".
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np

from crystal_lsp.clones.align.lines import HEADER_KINDS, entry_facts, line_table
from crystal_lsp.clones.align.statements import out_of_signatures
from crystal_lsp.text.entries import Entry, Heavy, SnippetMeta, span_position
from crystal_lsp.text.keywords import INDENT_LANGUAGES

WHOLE_UNIT = 0.9
"""A region holding this share of a unit's tokens (and little else) is that unit."""
PAIRED_UNIT = 0.6
"""The share of a unit's body a region needs to be that unit when its copy is a whole unit."""
EXTEND_LINES = 3
"""How many lines beyond an aligned region may be added when they correspond."""
SLIVER_LINES = 2
"""A unit entered (or left) by at most this many lines at a region's edge is cut off."""


@dataclass(frozen=True)
class Region:
    """Raw tokens ``[start, end)`` of one file, with their 1-based line and column range."""

    path: str
    start: int
    end: int
    first_line: int
    first_col: int
    last_line: int
    last_col: int
    unit: int
    """Index of the smallest snippet of the file enclosing the region (-1: none)."""
    whole: bool
    """Whether the region is exactly that snippet."""

    @property
    def tokens(self) -> int:
        """Raw tokens in the region."""
        return self.end - self.start

    @property
    def lines(self) -> int:
        """Lines the region spans."""
        return self.last_line - self.first_line + 1

    def within(self, other: Region) -> bool:
        """Whether this region lies inside ``other`` (same file)."""
        return self.path == other.path and other.start <= self.start and self.end <= other.end

    def overlap_tokens(self, start: int, end: int) -> int:
        """Tokens of the region within tokens ``[start, end)`` of its file."""
        return max(0, min(self.end, end) - max(self.start, start))

    def overlap(self, other: Region) -> int:
        """Tokens both regions hold (0 in different files)."""
        if self.path != other.path:
            return 0
        return max(0, min(self.end, other.end) - max(self.start, other.start))


def raw_span(entry: Entry, heavy: Heavy, a0: int, a1: int) -> tuple[int, int]:
    """Raw tokens ``[start, end)`` of normalized tokens ``[a0, a1)`` (string runs kept whole)."""
    npos = entry.npos
    a1 = min(a1, len(npos))
    start, end = int(npos[a0]), int(npos[a1 - 1]) + 1
    cats = heavy.cats
    while end < len(cats) and cats[end] == "S" and cats[end - 1] == "S":
        end += 1
    return start, end


def snap(path: str, entry: Entry, heavy: Heavy, start: int, end: int) -> Region:
    """The region of raw tokens ``[start, end)``: whole lines, cut at unit edges, whole units."""
    start, end = whole_lines(heavy.lines, start, end)
    return finish(path, entry, heavy, start, end, header_prefix(entry))


def finish(
    path: str, entry: Entry, heavy: Heavy, start: int, end: int, header: list[int] | None = None
) -> Region:
    """The region of whole lines ``[start, end)``, cut at unit edges, or the whole unit.

    ``header`` is the entry's :func:`header_prefix` (computed when not given).
    """
    start, end = _without_edge_noise(entry, heavy, start, end)
    facts = entry_facts(entry)
    start, end = _cut_slivers(facts.units_near(start, end), heavy.lines, start, end)
    header = header if header is not None else header_prefix(entry)
    units = facts.units_near(start, end)
    opener = ":" if entry.language in INDENT_LANGUAGES else "{"
    start, end = out_of_signatures(units, heavy.texts, opener, start, end)
    unit = _whole_unit(entry, start, end, header)
    whole = unit >= 0
    if whole:
        start, end = entry.snippets[unit].start, entry.snippets[unit].end
    else:
        unit = facts.enclosing(start, end)
    first_line, first_col, last_line, last_col = span_position(start, end, heavy)
    return Region(path, start, end, first_line, first_col, last_line, last_col, unit, whole)


def line_shapes(heavy: Heavy, start: int, end: int) -> list[tuple[int, str]]:
    """``(first token, shape)`` of each line of tokens ``[start, end)``.

    A line's shape is its tokens with names (member names and builtins too) as ``ID`` and
    literals as ``LIT``: what stays when code is renamed. A line holding nothing but a string (a
    docstring, a comment-like literal) keeps its text: two docstrings correspond only when they
    say the same. Each whole line's shape is computed once per file (:mod:`.lines`).
    """
    return line_table(heavy).shapes(start, end)


def _line_blocks(
    la: list[tuple[int, str]], lb: list[tuple[int, str]]
) -> list[tuple[int, int, int]]:
    """Matching blocks ``(a, b, size)`` of two lists of line shapes."""
    matcher = SequenceMatcher(None, [x for _, x in la], [x for _, x in lb], False)
    return [(m.a, m.b, m.size) for m in matcher.get_matching_blocks() if m.size]


def matched_lines(
    a: Heavy, span_a: tuple[int, int], b: Heavy, span_b: tuple[int, int]
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Token spans of the lines of each span that correspond to lines of the other."""
    la, lb = line_shapes(a, *span_a), line_shapes(b, *span_b)
    out_a: list[tuple[int, int]] = []
    out_b: list[tuple[int, int]] = []
    for x, y, size in _line_blocks(la, lb):
        end_a = la[x + size][0] if x + size < len(la) else span_a[1]
        end_b = lb[y + size][0] if y + size < len(lb) else span_b[1]
        out_a.append((la[x][0], end_a))
        out_b.append((lb[y][0], end_b))
    return out_a, out_b


def corresponding(
    a: Heavy, span_a: tuple[int, int], b: Heavy, span_b: tuple[int, int]
) -> tuple[tuple[int, int], tuple[int, int]]:
    """Both spans (whole lines) trimmed to their first and last lines that correspond.

    Lines are compared by shape (:func:`line_shapes`); edge lines of one side without a
    counterpart on the other are not part of the copy.
    """
    la, lb = line_shapes(a, *span_a), line_shapes(b, *span_b)
    blocks = _line_blocks(la, lb)
    if not blocks:
        return span_a, span_b
    first, last = blocks[0], blocks[-1]

    def cut(
        lines: list[tuple[int, str]], span: tuple[int, int], lo: int, hi: int
    ) -> tuple[int, int]:
        return lines[lo][0], lines[hi][0] if hi < len(lines) else span[1]

    return (
        cut(la, span_a, first[0], last[0] + last[2]),
        cut(lb, span_b, first[1], last[1] + last[2]),
    )


def unit_bounds(entry: Entry, heavy: Heavy, start: int, end: int) -> tuple[int, int]:
    """Tokens of the smallest unit holding tokens ``[start, end)`` (the file when none)."""
    unit = entry_facts(entry).enclosing(start, end)
    if unit < 0:
        return 0, len(heavy.lines)
    return entry.snippets[unit].start, entry.snippets[unit].end


def _line(heavy: Heavy, token: int) -> tuple[int, int, str]:
    """The token span of the line holding ``token``, and its shape."""
    return line_table(heavy).line(token)


def extended(
    a: Heavy,
    span_a: tuple[int, int],
    limit_a: tuple[int, int],
    b: Heavy,
    span_b: tuple[int, int],
    limit_b: tuple[int, int],
) -> tuple[tuple[int, int], tuple[int, int]]:
    """Both spans grown by lines that correspond beyond them, in step, within the limits.

    An edit right at the edge of a copy (a statement added after the last one) leaves the lines
    beyond it unaligned. Past each end, the next lines of both sides are taken while they have
    the same shape, or when one side has one line more (up to ``EXTEND_LINES`` lines).
    """
    (a0, a1), (b0, b1) = span_a, span_b
    for _ in range(EXTEND_LINES):
        step = _step(a, a1, limit_a[1], b, b1, limit_b[1], forward=True)
        if step is None:
            break
        a1, b1 = step
    for _ in range(EXTEND_LINES):
        step = _step(a, a0, limit_a[0], b, b0, limit_b[0], forward=False)
        if step is None:
            break
        a0, b0 = step
    return (a0, a1), (b0, b1)


def _step(
    a: Heavy, at_a: int, stop_a: int, b: Heavy, at_b: int, stop_b: int, forward: bool
) -> tuple[int, int] | None:
    """The next edges of both spans when their next lines correspond (see :func:`extended`)."""

    def lines_from(heavy: Heavy, at: int, stop: int) -> list[tuple[int, int, str]]:
        out: list[tuple[int, int, str]] = []
        while len(out) < 2 and (at < stop if forward else at > stop):
            lo, hi, shape = _line(heavy, at if forward else at - 1)
            out.append((lo, hi, shape))
            at = hi if forward else lo
        return out

    next_a, next_b = lines_from(a, at_a, stop_a), lines_from(b, at_b, stop_b)
    for i, j in ((0, 0), (1, 0), (0, 1)):
        if i < len(next_a) and j < len(next_b) and next_a[i][2] == next_b[j][2]:
            if forward:
                return next_a[i][1], next_b[j][1]
            return next_a[i][0], next_b[j][0]
    return None


def as_unit(entry: Entry, region: Region, header: list[int]) -> Region:
    """A region snapped to its enclosing unit when it holds ``PAIRED_UNIT`` of the unit's body.

    Used when the other side of a pair is a whole unit: a copy edited at its end (a statement
    added, one removed) is a copy of the whole function even where alignment stops early.
    """
    unit = entry_facts(entry).enclosing(region.start, region.end)
    if unit < 0 or region.whole:
        return region
    m = entry.snippets[unit]
    covered = region.tokens - (header[region.end] - header[region.start])
    body = m.tokens - (header[m.end] - header[m.start])
    if covered < PAIRED_UNIT * body:
        return region
    return Region(
        region.path, m.start, m.end, m.first_line, m.first_col, m.last_line, m.last_col, unit, True
    )


_CLOSING = frozenset(")]};,")


def _line_spans(heavy: Heavy, start: int, end: int) -> list[tuple[int, int]]:
    """``(first token, end)`` of each line of tokens ``[start, end)``."""
    return line_table(heavy).spans(start, end)


def trimmed(entry: Entry, heavy: Heavy, start: int, end: int) -> tuple[int, int]:
    """Whole lines ``[start, end)`` without the edge lines that are no part of a copy.

    At the start: lines of closing brackets (``});`` of the code before) and docstrings; at the
    end: docstrings, and the header (decorators, signature) of a unit whose body lies beyond
    the span (the next ``def`` a chain ran into). The span is kept as it is when nothing would
    remain.
    """
    spans = _line_spans(heavy, start, end)
    texts, cats = heavy.texts, heavy.cats

    def closing(lo: int, hi: int) -> bool:
        return all(cats[t] in "PO" and set(texts[t]) <= _CLOSING for t in range(lo, hi))

    def doc(lo: int, hi: int) -> bool:
        return hi - lo == 1 and cats[lo] == "S"

    headers = entry_facts(entry).headers
    near = [entry.snippets[k] for k in entry_facts(entry).near(start, end)]
    beyond = [m for m in near if start <= m.start < end < m.end]

    def opens_beyond(lo: int, hi: int) -> bool:
        """The line starts a unit the span leaves, or is header (decorator, signature) of one."""
        for m in beyond:
            if lo <= m.start < hi:
                return True
            if m.start <= lo and any(a <= lo and hi <= b for a, b in headers):
                return True
        return False

    first, last = 0, len(spans)
    while first < last and (closing(*spans[first]) or doc(*spans[first])):
        first += 1
    while last > first and (doc(*spans[last - 1]) or opens_beyond(*spans[last - 1])):
        last -= 1
    if first >= last:
        return start, end
    if entry.language not in INDENT_LANGUAGES:
        first, last = _whole_statements(heavy, spans, first, last)
    return within_units(entry, heavy, spans[first][0], spans[last - 1][1])


_CONTINUED = frozenset(
    {",", "(", "[", "=", "+", "-", "*", "/", "%", "&&", "||", "&", "|", "?", ":", ".", "->", "=>"}
)
"""A line ending in one of these goes on on the next line (no statement ends there)."""
_CONTROL = frozenset({"if", "for", "while", "else", "foreach", "do"})
_LABELS = frozenset({"case", "default", "public", "private", "protected"})
"""Lines that end in ``:`` and a statement: ``case 'XYZ':``, C++'s ``public:``."""


def _whole_statements(
    heavy: Heavy, spans: list[tuple[int, int]], first: int, last: int
) -> tuple[int, int]:
    """Lines ``[first, last)`` without edge lines that cut a statement (brace languages).

    A range ends where a statement ends: not after ``b, bFromIndex,`` of a call spread over
    lines, nor after an ``if (...)`` whose statement is on the next line; and it starts where
    one starts, not on the second line of a signature or a call. In a language that ends
    statements with ``;`` a line must end in ``;``, ``{`` or ``}``. At least one line is kept.
    """
    texts = heavy.texts
    strict = line_table(heavy).semicolons

    def goes_on(lo: int, hi: int) -> bool:
        tail = texts[hi - 1]
        if tail.endswith((";", "{", "}")) or (tail == ":" and texts[lo] in _LABELS):
            return False
        if strict:
            return not texts[lo].startswith("@")
        return tail in _CONTINUED or (tail == ")" and texts[lo] in _CONTROL)

    while last - first > 1 and goes_on(*spans[last - 1]):
        last -= 1
    while (
        last - first > 1 and spans[first][0] > 0 and goes_on(*_line(heavy, spans[first][0] - 1)[:2])
    ):
        first += 1
    return first, last


def within_units(entry: Entry, heavy: Heavy, start: int, end: int) -> tuple[int, int]:
    """The span without the smaller part of a function or class it only partly covers.

    A chain over parallel methods may run from the tail of one into the head of the next: the
    part on the other side of the boundary goes when it is the smaller one (in lines), so that
    a reported range is one unit's code, unless the copy really continues across.
    """
    lines = heavy.lines
    units = entry_facts(entry).units_near(start, end)
    start0, end0 = start, end

    def count(lo: int, hi: int) -> int:
        return lines[hi - 1] - lines[lo] + 1 if hi > lo else 0

    for m in units:  # the span leaves a unit it started inside of
        if m.start < start < m.end < end:
            if count(start, m.end) < count(m.end, end):
                start = m.end
            else:
                end = m.end
    for m in units:  # the span enters a unit it does not finish
        if start < m.start < end < m.end:
            if count(m.start, end) < count(start, m.start):
                end = m.start
            else:
                start = m.start
    return (start, end) if start < end else (start0, end0)


def whole_lines(lines: list[int], start: int, end: int) -> tuple[int, int]:
    """Tokens ``[start, end)`` widened to whole lines.

    An edge line the tokens hold less than half of is left out (the alignment ran on by a token
    or two), unless that empties the span.
    """
    first_start = bisect.bisect_left(lines, lines[start])
    first_end = bisect.bisect_right(lines, lines[start])
    last_start = bisect.bisect_left(lines, lines[end - 1])
    last_end = bisect.bisect_right(lines, lines[end - 1])
    lo, hi = first_start, last_end
    if lines[start] != lines[end - 1]:
        if 2 * (first_end - start) < first_end - first_start:
            lo = first_end
        if 2 * (end - last_start) < last_end - last_start:
            hi = last_start
    return (lo, hi) if lo < hi else (first_start, last_end)


def _without_edge_noise(entry: Entry, heavy: Heavy, start: int, end: int) -> tuple[int, int]:
    """Whole lines of imports or exports at either edge left out (they are no part of a copy)."""
    edges = [(a, b) for a, b in entry_facts(entry).edges if b > start and a < end]
    if not edges:
        return start, end
    lines = heavy.lines

    def noise_line(first: int, last: int) -> bool:
        return any(a <= first and last <= b for a, b in edges)

    lo, hi = start, end
    while lo < hi:
        line_end = bisect.bisect_right(lines, lines[lo], lo, hi)
        if not noise_line(lo, line_end):
            break
        lo = line_end
    while lo < hi:
        line_start = bisect.bisect_left(lines, lines[hi - 1], lo, hi)
        if not noise_line(line_start, hi):
            break
        hi = line_start
    return (lo, hi) if lo < hi else (start, end)


def _cut_slivers(
    units: list[SnippetMeta], lines: list[int], start: int, end: int
) -> tuple[int, int]:
    """Cut off a unit the region only enters on its last lines, or leaves on its first."""
    original_start, original_end = start, end
    for m in units:
        if start < m.start < end < m.end and lines[end - 1] - lines[m.start] < SLIVER_LINES:
            end = bisect.bisect_left(lines, lines[m.start])
        if m.start < start < m.end < end and lines[m.end - 1] - lines[start] < SLIVER_LINES:
            start = bisect.bisect_right(lines, lines[m.end - 1])
    return (start, end) if start < end else (original_start, original_end)


def header_prefix(entry: Entry) -> list[int]:
    """Prefix sums over raw tokens of "in a signature or decorator" (``[0]`` then one per token)."""
    marks = np.zeros(entry.token_count + 1, dtype=np.int64)
    for a, b, kind in entry.noise:
        if kind in HEADER_KINDS:
            marks[a + 1 : b + 1] = 1
    out: list[int] = np.cumsum(marks).tolist()
    return out


def _whole_unit(entry: Entry, start: int, end: int, header: list[int]) -> int:
    """The largest snippet the region covers all but a sliver of (and little more), or -1.

    A unit's header (decorators, signature) does not have to be covered: a copied body under a
    renamed signature is a copy of the whole function. ``header``: :func:`header_prefix`.
    """
    best, size = -1, 0
    for k in entry_facts(entry).near(start, end):
        m = entry.snippets[k]
        if m.end <= start or m.start >= end or m.tokens <= size:
            continue
        inside = min(end, m.end) - max(start, m.start)
        outside = (end - start) - inside
        lo, hi = max(start, m.start), min(end, m.end)
        covered = inside - (header[hi] - header[lo])
        body = m.tokens - (header[m.end] - header[m.start])
        if covered >= WHOLE_UNIT * body and outside <= (1 - WHOLE_UNIT) * (end - start):
            best, size = k, m.tokens
    return best


def enclosing_strictly(snippets: Sequence[SnippetMeta], k: int) -> int:
    """The smallest snippet holding snippet ``k`` other than ``k`` itself, or -1."""
    inner = snippets[k]
    best, size = -1, 0
    for j, m in enumerate(snippets):
        if (
            j == k
            or not (m.start <= inner.start and inner.end <= m.end)
            or m.tokens <= inner.tokens
        ):
            continue
        if best < 0 or m.tokens < size:
            best, size = j, m.tokens
    return best


def enclosing(snippets: list[SnippetMeta], start: int, end: int) -> int:
    """The smallest snippet holding tokens ``[start, end)``, or -1."""
    best, size = -1, 0
    for k, m in enumerate(snippets):
        if m.start <= start and end <= m.end and (best < 0 or m.tokens < size):
            best, size = k, m.tokens
    return best
