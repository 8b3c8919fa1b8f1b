"""The line mapping and the pair rule of :mod:`crystal_lsp.clones.created`, without git."""

from __future__ import annotations

from crystal_lsp.clones.created import (
    Before,
    _Existing,
    _judge,
    added_share,
    grew,
    old_lines,
)
from crystal_lsp.clones.findings import Finding, Location, Pair
from crystal_lsp.clones.git import Git, parse_patch


def _loc(path: str, first: int, last: int, tokens: int = 60) -> Location:
    return Location(path, first, 0, last, 0, "function", "f", tokens, "s", "n")


def _finding(*locs: Location) -> Finding:
    pairs = [Pair(0, i, 0.9, 0.9) for i in range(1, len(locs))]
    return Finding("python", list(locs), pairs)


def test_old_lines_through_insertions_deletions_and_replacements() -> None:
    # old 1-10; insert 2 lines after old 3 (new 4-5); replace old 6-7 by new 8; delete old 9
    hunks = [(3, 0, 4, 2), (6, 2, 8, 1), (9, 1, 9, 0)]
    assert old_lines(hunks, 1, 3) == (1, 3)
    assert old_lines(hunks, 4, 5) is None  # wholly added
    assert old_lines(hunks, 3, 6) == (3, 4)  # new 6 is old 4
    assert old_lines(hunks, 8, 8) == (6, 7)  # the replacement stands for what it replaced
    assert old_lines(hunks, 9, 9) == (8, 8)
    assert old_lines(hunks, 10, 10) == (10, 10)  # after the deletion of old 9


def test_hunks_come_from_the_patch() -> None:
    patch = (
        b"diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n"
        b"@@ -3,0 +4,2 @@\n+a\n+b\n@@ -6,2 +8 @@\n-c\n-d\n+e\n"
    )
    assert parse_patch(patch).hunks == {"x.py": [(3, 0, 4, 2), (6, 2, 8, 1)]}


def test_added_share_and_growth() -> None:
    loc = _loc("a.py", 11, 20)
    assert added_share(loc, [(1, 12), (19, 30)]) == 0.4
    assert added_share(loc, None) == 0.0
    assert grew(_loc("a.py", 1, 30, tokens=120), _loc("a.py", 1, 10, tokens=60))
    assert not grew(_loc("a.py", 1, 12, tokens=70), _loc("a.py", 1, 10, tokens=60))


def _before(**hunks: list[tuple[int, int, int, int]]) -> Before:
    return Before(Git("."), hunks={k.replace("_", "/") + ".py": v for k, v in hunks.items()})


def test_an_edited_pair_that_existed_before_is_not_new() -> None:
    before = _before(app_a=[(12, 1, 12, 1)])
    after = _finding(_loc("app/a.py", 10, 20), _loc("app/b.py", 1, 11))
    existing = _Existing([_finding(_loc("app/a.py", 10, 20), _loc("app/b.py", 1, 11))])
    verdict = _judge(after, {"app/a.py": [(12, 12)]}, before, existing)
    assert verdict.copies == ()


def test_the_wholly_added_side_is_the_copy_of_the_edited_one() -> None:
    before = _before(app_a=[(12, 1, 12, 1), (30, 0, 31, 11)])
    after = _finding(_loc("app/a.py", 10, 20), _loc("app/a.py", 31, 41))
    verdict = _judge(after, {"app/a.py": [(12, 12), (31, 41)]}, before, _Existing([]))
    assert verdict.copies == (1,) and verdict.originals == ((0,),)


def test_a_pair_with_another_place_is_new_even_if_one_existed() -> None:
    before = _before(app_a=[(12, 1, 12, 1)])
    after = _finding(_loc("app/c.py", 1, 11), _loc("app/a.py", 10, 20))
    existing = _Existing([_finding(_loc("app/a.py", 10, 20), _loc("app/b.py", 1, 11))])
    verdict = _judge(after, {"app/a.py": [(12, 12)]}, before, existing)
    assert verdict.copies == (1,) and verdict.originals == ((0,),)
