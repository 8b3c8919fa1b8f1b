"""Score a findings file against a planted-clone manifest.

A planted copy is FOUND when the union, over the findings that have both a
location overlapping the copy's line range (in the copy's file) and a location
overlapping the original's range (in the original's file), of those findings'
line ranges within the copy's range covers at least 50% of the copy's lines.

Rank: findings are sorted by score, descending (ties broken by the finding's
size in lines, larger first); a finding's rank is the number of findings that
sort before it or tie with it (so a tie counts against it) and its percentile
is rank / number of findings.  A found copy's rank is the best rank among the
findings linking it to its original; "in the top 10%" means percentile <= 10%.

Usage: python bench/planted/evaluate.py --manifest M.json --findings F.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

FOUND_COVERAGE = 0.5
TOP_FRACTION = 0.10

Loc = tuple[str, int, int]  # relative path, first line, last line (1-based inclusive)


def _norm(path: str, root: Path, root_real: str) -> str:
    if os.path.isabs(path):
        real = os.path.realpath(path)
        for base in (str(root), root_real):
            if real == base or path.startswith(base + os.sep):
                return os.path.normpath(os.path.relpath(path, base))
            if real.startswith(base + os.sep):
                return os.path.normpath(os.path.relpath(real, base))
        return os.path.normpath(path)
    return os.path.normpath(path)


def load_findings(
    doc: dict[str, Any] | Path, root: Path, level: str | None = "copy"
) -> list[tuple[float, list[Loc]]]:
    """(score, locations) per finding, paths made relative to ``root``.

    ``level``: only the findings of that level where a report says (crystal-lsp since schema
    3: what a reviewer reads by default is ``copy``); None: every finding.
    """
    if isinstance(doc, Path):
        doc = json.loads(doc.read_text())
    root = Path(os.path.abspath(root))
    root_real = os.path.realpath(root)
    out: list[tuple[float, list[Loc]]] = []
    for f in doc.get("findings", []):
        if level is not None and f.get("level", level) != level:
            continue
        locs: list[Loc] = []
        for loc in f.get("locations", []):
            a = int(loc["start"]["line"])
            b = int(loc["end"]["line"])
            locs.append((_norm(loc["path"], root, root_real), min(a, b), max(a, b)))
        out.append((float(f.get("score", 0.0)), locs))
    return out


def ranks(findings: list[tuple[float, list[Loc]]]) -> list[int]:
    """Pessimistic 1-based rank of each finding (see the module docstring)."""
    keys = [(s, sum(b - a + 1 for _, a, b in locs)) for s, locs in findings]
    order = sorted(range(len(keys)), key=lambda i: keys[i], reverse=True)
    out = [0] * len(keys)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and keys[order[j + 1]] == keys[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = j + 1
        i = j + 1
    return out


def _overlaps(loc: Loc, path: str, a: int, b: int) -> bool:
    return loc[0] == path and loc[1] <= b and loc[2] >= a


def evaluate(manifest: dict[str, Any], findings: list[tuple[float, list[Loc]]]) -> dict[str, Any]:
    """Per-plant results and totals for one planted corpus."""
    rk = ranks(findings)
    n_findings = len(findings)
    by_path: dict[str, list[int]] = {}
    for i, (_s, locs) in enumerate(findings):
        for p in {loc[0] for loc in locs}:
            by_path.setdefault(p, []).append(i)
    plants = []
    found = top = 0
    for e in manifest["plants"]:
        cp, cs, ce = e["copy"]["path"], e["copy"]["start"], e["copy"]["end"]
        op, os_, oe = e["original"]["path"], e["original"]["start"], e["original"]["end"]
        covered: set[int] = set()
        best: int | None = None
        for i in by_path.get(os.path.normpath(cp), []):
            locs = findings[i][1]
            near_copy = [loc for loc in locs if _overlaps(loc, os.path.normpath(cp), cs, ce)]
            if not near_copy or not any(
                _overlaps(loc, os.path.normpath(op), os_, oe) for loc in locs
            ):
                continue
            for _p, a, b in near_copy:
                covered.update(range(max(a, cs), min(b, ce) + 1))
            best = rk[i] if best is None else min(best, rk[i])
        coverage = len(covered) / (ce - cs + 1)
        is_found = coverage >= FOUND_COVERAGE
        pct = (best / n_findings) if (best is not None and n_findings) else None
        in_top = bool(is_found and pct is not None and pct <= TOP_FRACTION)
        found += is_found
        top += in_top
        plants.append(
            {
                "id": e["id"],
                "copy": e["copy"],
                "coverage": round(coverage, 3),
                "found": is_found,
                "rank": best if is_found else None,
                "percentile": round(100 * pct, 2) if (is_found and pct is not None) else None,
                "top10": in_top,
            }
        )
    return {
        "n": len(manifest["plants"]),
        "found": found,
        "top10": top,
        "findings": n_findings,
        "plants": plants,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--manifest", type=Path, required=True)
    ap.add_argument("--findings", type=Path, required=True, help="findings JSON (the scan schema)")
    ap.add_argument("--root", type=Path, help="corpus root the paths are relative to")
    ap.add_argument("--details", action="store_true", help="print every plant's result")
    a = ap.parse_args(argv)
    manifest = json.loads(a.manifest.read_text())
    root = a.root or Path(manifest["root"])
    res = evaluate(manifest, load_findings(a.findings, root))
    if not a.details:
        res = {k: v for k, v in res.items() if k != "plants"}
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
