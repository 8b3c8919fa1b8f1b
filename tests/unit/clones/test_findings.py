"""Findings: clone types, stable ids, scores and the JSON form of schema version 1."""

from __future__ import annotations

import pytest

from crystal_lsp.clones.findings import (
    COPY,
    EXACT,
    LINES,
    NEAR,
    RENAMED,
    SIMILAR,
    Finding,
    Location,
    Pair,
    at_level,
    sort_findings,
)


def loc(
    path: str = "a.py", line: int = 3, sha: str = "s1", norm: str = "n1", tokens: int = 80
) -> Location:
    return Location(path, line, 5, line + 9, 12, "function", "f", tokens, sha, norm)


@pytest.mark.parametrize(
    ("locations", "kind"),
    [
        pytest.param([loc("a.py"), loc("b.py")], EXACT, id="exact"),
        pytest.param([loc("a.py"), loc("b.py", sha="s2")], RENAMED, id="renamed"),
        pytest.param([loc("a.py"), loc("b.py", sha="s2", norm="n2")], NEAR, id="near"),
        pytest.param(
            [loc("a.py"), loc("b.py"), loc("c.py", sha="s2")], RENAMED, id="three-renamed"
        ),
    ],
)
def test_type(locations: list[Location], kind: str) -> None:
    assert Finding("python", locations, [Pair(0, 1, 0.9, 0.4)]).type == kind


def test_location_json_and_label() -> None:
    location = loc("dir/a.py", 7)
    assert location.to_json() == {
        "path": "dir/a.py",
        "start": {"line": 7, "column": 5},
        "end": {"line": 16, "column": 12},
        "kind": "function",
        "name": "f",
        "tokens": 80,
    }
    assert location.label() == "dir/a.py:7"
    assert location.fingerprint == "42db5fa3d691a70c"  # golden: ids must not change silently


def test_ids_are_stable_and_order_independent() -> None:
    a, b = loc("a.py"), loc("b.py", 40, sha="s2")
    finding = Finding("python", [a, b], [Pair(0, 1, 0.9, 0.4)])
    assert finding.id == Finding("python", [b, a], [Pair(0, 1, 0.5, 0.1)]).id
    assert len(finding.id) == 16 and int(finding.id, 16) >= 0
    moved = Finding("python", [loc("a.py", 100), b], finding.pairs)
    assert moved.id == finding.id
    assert Finding("python", [loc("c.py"), b], finding.pairs).id != finding.id
    assert Finding("python", [loc("a.py", norm="other"), b], finding.pairs).id != finding.id


def test_score_tokens_and_json() -> None:
    pairs = [
        Pair(0, 1, 0.712345678, 0.3, copied=40),
        Pair(0, 2, 0.95, 0.5, bleu=0.81234567, copied=60),
    ]
    finding = Finding(
        "java", [loc("a"), loc("b", tokens=90), loc("c", tokens=70)], pairs, [["a", "b", "c", "d"]]
    )
    # the score is the lowest similarity of a member to the representative
    assert finding.score == 0.712345678 and finding.tokens == 240
    assert finding.copied == 100
    assert finding.gain == 40 * 0.712345678 + 60 * 0.95
    doc = finding.to_json()
    assert doc["score"] == 0.712346 and doc["language"] == "java" and doc["type"] == EXACT
    assert doc["representative"] == 0 and doc["copied"] == 100
    assert doc["pairs"][0] == {
        "a": 0,
        "b": 1,
        "similarity": 0.712346,
        "crystalbleu": 0.3,
        "copied": 40,
    }
    assert doc["pairs"][1]["bleu"] == 0.812346
    assert "shared_ngrams" not in doc
    assert finding.to_json(with_ngrams=True)["shared_ngrams"] == [["a", "b", "c", "d"]]
    shas = {(x.path, x.first_line, x.last_line): (x.sha, x.norm_sha) for x in finding.locations}
    back = Finding.from_json(finding.to_json(with_ngrams=True), shas)
    assert back.to_json(with_ngrams=True) == finding.to_json(with_ngrams=True)


def test_a_part_of_a_unit_names_the_unit() -> None:
    part = Location("m.py", 120, 5, 151, 9, LINES, "", 200, "s", "n", "function", "main", 100, 170)
    assert part.describe() == "lines 120-151 of function main"
    assert part.to_json()["unit"] == {"kind": "function", "name": "main", "start": 100, "end": 170}
    assert Location.from_json(part.to_json(), "s", "n") == part
    loose = Location("m.py", 3, 1, 40, 2, LINES, "", 200, "s", "n")
    assert loose.describe() == "lines 3-40" and "unit" not in loose.to_json()
    assert loc("a.py").describe() == "function f"


def test_sort_findings_copies_first_then_by_the_best_single_copy() -> None:
    def make(
        raw: float, copied: int, path: str, line: int = 1, tokens: int = 50, level: str = COPY
    ) -> Finding:
        locations = [loc(path, line, tokens=tokens), loc("z.py", tokens=tokens)]
        return Finding("python", locations, [Pair(0, 1, 0.9, raw, copied=copied)], level=level)

    findings = [
        make(1.0, 40, "a.py"),  # a perfect five-liner
        make(0.7, 100, "b.py"),  # a long, edited copy
        make(0.9, 90, "c.py"),
        make(0.9, 90, "c.py", line=0),
        make(0.9, 90, "0.py", tokens=60),
        make(1.0, 500, "s.py", level=SIMILAR),  # large, but similar structure: after the copies
    ]
    ordered = sort_findings(findings)
    assert [
        (f.weight, f.tokens, f.locations[0].path, f.locations[0].first_line) for f in ordered
    ] == [
        (81.0, 120, "0.py", 1),
        (81.0, 100, "c.py", 0),
        (81.0, 100, "c.py", 1),
        (70.0, 100, "b.py", 1),
        (40.0, 100, "a.py", 1),
        (500.0, 100, "s.py", 1),
    ]
    assert [f.locations[0].path for f in at_level(ordered, show_all=False)] == [
        "0.py",
        "c.py",
        "c.py",
        "b.py",
        "a.py",
    ]


def test_the_weight_is_the_best_single_copy_not_a_sum_over_members() -> None:
    """A 4-statement tail in 9 files must not outrank one long copy made twice."""
    tail = Finding(
        "python",
        [loc(f"t{k}.py", tokens=30) for k in range(10)],
        [Pair(0, k, 1.0, 1.0, copied=30) for k in range(1, 10)],
    )
    long_copy = Finding(
        "python",
        [loc("a.py", tokens=300), loc("b.py", tokens=300)],
        [Pair(0, 1, 0.9, 0.8, copied=260)],
    )
    assert tail.gain > long_copy.gain  # what the sum over members said
    assert sort_findings([tail, long_copy]) == [long_copy, tail]
