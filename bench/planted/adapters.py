"""Convert other clone detectors' reports into the findings schema.

The schema is the one ``crystal-lsp scan --format json`` writes::

    {"version": 1, "findings": [
        {"score": float, "locations": [
            {"path": str, "start": {"line": int, "column": int},
                          "end": {"line": int, "column": int}}, ...]}, ...]}

A finding is a clone class (2+ locations); lines are 1-based and inclusive.
Each adapter's score is the one the tool itself ranks by, or its nearest
stand-in when it has none (documented per adapter); evaluate.py breaks ties
by the finding's size, then counts a tie against the planted pair.
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

Finding = dict[str, Any]
_PYLINT_RANGE = re.compile(r"^==(.+):\[(\d+):(\d+)\]\s*$")


def _loc(path: str, line: int, col: int, end_line: int, end_col: int) -> dict[str, Any]:
    return {
        "path": path,
        "start": {"line": int(line), "column": int(col)},
        "end": {"line": int(end_line), "column": int(end_col)},
    }


def _doc(findings: list[Finding], tool: str) -> dict[str, Any]:
    return {"version": 1, "tool": tool, "findings": findings}


def jscpd(report_json: Path, tool: str = "jscpd") -> dict[str, Any]:
    """jscpd 4 and 5 ``-r json``: one pair per duplicate; score = tokens.

    jscpd has no similarity score; its clones are exact (or exact up to the
    ignored names and literals), so the clone's length in tokens is what
    orders them by importance.
    """
    data = json.loads(report_json.read_text())
    out: list[Finding] = []
    for d in data.get("duplicates", []):
        locs = []
        for side in ("firstFile", "secondFile"):
            f = d[side]
            s = f.get("startLoc") or {"line": f["start"], "column": 0}
            e = f.get("endLoc") or {"line": f["end"], "column": 0}
            locs.append(
                _loc(f["name"], s["line"], s.get("column", 0), e["line"], e.get("column", 0))
            )
        out.append({"score": float(d.get("tokens", d.get("lines", 0))), "locations": locs})
    return _doc(out, tool)


def _pylint_module_index(root: Path) -> dict[str, str]:
    """Dotted module name -> relative path: full names, then unambiguous suffixes.

    pylint names a module by its package path, which depends on where the
    ``__init__.py`` files are; a suffix of the full dotted path covers that.
    """
    full: dict[str, str] = {}
    suffixes: dict[str, set[str]] = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            if not f.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), root)
            parts = rel[:-3].split(os.sep)
            full[".".join(parts)] = rel
            if parts[-1] == "__init__" and len(parts) > 1:
                parts = parts[:-1]
            full[".".join(parts)] = rel
            for k in range(1, len(parts)):
                suffixes.setdefault(".".join(parts[k:]), set()).add(rel)
    idx = {key: next(iter(rels)) for key, rels in suffixes.items() if len(rels) == 1}
    idx.update(full)
    return idx


def _module_path(idx: dict[str, str], name: str) -> str | None:
    """The file of a dotted module name; pylint prefixes the package when the root is one
    (``rich.markdown`` for ``markdown.py`` scanned from inside ``rich/``): drop leading parts."""
    for parts in (name.split("."), [*name.split("."), "__init__"]):
        for k in range(len(parts)):
            path = idx.get(".".join(parts[k:]))
            if path is not None:
                return path
    return None


def pylint(report_json2: Path, root: Path) -> dict[str, Any]:
    """pylint ``--output-format=json2`` R0801: score = number of similar lines.

    Each message reads ``Similar lines in N files`` then ``==module:[a:b]`` per
    file, a 0-based start and exclusive end, so lines a+1..b (1-based).
    """
    data = json.loads(report_json2.read_text())
    idx = _pylint_module_index(root)
    out: list[Finding] = []
    for m in data.get("messages", []):
        if m.get("symbol") != "duplicate-code":
            continue
        locs = []
        n_lines = 0
        for line in m["message"].splitlines()[1:]:
            if not line.startswith("=="):
                n_lines += 1
                continue
            m2 = _PYLINT_RANGE.match(line)
            if m2 is None:
                continue
            name, a, b = m2.groups()
            path = _module_path(idx, name)
            if path is None:
                continue
            locs.append(_loc(path, int(a) + 1, 0, int(b), 0))
        if len(locs) >= 2:
            out.append({"score": float(n_lines), "locations": locs})
    return _doc(out, "pylint")


def pyscn(report_json: Path) -> dict[str, Any]:
    """pyscn ``analyze --select clones --json``: its clone pairs; score = similarity."""
    data = json.loads(report_json.read_text())
    out: list[Finding] = []
    for p in data.get("clone", {}).get("clone_pairs", []) or []:
        locs = []
        for side in ("clone1", "clone2"):
            loc = p[side]["location"]
            locs.append(
                _loc(
                    loc["file_path"],
                    loc["start_line"],
                    loc.get("start_col", 0),
                    loc["end_line"],
                    loc.get("end_col", 0),
                )
            )
        out.append({"score": float(p.get("similarity", 0.0)), "locations": locs})
    return _doc(out, "pyscn")


def pmd_cpd(report_xml: Path) -> dict[str, Any]:
    """PMD CPD ``-f xml``: one clone class per <duplication>; score = tokens."""
    tree = ET.parse(report_xml)
    out: list[Finding] = []
    for dup in tree.getroot().iter():
        if not dup.tag.endswith("duplication"):
            continue
        locs = []
        for f in dup:
            if not f.tag.endswith("file"):
                continue
            a = f.attrib
            line = int(a["line"])
            end = int(a.get("endline", line + int(dup.attrib.get("lines", "1")) - 1))
            locs.append(
                _loc(a["path"], line, int(a.get("column", 0)), end, int(a.get("endcolumn", 0)))
            )
        if len(locs) >= 2:
            out.append({"score": float(dup.attrib.get("tokens", 0)), "locations": locs})
    return _doc(out, "pmd-cpd")
