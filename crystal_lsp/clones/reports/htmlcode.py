"""The code of two copies as an HTML table: aligned lines side by side, differing tokens marked.

The rows are the core aligner's (:mod:`crystal_lsp.clones.reports.sidebyside`); lines of a copy that
hold no tokens (comments) are shown too, on their own side, so that every line of code of both
copies is on the page. Markup is built with :mod:`xml.etree.ElementTree`, which escapes every
text and attribute: file names and code come from the repository and are never trusted.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

from crystal_lsp.clones.findings import Location, display_path, hidden_char
from crystal_lsp.clones.reports.sidebyside import (
    CHANGED,
    HERE_ONLY,
    RENAMED,
    SAME,
    THERE_ONLY,
    Line,
    Row,
    align,
    differing,
    shaped_lines,
    text_lines,
    token_span,
)
from crystal_lsp.errors import CrystalError
from crystal_lsp.text.entries import Heavy, lex_file
from crystal_lsp.text.sources import DEFAULT_MAX_BYTES, SkippedFile, read_source

ROW_CLASS = {
    SAME: "same",
    RENAMED: "renamed",
    CHANGED: "changed",
    HERE_ONLY: "left-only",
    THERE_ONLY: "right-only",
}
MARK_TEXT = {SAME: "", RENAMED: "~", CHANGED: "!", HERE_ONLY: "+", THERE_ONLY: "-"}
LEGEND = (
    ("renamed", "~", "same shape, other names or literals"),
    ("changed", "!", "changed"),
    ("left-only", "+", "only in the left copy"),
    ("right-only", "-", "only in the right copy"),
    ("context", "", "a line without code (comment), shown on its side"),
)


@dataclass
class SourceFiles:
    """The scanned folder's files as the report reads them: confined to the root, read once."""

    root: str
    max_bytes: int = DEFAULT_MAX_BYTES
    _texts: dict[str, str | CrystalError] = field(default_factory=dict)
    _heavy: dict[tuple[str, str], Heavy | None] = field(default_factory=dict)

    def text(self, path: str) -> str:
        """The text of a file of the root, or ``CrystalError`` saying why it cannot be shown."""
        if path not in self._texts:
            full = os.path.join(self.root, path)
            try:
                self._texts[path] = read_source(full, self.max_bytes, self.root).text
            except SkippedFile as exc:
                self._texts[path] = CrystalError(f"{display_path(path)}: {exc.reason}")
        found = self._texts[path]
        if isinstance(found, CrystalError):
            raise found
        return found

    def heavy(self, path: str, language: str) -> Heavy | None:
        """The file's tokens as the index lexes them (None when they cannot be had)."""
        key = (path, language)
        if key not in self._heavy:
            try:
                # the C family is compared as one language: each file lexes as the index lexes it
                own = None if language in ("c", "cpp") else language
                self._heavy[key] = lex_file(path, self.text(path), own)[1]
            except (CrystalError, ValueError):
                self._heavy[key] = None
        return self._heavy[key]


@dataclass
class Side:
    """One copy of a pair as the table shows it."""

    location: Location
    text: list[str]
    lines: list[Line]
    by_tokens: bool
    """Whether its lines are compared by tokens (else by text: the file changed since the scan)."""


def side_of(files: SourceFiles, location: Location, language: str) -> Side:
    """A copy's lines (by tokens when the file still holds what was scanned, else by text)."""
    text = files.text(location.path)
    heavy = files.heavy(location.path, language)
    span = token_span(heavy, location) if heavy is not None else None
    lines = text.split("\n")
    if heavy is not None and span is not None and span[1] - span[0] == location.tokens:
        return Side(location, lines, shaped_lines(heavy, *span), True)
    return Side(location, lines, text_lines(text, location.first_line, location.last_line), False)


def _by_text(side: Side) -> Side:
    loc = side.location
    text = "\n".join(side.text)
    return Side(loc, side.text, text_lines(text, loc.first_line, loc.last_line), False)


def _visible(text: str) -> str:
    """Code text with bidi, zero-width and other invisible characters shown as code points.

    Bidirectional controls reorder what is shown ("trojan source"), zero-width ones hide a
    difference: the rule of names (:func:`hidden_char`), the tab kept.
    """
    if not any(c != "\t" and hidden_char(c) for c in text):
        return text
    return "".join(
        f"\u27e8U+{ord(c):04X}\u27e9" if c != "\t" and hidden_char(c) else c for c in text
    )


def _indent(side: Side, numbers: list[int]) -> int:
    """Leading whitespace (in characters) that every shown non-blank line of a side has."""
    widths = [
        len(line) - len(line.lstrip(" \t"))
        for n in numbers
        if 0 < n <= len(side.text) and (line := side.text[n - 1]).strip()
    ]
    return min(widths, default=0)


