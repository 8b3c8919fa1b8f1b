"""Audit the ranges of a scan's findings against the units of the code they lie in.

    crystal-lsp scan --all --format json ROOT > scan.json
    .venv/bin/python bench/range_audit.py ROOT scan.json [--json]

For every location of every finding (issue 31, "whole units as ranges"):

* ``boundaries``: the range starts at the first token of a statement and ends at the last token
  of one (brace languages: after and at ``;``, ``{`` or ``}``; indentation languages: a logical
  line at bracket depth 0);
* ``in signature``: the range starts after a function's header began and before its body opened,
  or ends inside such a header;
* ``mid-unit``: lines of one function covering most (>= 60 %) of its lines, the signature left
  outside -- what should be reported as the function;
* ``straddles``: lines that enter or leave a function or class without covering it whole;
* ``doc lines``: the share of the range's lines that are comments or docstrings;

and per finding, ``repeats``: a finding whose locations overlap, two by two, the locations of one
finding ranked higher (the same pair reported again), and ``shared locations``: locations that
overlap a location of a higher-ranked finding.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from collections import Counter
from typing import Any

from crystal_lsp.text.entries import Entry, build_entry
from crystal_lsp.text.snippets import CLASS, CONTAINERS, FUNCTION

_BOUNDARY = frozenset({";", "{", "}"})


class FileFacts:
    """The tokens, units and comment lines of one file."""

    def __init__(self, path: pathlib.Path, rel: str) -> None:
        source = path.read_text(encoding="utf-8", errors="replace")
        entry: Entry = build_entry(rel, source, None, min_tokens=1, min_lines=1)
        assert entry.heavy is not None
        self.entry, self.heavy = entry, entry.heavy
        self.brace = "{" in self.heavy.texts and entry.language not in ("python", "ruby")
        self.lines = source.split("\n")
        self.token_lines = list(self.heavy.lines)
        self.depth = self._depths()
        self.units = [m for m in entry.snippets if m.kind in CONTAINERS]
        code_lines = set(self.token_lines)
        string_only = self._string_only_lines()
        self.doc = {
            i
            for i, text in enumerate(self.lines)
            if (i not in code_lines and text.strip()) or i in string_only
        }

    def _depths(self) -> list[int]:
        depth, out = 0, []
        for text in self.heavy.texts:
            if text in ("(", "["):
                depth += 1
            elif text in (")", "]"):
                depth = max(0, depth - 1)
            out.append(depth)
        return out

    def _string_only_lines(self) -> set[int]:
        cats, lines = self.heavy.cats, self.token_lines
        by_line: dict[int, set[str]] = {}
        for cat, line in zip(cats, lines):
            by_line.setdefault(line, set()).add(cat)
        return {line for line, kinds in by_line.items() if kinds <= {"S"} and not self.brace}

    def tokens_of(self, first_line: int, last_line: int) -> tuple[int, int]:
        """The first and last token on 1-based lines ``first_line..last_line`` (-1: none)."""
        lines = self.token_lines
        inside = [i for i, line in enumerate(lines) if first_line - 1 <= line <= last_line - 1]
        return (inside[0], inside[-1]) if inside else (-1, -1)

    def starts_statement(self, i: int) -> bool:
        if i <= 0:
            return True
        if self.brace:
            texts = self.heavy.texts
            prev = texts[i - 1]
            return prev in _BOUNDARY or prev.endswith(("{", "}", ";")) or texts[i].startswith("@")
        return self.token_lines[i - 1] < self.token_lines[i] and self.depth[i - 1] == 0

    def ends_statement(self, i: int) -> bool:
        texts = self.heavy.texts
        if i >= len(texts) - 1:
            return True
        if self.brace:
            return texts[i] in _BOUNDARY or texts[i].endswith(("{", "}", ";"))
        return self.token_lines[i + 1] > self.token_lines[i] and self.depth[i] == 0

    def header(self, start: int, end: int) -> tuple[int, int]:
        """Tokens ``[start, body)`` of a unit's header (up to its body's ``{`` or ``:``)."""
        texts = self.heavy.texts
        for j in range(start, end):
            if self.brace and texts[j] == "{":
                return start, j
            if not self.brace and texts[j] == ":" and self.depth[j] == 0:
                return start, j
        return start, start


def audit(root: pathlib.Path, scan: dict[str, Any]) -> dict[str, Any]:
    """The counts of the module docstring for one scan of ``root``."""
    facts: dict[str, FileFacts] = {}
    counts: Counter[str] = Counter()
    doc_lines = all_lines = 0
    shown: list[list[tuple[str, int, int]]] = []
    for finding in scan["findings"]:
        places = [
            (loc["path"], loc["start"]["line"], loc["end"]["line"]) for loc in finding["locations"]
        ]
        counts["findings"] += 1
        counts["repeats"] += _repeats(places, shown)
        counts["shared locations"] += sum(
            any(_overlap(p, q) for earlier in shown for q in earlier) for p in places
        )
        shown.append(places)
        for loc in finding["locations"]:
            path = loc["path"]
            if path not in facts:
                facts[path] = FileFacts(root / path, path)
            f = facts[path]
            first, last = loc["start"]["line"], loc["end"]["line"]
            a, b = f.tokens_of(first, last)
            if a < 0:
                continue
            counts["locations"] += 1
            counts[f"kind {loc['kind'] if loc['kind'] in ('lines', 'file') else 'unit'}"] += 1
            counts["boundaries"] += f.starts_statement(a) and f.ends_statement(b)
            counts["in signature"] += _in_signature(f, a, b)
            if loc["kind"] == "lines":
                counts["mid-unit"] += _mid_unit(f, a, b)
                counts["straddles"] += _straddles(f, a, b)
            span = range(first - 1, last)
            doc_lines += sum(1 for i in span if i in f.doc)
            all_lines += len(span)
    out: dict[str, Any] = dict(counts)
    out["doc line share"] = round(doc_lines / all_lines, 4) if all_lines else 0.0
    n = counts["locations"] or 1
    out["boundary share"] = round(counts["boundaries"] / n, 4)
    out["repeat share"] = round(counts["repeats"] / (counts["findings"] or 1), 4)
    return out


def _overlap(p: tuple[str, int, int], q: tuple[str, int, int]) -> bool:
    return p[0] == q[0] and p[1] <= q[2] and q[1] <= p[2]


def _repeats(places: list[tuple[str, int, int]], shown: list[list[tuple[str, int, int]]]) -> bool:
    """Whether two locations of a finding overlap two different locations of a higher one."""
    for earlier in shown:
        hits = [{k for k, q in enumerate(earlier) if _overlap(p, q)} for p in places]
        for x in range(len(places)):
            for y in range(x + 1, len(places)):
                if any(i != j for i in hits[x] for j in hits[y]):
                    return True
    return False


def _in_signature(f: FileFacts, a: int, b: int) -> bool:
    for unit in f.units:
        if unit.kind != FUNCTION:
            continue
        lo, body = f.header(unit.start, unit.end)
        if lo < a <= body or lo <= b < body:
            return True
    return False


def _mid_unit(f: FileFacts, a: int, b: int) -> bool:
    inside = [u for u in f.units if u.kind == FUNCTION and u.start < a and b < u.end]
    if not inside:
        return False
    unit = min(inside, key=lambda u: u.end - u.start)
    lines = unit.last_line - unit.first_line + 1
    covered = f.token_lines[b] - f.token_lines[a] + 1
    return covered >= 0.6 * lines


def _straddles(f: FileFacts, a: int, b: int) -> bool:
    for unit in f.units:
        if unit.kind not in (FUNCTION, CLASS):
            continue
        partly = unit.start < a < unit.end <= b or a <= unit.start < b < unit.end - 1
        if partly:
            return True
    return False


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=pathlib.Path)
    ap.add_argument("scan", type=pathlib.Path, help="the JSON of `crystal-lsp scan --format json`")
    ap.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = ap.parse_args(argv)
    result = audit(args.root, json.loads(args.scan.read_text(encoding="utf-8")))
    if args.json:
        print(json.dumps(result, indent=1, sort_keys=True))
    else:
        for key in sorted(result):
            print(f"{key:20} {result[key]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
