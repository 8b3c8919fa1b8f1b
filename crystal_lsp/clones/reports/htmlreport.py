"""``crystal-lsp scan --format html``: one self-contained page a reviewer reads in a browser.

The page is rendered from the scan's JSON report (:meth:`crystal_lsp.clones.scan.ScanResult.to_json`,
read generically: keys it does not know are ignored) and the scanned files: a summary with the
share of duplicated lines per folder, then the findings in the text report's order, copies first
and similar structure (``"level": "similar"``) in a collapsed section. Each finding lists its
locations as ``path:line`` links and shows every copy next to the representative, aligned line
by line with the differing tokens marked (:mod:`crystal_lsp.clones.reports.htmlcode`); a family of
parallel units (``"family": true``) lists its members, its pairs collapsed.

The page stays usable at any size: side-by-side tables are built for the first
:data:`MAX_TABLES` pairs of the page (the later findings list their copies, not their code), and
at most :data:`MAX_FINDINGS` findings are on it, a note saying how many more the JSON report
(``--format json``) holds. The summary lists only the folders that hold copies, collapsed.

Nothing is fetched: the CSS and the script are inline (``crystal_lsp/data/report.css`` and
``report.js``), and a Content-Security-Policy forbids every other source. The page is built with
:mod:`xml.etree.ElementTree` (every text and attribute escaped), without a template engine: the
structure is a few nested lists, and the core gains no dependency for it.
"""

from __future__ import annotations

import posixpath
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import resources
from typing import Any

from crystal_lsp.clones.findings import Location, display_path
from crystal_lsp.clones.reports.htmlcode import SourceFiles, legend, side_by_side, side_of, sub
from crystal_lsp.errors import CrystalError
from crystal_lsp.text.sources import SkippedFile, read_bytes

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)
MAX_PAIRS = 30
"""Side-by-side tables per finding; the members past it are listed, not shown."""
MAX_TABLES = 200
"""Side-by-side tables per page (6,743 findings with all their tables made a 22.9 MB page
Chromium did not render in 300 s); later findings list their copies only."""
MAX_FINDINGS = 1_000
"""Findings on the page; a note counts the rest (the JSON report holds every finding)."""
COPY, SIMILAR = "copy", "similar"
_BLOCKS = frozenset(
    "head meta title style body header nav section article details summary table thead tbody "
    "tr ul li p h1 h2 h3 dl div script colgroup col".split()
)
Link = Callable[[str, int], str]
"""``(path, line) -> href`` of a location."""


class Budget:
    """How many side-by-side tables the page may still hold."""

    def __init__(self, tables: int = MAX_TABLES) -> None:
        self.tables = tables
        self.withheld = 0
        """Findings whose code was not shown for want of budget."""

    def take(self, wanted: int) -> int:
        """Tables granted of ``wanted`` (all, or what is left)."""
        granted = min(wanted, self.tables)
        self.tables -= granted
        if wanted and not granted:
            self.withheld += 1
        return granted


def line_counts(root: str, paths: Iterable[str], max_bytes: int) -> dict[str, int]:
    """Lines of each readable file (the denominator of the duplicated-lines share)."""
    out: dict[str, int] = {}
    for path in paths:
        try:
            data = read_bytes(posixpath.join(root, path), max_bytes, root)
        except SkippedFile:
            continue
        ends = data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")  # LSP line ends
        out[path] = ends + (0 if not data or data.endswith((b"\n", b"\r")) else 1)
    return out


def duplicated_lines(findings: Sequence[Mapping[str, Any]]) -> dict[str, set[int]]:
    """The lines of each file that are in a copy (every location of a copy-level finding)."""
    out: dict[str, set[int]] = defaultdict(set)
    for finding in findings:
        if finding.get("level", COPY) != COPY:
            continue
        for loc in finding["locations"]:
            out[loc["path"]].update(range(loc["start"]["line"], loc["end"]["line"] + 1))
    return out


def folder_table(
    lines: Mapping[str, int], duplicated: Mapping[str, set[int]]
) -> list[tuple[str, int, int, int]]:
    """``(folder, files, lines, duplicated lines)`` per folder, most duplicated first."""
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for path, count in lines.items():
        row = rows[posixpath.dirname(path) or "."]
        row[0] += 1
        row[1] += count
        row[2] += len({n for n in duplicated.get(path, ()) if n <= count})
    table = [(folder, files, total, dup) for folder, (files, total, dup) in rows.items()]
    table.sort(key=lambda r: (-r[3], -r[3] / max(r[2], 1), r[0]))
    return table


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def _asset(name: str) -> str:
    return resources.files("crystal_lsp.data").joinpath(name).read_text(encoding="utf-8")


