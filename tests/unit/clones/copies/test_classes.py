"""Clone classes: every member is a copy of the representative (no chaining), nested classes are
reported once, shifted re-alignments of one copy are dropped."""

from __future__ import annotations

from crystal_lsp.clones.align.regions import Region
from crystal_lsp.clones.copies.classes import (
    CloneClass,
    RegionPair,
    clone_classes,
    distinct_pairs,
    drop_nested,
    locations,
)


def region(path: str, start: int, end: int) -> Region:
    """A region of tokens ``[start, end)``, ten tokens a line."""
    return Region(path, start, end, start // 10 + 1, 1, (end - 1) // 10 + 1, 9, -1, False)


def pair(a: Region, b: Region, copied: int, similarity: float = 1.0) -> RegionPair:
    return RegionPair(a, b, similarity, similarity, copied)


def paths(clone_class: CloneClass) -> list[str]:
    return [r.path for r in clone_class.regions]


A = region("a.py", 0, 100)
B = region("b.py", 0, 100)
C = region("c.py", 0, 100)
D = region("d.py", 0, 100)


# --- representatives, no chaining ------------------------------------------------------------


def test_a_chain_of_pairs_is_not_one_class() -> None:
    # A~B, B~C, C~D: A and D may have nothing in common
    classes = clone_classes([pair(A, B, 100), pair(B, C, 90), pair(C, D, 80)])
    for found in classes:
        assert not {"a.py", "d.py"} <= set(paths(found))
        # every member was accepted as a copy of the representative itself
        for member, accepted in found.members:
            assert {accepted.a, accepted.b} == {found.representative, member}
    covered = {(accepted.a.path, accepted.b.path) for c in classes for _, accepted in c.members}
    assert covered == {("a.py", "b.py"), ("b.py", "c.py"), ("c.py", "d.py")}


def test_members_paired_with_the_representative_share_a_class() -> None:
    # A~B and B~C, no A~C: both pair with B, so one class around B holds all three
    (found,) = clone_classes([pair(A, B, 100), pair(B, C, 100)])
    assert found.representative == B
    assert [m.path for m, _ in found.members] == ["a.py", "c.py"]


def test_the_representative_has_the_most_copied_code() -> None:
    # C pairs with the most regions, A with the most copied code: 65 tokens against C's 35
    pairs = [pair(A, C, 15), pair(B, C, 10), pair(C, D, 10), pair(A, B, 50)]
    first, second = clone_classes(pairs)
    assert first.representative == A
    assert [m.path for m, _ in first.members] == ["b.py", "c.py"]
    # B~C is implied by the first class; what A does not explain, C~D, is a class of its own
    assert sorted(paths(second)) == ["c.py", "d.py"]


def test_similarity_weighs_the_copied_code() -> None:
    # C's pairs are larger but barely similar enough; B's are exact
    pairs = [pair(A, B, 60, 1.0), pair(B, D, 60, 1.0), pair(A, C, 70, 0.6), pair(C, D, 70, 0.6)]
    first = clone_classes(pairs)[0]
    assert first.representative == B  # 120 against 84 for C


def test_classes_are_sorted_by_gain() -> None:
    far = [region(f"z{i}.py", 0, 50) for i in range(2)]
    classes = clone_classes([pair(far[0], far[1], 10), pair(A, B, 100)])
    assert [c.gain for c in classes] == [100.0, 10.0]
    assert paths(classes[0]) == ["a.py", "b.py"]


def test_regions_of_one_file_covering_nearly_the_same_lines_are_one_location() -> None:
    a_shifted = region("a.py", 5, 100)  # 95% of A
    nodes, edges = locations([pair(A, B, 100), pair(a_shifted, C, 80)])
    assert nodes == [A, B, C]  # the better pair's lines name the location
    assert [(x, y) for x, y, _ in edges] == [(0, 1), (0, 2)]
    (found,) = clone_classes([pair(A, B, 100), pair(a_shifted, C, 80)])
    assert found.representative == A and len(found.members) == 2


def test_a_pair_of_one_location_with_itself_is_no_class() -> None:
    assert clone_classes([pair(A, region("a.py", 2, 100), 90)]) == []


# --- nested classes --------------------------------------------------------------------------


def test_a_class_inside_a_bigger_class_is_dropped() -> None:
    big = pair(region("a.py", 0, 1000), region("b.py", 0, 1000), 900)
    methods = pair(region("a.py", 100, 200), region("b.py", 120, 220), 90)
    classes = clone_classes([big, methods])
    kept, dropped = drop_nested(classes)
    assert dropped == 1
    assert [paths(c) for c in kept] == [["a.py", "b.py"]]
    assert kept[0].representative.tokens == 1000


def test_two_copies_inside_one_region_of_a_bigger_class_are_kept() -> None:
    big = pair(region("a.py", 0, 1000), region("b.py", 0, 1000), 900)
    inner = pair(region("a.py", 100, 200), region("a.py", 300, 400), 90)  # within a.py's region
    kept, dropped = drop_nested(clone_classes([big, inner]))
    assert dropped == 0 and len(kept) == 2


def test_a_class_reaching_outside_the_bigger_class_is_kept() -> None:
    big = pair(region("a.py", 0, 1000), region("b.py", 0, 1000), 900)
    outside = pair(region("a.py", 100, 200), region("c.py", 0, 100), 90)
    kept, dropped = drop_nested(clone_classes([big, outside]))
    assert dropped == 0 and len(kept) == 2


def test_a_class_only_half_inside_is_kept() -> None:
    big = pair(region("a.py", 0, 1000), region("b.py", 0, 1000), 900)
    straddling = pair(region("a.py", 900, 1200), region("b.py", 900, 1200), 200)
    kept, dropped = drop_nested(clone_classes([big, straddling]))
    assert dropped == 0 and len(kept) == 2


# --- distinct pairs --------------------------------------------------------------------------


def test_a_shifted_realignment_of_the_same_two_places_is_dropped() -> None:
    best = pair(region("a.py", 0, 100), region("b.py", 0, 100), 80)
    shifted = pair(region("a.py", 10, 110), region("b.py", 12, 112), 60)
    swapped = pair(region("b.py", 5, 105), region("a.py", 8, 108), 50)  # same places, b first
    assert distinct_pairs([shifted, swapped, best]) == [best]


def test_pairs_of_other_places_are_kept() -> None:
    best = pair(region("a.py", 0, 100), region("b.py", 0, 100), 80)
    elsewhere_in_b = pair(region("a.py", 0, 100), region("b.py", 300, 400), 70)
    another_file = pair(region("a.py", 0, 100), region("c.py", 0, 100), 60)
    later = pair(region("a.py", 500, 600), region("b.py", 500, 600), 50)
    pairs = [later, another_file, elsewhere_in_b, best]
    assert distinct_pairs(pairs) == [best, elsewhere_in_b, another_file, later]


def test_overlap_on_one_side_only_is_not_the_same_place() -> None:
    one = pair(region("a.py", 0, 100), region("b.py", 0, 100), 80)
    other = pair(region("a.py", 0, 100), region("b.py", 60, 160), 70)  # 40% of b's side
    assert len(distinct_pairs([one, other])) == 2
