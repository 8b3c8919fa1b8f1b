"""Unit tests of :mod:`crystal_lsp.server.compare`: the renaming the compare view shows."""

from __future__ import annotations

from typing import Any

from crystal_lsp.server.compare import add_renaming, renaming_header

ORIGINAL = """\
def merge(intervals):
    ordered = sorted(intervals)
    merged = []
    for start, end in ordered:
        merged.append((start, end))
    return merged
"""
COPY = """\
def join(ranges):
    by_start = sorted(ranges)
    out = []
    for lo, hi in by_start:
        out.append((lo, hi + 1))
    return out
"""


def _answer(left: str, right: str, names: tuple[str, str] = ("a.py", "b.py")) -> dict[str, Any]:
    out: dict[str, Any] = {
        "left": {"uri": f"file:///w/{names[0]}", "text": left},
        "right": {"uri": f"file:///w/{names[1]}", "text": right},
    }
    add_renaming(out)
    return out


def test_a_renamed_copy_is_answered_with_the_originals_names_and_a_header() -> None:
    out = _answer(ORIGINAL, COPY)
    assert out["renaming"] == [
        ["merge", "join"],
        ["intervals", "ranges"],
        ["ordered", "by_start"],
        ["merged", "out"],
        ["start", "lo"],
        ["end", "hi"],
    ]
    assert out["right"]["text"] == COPY  # the copy's own text is still answered as it is
    mapped = out["right"]["mapped"].splitlines()
    original = ORIGINAL.splitlines()
    # only the line that really changed differs
    assert [k for k, (x, y) in enumerate(zip(original, mapped)) if x != y] == [4]
    assert mapped[4] == "        merged.append((start, end + 1))"
    assert out["header"] == (
        "# crystal: renamed in the copy (6), shown as the original's:\n"
        "#   merge → join, intervals → ranges, ordered → by_start\n"
        "#   merged → out, start → lo, end → hi\n"
    )


def test_an_identical_copy_and_copies_in_two_languages_have_no_renaming() -> None:
    same = _answer(ORIGINAL, ORIGINAL)
    assert same["renaming"] == [] and same["header"] == ""
    assert same["right"]["mapped"] == ORIGINAL
    other = _answer(ORIGINAL, COPY, ("a.py", "b.js"))
    assert other["renaming"] == [] and other["right"]["mapped"] == COPY


def test_the_header_is_a_comment_of_the_language() -> None:
    assert renaming_header([("a", "b")], "c") == (
        "// crystal: renamed in the copy (1), shown as the original's:\n//   a → b\n"
    )
    assert renaming_header([("a", "b")], "css").startswith("/* crystal: renamed")
    assert renaming_header([("a", "b")], "css").endswith("a → b */\n")
    assert renaming_header([], "python") == ""