def render(
    doc: Mapping[str, Any],
    files: SourceFiles,
    lines: Mapping[str, int],
    link: Link,
    baselined: int = 0,
) -> str:
    """The page of a scan's JSON report (see the module docstring)."""
    findings = list(doc.get("findings", []))
    copies = [f for f in findings if f.get("level", COPY) == COPY]
    similar = [f for f in findings if f.get("level", COPY) != COPY]
    root_name = display_path(posixpath.basename(str(doc.get("root", "")).rstrip("/")) or "/")
    html = ET.Element("html", lang="en")
    head = sub(html, "head")
    sub(head, "meta", charset="utf-8")
    sub(head, "meta", **{"http-equiv": "Content-Security-Policy", "content": CSP})
    sub(head, "meta", name="viewport", content="width=device-width, initial-scale=1")
    sub(head, "title", f"crystal-lsp: {len(copies)} clone classes in {root_name}")
    sub(head, "style", _asset("report.css"))
    body = sub(html, "body")
    _header(body, doc, root_name, len(copies), len(similar))
    _summary(body, doc, copies, lines, baselined)
    section = sub(body, "section", id="copies")
    sub(section, "h2", f"Copies ({len(copies)})")
    ranking = doc.get("summary", {}).get("ranking", "")
    if ranking:
        sub(section, "p", f"In the text report's order: {ranking}.")
    legend(section)
    budget = Budget()
    shown_copies = copies[:MAX_FINDINGS]
    shown_similar = similar[: max(MAX_FINDINGS - len(shown_copies), 0)]
    for number, finding in enumerate(shown_copies, 1):
        _finding(section, number, finding, files, link, budget)
    if not copies:
        sub(section, "p", "No copies found.", class_="empty")
    details = sub(body, "details", id="similar", class_="similar")
    sub(details, "summary", f"Similar structure ({len(similar)})")
    sub(
        details,
        "p",
        "Parallel code, boilerplate and pieces of low raw similarity: alike in structure, "
        "rarely worth merging. Not counted in the duplicated lines.",
    )
    for number, finding in enumerate(shown_similar, len(copies) + 1):
        _finding(details, number, finding, files, link, budget)
    _capped(body, len(findings) - len(shown_copies) - len(shown_similar), budget)
    _notes(body, doc)
    sub(body, "script", _asset("report.js"))
    for node in html.iter():
        if node.tag in _BLOCKS and not node.tail:
            node.tail = "\n"  # one block per line; never inside code, where spaces matter
    return "<!DOCTYPE html>\n" + ET.tostring(html, encoding="unicode", method="html") + "\n"


def _capped(body: ET.Element, left_out: int, budget: Budget) -> None:
    """The note on what a very large report leaves off the page (first in the notes' place)."""
    said = []
    if budget.withheld:
        said.append(
            f"the code of {budget.withheld:,} later findings is not shown side by side (the page"
            f" holds at most {MAX_TABLES:,} such tables); their copies are listed"
        )
    if left_out:
        said.append(f"{left_out:,} more findings are not on this page (at most {MAX_FINDINGS:,})")
    if said:
        text = "; ".join(said)
        sub(
            body,
            "p",
            f"A large report: {text}. The JSON report (--format json) holds every finding.",
            class_="note",
            id="capped",
        )


def _header(body: ET.Element, doc: Mapping[str, Any], root: str, copies: int, similar: int) -> None:
    """The title, the scan's identity, the navigation and the page's tools."""
    header = sub(body, "header")
    sub(header, "h1", f"Copied code in {root}")
    tool = doc.get("tool", {})
    sub(
        header,
        "p",
        f"crystal-lsp {tool.get('version', '')} · {root} · signature {doc.get('signature', '')}",
        class_="meta",
    )
    nav = sub(header, "nav")
    for href, label in (
        ("#summary", "Summary"),
        ("#copies", f"Copies ({copies})"),
        ("#similar", f"Similar structure ({similar})"),
        ("#notes", "Notes"),
    ):
        sub(nav, "a", label, href=href)
    tools = sub(header, "div", class_="tools")
    sub(tools, "input", type="search", id="filter", placeholder="filter by path or name")
    sub(tools, "button", "expand all", type="button", id="expand")
    sub(tools, "button", "collapse all", type="button", id="collapse")


