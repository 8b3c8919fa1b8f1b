"""Baseline files: findings a team has accepted, so only new clones are reported.

A baseline is JSON ``{"format": "crystal-lsp/baseline", "version": 1, "findings": [...]}`` where
each finding is recorded by its id (which hashes the paths and normalized contents of its copies,
so moving code within a file keeps it baselined, while a new copy of baselined code changes the
id and is reported).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable

from crystal_lsp.clones.findings import Finding
from crystal_lsp.errors import CrystalError
from crystal_lsp.text.datafiles import read_json, write_atomic

FORMAT = "crystal-lsp/baseline"


def load_baseline(path: str) -> set[str]:
    """The finding ids of a baseline file (a missing file is an error)."""
    if not os.path.lexists(path):
        raise CrystalError(f"{path}: no such baseline file (create it with --update-baseline)")
    doc = read_json(path, "baseline file")
    if (
        not isinstance(doc, dict)
        or doc.get("format") != FORMAT
        or not isinstance(doc.get("findings"), list)
    ):
        raise CrystalError(f"{path}: not a crystal-lsp baseline file")
    return {str(item["id"]) for item in doc["findings"] if isinstance(item, dict) and "id" in item}


def write_baseline(path: str, findings: Iterable[Finding]) -> int:
    """Write the current findings as the new baseline; returns how many."""
    rows = sorted(
        (
            {
                "id": f.id,
                "score": round(f.score, 4),
                "locations": [loc.label() for loc in f.locations],
            }
            for f in findings
        ),
        key=lambda row: str(row["id"]),
    )
    doc = {"format": FORMAT, "version": 1, "findings": rows}
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    write_atomic(path, text.encode("utf-8", "backslashreplace"), "--baseline")
    return len(rows)


def without_baselined(findings: list[Finding], baseline: set[str]) -> list[Finding]:
    """The findings whose id is not in the baseline."""
    return [f for f in findings if f.id not in baseline]
