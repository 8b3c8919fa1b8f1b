"""One copy, one finding: a finding repeating a pair of a higher-ranked one joins it or is trimmed."""

from __future__ import annotations

import pathlib

from scan_samples import ORIGINAL, UNRELATED, filler, find_all, module, near_copy, renamed

from crystal_lsp.clones.copies.repeats import (
    _touch,
    kept_locations,
    merge_repeats,
    same_place,
    trim_shown,
)
from crystal_lsp.clones.findings import COPY, SIMILAR, Finding, Location, Pair


def loc(path: str, first: int, last: int) -> Location:
    return Location(path, first, 1, last, 1, "function", f"f{first}", 100, "", "")


def finding(places: list[Location], level: str = COPY) -> Finding:
    pairs = [Pair(0, k, 0.9, 0.8, copied=80) for k in range(1, len(places))]
    return Finding("java", places, pairs, level=level)


def test_four_mutual_copies_in_two_classes_are_one_finding() -> None:
    """Classes around two representatives share two members: one finding lists all four."""
    a, b, c, d = (
        loc("A.java", 10, 40),
        loc("A.java", 50, 80),
        loc("B.java", 5, 35),
        loc("C.java", 1, 30),
    )
    first = finding([a, b, c])
    second = finding([loc("B.java", 6, 35), loc("A.java", 50, 79), d])
    kept, joined = merge_repeats([first, second])
    assert joined == 1
    (only,) = kept
    assert only.locations == [a, b, c, d]
    # the second class's pairs (its representative, B.java, with the others) join, remapped
    assert {frozenset((p.a, p.b)) for p in only.pairs} == {
        frozenset(x) for x in ((0, 1), (0, 2), (2, 1), (2, 3))
    }


def test_one_shared_location_or_another_level_stays_apart() -> None:
    a, b, c, d = (
        loc("A.java", 10, 40),
        loc("A.java", 50, 80),
        loc("B.java", 5, 35),
        loc("C.java", 1, 30),
    )
    kept, joined = merge_repeats([finding([a, b]), finding([a, c]), finding([b, c, d], SIMILAR)])
    assert joined == 0 and len(kept) == 3


def test_a_partly_overlapping_location_is_not_the_same_member() -> None:
    a, b, c = loc("A.java", 10, 40), loc("A.java", 50, 80), loc("B.java", 5, 35)
    kept, joined = merge_repeats([finding([a, b, c]), finding([a, b, loc("B.java", 30, 90)])])
    assert joined == 0 and len(kept) == 2


def test_same_place() -> None:
    assert same_place(loc("A", 10, 40), loc("A", 20, 45))
    assert not same_place(loc("A", 10, 40), loc("A", 35, 90))
    # a whole function is not five lines of it: the finding of the function stays apart
    assert not same_place(loc("A", 407, 419), loc("A", 408, 412))
    assert not same_place(loc("A", 10, 40), loc("B", 10, 40))


def test_members_inside_two_locations_of_a_higher_finding_are_trimmed() -> None:
    """A four-way copy, two of its members inside the two windows of a higher finding."""
    host = finding([loc("A.java", 100, 400), loc("A.java", 500, 800)])
    four = finding(
        [
            loc("B.java", 1, 30),
            loc("A.java", 200, 230),
            loc("C.java", 1, 30),
            loc("A.java", 600, 630),
        ]
    )
    kept, dropped = trim_shown([host, four], kept_locations)
    assert dropped == 1 and len(kept) == 2
    assert [(x.path, x.first_line) for x in kept[1].locations] == [
        ("B.java", 1),
        ("A.java", 200),
        ("C.java", 1),
    ]
    assert {(p.a, p.b) for p in kept[1].pairs} == {(0, 1), (0, 2)}


def test_a_pair_shown_higher_goes_whole_and_a_whole_file_trims_nothing() -> None:
    host = finding([loc("A.java", 100, 400), loc("A.java", 500, 800)])
    inner = finding([loc("A.java", 350, 420), loc("A.java", 790, 850)])  # overlaps both
    same_window = finding([loc("A.java", 120, 150), loc("A.java", 200, 230)])  # one location
    kept, dropped = trim_shown([host, inner, same_window], kept_locations)
    assert kept == [host, same_window] and dropped == 2
    files = Finding(
        "java",
        [
            Location("A.java", 1, 1, 900, 1, "file", "", 900, "", ""),
            Location("B.java", 1, 1, 900, 1, "file", "", 900, "", ""),
        ],
        [Pair(0, 1, 1.0, 1.0, copied=900)],
    )
    inside = finding([loc("A.java", 10, 40), loc("B.java", 10, 40)])
    assert trim_shown([files, inside], kept_locations) == ([files, inside], 0)


def test_no_pair_of_places_in_two_findings(tmp_path: pathlib.Path) -> None:
    """Two modules share a run of three functions; one of them is also copied into two more."""
    files = {
        "a.py": module(filler(2), UNRELATED[0], ORIGINAL, UNRELATED[1]),
        "b.py": module(UNRELATED[2], UNRELATED[0], ORIGINAL, UNRELATED[1]),
        "c.py": module(near_copy()),
        "d.py": module(renamed()),
    }
    found = find_all(tmp_path / "repo", files)
    window, function = found
    assert {x.path for x in window.locations} == {"a.py", "b.py"}
    # the function's copy in b.py lies in the window already paired with a.py's
    assert sorted(x.path for x in function.locations) == ["a.py", "c.py", "d.py"]
    for k, f in enumerate(found):
        for g in found[:k]:
            hit = [{j for j, y in enumerate(g.locations) if _touch(x, y)} for x in f.locations]
            assert sum(1 for h in hit if h) <= 1


def test_a_paste_of_one_variant_keeps_its_original_not_the_representative() -> None:
    """Per-type variants, two inside two windows shown higher; one pasted outside them.

    The class pairs every member with its representative only; the paste (the same normalized
    text as its original) keeps its original, and the other variant inside the windows goes.
    """

    def variant(path: str, first: int, norm: str) -> Location:
        return Location(path, first, 1, first + 30, 1, "function", "f", 100, "", norm)

    host = finding([loc("A.java", 100, 400), loc("A.java", 500, 800)])
    variants = finding(
        [
            variant("B.java", 1, "int"),
            variant("A.java", 200, "long"),
            variant("C.java", 1, "char"),
            variant("A.java", 600, "char"),
        ]
    )
    kept, dropped = trim_shown([host, variants], kept_locations)
    assert dropped == 1
    assert [(x.path, x.first_line) for x in kept[1].locations] == [
        ("B.java", 1),
        ("C.java", 1),
        ("A.java", 600),
    ]
