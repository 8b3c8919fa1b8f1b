"""The claims a finding prints about its lines are true: one test per false claim seen (issue 31).

Each builds two small pieces of code and checks what :func:`compare` says of them: code lines
(no lone braces), one-to-one renamings only, each differing line's kind. The last test audits
every claim of every finding of a scan of real code (tests/data/pinned) against its source.
"""

from __future__ import annotations

import json
import pathlib
import re
import tarfile
from difflib import SequenceMatcher
from typing import Any

import pytest

from crystal_lsp.clones.copies.lines import (
    CALLED,
    LITERALS,
    NAMES,
    NAMES_LITERALS,
    STRUCTURE,
    TYPES,
    Comparison,
    compare,
)
from crystal_lsp.text.entries import build_entry

PINNED = pathlib.Path(__file__).resolve().parents[3] / "data" / "pinned"


def _compare(a: str, b: str, language: str = "python") -> Comparison:
    suffix = {"python": "py", "java": "java", "javascript": "js", "c": "c"}[language]
    ea = build_entry(f"a.{suffix}", a, language, min_tokens=1, min_lines=1).heavy
    eb = build_entry(f"b.{suffix}", b, language, min_tokens=1, min_lines=1).heavy
    assert ea is not None and eb is not None
    return compare(ea, (0, len(ea.texts)), eb, (0, len(eb.texts)))


JS = """function area(shape) {
  if (shape.kind === "circle") {
    return Math.PI * shape.r * shape.r;
  }
  return shape.w * shape.h;
}
"""


def test_lone_braces_are_no_identical_lines() -> None:
    """'15 of 19 lines identical' counted lines of `}`; code lines hold code."""
    other = JS.replace("Math.PI * shape.r * shape.r", "2 * Math.PI * shape.r").replace(
        "shape.w * shape.h", "shape.w + shape.h"
    )
    cmp = _compare(JS, other, "javascript")
    assert (len(cmp.lines_a), len(cmp.lines_b)) == (4, 4)  # the two `}` lines are none
    assert cmp.identical == 2 and sum(cmp.kinds.values()) == 2


def test_two_names_onto_one_is_no_renaming() -> None:
    """'names changed consistently' where two different names mapped onto one."""
    a = "def f(x, y):\n    s = x + y\n    return s * x\n"
    b = "def f(x, z):\n    s = x + z\n    return s * z\n"  # y -> z, and x -> z on the last line
    cmp = _compare(a, b)  # the last line is an edited line, left out of the renaming
    assert cmp.renamed and cmp.names == (("y", "z"),) and cmp.edited == 1
    assert set(cmp.changed) == {("y", "z"), ("x", "z")}
    a2 = a + "    t = x - y\n    return t + x\n"
    b2 = b + "    t = x - z\n    return t + z\n"  # two of five lines map x onto z
    cmp = _compare(a2, b2)
    assert not cmp.renamed and cmp.names == ()


def test_one_name_onto_two_is_no_renaming() -> None:
    a = "def g(v):\n    w = v + 1\n    return v * w\n"
    b = "def g(v):\n    w = p + 1\n    return q * w\n"
    assert not _compare(a, b).renamed


def test_a_one_to_one_renaming_lists_its_names() -> None:
    a = "def g(v):\n    w = v + 1\n    return v * w\n"
    b = "def g(u):\n    t = u + 1\n    return u * t\n"
    cmp = _compare(a, b)
    assert cmp.renamed and cmp.names == (("v", "u"), ("w", "t"))
    assert dict(cmp.kinds) == {NAMES: 3}


def test_a_member_renamed_apart_from_a_name_is_listed_as_a_member() -> None:
    """A renaming listed 'semi_major->cs_getsize' and 'semi_major->size' (django): not 1:1."""
    a = "def semi_major(self):\n    return capi.semi_major(self.ptr)\n"
    b = "def size(self):\n    return capi.cs_getsize(self.ptr)\n"
    cmp = _compare(a, b)
    assert cmp.renamed and cmp.names == ((".semi_major", ".cs_getsize"), ("semi_major", "size"))
    assert len({x for x, _ in cmp.names}) == len(cmp.names)


def test_a_renaming_with_a_structural_change_is_no_renaming() -> None:
    """'names changed consistently' where the structure differed."""
    a = "def g(v):\n    w = v + 1\n    return v * w\n"
    b = "def g(u):\n    t = u - 1\n    return u / t\n"  # two of three lines edited
    cmp = _compare(a, b)
    assert not cmp.renamed and cmp.kinds[STRUCTURE] == 2


