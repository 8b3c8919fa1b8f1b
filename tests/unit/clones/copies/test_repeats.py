"""One copy, one finding: a finding repeating a pair of a higher-ranked one joins it."""

from __future__ import annotations

from crystal_lsp.clones.copies.repeats import merge_repeats, same_place
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
