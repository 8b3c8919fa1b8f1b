"""Blocks landing in one edit, and where tracked blocks move as the document changes.

A ``didChange`` carries text changes; each becomes a :class:`LineEdit` -- old lines
``[first, first + old)`` replaced by new lines ``[first, first + new)`` -- from which follow both
questions the server asks on every change:

* **did a block land?** An edit whose new lines, once the lines it leaves as they were are
  trimmed from both ends (re-inserting the same text is no insertion), hold at least
  ``min_lines`` non-blank lines: an accepted completion, a paste, an agent's edit, a file
  reloaded after it changed on disk. Keystrokes never qualify, and are told apart by counting
  the line breaks of the change's text alone (no text is split for them).
* **where are the tracked blocks now?** A block above or below an edit moves with it or stays;
  a block an edit reaches is *touched* (``Moved.touched``), and it then spans the edit as well.
  Lines added at the very end of a block's last line (Enter there) do not reach it.

A whole-document change (clients that sync full text) is reduced to the lines it changes by
trimming the common first and last lines, so typing with such a client moves blocks as
incremental changes do. Lines are LSP lines (``\\r\\n``, ``\\r`` and ``\\n`` end them), numbered
from 0; spans are inclusive ``(first, last)`` pairs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types

from crystal_lsp.server.positions import Codec, TextIndex, Utf16

_EOL = re.compile(r"\r\n|\r|\n")
Span = tuple[int, int]


@dataclass(frozen=True)
class LineEdit:
    """Old lines ``[first, first + old)`` became new lines ``[first, first + new)``."""

    first: int
    old: int
    new: int


@dataclass
class Moved:
    """A tracked span after an edit."""

    span: Span | None
    """Where it is now (None: every line of it was deleted)."""
    touched: bool = False


@dataclass
class Followed:
    """What one ``didChange`` did: the tracked spans moved, and the blocks that landed."""

    moved: list[Moved]
    landed: list[Span] = field(default_factory=list)
    lost: bool = False
    """The changes could not be replayed on the previous text (spans then count as touched)."""


def breaks(text: str) -> int:
    """The LSP line breaks in ``text``."""
    count = text.count("\n")
    if "\r" in text:
        count = len(_EOL.findall(text))
    return count


def lines_of(text: str) -> list[str]:
    """The LSP lines of a text, without their breaks."""
    return _EOL.split(text)


def partial_edit(
    change: types.TextDocumentContentChangePartial,
    lines: Sequence[str] | None = None,
    codec: Codec | None = None,
) -> LineEdit:
    """The lines an incremental change replaces, and how many replace them.

    ``lines``: the text's lines before the change, which tell an insertion at the very end of a
    line that starts with a line break (Enter there, Neovim appending lines) from an edit of
    that line: it only adds lines after it.
    """
    start, end = change.range.start, change.range.end
    added = breaks(change.text)
    if lines is not None and _after_line(change) and start.line < len(lines):
        line = lines[start.line]
        width = len(line) if line.isascii() else (codec or Utf16()).client_num_units(line)
        if start.character >= width:
            return LineEdit(start.line + 1, 0, added)
    if start.character == 0 and end.character == 0 and end.line >= start.line:
        if change.text == "" or change.text.endswith(("\n", "\r")):
            # whole lines out, whole lines in: the line at `end` is untouched
            return LineEdit(start.line, end.line - start.line, added)
    return LineEdit(start.line, max(end.line - start.line, 0) + 1, added + 1)


def common_ends(old: Sequence[Any], new: Sequence[Any]) -> tuple[int, int]:
    """How many items two sequences share at their start, then at their end (not overlapping)."""
    limit = min(len(old), len(new))
    head = 0
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail


def whole_edit(old_lines: Sequence[str], new_lines: Sequence[str]) -> LineEdit:
    """The lines a whole-document change replaces: all but the common first and last ones."""
    head, tail = common_ends(old_lines, new_lines)
    return LineEdit(head, len(old_lines) - head - tail, len(new_lines) - head - tail)


def move(span: Span, edit: LineEdit) -> Moved:
    """Where a span is after an edit, and whether the edit reached it."""
    first, last = span
    delta = edit.new - edit.old
    if edit.old == 0:
        if edit.first <= first:
            return Moved((first + delta, last + delta))
        if edit.first > last:
            return Moved(span)
        return Moved((first, last + delta), touched=True)
    end = edit.first + edit.old - 1
    if end < first:
        return Moved((first + delta, last + delta))
    if edit.first > last:
        return Moved(span)
    if edit.new == 0 and edit.first <= first and last <= end:
        return Moved(None, touched=True)
    start = min(first, edit.first)
    stop = last + delta if last > end else edit.first + edit.new - 1
    return Moved((start, max(start, stop)), touched=True)


def landed(
    old_lines: Sequence[str], new_lines: Sequence[str], edit: LineEdit, min_lines: int
) -> Span | None:
    """The block an edit inserted, if it holds ``min_lines`` non-blank lines (module docstring)."""
    before = old_lines[edit.first : edit.first + edit.old]
    after = new_lines[edit.first : edit.first + edit.new]
    head, tail = common_ends(before, after)
    block = after[head : len(after) - tail]
    while block and not block[-1].strip():
        block = block[:-1]
        tail += 1
    while block and not block[0].strip():
        block = block[1:]
        head += 1
    if sum(1 for line in block if line.strip()) < min_lines:
        return None
    return (edit.first + head, edit.first + head + len(block) - 1)


def apply(text: str, change: types.TextDocumentContentChangePartial, codec: Codec | None) -> str:
    """``text`` with an incremental change applied (as the client applied it)."""
    index = TextIndex(text, codec)
    start, end = index.offset_at(change.range.start), index.offset_at(change.range.end)
    return text[:start] + change.text + text[max(start, end) :]


def minimal(
    text: str, change: types.TextDocumentContentChangePartial, codec: Codec | None
) -> types.TextDocumentContentChangePartial:
    """The same change without the characters it replaces by themselves at either end.

    Neovim appends lines by replacing the last line break with a line break and the lines: what
    it really does is insert them after the last line.
    """
    index = TextIndex(text, codec)
    start, end = index.offset_at(change.range.start), index.offset_at(change.range.end)
    old, new = text[start : max(start, end)], change.text
    head, tail = common_ends(old, new)
    if not head and not tail:
        return change
    rng = types.Range(start=index.position(start + head), end=index.position(end - tail))
    return types.TextDocumentContentChangePartial(range=rng, text=new[head : len(new) - tail])


Change = types.TextDocumentContentChangePartial | types.TextDocumentContentChangeWholeDocument


def _partial(change: Change) -> bool:
    return isinstance(change, types.TextDocumentContentChangePartial)


def _after_line(change: types.TextDocumentContentChangePartial) -> bool:
    """An insertion after the start of a line that begins with a line break."""
    start = change.range.start
    return change.range.end == start and start.character > 0 and change.text[:1] in ("\n", "\r")


def _big(change: Change, min_lines: int) -> bool:
    if isinstance(change, types.TextDocumentContentChangeWholeDocument):
        return True
    return breaks(change.text) + 1 >= min_lines


def follow(
    old: str,
    new: str,
    changes: Sequence[Change],
    spans: Sequence[Span],
    min_lines: int | None,
    codec: Codec | None = None,
) -> Followed:
    """Replay one ``didChange`` on tracked spans, and find the blocks that landed.

    ``old`` and ``new``: the document before and after the changes; ``min_lines`` None: nothing
    lands (scoring is off). Texts are split only when a change may be a block (or is a whole
    document): keystrokes cost a count of line breaks.
    """
    moved = [Moved(span) for span in spans]
    found: list[Span] = []
    detect = min_lines is not None and any(_big(c, min_lines) for c in changes)
    if not detect and not spans:
        return Followed(moved, found)
    if not detect and all(_partial(c) for c in changes):
        for change in changes:
            _move_all(moved, found, partial_edit(change))  # type: ignore[arg-type]
        if not any(m.touched for m in moved):
            return Followed(moved, found)
        moved = [Moved(span) for span in spans]  # reached? replayed on the text to be sure
    text = old
    for change in changes:
        before = lines_of(text)
        if isinstance(change, types.TextDocumentContentChangePartial):
            after = apply(text, change, codec)
            edit = partial_edit(minimal(text, change, codec), before, codec)
        else:
            after = change.text
            edit = whole_edit(before, lines_of(after))
        _move_all(moved, found, edit)
        if min_lines is not None and _big(change, min_lines):
            block = landed(before, lines_of(after), edit, min_lines)
            if block is not None:
                found.append(block)
        text = after
    if text != new:
        return Followed([Moved(m.span, touched=True) for m in moved], [], lost=True)
    return Followed(moved, found)


def _move_all(moved: list[Moved], found: list[Span], edit: LineEdit) -> None:
    """Move tracked spans (touched ones stay touched) and the blocks found so far."""
    for k, m in enumerate(moved):
        if m.span is not None:
            after = move(m.span, edit)
            moved[k] = Moved(after.span, m.touched or after.touched)
    kept = [move(block, edit).span for block in found]
    found[:] = [span for span in kept if span is not None]
