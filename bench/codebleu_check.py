#!/usr/bin/env python3
"""``disting --metric codebleu`` against the ``codebleu`` package, pair by pair, on a shared set.

    .venv/bin/python bench/codebleu_check.py [--set gcj_java] [--n 1000] [--seed 0]

Runs ``crystal-lsp disting <set>/items.jsonl.gz --metric codebleu --pairs-out F`` (every test and
train pair the default protocol draws), then recomputes each pair with
``codebleu.calc_codebleu([refs], [hyp], lang)`` on the items' code in this process, and prints how
many pairs are equal (goal: all, difference 0), the CPU time of both and the load average.
Both run under ``PYTHONHASHSEED=0`` (the package's numbers depend on the hash seed; the script
re-executes itself with it when unset).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LANGS = {"java": "java", "python": "python", "c": "c", "cpp": "cpp"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.environ.get("CRYSTAL_BENCH_DATA", "/work/shared/data"))
    parser.add_argument("--set", default="gcj_java")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not os.environ.get("PYTHONHASHSEED"):
        # codebleu's numbers depend on the hash seed: the same one here and in disting
        os.execve(
            sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"}
        )
    path = Path(args.data) / args.set / "items.jsonl.gz"
    if not path.exists():
        print(f"SKIPPED: no {path}")
        return 0
    from codebleu import calc_codebleu

    with gzip.open(path, "rt", encoding="utf-8") as fh:
        items = {row["id"]: row for row in map(json.loads, fh)}
    lang = LANGS[next(iter(items.values()))["lang"]]
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "pairs.jsonl"
        argv = [sys.executable, "-m", "crystal_lsp.cli.main", "disting", str(path)]
        argv += ["--metric", "codebleu", "--n", str(args.n), "--seed", str(args.seed)]
        argv += ["--pairs-out", str(out), "--jobs", "2"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(argv, cwd=ROOT, check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    started = time.process_time()
    diffs = []
    for row in rows:
        refs = [items[r]["code"] for r in row["references"]]
        want = calc_codebleu([refs], [items[row["hypothesis"]]["code"]], lang=lang)["codebleu"]
        diffs.append(abs(row["codebleu"] - want))
    theirs = time.process_time() - started
    ours = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    equal = sum(d == 0 for d in diffs)
    print(
        f"{args.set} seed {args.seed}: {equal} of {len(rows)} pairs equal to calc_codebleu "
        f"(max difference {max(diffs, default=0.0):.3g}); CPU s: disting (whole command) "
        f"{ours:.1f}, the package pair by pair {theirs:.1f}; load {load:.1f} / "
        f"{os.getloadavg()[0]:.1f}"
    )
    return 0 if equal == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
