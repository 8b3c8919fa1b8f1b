"""Ranges never inside a function's header (a helper of :mod:`.regions`).

No range starts or ends between a function's first token and its body (annotations,
modifiers, the signature up to the body's ``{`` or ``:``).
"""

from __future__ import annotations

from collections.abc import Sequence

from crystal_lsp.text.entries import SnippetMeta
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
