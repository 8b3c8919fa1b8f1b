"""Ranges never inside a function's header, and on statement boundaries (helpers of :mod:`.regions`).

No range starts or ends between a function's first token and its body (annotations,
modifiers, the signature up to the body's ``{`` or ``:``); :func:`whole_statements` gives a
range grown, or shrunk, to whole statements (what :mod:`crystal_lsp.clones.copies.units` decides
again).
"""

from __future__ import annotations

from collections.abc import Sequence

from crystal_lsp.clones.align.lines import line_table
from crystal_lsp.text.entries import Entry, Heavy, SnippetMeta
from crystal_lsp.text.noise import DECORATOR, SIGNATURE
from crystal_lsp.text.snippets import CLASS, FUNCTION


def out_of_signatures(
    units: list[SnippetMeta], texts: Sequence[str], opener: str, start: int, end: int
) -> tuple[int, int]:
    """The span with no edge inside a function's header (annotations, modifiers, signature).

    A span that starts after a function began but before its body (on the parameters' second
    line, after an annotation) starts with the function, signature whole; one that ends inside
    a header ends before the function. ``opener``: what opens a body (``{``, or ``:``).
    """
    lo, hi = start, end
    functions = [m for m in units if m.kind == FUNCTION]
    for m in functions:
        if m.start < lo < m.end and lo < _body_start(m, texts, opener):
            lo = m.start
    for m in functions:
        if lo < m.start < hi < m.end and hi < _body_start(m, texts, opener):
            hi = m.start
    return (lo, hi) if lo < hi else (start, end)


_HEADER_TOKENS = 512
"""A function's header is searched for the opening of its body this far (else: none found)."""


def _body_start(unit: SnippetMeta, texts: Sequence[str], opener: str) -> int:
    """The first token of a function's body: after the first ``opener`` outside brackets."""
    depth = 0
    for j in range(unit.start, min(unit.end, unit.start + _HEADER_TOKENS)):
        text = texts[j]
        if depth == 0 and text == opener:
            return j + 1
        if text in ("(", "[") or (text == "{" and opener != "{"):
            depth += 1
        elif text in (")", "]") or (text == "}" and opener != "{"):
            depth = max(0, depth - 1)
    return -1


_BLOCK_EDGES = frozenset({";", "{", "}"})
_CONTINUED = frozenset(
    {",", "(", "[", "=", "+", "-", "*", "/", "%", "&&", "||", "&", "|", "?", ":", ".", "->", "=>"}
    | {":=", "+=", "-=", "==", "!=", "<", ">", "<=", ">=", "\\"}
)
"""A line ending in one of these goes on on the next (no statement ends there)."""


class StatementEdges:
    """Per raw token of a file: whether a statement may start there, whether one may end there.

    Brace languages that end statements with ``;``: a statement starts after ``;``, ``{`` or
    ``}`` (or at an annotation) and ends at one. Other languages (indentation, Go, JavaScript
    without semicolons): at a line break outside brackets whose line does not end in an
    operator or a comma. The same rules as ``bench/range_audit.py``'s.
    """

    def __init__(self, heavy: Heavy, indent: bool, semicolons: bool) -> None:
        texts, cats, lines = heavy.texts, heavy.cats, heavy.lines
        n = len(texts)
        brace = not indent and "{" in texts
        opening = ("(", "[") if brace else ("(", "[", "{")
        closing = (")", "]") if brace else (")", "]", "}")
        depth, after = 0, [0] * n
        for i, (text, cat) in enumerate(zip(texts, cats)):
            if cat != "S":  # the braces of an f-string's fields are no brackets
                if text in opening:
                    depth += 1
                elif text in closing:
                    depth = max(0, depth - 1)
            after[i] = depth
        ends = [False] * n
        for i in range(n):
            text = texts[i]
            if i == n - 1:
                ends[i] = True
            elif brace and semicolons:
                ends[i] = text in _BLOCK_EDGES or text.endswith(("{", "}", ";"))
            elif brace and text in _BLOCK_EDGES:
                ends[i] = True
            else:
                broken = lines[i + 1] > lines[i] and after[i] == 0
                ends[i] = broken and (not brace or text in ("{", "}") or text not in _CONTINUED)
        starts = [True, *ends[:-1]]
        if brace and semicolons:
            for i in range(1, n):
                starts[i] = starts[i] or texts[i].startswith("@")
        self.starts, self.ends = starts, ends


def statement_edges(heavy: Heavy, indent: bool) -> StatementEdges:
    """The :class:`StatementEdges` of a file's tokens (kept on the tokens while they live)."""
    key = f"_kept_statement_edges_{indent}"
    found: StatementEdges | None = heavy.__dict__.get(key)
    if found is None:
        semicolons = line_table(heavy).semicolons
        found = heavy.__dict__[key] = StatementEdges(heavy, indent, semicolons)
    return found


