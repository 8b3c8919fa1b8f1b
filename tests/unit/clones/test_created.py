"""The line mapping and the pair rule of :mod:`crystal_lsp.clones.created`, without git."""

from __future__ import annotations

from crystal_lsp.clones.created import (
    Before,
    _Existing,
    _judge,
    added_share,
    created_copies,
    grew,
    old_lines,
)
from crystal_lsp.clones.findings import Finding, Location, Pair
from crystal_lsp.clones.git import Git, Spans, parse_patch


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


def test_an_old_copy_the_finder_reaches_further_after_a_small_edit_did_not_grow() -> None:
    """A two-line lint fix inside an old template: the after-finding spans the whole template,
    the before-finding only its tail, yet the change added two lines, not the growth."""
    before = _before(ps=[(31, 2, 31, 2)])
    after = _finding(_loc("fish.py", 17, 292, tokens=210), _loc("ps.py", 20, 303, tokens=213))
    existing = _Existing(
        [_finding(_loc("fish.py", 276, 292, tokens=101), _loc("ps.py", 288, 303, tokens=101))]
    )
    verdict = _judge(after, {"ps.py": [(31, 32)]}, before, existing)
    assert verdict.copies == ()
    # the same finding where the change added the code it grew by is a larger copy: new
    before = _before(ps=[(31, 2, 31, 260)])
    verdict = _judge(after, {"ps.py": [(31, 290)]}, before, existing)
    assert verdict.copies == (1,)


def test_growth_counts_the_added_lines_when_given() -> None:
    after, old = _loc("a.py", 1, 100, tokens=300), _loc("a.py", 90, 100, tokens=60)
    assert grew(after, old) and grew(after, old, added_lines=60)
    assert not grew(after, old, added_lines=2)


# two old tests, both rewritten alike by a sweep (isolated_filesystem -> tmp_path)
SWEPT = """\
def test_write(runner, tmp_path):
    @click.command()
    @click.option("--file", type=click.File("w"))
    def writer(file):
        file.write("Hello")

    example = tmp_path / "example.txt"
    result = runner.invoke(writer, [f"--file={example}"])
    assert result.exit_code == 0


def test_lazy(runner, tmp_path):
    @click.command()
    @click.option("--file", type=click.File("w", lazy=True))
    def writer(file):
        pass

    example = tmp_path / "example.txt"
    result = runner.invoke(writer, [f"--file={example}"])
    assert result.exit_code == 0
"""


def _swept(text: str, hunks: list[tuple[int, int, int, int]]) -> tuple[Before, dict[str, Spans]]:
    before = Before(Git("."), hunks={"t.py": hunks}, read={"t.py": text.encode()}.get)
    added = {"t.py": [(n, n + c - 1) for _, _, n, c in hunks if c]}
    return before, added


def test_two_old_places_edited_alike_are_no_copy_created() -> None:
    before, added = _swept(SWEPT, [(1, 1, 1, 1), (7, 3, 7, 2), (13, 1, 12, 1), (19, 3, 18, 2)])
    after = _finding(_loc("t.py", 2, 9), _loc("t.py", 13, 20))
    kept, existing = created_copies([after], added, before, lambda focus: [])
    assert (kept, existing) == ([], 1)


def test_code_pasted_into_an_old_function_is_a_copy_though_the_original_was_edited() -> None:
    """The pasted lines match the original's old lines, not what the change added to it."""
    pasted = SWEPT.replace(
        "    def writer(file):\n        pass\n",
        '    @click.option("--file", type=click.File("w"))\n'
        "    def writer(file):\n"
        '        file.write("Hello")\n',
    ).replace('@click.option("--file", type=click.File("w", lazy=True))\n', "")
    assert pasted.count('file.write("Hello")') == 2
    before, added = _swept(pasted, [(1, 1, 1, 1), (7, 3, 7, 2), (15, 3, 14, 3)])
    after = _finding(_loc("t.py", 2, 9), _loc("t.py", 13, 20))
    kept, _ = created_copies([after], added, before, lambda focus: [])
    assert [v.copies for v in kept] == [(1,)]
