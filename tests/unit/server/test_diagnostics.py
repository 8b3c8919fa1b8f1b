"""Unit tests of :mod:`crystal_lsp.server.diagnostics`: underlined ranges, messages, related copies."""

from __future__ import annotations

from lsprotocol import types

from crystal_lsp.clones.findings import LINES, Finding, Location, Pair
from crystal_lsp.server.buffers import DocResult
from crystal_lsp.server.diagnostics import (
    FIRST_LINE,
    RANGE,
    Flag,
    first_line,
    flags_of,
    message_of,
    related_of,
)
from crystal_lsp.server.positions import TextIndex
from crystal_lsp.text.incremental import IncrementalEntry

# a.py: function parse (the representative); b.py: lines 12-30 of function main; c.py: lines 3-9
PARSE = Location("a.py", 1, 1, 20, 10, "function", "parse", 120, "s1", "n1")
MAIN = Location(
    "b.py", 12, 5, 30, 17, LINES, "", 110, "s2", "n2", "function", "main", 10, 40
)  # fmt: skip
LOOSE = Location("c.py", 3, 1, 9, 8, LINES, "", 60, "s3", "n3")
FINDING = Finding(
    "python",
    [PARSE, MAIN, LOOSE],
    [Pair(0, 1, 0.93, 0.61, copied=100), Pair(0, 2, 0.8, -0.01, copied=50)],
    representative=0,
)
B_TEXT = "".join(f"    line_{n} = {n}  # é\n" for n in range(1, 41))


def _flags(path: str, text: str, underline: str) -> list[Flag]:
    result = DocResult(f"file:///w/{path}", 1, path, language="python", findings=[FINDING])
    return flags_of(result, TextIndex(text), underline)[0]


class _Ranges:
    """Stands in for :class:`LocationRanges`: every path has a URI."""

    def resolve(self, location: Location) -> types.Location:
        position = types.Position(line=location.first_line - 1, character=0)
        return types.Location(
            uri=f"file:///w/{location.path}", range=types.Range(start=position, end=position)
        )


def test_range_underlines_the_whole_aligned_range() -> None:
    [flag] = _flags("b.py", B_TEXT, RANGE)
    assert flag.here is MAIN
    assert flag.range == types.Range(
        start=types.Position(line=11, character=4), end=types.Position(line=29, character=17)
    )
    assert flag.underline == flag.range


def test_first_line_underlines_the_first_line_only() -> None:
    [flag] = _flags("b.py", B_TEXT, FIRST_LINE)
    line = B_TEXT.split("\n")[11]
    assert flag.range.end.line == 29  # the flag (hover, code actions) keeps the whole range
    assert flag.underline == types.Range(
        start=types.Position(line=11, character=4),
        end=types.Position(line=11, character=len(line)),  # é is one UTF-16 unit
    )
    wide = B_TEXT.replace("é", "😀")
    [flag] = _flags("b.py", wide, FIRST_LINE)
    assert flag.underline.end.character == len(wide.split("\n")[11]) + 1  # a surrogate pair


def test_first_line_of_a_one_line_range_is_the_range() -> None:
    rng = types.Range(
        start=types.Position(line=2, character=3), end=types.Position(line=2, character=9)
    )
    assert first_line(TextIndex("a\nb\ncdefghijkl\n"), rng) == rng


def test_a_member_is_compared_with_the_representative() -> None:
    [flag] = _flags("b.py", B_TEXT, RANGE)
    assert message_of(flag) == (
        "Near-duplicate (similarity 0.93, CrystalBLEU 0.61) of function parse in a.py:1"
    )
    [flag] = _flags("c.py", B_TEXT, RANGE)
    assert message_of(flag) == (
        "Near-duplicate (similarity 0.80, CrystalBLEU 0.00) of function parse in a.py:1"
    )


def test_the_representative_is_compared_with_its_closest_member() -> None:
    [flag] = _flags("a.py", B_TEXT, RANGE)
    # a unit copied whole is underlined on its header line: the message names its lines
    assert message_of(flag) == (
        "Near-duplicate (similarity 0.93, CrystalBLEU 0.61) of lines 12-30 of function main "
        "in b.py:12 (this copy: lines 1-20)"
    )
    [flag] = _flags("a.py", B_TEXT, FIRST_LINE)
    assert message_of(flag) == (
        "Near-duplicate (similarity 0.93, CrystalBLEU 0.61) of lines 12-30 of function main "
        "in b.py:12 (this copy: lines 1-20)"
    )


def test_related_information_describes_every_other_copy() -> None:
    [flag] = _flags("b.py", B_TEXT, RANGE)
    related = related_of(flag, _Ranges())  # type: ignore[arg-type]
    assert [(r.location.uri, r.message) for r in related] == [
        ("file:///w/a.py", "function parse (representative, similarity 0.93)"),
        ("file:///w/c.py", "lines 3-9 (same clone class)"),
    ]
    # a.py's copy is a whole function, underlined on its header line: its full range comes last
    [flag] = _flags("a.py", B_TEXT, RANGE)
    related = related_of(flag, _Ranges())  # type: ignore[arg-type]
    assert [r.message for r in related] == [
        "lines 12-30 of function main (similarity 0.93)",
        "lines 3-9 (similarity 0.80)",
        "this copy: function parse (lines 1-20)",
    ]


COPIED_FILE = """import os
import sys


def parse(path):
    with open(path) as fh:
        return [line.split("=") for line in fh if "=" in line]
"""


def test_a_whole_file_copy_is_underlined_on_its_first_unit_not_on_an_import() -> None:
    """A copied module's diagnostic sits on ``def parse``, not on ``import os``."""
    whole = Location("d.py", 1, 1, 7, 59, "file", "", 40, "s4", "n4")
    finding = Finding("python", [whole, PARSE], [Pair(0, 1, 1.0, 1.0, copied=40)], 0)
    entry = IncrementalEntry("d.py", COPIED_FILE, "python", min_tokens=5, min_lines=2)
    result = DocResult("file:///w/d.py", 1, "d.py", language="python", findings=[finding])
    result.entry = entry
    [flag] = flags_of(result, TextIndex(COPIED_FILE), RANGE)[0]
    assert flag.range.start.line == 0 and flag.range.end.line == 6  # the flag keeps the file
    assert flag.underline.start.line == 4 and flag.underline.end.line == 4  # def parse(path):
    [flag] = flags_of(result, TextIndex(COPIED_FILE), FIRST_LINE)[0]
    assert flag.underline.start.line == 0  # firstLine: the first line, as the setting says