def _code(td: ET.Element, raw: str, cut: int, line: Line | None, marked: set[int]) -> None:
    """Fill a code cell: the line's text, its ``marked`` tokens in ``<mark>``."""
    text = raw[cut:].rstrip("\r")
    if line is None or not marked:
        td.text = _visible(text)
        return
    pos, last = 0, td
    td.text = ""
    for k, (offset, token) in enumerate(line.cells):
        if k not in marked:
            continue
        start = offset - cut
        if start < pos or text[start : start + len(token)] != token:
            continue  # a token that spans lines, or a line changed since: left unmarked
        before = _visible(text[pos:start])
        if last is td:
            td.text = (td.text or "") + before
        else:
            last.tail = (last.tail or "") + before
        last = sub(td, "mark", _visible(token))
        pos = start + len(token)
    rest = _visible(text[pos:])
    if last is td:
        td.text = (td.text or "") + rest
    else:
        last.tail = rest


def _with_context(
    rows: list[Row], left: Side, right: Side
) -> list[tuple[str, int | None, int | None]]:
    """The rows, with each side's lines that hold no tokens inserted where they stand."""
    out: list[tuple[str, int | None, int | None]] = []
    seen = [left.location.first_line - 1, right.location.first_line - 1]

    def fill(k: int, side: Side, upto: int) -> None:
        for n in range(seen[k] + 1, upto):
            if 0 < n <= len(side.text) and side.text[n - 1].strip():
                out.append(("context", n, None) if k == 0 else ("context", None, n))
        seen[k] = max(seen[k], upto)

    for row in rows:
        if row.here is not None:
            fill(0, left, row.here)
        if row.there is not None:
            fill(1, right, row.there)
        out.append((row.mark, row.here, row.there))
    fill(0, left, left.location.last_line + 1)
    fill(1, right, right.location.last_line + 1)
    return out


def side_by_side(parent: ET.Element, left: Side, right: Side, titles: tuple[str, str]) -> int:
    """Append the table of two copies to ``parent``; returns how many rows differ.

    Two copies are compared alike: by tokens when both are, else both by text.
    """
    if not (left.by_tokens and right.by_tokens):
        left, right = _by_text(left), _by_text(right)
    rows = _with_context(align(left.lines, right.lines), left, right)
    here = {x.number: x for x in left.lines}
    there = {x.number: x for x in right.lines}
    cuts = (
        _indent(left, [r[1] for r in rows if r[1] is not None]),
        _indent(right, [r[2] for r in rows if r[2] is not None]),
    )
    table = sub(parent, "table", class_="sbs")
    columns = sub(table, "colgroup")
    for klass in ("n", "c", "m", "n", "c"):
        sub(columns, "col", class_=klass)
    head = sub(sub(table, "thead"), "tr")
    sub(head, "th", titles[0], colspan="2", class_="title")
    sub(head, "th", "", class_="m")
    sub(head, "th", titles[1], colspan="2", class_="title")
    body = sub(table, "tbody")
    differ = 0
    for mark, a, b in rows:
        klass = ROW_CLASS.get(mark, "context")
        differ += klass not in ("same", "context")
        tr = sub(body, "tr", class_=klass)
        la, lb = here.get(a or 0), there.get(b or 0)
        marked: tuple[set[int], set[int]] = (set(), set())
        if mark in (RENAMED, CHANGED) and la is not None and lb is not None:
            marked = differing(la, lb)
        for k, (side, number, line) in enumerate(((left, a, la), (right, b, lb))):
            if k == 1:
                sub(tr, "td", MARK_TEXT.get(mark, ""), class_="m")
            if number is None:
                sub(tr, "td", "", class_="n")
                sub(tr, "td", "", class_="c")
                continue
            sub(tr, "td", str(number), class_="n")
            raw = side.text[number - 1] if number <= len(side.text) else ""
            _code(sub(tr, "td", class_="c"), raw, cuts[k], line, marked[k])
    return differ


def legend(parent: ET.Element) -> None:
    """The key to the row colours and marks."""
    ul = sub(parent, "ul", class_="legend")
    for klass, mark, meaning in LEGEND:
        li = sub(ul, "li")
        sub(li, "span", mark or "\u00a0", class_=f"key {klass}")
        sub(li, "span", f" {meaning}")
    li = sub(ul, "li")
    sub(li, "mark", "token")
    sub(li, "span", " a token the other copy does not have at that place")


def sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: Any) -> ET.Element:
    """A child element with text and attributes (``class_`` for ``class``)."""
    node = ET.SubElement(parent, tag, {k.rstrip("_"): str(v) for k, v in attrs.items()})
    if text is not None:
        node.text = text
    return node
