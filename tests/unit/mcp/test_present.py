"""The compact clone classes the MCP tools return (:mod:`crystal_lsp.mcp.present`)."""

from __future__ import annotations

from crystal_lsp.clones.findings import Finding, Location, Pair
from crystal_lsp.mcp.present import clone_class


def test_each_member_once_with_its_similarity_to_the_representative() -> None:
    """A copy joined from two classes: its pairs of two members are not the representative's.

    Before, member 2 was listed twice, the second time with its similarity to member 1 as if
    to the representative, and member 3 (paired with member 2 only) read as member 2.
    """
    places = [
        Location(name, 1, 1, 9, 1, "function", name.split(".")[0], 80, "", "")
        for name in ("a.py", "b.py", "c.py", "d.py")
    ]
    pairs = [
        Pair(0, 1, 0.9, 0.8, copied=90),
        Pair(2, 0, 0.8, 0.7),
        Pair(2, 1, 0.7, 0.6),
        Pair(3, 2, 0.6, 0.5),
    ]
    found = clone_class(Finding("python", places, pairs))
    assert [(m.place.path, m.similarity) for m in found.members] == [
        ("a.py", None),
        ("b.py", 0.9),
        ("c.py", 0.8),
    ]
    assert found.omitted_members == 1