def _summary(
    body: ET.Element,
    doc: Mapping[str, Any],
    copies: Sequence[Mapping[str, Any]],
    lines: Mapping[str, int],
    baselined: int,
) -> None:
    summary = doc.get("summary", {})
    duplicated = duplicated_lines(copies)
    table = folder_table(lines, duplicated)
    total_lines = sum(r[2] for r in table)
    total_dup = sum(r[3] for r in table)
    section = sub(body, "section", id="summary")
    sub(section, "h2", "Summary")
    stats = sub(section, "dl", class_="stats")
    threshold = doc.get("settings", {}).get("threshold")
    for term, value in (
        (
            "duplicated lines",
            f"{total_dup:,} of {total_lines:,} ({_share(total_dup, total_lines)})",
        ),
        ("clone classes", f"{len(copies):,}"),
        ("copies", f"{sum(len(f['locations']) for f in copies):,}"),
        ("files", f"{summary.get('files', len(lines)):,}"),
        ("threshold", f"{threshold:g}" if isinstance(threshold, (int, float)) else "-"),
        ("baselined", f"{baselined:,}" if baselined else None),
    ):
        if value is not None:
            div = sub(stats, "div")
            sub(div, "dt", term)
            sub(div, "dd", value)
    sub(
        section,
        "p",
        "Duplicated lines: the lines of every location of a copy, the representative's too "
        "(as SonarQube counts them), of all lines of the scanned files.",
        class_="note",
    )
    with_copies = [row for row in table if row[3]]
    folders = sub(section, "details", class_="folders")
    sub(folders, "summary", f"Folders with copies ({len(with_copies):,} of {len(table):,})")
    grid = sub(folders, "table", class_="folders")
    tr = sub(sub(grid, "thead"), "tr")
    for heading in ("folder", "files", "lines", "duplicated lines", "share"):
        sub(tr, "th", heading)
    tbody = sub(grid, "tbody")
    for folder, nfiles, nlines, ndup in with_copies:
        tr = sub(tbody, "tr")
        sub(tr, "td", display_path(folder) + "/", class_="path")
        for count in (nfiles, nlines, ndup):
            sub(tr, "td", f"{count:,}", class_="num")
        share = sub(tr, "td", class_="share")
        bar = sub(share, "span", class_="bar")
        sub(bar, "span", "", style=f"width:{100 * ndup / max(nlines, 1):.1f}%")
        sub(share, "span", _share(ndup, nlines))


def _heading(number: int, finding: Mapping[str, Any], locations: list[Location]) -> str:
    """The text report's first line of a finding."""
    rep = locations[int(finding.get("representative", 0))]
    kind = "family of" if finding.get("family") else f"{finding.get('type', '')} copies of"
    return (
        f"[{number}] {kind} {display_path(rep.path)}:{rep.first_line}-{rep.last_line} "
        f"({display_path(rep.describe() or 'code')}), {finding.get('language', '')}, "
        f"{len(locations)} locations, lowest similarity {float(finding.get('score', 0)):.3f}, "
        f"{finding.get('copied', 0)} copied tokens"
        + (
            f", probability {float(finding['probability']):.2f} that it is worth acting on"
            if finding.get("probability") is not None
            else ""
        )
    )


def _anchor(parent: ET.Element, location: Location, link: Link) -> ET.Element:
    label = f"{display_path(location.path)}:{location.first_line}"
    return sub(parent, "a", label, href=link(location.path, location.first_line), class_="loc")


def _finding(
    parent: ET.Element,
    number: int,
    finding: Mapping[str, Any],
    files: SourceFiles,
    link: Link,
    budget: Budget | None = None,
) -> None:
    locations = [Location.from_json(loc) for loc in finding["locations"]]
    rep = int(finding.get("representative", 0))
    family = bool(finding.get("family"))
    article = sub(
        parent,
        "article",
        class_="finding family" if family else "finding",
        id=f"f{number}",
        **{"data-level": str(finding.get("level", COPY))},
    )
    h3 = sub(article, "h3")
    sub(h3, "a", _heading(number, finding, locations), href=f"#f{number}")
    evidence = [str(e) for e in finding.get("evidence", [])]
    if evidence:
        ul = sub(article, "ul", class_="evidence")
        for item in evidence:
            sub(ul, "li", item)
    pairs = [p for p in finding.get("pairs", []) if rep in (p["a"], p["b"])]
    _members(article, locations, rep, pairs, family, link)
    ngrams = finding.get("shared_ngrams") or []
    if ngrams:
        p = sub(article, "p", "Shared non-trivial n-grams: ", class_="ngrams")
        for gram in ngrams:
            sub(p, "code", " ".join(gram))
    tables = min(len(pairs), MAX_PAIRS)
    granted = budget.take(tables) if budget is not None else tables
    if granted < tables:
        sub(
            article,
            "p",
            "Code not shown side by side: the page's budget of tables is spent"
            " (the JSON report and the editor show it).",
            class_="note",
        )
    for k, pair in enumerate(pairs[:granted]):
        other = pair["b"] if pair["a"] == rep else pair["a"]
        _pair(
            article, locations[rep], locations[other], pair, finding, files, k == 0 and not family
        )
    if len(pairs) > MAX_PAIRS and granted == MAX_PAIRS:
        sub(
            article,
            "p",
            f"{len(pairs) - MAX_PAIRS} more copies are listed above, not shown side by side.",
            class_="note",
        )


