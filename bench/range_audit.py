"""Audit the ranges of a scan's findings against the units of the code they lie in.

    crystal-lsp scan --all --format json ROOT > scan.json
    .venv/bin/python bench/range_audit.py ROOT scan.json [--json]

For every location of every finding (issue 31, "whole units as ranges"):

* ``boundaries``: the range starts at the first token of a statement and ends at the last token
  of one (brace languages that end statements with ``;``: after and at ``;``, ``{`` or ``}``;
  indentation languages and brace languages that end statements at line ends (Go, JavaScript
  without semicolons): a line break at bracket depth 0, the line before not ending in an
  operator or a comma);
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

from crystal_lsp.text.entries import Entry, SnippetMeta, build_entry
from crystal_lsp.text.snippets import CLASS, CONTAINERS, FUNCTION

_BOUNDARY = frozenset({";", "{", "}"})
# a line ending in one of these goes on on the next (no statement ends there)
_CONTINUED = frozenset(
    {",", "(", "[", "=", "+", "-", "*", "/", "%", "&&", "||", "&", "|", "?", ":", ".", "->", "=>"}
    | {":=", "+=", "-=", "==", "!=", "<", ">", "<=", ">="}
)


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
        # statements end at ";" (else at line ends: Go, JavaScript without semicolons)
        semicolons = sum(1 for text in self.heavy.texts if text == ";")
        self.semicolons = self.brace and semicolons >= 0.05 * len(set(self.token_lines))
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
        """Per token: the open brackets after it (braces too where they are not blocks)."""
        opening, closing = ("(", "["), (")", "]")
        if not self.brace:
            opening, closing = ("(", "[", "{"), (")", "]", "}")
        depth, out = 0, []
        for text, cat in zip(self.heavy.texts, self.heavy.cats):
            if cat == "S":  # the braces of an f-string's fields
                pass
            elif text in opening:
                depth += 1
            elif text in closing:
                depth = max(0, depth - 1)
            out.append(depth)
        return out

    def _line_break(self, i: int) -> bool:
        """Whether a statement may end between tokens ``i`` and ``i + 1`` (by lines)."""
        texts = self.heavy.texts
        if self.token_lines[i] == self.token_lines[i + 1] or self.depth[i] != 0:
            return False
        return not self.brace or texts[i] in ("{", "}") or texts[i] not in _CONTINUED

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
        texts = self.heavy.texts
        if self.semicolons:
            prev = texts[i - 1]
            return prev in _BOUNDARY or prev.endswith(("{", "}", ";")) or texts[i].startswith("@")
        return self._line_break(i - 1) or (self.brace and texts[i - 1] in _BOUNDARY)

    def ends_statement(self, i: int) -> bool:
        texts = self.heavy.texts
        if i >= len(texts) - 1:
            return True
        if self.semicolons:
            return texts[i] in _BOUNDARY or texts[i].endswith(("{", "}", ";"))
        return self._line_break(i) or (self.brace and texts[i] in _BOUNDARY)

    def header(self, start: int, end: int) -> tuple[int, int]:
        """Tokens ``[start, body)`` of a unit's header (up to its body's ``{`` or ``:``)."""
        texts = self.heavy.texts
        for j in range(start, end):
            if self.brace and texts[j] == "{":
                return start, j
            if not self.brace and texts[j] == ":" and self.depth[j] == 0:
                return start, j
        return start, start


def audit(
    root: pathlib.Path, scan: dict[str, Any], show: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The counts of the module docstring for one scan of ``root``.

    ``show``: checks (``boundaries``, ``in signature``, ``mid-unit``, ``straddles``, ``repeats``)
    whose failing locations are printed to stderr, each with its first and last line.
    """
    facts: dict[str, FileFacts] = {}
    counts: Counter[str] = Counter()
    doc_lines = all_lines = 0
    shown: list[list[tuple[str, int, int]]] = []
    for finding in scan["findings"]:
        places = [
            (loc["path"], loc["start"]["line"], loc["end"]["line"]) for loc in finding["locations"]
        ]
        counts["findings"] += 1
        repeated = _repeats(places, shown)
        counts["repeats"] += repeated
        if repeated and "repeats" in show:
            print(f"repeats: finding {counts['findings']}: {places}", file=sys.stderr)
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
            checks = {
                "boundaries": not (f.starts_statement(a) and f.ends_statement(b)),
                "in signature": _in_signature(f, a, b),
            }
            if loc["kind"] == "lines":
                checks["mid-unit"] = _mid_unit(f, a, b)
                checks["straddles"] = _straddles(f, a, b)
            for check, failed in checks.items():
                counts[check] += failed if check != "boundaries" else not failed
                if failed and check in show:
                    _show(check, counts["findings"], f, path, first, last)
            span = range(first - 1, last)
            doc_lines += sum(1 for i in span if i in f.doc)
            all_lines += len(span)
    out: dict[str, Any] = dict(counts)
    out["doc line share"] = round(doc_lines / all_lines, 4) if all_lines else 0.0
    n = counts["locations"] or 1
    out["boundary share"] = round(counts["boundaries"] / n, 4)
    out["repeat share"] = round(counts["repeats"] / (counts["findings"] or 1), 4)
    return out


def _show(check: str, finding: int, f: FileFacts, path: str, first: int, last: int) -> None:
    head, tail = f.lines[first - 1].strip(), f.lines[last - 1].strip()
    print(f"{check}: finding {finding}: {path}:{first}-{last}", file=sys.stderr)
    print(f"    {first}: {head[:100]}\n    {last}: {tail[:100]}", file=sys.stderr)
    if check == "straddles":
        a, b = f.tokens_of(first, last)
        unit = _straddled(f, a, b)
        if unit is not None:
            print(
                f"    {unit.kind} {unit.name} {unit.first_line}-{unit.last_line}", file=sys.stderr
            )


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
    return _straddled(f, a, b) is not None


def _straddled(f: FileFacts, a: int, b: int) -> SnippetMeta | None:
    """A function or class the tokens ``[a, b]`` enter or leave without covering it whole.

    A range inside one unit (its first lines, signature included, or its last ones) crosses
    no boundary of it.
    """
    for unit in f.units:
        if unit.kind not in (FUNCTION, CLASS):
            continue
        if unit.start < a < unit.end <= b or a < unit.start <= b < unit.end - 1:
            return unit
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=pathlib.Path)
    ap.add_argument("scan", type=pathlib.Path, help="the JSON of `crystal-lsp scan --format json`")
    ap.add_argument("--json", action="store_true", help="print the counts as JSON")
    ap.add_argument(
        "--show",
        action="append",
        default=[],
        help="print the locations failing this check to stderr (repeatable): boundaries, "
        "'in signature', mid-unit, straddles, repeats",
    )
    args = ap.parse_args(argv)
    scan = json.loads(args.scan.read_text(encoding="utf-8"))
    result = audit(args.root, scan, frozenset(args.show))
    if args.json:
        print(json.dumps(result, indent=1, sort_keys=True))
    else:
        for key in sorted(result):
            print(f"{key:20} {result[key]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
