"""The alignment a hover shows: which lines of two copies correspond, as a narrow diff.

The alignment is the core's (:mod:`crystal_lsp.clones.reports.sidebyside`: lines matched by
shape, so a renamed line still corresponds to its original); here the copies' lines come from the
folder's index, or from their text when the indexed tokens do not match the text shown (the file
changed since it was indexed). A hover shows it as a diff from the other copy to this one, one
narrow column (:func:`diff_excerpt`: editors' hovers are narrow and short; the side-by-side view
is the editor's own diff view, ``crystal.compare``); long alignments show the differing rows
first and their neighbours, gaps marked ``⋯``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crystal_lsp.clones.findings import Location
from crystal_lsp.clones.reports.sidebyside import (
    CHANGED,
    HERE_ONLY,
    RENAMED,
    SAME,
    THERE_ONLY,
    Line,
    Row,
    align,
    shaped_lines,
    text_lines,
)
from crystal_lsp.text.lexinput import unify_line_ends

if TYPE_CHECKING:
    from crystal_lsp.server.workspace import Folder

__all__ = [
    "CHANGED",
    "HERE_ONLY",
    "RENAMED",
    "SAME",
    "THERE_ONLY",
    "Line",
    "Row",
    "align",
    "diff_excerpt",
    "lines_of",
    "pick",
]
MAX_ROWS = 12
DIFF_WIDTH = 64
"""Characters of code per line of the hover's diff (:func:`diff_excerpt`)."""
HOVER_ROWS = 6
"""Corresponding lines a hover shows (a renamed or changed one takes two lines of the diff)."""
GAP = "⋯"


def lines_of(folder: Folder, location: Location, text: str | None) -> list[Line]:
    """The lines of a copy with tokens, by shape (text lines when the index does not match)."""
    if text is None:
        return []
    span = folder.span_of(location)
    if span is not None:
        heavy = span.heavy
        ok = all(
            text[heavy.starts[i] : heavy.starts[i] + len(heavy.texts[i])] == heavy.texts[i]
            for i in (span.start, span.end - 1)
        )
        if ok:
            return shaped_lines(heavy, span.start, span.end)
    return text_lines(text, location.first_line, location.last_line)


def pick(rows: list[Row], limit: int = MAX_ROWS) -> list[int]:
    """The rows to show, in order: all of few rows.

    Of more than ``limit``: the first two, then the changed rows and the rows of one side only
    (with a neighbour each), then the renamed ones, then the first of the rest.
    """
    if len(rows) <= limit:
        return list(range(len(rows)))
    chosen = {0, 1}
    changed = [i for i, row in enumerate(rows) if row.mark not in (SAME, RENAMED)]
    renamed = [i for i, row in enumerate(rows) if row.mark == RENAMED]
    for i in changed + renamed + list(range(len(rows))):
        for j in (i, i - 1, i + 1) if i in changed else (i,):
            if len(chosen) < limit and 0 <= j < len(rows):
                chosen.add(j)
    return sorted(chosen)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _dedented(lines: list[str], numbers: list[int | None]) -> dict[int, str]:
    """The shown lines of one side (by number), tabs expanded, common indentation removed."""
    shown = {n: lines[n - 1].expandtabs(4).rstrip() for n in numbers if n and n <= len(lines)}
    indents = [len(t) - len(t.lstrip(" ")) for t in shown.values() if t.strip()]
    cut = min(indents, default=0)
    return {n: t[cut:] for n, t in shown.items()}


def diff_excerpt(rows: list[Row], here_text: str, there_text: str, limit: int = HOVER_ROWS) -> str:
    """The rows as a diff from the other copy to this one: one narrow column, no headers.

    ``-`` lines are the other copy's, ``+`` this copy's, with their line numbers; a line both
    copies share is shown once. A renamed or changed row is its two lines. Hovers are narrow
    and short (VS Code's is 250 pixels high), so this is what they show.
    """
    shown = pick(rows, limit)
    here = _dedented(unify_line_ends(here_text).split("\n"), [rows[i].here for i in shown])
    there = _dedented(unify_line_ends(there_text).split("\n"), [rows[i].there for i in shown])
    digits = max(
        (len(str(n)) for i in shown for n in (rows[i].here, rows[i].there) if n), default=1
    )

    def line(sign: str, number: int | None, texts: dict[int, str]) -> str:
        code = _clip(texts.get(number or 0, ""), DIFF_WIDTH)
        return f"{sign} {number:>{digits}} {code}".rstrip()

    out: list[str] = []
    previous = -1
    for i in shown:
        if i > previous + 1:
            out.append(f"@@ {GAP} @@")
        row = rows[i]
        if row.mark == SAME:
            out.append(line(" ", row.here, here))
        else:
            if row.there is not None:
                out.append(line("-", row.there, there))
            if row.here is not None:
                out.append(line("+", row.here, here))
        previous = i
    if previous < len(rows) - 1:
        out.append(f"@@ {GAP} @@")
    body = "\n".join(out)
    fence = "`" * max(3, _longest_run(body, "`") + 1)
    return f"{fence}diff\n{body}\n{fence}"


def _longest_run(text: str, char: str) -> int:
    longest = run = 0
    for c in text:
        run = run + 1 if c == char else 0
        longest = max(longest, run)
    return longest
