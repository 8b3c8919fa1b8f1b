#!/usr/bin/env python3
"""The index of the benchmark results: ``bench/results/INDEX.md``, generated.

    .venv/bin/python bench/results_index.py            # rewrite bench/results/INDEX.md
    .venv/bin/python bench/results_index.py --check    # exit 1 if INDEX.md is not up to date

Every file under ``bench/results/`` gets a row: what produced it and when, read from the files
themselves, never guessed from the clock or from git (the index is the same in every clone):

* **produced by**: the command a result JSON records (``command`` or ``meta.command``); else the
  script named like the file (``bench/<stem>.py``); else the command its companion JSON (same
  name, other extension) records; else the script of its folder (``bench/<folder>.py`` or
  ``bench/<folder>_bench.py``); else the script whose source names the file; else the first
  ``bench/....py`` the file mentions near its top. Hand-written labels say so.
* **when**: the date a result records (``date``, ``when``, ``meta.date``), or the first date and
  time near the top of a Markdown report; else the companion's; else *not recorded*.

``tests/unit/test_bench_results.py`` checks that INDEX.md is what this script writes.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
INDEX = RESULTS / "INDEX.md"
DATE = re.compile(r"20\d\d-\d\d-\d\d(?:[ T]\d\d:\d\d(?::\d\d)?(?: UTC)?)?")
SCRIPT = re.compile(r"bench/[\w/]+\.py")
HEAD_LINES = 20
NOT_RECORDED = "not recorded"


def result_files(root: Path = RESULTS) -> list[Path]:
    """Every result file, in path order (the index itself left out)."""
    files = [p for p in root.rglob("*") if p.is_file() and p != root / INDEX.name]
    return sorted(files, key=lambda p: (p.parent.relative_to(root).parts, p.name))


def _json(path: Path) -> dict[str, Any]:
    if path.suffix != ".json" or not path.exists():
        return {}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _recorded(doc: dict[str, Any], keys: tuple[str, ...]) -> str:
    for holder in (doc, doc.get("meta") if isinstance(doc.get("meta"), dict) else {}):
        for key in keys:
            value = holder.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return ""


def _head(path: Path) -> str:
    if path.suffix not in (".md", ".txt"):
        return ""
    try:
        return "\n".join(path.read_text(encoding="utf-8").splitlines()[:HEAD_LINES])
    except (OSError, UnicodeDecodeError):
        return ""


def _companions(path: Path) -> list[Path]:
    stem = path.name.split(".")[0]
    return sorted(p for p in path.parent.glob(f"{stem}.*") if p != path)


def _script_of(command: str) -> str:
    found = SCRIPT.search(command)
    return found.group(0) if found else ""


def _naming_script(stem: str, sources: dict[str, str]) -> str:
    quoted = [f'"{stem}.', f"'{stem}.", f"results/{stem}."]
    if "_" in stem:  # a distinctive name (``mcp_startup``), not a word any script may quote
        quoted += [f'"{stem}"', f"'{stem}'"]
    return next((name for name, text in sources.items() if any(q in text for q in quoted)), "")


def producer(path: Path, sources: dict[str, str], root: Path = RESULTS) -> str:
    """What produced a result file (module docstring), as a short Markdown cell."""
    rel = path.relative_to(root)
    if "labels" in rel.parts[:-1]:
        return "hand labels (see the folder's README.md)"
    command = _recorded(_json(path), ("command",))
    if _script_of(command):
        return _script_of(command)
    stem = path.name.split(".")[0]
    if (HERE / f"{stem}.py").exists():
        return f"bench/{stem}.py"
    for other in _companions(path):
        command = _recorded(_json(other), ("command",))
        if _script_of(command):
            return _script_of(command)
    top = rel.parts[0] if len(rel.parts) > 1 else ""
    for candidate in (f"{top}.py", f"{top}_bench.py"):
        if top and (HERE / candidate).exists():
            return f"bench/{candidate}"
    named = _naming_script(stem, sources)
    if named:
        return named
    mentioned = _script_of(_head(path))
    if mentioned:
        return mentioned
    return "not known"


def _date_of(path: Path) -> str:
    recorded = _recorded(_json(path), ("date", "when"))
    if recorded:
        return recorded
    found = DATE.search(_head(path))
    return found.group(0) if found else ""


def when(path: Path) -> str:
    """When a result was produced, as it records it (module docstring)."""
    for candidate in (path, *_companions(path)):
        found = _date_of(candidate)
        if found:
            return found
    return NOT_RECORDED


def bench_sources() -> dict[str, str]:
    """The benchmark scripts' sources by path (``bench/x.py``), this script left out."""
    return {
        f"bench/{p.relative_to(HERE)}": p.read_text(encoding="utf-8")
        for p in sorted(HERE.rglob("*.py"))
        if p.resolve() != Path(__file__).resolve()
    }


def render(root: Path = RESULTS) -> str:
    """The text of INDEX.md for the files under ``root``."""
    sources = bench_sources()
    out = [
        "# Benchmark results",
        "",
        "Generated by `bench/results_index.py` from the files themselves (do not edit; after adding",
        "or re-running a result: `.venv/bin/python bench/results_index.py`). *Produced by*: the",
        "command the result records, else the script named like it; *when*: the date it records.",
    ]
    folder = None
    for path in result_files(root):
        rel = path.relative_to(root)
        parent = rel.parent.as_posix()
        if parent != folder:
            folder = parent
            title = "bench/results/" if parent == "." else f"bench/results/{parent}/"
            out += ["", f"## `{title}`", "", "| file | produced by | when |", "|---|---|---|"]
        out.append(
            f"| [`{rel.name}`]({rel.as_posix()}) | `{producer(path, sources, root)}` | {when(path)} |"
        )
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if INDEX.md is not up to date")
    a = ap.parse_args(argv)
    text = render()
    if a.check:
        current = INDEX.read_text(encoding="utf-8") if INDEX.exists() else ""
        if current != text:
            print(
                "bench/results/INDEX.md is out of date: run bench/results_index.py", file=sys.stderr
            )
            return 1
        return 0
    INDEX.write_text(text, encoding="utf-8")
    print(f"wrote {INDEX.relative_to(HERE.parent)} ({len(result_files())} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
