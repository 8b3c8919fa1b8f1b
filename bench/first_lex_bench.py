#!/usr/bin/env python3
"""The first file a process lexes, per language: building the lexer's tables vs loading them.

    .venv/bin/python bench/first_lex_bench.py                       # 5 rounds
    .venv/bin/python bench/first_lex_bench.py --baseline /tmp/base  # also an older source tree

Each measurement is a fresh interpreter that imports ``crystal_lsp.text.tokens``, then, timed
with ``time.process_time`` (CPU of that process): chooses the lexer of a file by its name
(Pygments creates the lexer: its rules are compiled), lexes the file once (the executor's
tables and buckets), then a second and a third time.
Variants, alternating within each round (the order rotates every round):

* **cold**: an empty ``CRYSTAL_LSP_CACHE_DIR`` (a process that builds and writes the tables);
* **warm**: the cache directory the cold run left (a process that loads them);
* **baseline**: ``--baseline DIR`` on ``PYTHONPATH`` (a ``git archive`` of an older commit with
  the native core copied in), with an empty cache directory.

Prints per language the medians of *first file* (choosing the lexer plus the first lexing: what
a process pays for its first file of the language) and *three lexings* (the lexer and all three),
and the load average.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

CORPORA = Path.home() / ".cache/crystal-lsp-bench/real/corpora"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
JAVA = """package p;
import java.util.*;
public class Sample<T extends Comparable<T>> {
    private final List<T> items = new ArrayList<>();
    /** Adds an item. */
    public void add(T item) { if (item != null) { items.add(item); } }
    @Override public String toString() { return "Sample" + items.size() + 'c' + 0x1fL; }
}
"""
FILES = {
    "python": STDLIB / "json" / "encoder.py",
    "c": Path("/usr/include/stdio.h"),
    "cpp": CORPORA / "googlemock-1.12.1-0.2/src/gmock.cc",
    "javascript": CORPORA / "axios-1.7.9/adapters/fetch.js",
    "typescript": CORPORA / "rxjs-7.8.1/index.ts",
    "go": CORPORA / "gin-1.8.1-1/binding/form_mapping.go",
    "rust": CORPORA / "serde_json-1.0.87-1/src/error.rs",
    "php": CORPORA / "symfony_console-5.4.53+dfsg-0+deb12u1/Color.php",
    "java": Path("Sample.java"),
}
PROBE = """
import sys, time
from crystal_lsp.text import lexers, tokens
path, source = sys.argv[1], open(sys.argv[2], encoding="utf-8", errors="replace").read()
t0 = time.process_time()
lexer = lexers.resolve_lexer(filename=path)
t1 = time.process_time()
tokens.lex(source, lexer)
t2 = time.process_time()
tokens.lex(source, lexer)
t3 = time.process_time()
tokens.lex(source, lexer)
t4 = time.process_time()
print(t1 - t0, t2 - t1, t4 - t2)
"""


def _probe(path: Path, real: Path, cache: str, pythonpath: str | None) -> tuple[float, ...]:
    env = {**os.environ, "CRYSTAL_LSP_CACHE_DIR": cache}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(path), str(real)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return tuple(float(x) for x in done.stdout.split())


def main() -> None:
    """Run the rounds and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", help="an older source tree (PYTHONPATH)")
    parser.add_argument("--languages", nargs="*", default=list(FILES))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="first-lex-"))
    (work / "Sample.java").write_text(JAVA)
    variants = ["cold", "warm"] + (["baseline"] if args.baseline else [])
    results: dict[tuple[str, str], list[tuple[float, ...]]] = {}
    load_before = os.getloadavg()
    for round_ in range(args.rounds):
        for language in args.languages:
            path = FILES[language]
            real = work / path if not path.is_absolute() else path
            if not real.exists():
                continue
            shutil.rmtree(work / "cache", ignore_errors=True)
            order = variants[round_ % len(variants) :] + variants[: round_ % len(variants)]
            if order.index("warm") < order.index("cold"):  # warm needs the cold run's tables
                order.remove("warm")
                order.insert(order.index("cold") + 1, "warm")
            for variant in order:
                cache = str(work / ("cache" if variant != "baseline" else f"base{round_}"))
                base = args.baseline if variant == "baseline" else None
                found = _probe(path, real, cache, base)
                results.setdefault((language, variant), []).append(found)
    load_after = os.getloadavg()
    print(f"load average before {load_before}, after {load_after}; {args.rounds} rounds")
    print("| language | " + " | ".join(f"{v}: first file / three lexings" for v in variants) + " |")
    print("|---" * (len(variants) + 1) + "|")
    for language in args.languages:
        cells = []
        for variant in variants:
            runs = results.get((language, variant))
            if not runs:
                cells.append("-")
                continue
            first = statistics.median(r[0] + r[1] for r in runs)
            three = statistics.median(sum(r) for r in runs)
            cells.append(f"{first * 1000:.0f} ms / {three * 1000:.0f} ms")
        print(f"| {language} | " + " | ".join(cells) + " |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
