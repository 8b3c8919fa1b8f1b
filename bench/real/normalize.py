"""Every tool's findings in one format.

A normalized finding is ``{"rank": int, "score": float | None, "locations": [[path, first,
last], ...], "pairs": [[i, j], ...] | None}``: paths relative to the corpus root, lines
1-based inclusive, at least two locations, ``rank`` the tool's own order (0 = first), and
``pairs`` the location pairs the tool reports (``None``: every pair of locations).  The first
two locations are the ones labelled; all pairs count for recall.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

Loc = tuple[str, int, int]
Finding = dict[str, Any]

# Keys under which a later crystal-lsp may put the aligned range of a location (preferred over
# the location's own start/end, which will become the enclosing unit).
ALIGNED_KEYS = ("aligned", "region", "aligned_range", "aligned_lines")


def rel_path(path: str, root: Path) -> str:
    if os.path.isabs(path):
        path = os.path.relpath(path, root)
    return path.replace(os.sep, "/").removeprefix("./")


def _line(pos: Any) -> int | None:
    """A line number from {"line": n}, [line, col], or n."""
    if isinstance(pos, dict):
        pos = pos.get("line")
    elif isinstance(pos, (list, tuple)) and pos:
        pos = pos[0]
    return int(pos) if isinstance(pos, (int, float)) else None


def _range(obj: Any) -> tuple[int, int] | None:
    """(first, last) from the shapes a range may take: start/end, first/last, [first, last]."""
    if isinstance(obj, (list, tuple)) and len(obj) == 2:
        a, b = _line(obj[0]), _line(obj[1])
    elif isinstance(obj, dict):
        a = _line(obj.get("start", obj.get("first", obj.get("start_line"))))
        b = _line(obj.get("end", obj.get("last", obj.get("end_line"))))
    else:
        return None
    if a is None or b is None:
        return None
    return (a, b) if a <= b else (b, a)


def location(loc: dict[str, Any], root: Path) -> tuple[Loc, bool]:
    """One location of a findings document; True when an aligned range was used."""
    path = rel_path(str(loc["path"]), root)
    for key in ALIGNED_KEYS:
        rng = _range(loc.get(key))
        if rng is not None:
            return (path, *rng), True
    rng = _range(loc)
    if rng is None:
        raise ValueError(f"location without a line range: {loc!r}")
    return (path, *rng), False


def from_doc(
    doc: dict[str, Any], root: Path, ranked: bool, level: str | None = None
) -> tuple[list[Finding], bool]:
    """Normalized findings of a document in crystal-lsp's schema (which the adapters write).

    ``ranked``: the report's order is the tool's rank; otherwise the findings are ranked by
    score, descending (stable).  ``level``: only the findings of that level (what a reviewer
    reads by default).  Returns the findings and whether any aligned range was used.
    """
    out: list[Finding] = []
    used_aligned = False
    for f in doc.get("findings", []):
        if level is not None and f.get("level", level) != level:
            continue
        locs = []
        for loc in f.get("locations", []):
            one, aligned = location(loc, root)
            locs.append(list(one))
            used_aligned |= aligned
        if len(locs) < 2:
            continue
        pairs = None
        if f.get("pairs"):
            pairs = [[int(p["a"]), int(p["b"])] for p in f["pairs"]]
        score = f.get("score")
        out.append({"score": None if score is None else float(score), "locations": locs})
        out[-1]["pairs"] = pairs
        if f.get("level"):  # crystal-lsp since schema 3: copy or similar (structure)
            out[-1]["level"] = str(f["level"])
    order = range(len(out))
    if not ranked:
        order = sorted(order, key=lambda i: -(out[i]["score"] or 0.0))
    for rank, i in enumerate(order):
        out[i]["rank"] = rank
    return out, used_aligned


def pairs_of(f: Finding) -> list[tuple[int, int]]:
    """The location pairs of a finding: every two of its locations.

    A finding is a clone class: a reviewer reading it sees every member as a copy of the others,
    whether the tool scored each pair (pylint, CPD's identical runs) or each member against the
    class's representative (crystal-lsp since schema version 2).
    """
    n = len(f["locations"])
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def first_two(f: Finding) -> tuple[Loc, Loc]:
    a, b = f["locations"][:2]
    return (a[0], int(a[1]), int(a[2])), (b[0], int(b[1]), int(b[2]))


def save(findings: list[Finding], meta: dict[str, Any], path: Path) -> None:
    """One JSON object per line: the run's metadata first, then the findings in rank order."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"meta": meta}, sort_keys=True)]
    for f in sorted(findings, key=lambda f: f["rank"]):
        lines.append(json.dumps(f, separators=(",", ":")))
    path.write_text("\n".join(lines) + "\n")


def load(path: Path) -> tuple[list[Finding], dict[str, Any]]:
    meta: dict[str, Any] = {}
    findings: list[Finding] = []
    for line in path.read_text().splitlines():
        obj = json.loads(line)
        if "meta" in obj:
            meta = obj["meta"]
        else:
            findings.append(obj)
    return findings, meta
