"""The report made for agents: one line per copy, one summary line, no colour codes."""

from __future__ import annotations

from crystal_lsp.clones.findings import Finding, Location, Pair, display_path
from crystal_lsp.clones.reports.agent import agent_lines, agent_summary


def _loc(path: str, first: int, last: int, kind: str = "function", name: str = "f") -> Location:
    return Location(path, first, 1, last, 1, kind, name, 60, "sha", "norm")


def test_one_line_per_copy_representative_first() -> None:
    finding = Finding(
        "python",
        [_loc("a.py", 3, 20, name="parse"), _loc("b.py", 5, 22), _loc("c.py", 1, 18)],
        [Pair(0, 1, 0.934, 0.5, copied=50), Pair(0, 2, 0.81, 0.4, copied=40)],
    )
    assert agent_lines([finding]) == [
        "a.py:3-20 ~ b.py:5-22 similarity 0.93 (function parse)",
        "a.py:3-20 ~ c.py:1-18 similarity 0.81 (function parse)",
    ]
    summary = agent_summary([finding], 12, 0.6)
    assert summary.startswith("crystal: 1 copy worth a look (3 locations) in 12 files")
    assert "\x1b" not in summary and "\n" not in summary


def test_parts_of_units_and_odd_paths() -> None:
    part = Location("x\ny.py", 4, 9, 9, 1, "lines", "", 60, "s", "n", "class", "C", 1, 30)
    finding = Finding("python", [part, _loc("z.py", 1, 6)], [Pair(0, 1, 1.0, 1.0)])
    (line,) = agent_lines([finding])
    assert line == '"x\\ny.py":4-9 ~ z.py:1-6 similarity 1.00 (lines 4-9 of class C)'
    assert display_path("plain/path.py") == "plain/path.py"
    assert display_path("lat\udce9.py") == "lat\\xe9.py"  # undecodable bytes, escaped
    assert agent_summary([], 3, 0.6) == "crystal: no copies in 3 files (threshold 0.6)"


def test_a_pair_of_two_members_is_said_of_those_two() -> None:
    """A copy joined from two classes has pairs between members: each line names its own two.

    Before, a pair of members 2 and 1 read as member 2 ~ the representative.
    """
    places = [
        Location(name, 1, 1, 9, 1, "function", name.split(".")[0], 80, "", "")
        for name in ("a.py", "b.py", "c.py")
    ]
    pairs = [Pair(0, 1, 0.9, 0.8, copied=90), Pair(2, 0, 0.8, 0.7), Pair(2, 1, 0.7, 0.6)]
    lines = agent_lines([Finding("python", places, pairs)])
    assert [line.split(" similarity")[0] for line in lines] == [
        "a.py:1-9 ~ b.py:1-9",
        "a.py:1-9 ~ c.py:1-9",
        "c.py:1-9 ~ b.py:1-9",
    ]
    assert lines[2].split(" similarity ")[1].startswith("0.70")
