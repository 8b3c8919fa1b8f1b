"""The alignment a hover shows: which lines of two copies correspond, side by side.

Lines are compared by *shape* (:func:`crystal_lsp.clones.regions.line_shapes`: the line's tokens
with names as ``ID`` and literals as ``LIT``), so a renamed line still corresponds to its
original; lines of equal shape but different tokens are marked as renamed. Lines without tokens
(blank, comments only) are left out. When a copy's indexed tokens do not match the text shown
(the file changed since it was indexed), its lines are compared by their text instead.

Long alignments show the differing rows first and their neighbours, gaps marked ``⋯``. Two
forms: a unified diff from the other copy to this one (:func:`diff_excerpt`, one narrow column:
what a hover shows, since editors' hovers are narrow and short), and a fenced block of two
columns, this copy on the left, the other on the right, one mark per row (:func:`excerpt`,
:data:`LEGEND`, up to :data:`MAX_ROWS` rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from crystal_lsp.clones.findings import Location
from crystal_lsp.clones.regions import line_shapes

if TYPE_CHECKING:
    from crystal_lsp.server.workspace import Folder

SAME, RENAMED, CHANGED, HERE_ONLY, THERE_ONLY = " ", "~", "!", "+", "-"
LEGEND = (
    f"`{RENAMED}` renamed (same shape, other names or literals), `{CHANGED}` changed, "
    f"`{HERE_ONLY}` only in this copy, `{THERE_ONLY}` only in the other copy"
)
MAX_ROWS = 12
WIDTH = 40
"""Characters of code shown per side (longer lines are cut with ``…``)."""
DIFF_WIDTH = 64
"""Characters of code per line of the hover's diff (:func:`diff_excerpt`)."""
HOVER_ROWS = 6
"""Corresponding lines a hover shows (a renamed or changed one takes two lines of the diff)."""
GAP = "⋯"
ALIKE = 0.5
"""Lines of a differing stretch are paired as changed when their shapes are this alike."""


@dataclass(frozen=True)
class Line:
    """A line of a copy that holds tokens."""

    number: int
    """1-based line number in its file."""
    shape: str
    tokens: str
    """Its tokens (or, without tokens, its whitespace-normalized text): equal means identical."""


@dataclass(frozen=True)
class Row:
    """One row of the alignment: a line of this copy, of the other, or of both."""

    mark: str
    here: int | None
    there: int | None


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
            out = []
            shapes = line_shapes(heavy, span.start, span.end)
            for k, (first, shape) in enumerate(shapes):
                last = shapes[k + 1][0] if k + 1 < len(shapes) else span.end
                raw = "\0".join(heavy.texts[first:last])
                out.append(Line(heavy.lines[first] + 1, shape, raw))
            return out
    lines = text.split("\n")
    out = []
    for number in range(location.first_line, min(location.last_line, len(lines)) + 1):
        words = " ".join(lines[number - 1].split())
        if words:
            out.append(Line(number, words, words))
    return out


def align(here: list[Line], there: list[Line]) -> list[Row]:
    """The rows of two copies' lines matched by shape (this copy is ``a``, the other ``b``)."""
    matcher = SequenceMatcher(None, [x.shape for x in here], [x.shape for x in there], False)
    rows: list[Row] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            for x, y in zip(here[a0:a1], there[b0:b1]):
                mark = SAME if x.tokens == y.tokens else RENAMED
                rows.append(Row(mark, x.number, y.number))
            continue
        paired = min(a1 - a0, b1 - b0) if op == "replace" else 0
        for x, y in zip(here[a0 : a0 + paired], there[b0 : b0 + paired]):
            if _alike(x.shape, y.shape):
                rows.append(Row(CHANGED, x.number, y.number))
            else:
                rows += [Row(HERE_ONLY, x.number, None), Row(THERE_ONLY, None, y.number)]
        rows += [Row(HERE_ONLY, x.number, None) for x in here[a0 + paired : a1]]
        rows += [Row(THERE_ONLY, None, y.number) for y in there[b0 + paired : b1]]
    return rows


def _alike(a: str, b: str) -> bool:
    """Whether two line shapes are alike enough to be shown as one changed line."""
    return SequenceMatcher(None, a.split(), b.split(), False).ratio() >= ALIKE


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


def _clip(text: str, width: int = WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _dedented(lines: list[str], numbers: list[int | None]) -> dict[int, str]:
    """The shown lines of one side (by number), tabs expanded, common indentation removed."""
    shown = {n: lines[n - 1].expandtabs(4).rstrip() for n in numbers if n and n <= len(lines)}
    indents = [len(t) - len(t.lstrip(" ")) for t in shown.values() if t.strip()]
    cut = min(indents, default=0)
    return {n: t[cut:] for n, t in shown.items()}


def excerpt(rows: list[Row], here_text: str, there_text: str, titles: tuple[str, str]) -> str:
    """The rows as a fenced code block of two columns (see the module docstring)."""
    shown = pick(rows)
    here = _dedented(here_text.split("\n"), [rows[i].here for i in shown])
    there = _dedented(there_text.split("\n"), [rows[i].there for i in shown])
    digits = max(
        (len(str(n)) for i in shown for n in (rows[i].here, rows[i].there) if n), default=1
    )

    def cell(number: int | None, texts: dict[int, str]) -> str:
        if number is None:
            return " " * (digits + 1 + WIDTH)
        return f"{number:>{digits}} {_clip(texts.get(number, '')):<{WIDTH}}"

    gap = f"  {GAP:>{digits}}{' ' * (WIDTH + 1)} │ {GAP:>{digits}}"
    out = [f"  {_clip(titles[0]):<{digits + 1 + WIDTH}} │ {titles[1]}".rstrip()]
    previous = -1
    for i in shown:
        if i > previous + 1:
            out.append(gap)
        row = rows[i]
        out.append(f"{row.mark} {cell(row.here, here)} │ {cell(row.there, there)}".rstrip())
        previous = i
    if previous < len(rows) - 1:
        out.append(gap)
    body = "\n".join(out)
    fence = "`" * max(3, _longest_run(body, "`") + 1)
    return f"{fence}text\n{body}\n{fence}"


def diff_excerpt(rows: list[Row], here_text: str, there_text: str, limit: int = HOVER_ROWS) -> str:
    """The rows as a diff from the other copy to this one: one narrow column, no headers.

    ``-`` lines are the other copy's, ``+`` this copy's, with their line numbers; a line both
    copies share is shown once. A renamed or changed row is its two lines. Hovers are narrow
    and short (VS Code's is 250 pixels high), so this is what they show, under a caption naming
    the sides (:func:`excerpt` is the side-by-side form).
    """
    shown = pick(rows, limit)
    here = _dedented(here_text.split("\n"), [rows[i].here for i in shown])
    there = _dedented(there_text.split("\n"), [rows[i].there for i in shown])
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
