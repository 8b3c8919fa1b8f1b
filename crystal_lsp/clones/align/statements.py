"""Ranges never inside a function's header, and on statement boundaries (helpers of :mod:`.regions`).

No range starts or ends between a function's first token and its body (annotations,
modifiers, the signature up to the body's ``{`` or ``:``); :func:`whole_statements` gives a
range grown, or shrunk, to whole statements (what :mod:`crystal_lsp.clones.copies.units` decides
again).
"""

from __future__ import annotations

from collections.abc import Sequence

from crystal_lsp.clones.align.lines import line_table
from crystal_lsp.text.entries import Heavy, SnippetMeta
from crystal_lsp.text.snippets import FUNCTION


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
