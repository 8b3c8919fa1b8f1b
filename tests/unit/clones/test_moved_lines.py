"""The line-level move map of :mod:`crystal_lsp.clones.moved_lines`, on small texts."""

from __future__ import annotations

from crystal_lsp.clones.moved_lines import move_map, moved_range, numbered, trivial

BLOCK = [
    "def check(out, err):",
    "    assert out == 'a'",
    "    }",
    "    assert err == ''",
    "    return out",
]


def test_blank_and_brace_lines_are_trivial() -> None:
    assert trivial("") and trivial("}") and trivial("});") and not trivial("x = 1")
    assert numbered(["a = 1", "", "  }", "  b = 2"], [(1, 4)]) == [(1, "a = 1"), (4, "b = 2")]
    assert numbered(["a = 1", "b = 2"], [(2, 9)]) == [(2, "b = 2")]


def test_re_indented_lines_moved_keep_their_old_lines() -> None:
    old = numbered(["x = 0", *BLOCK], [(2, 6)])
    new = numbered(["    " + line for line in BLOCK], [(1, 5)])
    moves = move_map({"new.py": new}, {"old.py": old})
    assert moves == {
        "new.py": {1: ("old.py", 2), 2: ("old.py", 3), 4: ("old.py", 5), 5: ("old.py", 6)}
    }
    assert moved_range(new, moves["new.py"]) == ("old.py", 2, 6)


def test_removed_lines_explain_one_place_only() -> None:
    old = numbered(BLOCK, [(1, 5)])
    first = numbered(BLOCK, [(1, 5)])
    moves = move_map({"b.py": first, "a.py": list(first)}, {"b.py": old})
    assert set(moves) == {"b.py"}  # the same file first; a.py's lines stay added


def test_runs_shorter_than_three_lines_and_scattered_lines_do_not_move() -> None:
    old = numbered(["assert out == 'a'", "y = 2", "assert err == ''"], [(1, 3)])
    new = numbered(["assert out == 'a'", "assert err == ''", "z = 3"], [(1, 3)])
    assert move_map({"n.py": new}, {"o.py": old}) == {}


def test_a_location_moved_only_in_part_has_no_old_range() -> None:
    new = numbered([*BLOCK, "extra = 1", "more = 2", "again = 3"], [(1, 8)])
    origins = {1: ("o.py", 1), 2: ("o.py", 2), 4: ("o.py", 4), 5: ("o.py", 5)}
    assert moved_range(new, origins) is None  # 4 of 7 lines
    assert moved_range(new[:4], origins) == ("o.py", 1, 5)
