"""Unit tests of :mod:`crystal_lsp.server.workspace`: findings regrouped after buffer edits."""

from __future__ import annotations

from crystal_lsp.clones.findings import Finding, Location, Pair
from crystal_lsp.server.buffers import regroup


def _loc(path: str, line: int) -> Location:
    return Location(path, line, 1, line + 5, 2, "function", "f", 60, f"s{line}", "n")


def test_regroup_splits_a_class_that_lost_its_bridge() -> None:
    finding = Finding(
        "python",
        [_loc("a.py", 1), _loc("b.py", 1), _loc("c.py", 1), _loc("\0d.py", 1)],
        [Pair(0, 1, 0.9, 0.5), Pair(1, 2, 0.8, 0.4), Pair(2, 3, 0.7, 0.3)],
    )
    parts = regroup(finding, [0, 2, 3], {"\0d.py": "d.py"})
    assert len(parts) == 1
    [part] = parts
    assert [loc.path for loc in part.locations] == ["c.py", "d.py"]
    assert part.pairs == [Pair(0, 1, 0.7, 0.3)]


def test_regroup_keeps_the_representative_and_the_copied_tokens() -> None:
    finding = Finding(
        "python",
        [_loc("\0a.py", 1), _loc("b.py", 1), _loc("c.py", 1), _loc("d.py", 1)],
        [Pair(2, 0, 0.9, 0.5, copied=40), Pair(2, 1, 0.8, 0.4, copied=30), Pair(2, 3, 0.7, 0.3)],
        representative=2,
    )
    [part] = regroup(finding, [0, 2, 3], {"\0a.py": "a.py"})
    assert [loc.path for loc in part.locations] == ["a.py", "c.py", "d.py"]
    assert part.representative == 1
    assert part.pairs == [Pair(1, 0, 0.9, 0.5, copied=40), Pair(1, 2, 0.7, 0.3)]
