"""The text report's finding blocks: every location once, every score said of the pair it is of."""

from __future__ import annotations

from crystal_lsp.clones.findings import Finding, Location, Pair
from crystal_lsp.clones.reports.text import LEGEND, finding_block


def loc(path: str, first: int, last: int, name: str) -> Location:
    return Location(path, first, 1, last, 1, "function", name, 80, "", "")


def block(finding: Finding) -> list[str]:
    out: list[str] = []
    finding_block(1, finding, False, out.append)
    return "".join(out).splitlines()


def test_pairs_of_other_members_are_said_to_be_theirs() -> None:
    """A joined finding's pairs between two members that are not the representative.

    Before, each pair printed a location line: ``c.py`` twice, the second time with its score
    against ``b.py`` read as if against the representative, and ``d.py`` (paired with ``c.py``
    only) never listed at all.
    """
    places = [loc("a.py", 1, 9, "one"), loc("b.py", 1, 9, "two"), loc("c.py", 1, 9, "three")]
    places.append(loc("d.py", 1, 9, "four"))
    pairs = [
        Pair(0, 1, 0.841, 0.777, copied=207),
        Pair(2, 0, 0.879, 0.801, copied=180),
        Pair(2, 1, 0.714, 0.555, copied=100),
        Pair(3, 2, 0.687, 0.449, copied=45),
    ]
    facts = {"pair": [2, 1], "code_lines": [8, 8], "identical": 6, "differing": {}}
    finding = Finding("python", places, pairs, evidence=["6 of 8 code lines identical"])
    finding.facts = facts
    lines = block(finding)
    assert lines[1] == "    best pair 3-2: 6 of 8 code lines identical"
    listed = [line.split()[0] for line in lines[2:] if not line.startswith("    ")]
    assert listed == ["a.py:1-9", "b.py:1-9", "c.py:1-9", "d.py:1-9"]
    assert lines[4].endswith("similarity 0.879  CrystalBLEU 0.801  copied 180 tokens")
    assert lines[5] == "    pair 3-2: similarity 0.714  CrystalBLEU 0.555  copied 100 tokens"
    assert lines[6] == "  d.py:1-9  function four"
    assert lines[7] == "    pair 4-3: similarity 0.687  CrystalBLEU 0.449  copied 45 tokens"
    assert "'pair i-j'" in LEGEND


def test_a_member_without_a_scored_pair_says_so() -> None:
    places = [loc("a.py", 1, 9, "one"), loc("b.py", 1, 9, "two"), loc("c.py", 1, 9, "three")]
    finding = Finding("python", places, [Pair(0, 1, 0.9, 0.8, copied=90)], family=True)
    lines = block(finding)
    assert lines[-1] == "  c.py:1-9  function three  (no pair scored)"
