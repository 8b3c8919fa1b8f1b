"""The HTML report: self-contained, every copy's code on the page, aligned, ranked as the text.

The page is parsed with the standard library's HTML parser (the browser test in
``tests/ci/40-html-report.sh`` renders it in Chromium).
"""

from __future__ import annotations

import copy
import json
import pathlib
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from typing import Any

import pytest
from scan_samples import ORIGINAL, UNRELATED, module, near_copy, renamed, write_tree

from crystal_lsp.cli.main import main
from crystal_lsp.clones.findings import Location
from crystal_lsp.clones.reports.htmlcode import SourceFiles, side_by_side, side_of
from crystal_lsp.clones.reports.htmlreport import (
    duplicated_lines,
    folder_table,
    line_counts,
    render,
)
from crystal_lsp.clones.reports.sidebyside import CHANGED, RENAMED, Line, differing


class Page(HTMLParser):
    """Tags, attributes and visible text of a page."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self._skip = 0
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text.append(data)

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for t, attrs in self.tags if t == tag]

    @property
    def visible(self) -> str:
        return "".join(self.text)


def _repo(tmp_path: pathlib.Path) -> pathlib.Path:
    return write_tree(
        tmp_path / "repo",
        {
            "src/orders.py": module(ORIGINAL, UNRELATED[0]),
            "src/billing/invoices.py": module(UNRELATED[1], renamed()),
            "lib/audit.py": module(near_copy()),
            "lib/clean.py": module(UNRELATED[2]),
            "lib/net.py": module(UNRELATED[1].replace("retry_download", "again")),
            "README.md": "# notes\n",
        },
    )


def _scan(root: pathlib.Path, out: pathlib.Path, *extra: str) -> int:
    return main(["scan", str(root), "--no-progress", "-o", str(out), *extra])


def _code_lines(root: pathlib.Path, loc: dict[str, Any]) -> list[str]:
    lines = (root / loc["path"]).read_text().split("\n")
    return [lines[n - 1].strip() for n in range(loc["start"]["line"], loc["end"]["line"] + 1)]


@pytest.fixture
def scanned(tmp_path: pathlib.Path) -> tuple[pathlib.Path, dict[str, Any], str]:
    root = _repo(tmp_path)
    assert _scan(root, tmp_path / "report.json", "--format", "json") == 1
    assert _scan(root, tmp_path / "report.html", "--format", "html") == 1
    doc = json.loads((tmp_path / "report.json").read_text())
    return root, doc, (tmp_path / "report.html").read_text()


def test_the_page_is_self_contained(scanned: tuple[pathlib.Path, dict[str, Any], str]) -> None:
    _, _, html = scanned
    page = Page(html)
    assert html.startswith("<!DOCTYPE html>")
    csp = [m for m in page.all("meta") if m.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in str(csp[0]["content"])
    assert not any("src" in attrs for _, attrs in page.tags)  # no script, image or frame source
    assert page.all("link") == []
    hrefs = [str(a["href"]) for a in page.all("a")]
    assert hrefs and not [h for h in hrefs if re.match(r"^[a-z][a-z0-9+.-]*:|^//", h)]
    assert len(page.all("script")) == 1 and len(page.all("style")) == 1


def test_every_copy_is_on_the_page_in_the_text_reports_order(
    scanned: tuple[pathlib.Path, dict[str, Any], str],
) -> None:
    root, doc, html = scanned
    page = Page(html)
    assert len(doc["findings"]) >= 2
    headings = re.findall(r"<h3><a href=\"#f(\d+)\">\[(\d+)\] [^<]*</a></h3>", html)
    assert [int(n) for _, n in headings] == list(range(1, len(doc["findings"]) + 1))
    text = page.visible
    for finding in doc["findings"]:
        for loc in finding["locations"]:
            assert f"{loc['path']}:{loc['start']['line']}" in text
            for line in _code_lines(root, loc):
                assert line in text, (loc["path"], line)
    # links point at the files, relative to the report
    hrefs = {str(a["href"]) for a in page.all("a") if "loc" in str(a.get("class"))}
    first = doc["findings"][0]["locations"][0]
    assert f"repo/{first['path']}#L{first['start']['line']}" in hrefs


def test_renamed_tokens_are_marked_and_rows_aligned(
    scanned: tuple[pathlib.Path, dict[str, Any], str],
) -> None:
    _, _, html = scanned
    marked = set(re.findall(r"<mark>([^<]*)</mark>", html))
    # the renamed copy's names differ, line for line; attributes after "." do not
    assert {"summarize_orders", "tally_invoices", "orders", "invoices"} <= marked
    assert "quantity" not in marked and "unit_price" not in marked
    assert 'class="renamed"' in html
    assert 'class="changed"' in html or 'class="left-only"' in html


def test_summary_counts_duplicated_lines_per_folder(
    scanned: tuple[pathlib.Path, dict[str, Any], str],
) -> None:
    root, doc, html = scanned
    lines = line_counts(str(root), ["src/orders.py", "lib/clean.py", "missing.py"], 1 << 20)
    assert lines == {
        "src/orders.py": (root / "src/orders.py").read_text().count("\n"),
        "lib/clean.py": (root / "lib/clean.py").read_text().count("\n"),
    }
    dup = duplicated_lines(doc["findings"])
    assert "lib/clean.py" not in dup
    table = {row[0]: row for row in folder_table(lines, dup)}
    assert table["lib"][3] == 0 and table["src"][3] > 0
    assert re.search(r"duplicated lines</dt>\s*<dd>\d+ of \d+ \(\d+\.\d %\)</dd>", html)
    assert "src/billing/" in Page(html).visible


def test_levels_families_and_evidence_are_rendered(
    scanned: tuple[pathlib.Path, dict[str, Any], str],
) -> None:
    root, doc, _ = scanned
    doc = copy.deepcopy(doc)
    doc["findings"][0]["family"] = True
    doc["findings"][0]["evidence"] = ["3 parallel units <of one shape>"]
    doc["findings"][-1]["level"] = "similar"
    lines = line_counts(str(root), ["src/orders.py"], 1 << 20)
    html = render(doc, SourceFiles(str(root)), lines, lambda p, n: f"{p}#L{n}")
    similar = html[html.index('<details id="similar"') :]
    assert 'id="f' + str(len(doc["findings"])) + '"' in similar
    assert (
        'data-level="similar"' in similar
        and 'data-level="similar"' not in html.split('<details id="similar"')[0]
    )
    assert "[1] family of" in html and "<th>member</th>" in html
    assert "3 parallel units &lt;of one shape&gt;" in html
    # a family's pairs start collapsed; a copy's first pair is open
    first = html[html.index('id="f1"') : html.index('id="f2"')]
    assert '<details class="pair" open' not in first


def test_hostile_names_and_code_are_escaped(tmp_path: pathlib.Path) -> None:
    name = "src/<script>alert(1)<\u202e>.py"
    root = write_tree(
        tmp_path / "repo",
        {
            name: module(ORIGINAL.replace("skipped = 0", 'skipped = 0  # </td></table><script>"')),
            "b.py": module(renamed()),
        },
    )
    out = tmp_path / "r.html"
    assert _scan(root, out, "--format", "html") == 1
    html = out.read_text()
    page = Page(html)
    assert len(page.all("script")) == 1 and len(page.all("table")) == html.count("</table>")
    assert "&lt;/td&gt;&lt;/table&gt;&lt;script&gt;" in html
    assert "\u202e" not in html and "\\u202e" in html


def test_a_file_changed_or_gone_since_the_scan(
    scanned: tuple[pathlib.Path, dict[str, Any], str],
) -> None:
    root, doc, _ = scanned
    changed = doc["findings"][0]["locations"][0]["path"]
    gone = doc["findings"][0]["locations"][1]["path"]
    (root / changed).write_text("\n\n" + (root / changed).read_text())
    (root / gone).unlink()
    html = render(doc, SourceFiles(str(root)), {}, lambda p, n: f"{p}#L{n}")
    assert f"code not shown: {gone}: no such file" in html
    assert "a file changed since the scan: its lines are compared by text" in html


def test_side_by_side_falls_back_to_text_when_tokens_do_not_match(tmp_path: pathlib.Path) -> None:
    root = write_tree(tmp_path / "r", {"a.py": "x = 1\ny = 2\n", "b.py": "x = 1\nz = 3\n"})
    files = SourceFiles(str(root))
    loc = Location("a.py", 1, 1, 2, 5, "lines", "", 99, "", "")
    other = Location("b.py", 1, 1, 2, 5, "lines", "", 6, "", "")
    left, right = side_of(files, loc, "python"), side_of(files, other, "python")
    assert not left.by_tokens and right.by_tokens
    parent = ET.Element("div")
    assert side_by_side(parent, left, right, ("a", "b")) == 2  # y = 2 | z = 3, by text
    rows = [tr.get("class") for tr in parent.iter("tr")][1:]
    assert rows == ["same", "left-only", "right-only"]
    assert parent.find(".//mark") is None


def test_differing_marks_only_the_tokens_that_differ() -> None:
    a = Line(
        1, "ID = ID + LIT", "a\0=\0b\0+\01", ((0, "a"), (2, "="), (4, "b"), (6, "+"), (8, "1"))
    )
    b = Line(
        1, "ID = ID + LIT", "a\0=\0c\0+\01", ((0, "a"), (2, "="), (4, "c"), (6, "+"), (8, "1"))
    )
    assert differing(a, b) == ({2}, {2})
    assert RENAMED != CHANGED


def test_a_report_with_ten_thousand_findings_stays_a_page_a_browser_opens(
    scanned: tuple[pathlib.Path, dict[str, Any], str],
) -> None:
    # issue 33: 6,743 findings made a 22.9 MB page Chromium did not render in 300 s
    from crystal_lsp.clones.reports.htmlcode import SourceFiles
    from crystal_lsp.clones.reports.htmlreport import MAX_FINDINGS, MAX_TABLES, line_counts, render

    root, doc, _ = scanned
    copy = next(f for f in doc["findings"] if f.get("level", "copy") == "copy")
    big = {**doc, "findings": [copy] * 8_000 + [{**copy, "level": "similar"}] * 2_000}
    lines = line_counts(str(root), [loc["path"] for loc in copy["locations"]], 2_000_000)
    html = render(big, SourceFiles(str(root)), lines, lambda p, n: f"{p}#L{n}")
    assert len(html.encode()) < 8_000_000
    assert html.count('<table class="sbs"') <= MAX_TABLES
    assert html.count('<article class="finding') == MAX_FINDINGS
    assert html.count('id="capped"') == 1
    text = html.split('id="capped">', 1)[1].split("</p>", 1)[0]
    assert f"{10_000 - MAX_FINDINGS:,} more findings are not on this page" in text
    assert "--format json" in text and "not shown side by side" in text
    # the root shown relative (its name), never the absolute path of the scanned folder
    assert str(root) not in html
