"""Every claim a finding prints is true of the locations it lists (issue 31 item 1).

``bench/audit_claims.py`` checks the claims of random findings of real projects; these tests
check the same on small inputs that once broke them.
"""

from __future__ import annotations

import pathlib
import re

from scan_samples import find_all

from crystal_lsp.clones.copies.lines import code_lines
from crystal_lsp.clones.findings import Finding, Location
from crystal_lsp.text.entries import lex_file

IDENTITY = re.compile(r"^(?:all (\d+)|(\d+) of (\d+)) code lines identical$")

QUOTA_TESTS = """namespace {
CASE(NoLessTest, OnZero) {
  const Quota c = NoLess(0);
  EXPECT_TRUE(c.AcceptsCount(0));
  EXPECT_FALSE(c.IsFullAtCount(0));
  EXPECT_TRUE(c.AcceptsCount(1));
  EXPECT_FALSE(c.IsFullAtCount(1));
  Buffer ss;
}
CASE(NoMoreTest, OnNegativeNumber) {
      {
      },
}
CASE(NoMoreTest, OnZero) {
  const Quota c = NoMore(0);
  EXPECT_TRUE(c.AcceptsCount(0));
  EXPECT_TRUE(c.IsFullAtCount(0));
  EXPECT_FALSE(c.AcceptsCount(1));
  EXPECT_TRUE(c.IsFullAtCount(1));
  Buffer ss;
}
CASE(WithinTest, OnZeroStartAndZeroEnd) {
  EXPECT_TRUE(c.AcceptsCount(0));
  EXPECT_FALSE(c.AcceptsCount(1));
  EXPECT_TRUE(c.IsFullAtCount(1));
  c.WriteTo(&ss);
  EXPECT_TEXT(Contains, "never used", ss.str());
}
CASE(WithinTest, OnZeroStartAndNonZeroEnd) {
  const Quota c = Within(0, 2);
  EXPECT_FALSE(c.IsFullAtCount(0));
  EXPECT_TEXT(Contains, "used at most twice", ss.str());
}
CASE(WithinTest, OnSameStartAndEnd) {
  const Quota c = Within(3, 3);
  EXPECT_FALSE(c.AcceptsCount(2));
  EXPECT_FALSE(c.IsFullAtCount(2));
  EXPECT_TRUE(c.AcceptsCount(3));
  EXPECT_TRUE(c.IsFullAtCount(3));
  EXPECT_FALSE(c.AcceptsCount(4));
  EXPECT_TRUE(c.IsFullAtCount(4));
  Buffer ss;
  c.WriteTo(&ss);
  EXPECT_TEXT(Contains, "used 3 times", ss.str());
}
CASE(WithinTest, OnDifferentStartAndEnd) {
  const Quota c = Within(3, 5);
  EXPECT_FALSE(c.AcceptsCount(2));
  EXPECT_FALSE(c.IsFullAtCount(2));
  EXPECT_TRUE(c.AcceptsCount(3));
  EXPECT_FALSE(c.IsFullAtCount(3));
  EXPECT_TRUE(c.AcceptsCount(5));
  EXPECT_TRUE(c.IsFullAtCount(5));
  c.WriteTo(&ss);
}
CASE(JustTest, OnZero) {
  const Quota c = Just(0);
  EXPECT_TRUE(c.AcceptsCount(0));
  EXPECT_TRUE(c.IsFullAtCount(0));
  EXPECT_FALSE(c.AcceptsCount(1));
  EXPECT_TRUE(c.IsFullAtCount(1));
  Buffer ss;
  c.WriteTo(&ss);
  EXPECT_TEXT(Contains, "never used", ss.str());
}
CASE(JustTest, OnPositiveNumber) {
  EXPECT_FALSE(c.AcceptsCount(0));
  EXPECT_FALSE(c.IsFullAtCount(0));
  EXPECT_TRUE(c.AcceptsCount(2));
  EXPECT_TRUE(c.IsFullAtCount(2));
  Buffer ss2;
  EXPECT_TEXT(Contains, "used twice", ss2.str());
  Just(3).WriteTo(&ss3);
  EXPECT_TEXT(Contains, "used 3 times", ss3.str());
}
CASE(MakeQuotaTest, ConstructsQuotaFromInterface) {
  const Quota c = MakeQuota(new EvenQuota);
  EXPECT_TRUE(c.AcceptsCount(2));
  EXPECT_FALSE(c.AcceptsCount(3));
  EXPECT_FALSE(c.IsFullAtCount(10000));
  c.WriteTo(&ss);
  EXPECT_SAME("used even number of times", ss.str());
}
}"""
"""Tests of one API written again and again, with small changes (after googlemock's): their
copies come in overlapping classes that are joined and then trimmed of members shown higher."""


def located_code_lines(source: str, loc: Location) -> int:
    """The code lines of a location's text, as the finder counts them."""
    _, heavy = lex_file(loc.path, source, None)
    start = heavy.line_offsets[loc.first_line - 1] + loc.first_col - 1
    end = heavy.line_offsets[loc.last_line - 1] + loc.last_col - 1
    tokens = [i for i, at in enumerate(heavy.starts) if start <= at < end]
    return len(code_lines(heavy, tokens[0], tokens[-1] + 1))


def assert_facts_true(finding: Finding, files: dict[str, str]) -> None:
    a, b = finding.facts["pair"]
    assert max(a, b) < len(finding.locations), (finding.facts, finding.locations)
    la, lb = finding.locations[a], finding.locations[b]
    counted = [located_code_lines(files[la.path], la), located_code_lines(files[lb.path], lb)]
    assert counted == finding.facts["code_lines"], (finding.evidence, la, lb)
    (claim,) = [m for e in finding.evidence if (m := IDENTITY.match(e))]
    n, of = (claim[1], claim[1]) if claim[1] else (claim[2], claim[3])
    assert (int(n), int(of)) == (finding.facts["identical"], max(counted))


def test_a_trimmed_finding_states_facts_of_the_locations_it_lists(tmp_path: pathlib.Path) -> None:
    """A finding that took in another's members and then lost some is judged again.

    Its facts named the pair of locations it had before (``pair: [0, 3]`` of a finding left
    with two locations, or the third location's index after the second went), so "7 of 7 code
    lines identical" was said of a location holding 6.
    """
    files = {"quota_test.cc": QUOTA_TESTS}
    found = find_all(tmp_path / "repo", files, show_similar=True)
    assert len(found) >= 3
    for finding in found:
        assert_facts_true(finding, files)