def test_each_differing_line_is_classified() -> None:
    a = """int f(int n) {
    int total = compute(n, 10);
    log("start");
    total = scale(total, 2);
    helper(total);
    return total + n;
}
"""
    b = """long f(int n) {
    int total = compute(m, 10);
    log("begin");
    total = scale(count, 3);
    other(total);
    return total - n;
}
"""
    cmp = _compare(a, b, "c")
    assert cmp.identical == 0
    assert dict(cmp.kinds) == {
        TYPES: 1,
        NAMES: 1,
        LITERALS: 1,
        NAMES_LITERALS: 1,
        CALLED: 1,
        STRUCTURE: 1,
    }


def _text(root: pathlib.Path, loc: dict[str, object]) -> list[str]:
    start, end = loc["start"], loc["end"]
    assert isinstance(start, dict) and isinstance(end, dict)
    lines = (root / str(loc["path"])).read_text(encoding="utf-8").splitlines()
    return lines[start["line"] - 1 : end["line"]]


def _code(lines: list[str]) -> list[str]:
    """Lines with a letter or digit that are not comments: an upper bound of code lines."""
    out = []
    for line in lines:
        text = line.split(" // ")[0].split("  # ")[0].strip()  # trailing comments are no code
        comment = text.startswith(("#", "//", "/*", "* ", "*/")) or text == "*"
        if any(c.isalnum() for c in text) and not comment:
            out.append(" ".join(text.split()))
    return out


def test_every_claim_of_a_real_scan_is_true(tmp_path: pathlib.Path) -> None:
    """Audit of every finding of the pinned real code (three.js math, rich): the claims hold.

    The findings are the pinned ones (tests/data/pinned/findings.json), which
    tests/unit/clones/test_pinned_findings.py proves a scan gives.

    Identical code lines never exceed what the source text shows identical, lone braces are
    never counted, a renaming's names occur on their sides, no name maps onto two, the
    differing kinds count every differing line, a paired one once, scores are in range.
    """
    with tarfile.open(PINNED / "corpus.tar.gz") as archive:
        archive.extractall(tmp_path, filter="data")
    found = json.loads((PINNED / "findings.json").read_text())
    assert len(found) > 40
    for doc in found:
        facts = doc["facts"]
        a, b = (doc["locations"][k] for k in facts["pair"])
        la, lb = _text(tmp_path, a), _text(tmp_path, b)
        ca, cb = _code(la), _code(lb)
        lines_a, lines_b = facts["code_lines"]
        assert lines_a <= len(ca) and lines_b <= len(cb)  # braces, blanks, comments: none
        same = SequenceMatcher(None, ca, cb, autojunk=False)
        shown = sum(block.size for block in same.get_matching_blocks())
        assert facts["identical"] <= min(lines_a, lines_b, shown)
        differing = sum(facts["differing"].values())
        apart = max(lines_a, lines_b) - facts["identical"]  # a pair of lines counts once
        assert apart <= differing <= lines_a + lines_b - 2 * facts["identical"]
        pairs = facts.get("renaming", [])
        assert len({x for x, _ in pairs}) == len(pairs) == len({y for _, y in pairs})
        text_a, text_b = "\n".join(la), "\n".join(lb)
        assert all(x in text_a and y in text_b for x, y in pairs)
        assert 0.0 <= doc["probability"] <= 1.0
        _scores_and_names_hold(doc, tmp_path)
        ident = max(lines_a, lines_b)
        claim = f"of {ident} code lines identical" if facts["identical"] < ident else "all "
        assert any(claim in e for e in doc["evidence"])


def _scores_and_names_hold(doc: dict[str, Any], root: pathlib.Path) -> None:
    """The scores printed agree with each other, every unit name is on its unit's first lines."""
    pairs = doc["pairs"]
    assert doc["score"] == pytest.approx(min(p["similarity"] for p in pairs), abs=1e-6)
    weight = max(p["copied"] * max(p["crystalbleu"], 0.0) for p in pairs)
    assert doc["weight"] == pytest.approx(weight, rel=1e-4, abs=1e-3)
    assert all(0.0 <= p["similarity"] <= 1.0 + 1e-9 for p in pairs)
    for loc in doc["locations"]:
        unit = loc.get("unit") or {}
        if loc["kind"] == "lines":
            name, first = unit.get("name", ""), unit.get("start", 0)
            if name:
                assert first <= loc["start"]["line"] <= loc["end"]["line"] <= unit["end"]
        else:
            name, first = loc.get("name", ""), loc["start"]["line"]
        if not name or name.startswith("(") or loc["kind"] in ("file", "module"):
            continue
        text = (root / loc["path"]).read_text(encoding="utf-8").splitlines()
        head = "\n".join(text[first - 1 : first + 5])
        assert re.search(rf"\b{re.escape(name.split('.')[-1])}\b", head), (loc["path"], name)