def _members(
    article: ET.Element,
    locations: list[Location],
    rep: int,
    pairs: list[Mapping[str, Any]],
    family: bool,
    link: Link,
) -> None:
    table = sub(article, "table", class_="members")
    tr = sub(sub(table, "thead"), "tr")
    titles = ("member" if family else "copy", "what", "similarity", "CrystalBLEU", "copied tokens")
    for title in titles:
        sub(tr, "th", title)
    tbody = sub(table, "tbody")
    by_other = {p["b"] if p["a"] == rep else p["a"]: p for p in pairs}
    for k, location in enumerate(locations):
        tr = sub(tbody, "tr", class_="rep" if k == rep else "")
        _anchor(sub(tr, "td", class_="path"), location, link)
        sub(tr, "td", display_path(location.describe()))
        pair = by_other.get(k)
        if k == rep or pair is None:
            sub(tr, "td", "representative" if k == rep else "", colspan="3", class_="num")
            continue
        sub(tr, "td", f"{float(pair['similarity']):.3f}", class_="num")
        sub(tr, "td", f"{float(pair['crystalbleu']):.3f}", class_="num")
        sub(tr, "td", f"{int(pair.get('copied', 0)):,}", class_="num")


def _pair(
    article: ET.Element,
    left: Location,
    right: Location,
    pair: Mapping[str, Any],
    finding: Mapping[str, Any],
    files: SourceFiles,
    open_: bool,
) -> None:
    details = sub(article, "details", class_="pair", open="open") if open_ else None
    details = details if details is not None else sub(article, "details", class_="pair")
    summary = sub(details, "summary")
    summary.text = (
        f"{display_path(left.path)}:{left.first_line}-{left.last_line} ↔ "
        f"{display_path(right.path)}:{right.first_line}-{right.last_line} · similarity "
        f"{float(pair['similarity']):.3f}"
    )
    language = str(finding.get("language", ""))
    try:
        sides = side_of(files, left, language), side_of(files, right, language)
    except CrystalError as exc:
        sub(details, "p", f"code not shown: {exc}", class_="warn")
        return
    titles = (
        f"{display_path(left.path)} · {display_path(left.describe())} (representative)",
        f"{display_path(right.path)} · {display_path(right.describe())}",
    )
    differ = side_by_side(details, *sides, titles)
    note = f"{differ} differing row{'s' if differ != 1 else ''}"
    if not all(s.by_tokens for s in sides):
        note += "; a file changed since the scan: its lines are compared by text"
    summary.text += f" · {note}"


def _notes(body: ET.Element, doc: Mapping[str, Any]) -> None:
    """What was filtered on purpose, skipped or generated: nothing vanishes silently."""
    section = sub(body, "section", id="notes")
    sub(section, "h2", "Notes")
    ul = sub(section, "ul")
    filtered = doc.get("summary", {}).get("filtered", {})
    if filtered:
        why = ", ".join(f"{n} {r}" for r, n in sorted(filtered.items(), key=lambda x: -x[1]))
        sub(ul, "li", f"{sum(filtered.values())} candidate copies filtered on purpose: {why}")
    skipped = doc.get("skipped", [])
    if skipped:
        reasons = Counter(str(s["reason"]).split(" (")[0] for s in skipped)
        why = ", ".join(f"{n} {r}" for r, n in reasons.most_common())
        li = sub(ul, "li", f"{len(skipped)} files not indexed: {why}")
        listing = sub(li, "details")
        sub(listing, "summary", "list")
        files = sub(listing, "ul")
        for item in skipped:
            sub(files, "li", f"{display_path(item['path'])}: {item['reason']}")
    generated = doc.get("generated", [])
    if generated:
        sub(ul, "li", f"{len(generated)} generated files compared only with hand-written code")
    for item in doc.get("undecodable", []):
        sub(
            ul,
            "li",
            f"{display_path(item['path'])}: {item['replaced']} bytes did not decode (U+FFFD)",
        )
    ssets = doc.get("ssets", {})
    if ssets:
        sub(ul, "li", "S sets: " + ", ".join(f"{k} {v}" for k, v in sorted(ssets.items())))
    if not len(ul):
        sub(ul, "li", "Nothing filtered or skipped.")
