#!/usr/bin/env python3
"""The figures the docs state, from one source each: the committed benchmark results.

    .venv/bin/python bench/doc_figures.py            # list every figure and where the docs state it
    .venv/bin/python bench/doc_figures.py --write    # rewrite the docs' figures from bench/results
    .venv/bin/python bench/doc_figures.py --check    # exit 1 where a doc disagrees with its result

A *figure* is one number read from one result file (:data:`FIGURES`: how it is read and
rounded); a *claim* is a phrase of a doc with figures in it (:data:`CLAIMS`). ``--write``
finds each claim's phrase with any numbers in the figures' places and puts the results' values
there; ``--check`` (and ``tests/unit/test_doc_figures.py``) fails while a doc states another
number than its source. After re-running a benchmark: ``--write``, then read the diff.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
NUMBER = r"[0-9][0-9,]*(?:\.[0-9]+)?"


def _clone_run(tool: str, lang: str, run: str) -> Callable[[dict[str, Any]], float]:
    def read(doc: dict[str, Any]) -> float:
        [row] = [r for r in doc["results"] if r["tool"] == tool and r["lang"] == lang]
        return float(row["runs"][run]["cpu"])

    return read


def _ci_median(run: str) -> Callable[[dict[str, Any]], float]:
    def read(doc: dict[str, Any]) -> float:
        return float(statistics.median(r["cpu"] for r in doc["runs"][run]))

    return read


FIGURES: dict[str, tuple[str, Callable[[dict[str, Any]], float], str]] = {
    # clone_bench: crystal-lsp scan of CPython's stdlib and java.util/io/time, CPU seconds
    "stdlib_cold": ("clone_bench.json", _clone_run("crystal-lsp", "python", "cold"), "{:.1f}"),
    "stdlib_warm": ("clone_bench.json", _clone_run("crystal-lsp", "python", "warm"), "{:.1f}"),
    "stdlib_one": ("clone_bench.json", _clone_run("crystal-lsp", "python", "one_file"), "{:.1f}"),
    "jdk_cold": ("clone_bench.json", _clone_run("crystal-lsp", "java", "cold"), "{:.1f}"),
    "jdk_warm": ("clone_bench.json", _clone_run("crystal-lsp", "java", "warm"), "{:.1f}"),
    "jdk_one": ("clone_bench.json", _clone_run("crystal-lsp", "java", "one_file"), "{:.1f}"),
    "jscpd_cold": ("clone_bench.json", _clone_run("jscpd 5", "python", "cold"), "{:.1f}"),
    "jscpd_warm": ("clone_bench.json", _clone_run("jscpd 5", "python", "warm"), "{:.1f}"),
    "jscpd_one": ("clone_bench.json", _clone_run("jscpd 5", "python", "one_file"), "{:.1f}"),
    # ci_cache_bench: a fresh checkout of the stdlib, medians of its runs
    "ci_cold": ("ci_cache_bench.json", _ci_median("cold"), "{:.1f}"),
    "ci_restored": ("ci_cache_bench.json", _ci_median("restored, nothing changed"), "{:.2f}"),
    "ci_changed": ("ci_cache_bench.json", _ci_median("restored, 10 files changed"), "{:.2f}"),
}
DATES = {"clone_date": "clone_bench.json", "ci_date": "ci_cache_bench.json"}
"""Run dates a claim may state, from the results' ``date`` / ``when``."""

CLAIMS: list[tuple[str, str]] = [
    (
        "README.md",
        "| CPU seconds: cold scan / nothing changed / one file changed | {stdlib_cold} / "
        "**{stdlib_warm}** / {stdlib_one} | **{jscpd_cold}** / {jscpd_warm} / **{jscpd_one}** |",
    ),
    ("README.md", "the stdlib {stdlib_cold} s of CPU, jscpd 5 {jscpd_cold} s)"),
    (
        "docs/benchmarks.md",
        "cold scan {stdlib_cold} s / {jdk_cold} s CPU, warm {stdlib_warm} s / {jdk_warm} s, one file "
        "changed {stdlib_one} s / {jdk_one} s",
    ),
    (
        "docs/benchmarks.md",
        "stdlib, its run of {ci_date}: cold {ci_cold} s CPU (the cold figure of record is "
        "`clone_bench.py`'s, {stdlib_cold} s, run of {clone_date}); restored {ci_restored} s; "
        "restored with 10 files changed {ci_changed} s",
    ),
    (
        "docs/ci.md",
        "the README's measured table gives its CPU time on CPython's stdlib, 734 files and\n"
        "327k lines: {stdlib_cold} s (`bench/results/clone_bench.md`, run of {clone_date})",
    ),
]


def _load(name: str, results: Path) -> dict[str, Any]:
    doc = json.loads((results / name).read_text(encoding="utf-8"))
    assert isinstance(doc, dict), name
    return doc


def values(results: Path = RESULTS) -> dict[str, str]:
    """Every figure and date, formatted as the docs state it."""
    docs: dict[str, dict[str, Any]] = {}
    out: dict[str, str] = {}
    for name, (source, read, fmt) in FIGURES.items():
        doc = docs.setdefault(source, _load(source, results))
        out[name] = fmt.format(read(doc))
    for name, source in DATES.items():
        doc = docs.setdefault(source, _load(source, results))
        out[name] = str(doc.get("date") or doc.get("when") or "")
    return out


def _pattern(template: str) -> re.Pattern[str]:
    """A claim's phrase with any figure (or date) in the figures' places."""
    parts = re.split(r"\{(\w+)\}", template)
    regex = "".join(
        re.escape(part) if k % 2 == 0 else (r"[0-9][0-9 :UTC-]*[0-9C]" if part in DATES else NUMBER)
        for k, part in enumerate(parts)
    )
    return re.compile(regex)


def disagreements(repo: Path = REPO, results: Path = RESULTS) -> list[str]:
    """Where a doc does not state a claim as its results give it (empty: all agree)."""
    found = values(results)
    out = []
    for doc, template in CLAIMS:
        text = (repo / doc).read_text(encoding="utf-8")
        expected = template.format(**found)
        if expected not in text:
            stated = _pattern(template).search(text)
            now = repr(stated.group(0)) if stated else "the phrase is missing"
            out.append(f"{doc}: expected {expected!r}; states {now}")
    return out


def write(repo: Path = REPO, results: Path = RESULTS) -> list[str]:
    """Put the results' figures into the docs; the docs changed."""
    found = values(results)
    changed = []
    for doc, template in CLAIMS:
        path = repo / doc
        text = path.read_text(encoding="utf-8")
        new, count = _pattern(template).subn(template.format(**found).replace("\\", "\\\\"), text)
        if count == 0:
            raise SystemExit(f"{doc}: the phrase of a claim is missing: {template!r}")
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(doc)
    return sorted(set(changed))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="rewrite the docs' figures")
    group.add_argument("--check", action="store_true", help="exit 1 where a doc disagrees")
    a = ap.parse_args(argv)
    if a.write:
        changed = write()
        print("updated: " + (", ".join(changed) if changed else "nothing (the docs agree)"))
        return 0
    problems = disagreements()
    if a.check:
        for line in problems:
            print(line, file=sys.stderr)
        return 1 if problems else 0
    for name, value in values().items():
        source = FIGURES[name][0] if name in FIGURES else DATES[name]
        print(f"{name:12} {value:>22}  bench/results/{source}")
    for line in problems:
        print("DISAGREES: " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
