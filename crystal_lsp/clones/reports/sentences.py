"""One sentence per finding, as a reviewer says it: what these lines are a copy of, and why.

``Lines 12-40 (function parse) are a renamed copy of src/a.py:80-108 (function load): 18 of 20
lines identical, similarity 0.93.`` -- or, for similar structure, ``... have the structure of
...``, and for a family, ``... are one of 7 parallel units with ...``. Used where a finding is
told in words: SARIF results and the language server's diagnostics. Untrusted names are escaped
(:func:`crystal_lsp.clones.findings.display_path`).
"""

from __future__ import annotations

from crystal_lsp.clones.findings import COPY, EXACT, RENAMED, Finding, Location, Pair, display_path


def span(loc: Location) -> str:
    """``Lines 12-40 (function parse)``, ``Line 7``, ``The whole file``."""
    if loc.kind == "file":
        return "The whole file"
    lines = (
        f"Line {loc.first_line}"
        if loc.first_line == loc.last_line
        else f"Lines {loc.first_line}-{loc.last_line}"
    )
    what = loc.describe()
    if what and loc.kind != "lines":
        return f"{lines} ({display_path(what)})"
    if loc.unit_kind:
        return f"{lines} (in {loc.unit_kind} {display_path(loc.unit_name)})".replace("  ", " ")
    return lines


def where(loc: Location) -> str:
    """``src/a.py:80-108 (function load)``."""
    what = loc.describe() if loc.kind != "lines" else ""
    place = f"{display_path(loc.path)}:{loc.first_line}-{loc.last_line}"
    return f"{place} ({display_path(what)})" if what else place


def best_pair(finding: Finding, at: int) -> Pair:
    """The pair of location ``at`` with the highest similarity (its closest other copy)."""
    pairs = [p for p in finding.pairs if at in (p.a, p.b)] or finding.pairs
    return max(pairs, key=lambda p: (p.similarity, -min(p.a, p.b)))


def sentence(finding: Finding, at: int) -> str:
    """The finding told from location ``at`` (module docstring)."""
    pair = best_pair(finding, at)
    other = pair.b if pair.a == at else pair.a
    if other == at:
        other = pair.a
    here, there = finding.locations[at], finding.locations[other]
    more = len(finding.locations) - 2
    others = f" and {more} more" if more > 0 else ""
    if finding.family:
        verb = f"are one of {len(finding.locations)} parallel units with {where(there)}"
        others = ""
    elif finding.level == COPY:
        kind = {EXACT: "an exact", RENAMED: "a renamed"}.get(finding.type, "a near")
        verb = f"are {kind} copy of {where(there)}"
    else:
        verb = f"have the structure of {where(there)}"
    why = "; ".join(finding.evidence) if finding.evidence else ""
    tail = (
        f": {why}, similarity {pair.similarity:.2f}"
        if why
        else f" (similarity {pair.similarity:.2f})"
    )
    level = (
        "" if finding.level == COPY else " Similar structure, nothing to act on unless it grows."
    )
    return f"{span(here)} {verb}{others}{tail}.{level}"
