"""The report made for coding agents: one plain line per copy, one summary line, no colour.

``path:a-b ~ path:c-d similarity 0.93 (function name)``: the representative of a clone class
(the original to reuse) on the left, a copy on the right, then what the original is. Shared by
``crystal-lsp scan --format agent``, the pre-commit hook and the MCP server's texts, so an agent
reads the same lines wherever they come from. Untrusted names are escaped
(:func:`crystal_lsp.clones.findings.display_path`) so that one copy stays one line.
"""

from __future__ import annotations

from collections.abc import Sequence

from crystal_lsp.clones.findings import Finding, Location, display_path
from crystal_lsp.clones.reports.text import counts, headline


def place(loc: Location) -> str:
    """``path:first-last``."""
    return f"{display_path(loc.path)}:{loc.first_line}-{loc.last_line}"


def what(loc: Location) -> str:
    """What a location is (``function parse``, ``lines 3-9 of class C``), else ``code``."""
    return display_path(loc.describe()) or "code"


def agent_lines(findings: Sequence[Finding]) -> list[str]:
    """One line per copy: the representative ``~`` the copy, similarity, what was copied."""
    lines = []
    for finding in findings:
        p = "" if finding.probability is None else f" p {finding.probability:.2f}"
        for pair in finding.pairs:
            a, b = finding.locations[pair.a], finding.locations[pair.b]
            if pair.b == finding.representative:  # the representative first, as everywhere
                a, b = b, a
            lines.append(f"{place(a)} ~ {place(b)} similarity {pair.similarity:.2f}{p} ({what(a)})")
    return lines


def agent_summary(
    findings: Sequence[Finding],
    files: int,
    threshold: float,
    *,
    skipped: int = 0,
    filtered: int = 0,
    baselined: int = 0,
    show_all: bool = False,
) -> str:
    """The one summary line: the counts of the text report, and what was left out.

    ``findings``: every finding of the scan (the lines show those of :func:`at_level`).
    """
    c = counts(findings, show_all)
    if not c.shown:
        head = f"crystal: no copies in {files} files (threshold {threshold:g})"
        if c.similar:
            head += f"; {c.similar} of similar structure (--all)"
    else:
        head = f"crystal: {headline(c, files, show_all)} (threshold {threshold:g})"
    classes = c.shown
    notes = [
        f"{count} {one if count == 1 else many}"
        for count, one, many in (
            (skipped, "file not indexed", "files not indexed"),
            (filtered, "candidate filtered on purpose", "candidates filtered on purpose"),
            (baselined, "baselined", "baselined"),
        )
        if count
    ]
    if notes:
        head += "; " + ", ".join(notes)
    return head + ("; reuse the original on the left of each ~" if classes else "")