def whole_statements(
    heavy: Heavy, indent: bool, start: int, end: int
) -> tuple[tuple[int, int], tuple[int, int] | None]:
    """Tokens ``[start, end)`` of whole lines grown, and shrunk, to whole statements.

    Grown: from the start of the statement holding the first token to the end of the one
    holding the last, in whole lines. Shrunk: the statements that lie wholly inside, in whole
    lines (None when none does).
    """
    edges = statement_edges(heavy, indent)
    table = line_table(heavy)
    starts, ends = edges.starts, edges.ends
    lo, hi = start, end
    while lo > 0 and not (starts[lo] and table.firsts[table.index(lo)] == lo):
        lo = table.firsts[table.index(lo - 1)] if starts[lo] else lo - 1
    while hi < len(ends) and not (ends[hi - 1] and table.ends[table.index(hi - 1)] == hi):
        hi = table.ends[table.index(hi)] if ends[hi - 1] else hi + 1
    first, last = start, end
    while first < last and not (starts[first] and table.firsts[table.index(first)] == first):
        first = table.ends[table.index(first)]
    while last > first and not (ends[last - 1] and table.ends[table.index(last - 1)] == last):
        last = table.firsts[table.index(last - 1)]
    return (lo, hi), ((first, last) if first < last else None)


def function_extents(entry: Entry, heavy: Heavy, indent: bool) -> list[tuple[int, int]]:
    """Tokens ``[start, end)`` of every function with a body, however small, and of the units.

    The entry's units are those of the size settings; a range may still enter or leave a
    one-line getter. Each signature (:mod:`crystal_lsp.text.noise`) gives a function: from its
    annotations, modifiers or decorators to the ``}`` that closes its body (brace languages) or
    to the last line indented deeper than its ``def`` (indentation languages). Kept on the
    tokens while they live.
    """
    key = f"_kept_function_extents_{indent}"
    found: list[tuple[int, int]] | None = heavy.__dict__.get(key)
    if found is None:
        units = {(m.start, m.end) for m in entry.snippets if m.kind in (FUNCTION, CLASS)}
        decorators = {b: a for a, b, kind in entry.noise if kind == DECORATOR}
        for a, b, kind in entry.noise:
            if kind != SIGNATURE:
                continue
            end = _indented_end(heavy, a, b) if indent else _closing_brace(heavy.texts, b)
            if end > b:
                units.add((_unit_start(heavy.texts, a, decorators, indent), end))
        found = heavy.__dict__[key] = sorted(units)
    return found


def _unit_start(texts: Sequence[str], at: int, decorators: dict[int, int], indent: bool) -> int:
    """Where a function whose signature starts at ``at`` begins (annotations, decorators)."""
    if indent:
        while at in decorators:
            at = decorators[at]
        return at
    while at > 0 and texts[at - 1] not in _BLOCK_EDGES:
        at -= 1
    return at


def _closing_brace(texts: Sequence[str], body: int) -> int:
    """The end of a body whose ``{`` is token ``body - 1`` (``body``: none found)."""
    if body <= 0 or texts[body - 1] != "{":
        return body
    depth = 1
    for j in range(body, len(texts)):
        if texts[j] == "{":
            depth += 1
        elif texts[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return body


def _indented_end(heavy: Heavy, header: int, body: int) -> int:
    """The end of an indented body after a header at ``header`` (``body``: its first token)."""
    table = line_table(heavy)
    starts, offsets, lines = heavy.starts, heavy.line_offsets, heavy.lines
    column = starts[header] - offsets[lines[header]]
    edges = statement_edges(heavy, True)
    k = table.index(body) if body < len(lines) else len(table.firsts)
    if k < len(table.firsts) and table.firsts[k] < body:
        k += 1  # the body begins on the header's line: its lines are those after it
    end = body
    for first in table.firsts[k:]:
        if edges.starts[first] and starts[first] - offsets[lines[first]] <= column:
            break
        end = table.ends[table.index(first)]
    return end


COVERED_UNIT = 0.6
"""A range holding this share of the lines of a function it enters or leaves may take it whole."""

Span = tuple[int, int]


def within_units(
    extents: list[Span], lines: Sequence[int], start: int, end: int
) -> tuple[Span, Span | None] | None:
    """Tokens ``[start, end)`` that enter or leave a unit, made not to (None: they do not).

    Two ways: *best* takes each unit the range enters or leaves whole where the range holds
    ``COVERED_UNIT`` of its lines, else leaves out the part of the range in it; *cut* leaves out
    every such part (None when nothing remains). ``extents``: :func:`function_extents`.
    """
    lo_cut, hi_cut, lo_whole, hi_whole = start, end, start, end
    lo_ok, hi_ok, straddles = True, True, False

    def share(first: int, last: int, us: int, ue: int) -> float:
        return (lines[last - 1] - lines[first] + 1) / (lines[ue - 1] - lines[us] + 1)

    for us, ue in extents:
        if us < start < ue < end:  # leaves a unit it began inside
            straddles, lo_cut = True, max(lo_cut, ue)
            lo_whole = min(lo_whole, us)
            lo_ok = lo_ok and share(start, ue, us, ue) >= COVERED_UNIT
        elif start < us < end < ue:  # enters a unit it does not finish
            straddles, hi_cut = True, min(hi_cut, us)
            hi_whole = max(hi_whole, ue)
            hi_ok = hi_ok and share(us, end, us, ue) >= COVERED_UNIT
    if not straddles:
        return None
    best = (lo_whole if lo_ok else lo_cut, hi_whole if hi_ok else hi_cut)
    cut = (lo_cut, hi_cut) if lo_cut < hi_cut else None
    return (best if best[0] < best[1] else (start, end)), cut
