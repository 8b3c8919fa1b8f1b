#!/usr/bin/env python3
"""``crystal-lsp disting`` on the shared labeled sets against the data README's reference figures.

    .venv/bin/python bench/disting_bench.py                 # 3 sets x seeds 0 1 2, class-balanced,
                                                            # plus seed 0 uniform over pairs
    .venv/bin/python bench/disting_bench.py --seeds 0 --sets gcj_java

Each run is ``crystal-lsp disting <set>/items.jsonl.gz --metric bleu,crystalbleu,crystalbleu-if
--n 1000 -k 500 --seed S --pair-sampling P --format json`` in its own subprocess (sets and
samplings alternate, so load drifts hit all alike); its wall and CPU time (``os.wait4``), peak RSS
and the load average before and after are recorded. The reference figures (README of the data,
class-balanced, one seed) are the anchor: the table gives ours as mean ± standard deviation over
the seeds next to them, and the uniform-over-pairs sampling as the protocol that does not
reproduce them. Writes ``bench/results/disting_bench.{json,md}``; data from ``--data DIR`` or
``$CRYSTAL_BENCH_DATA`` (default ``/work/shared/data``), read in place; without it: ``SKIPPED``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SETS = ("gcj_java", "clcdsa_atcoder_java", "clcdsa_atcoder_python")
METRICS = ("bleu", "crystalbleu", "crystalbleu-if")
# the data README: distinguishability, ROC AUC, threshold accuracy (BLEU, CrystalBLEU)
REFERENCE = {
    "gcj_java": {"bleu": (1.58, 0.791, 0.717), "crystalbleu": (3.40, 0.800, 0.752)},
    "clcdsa_atcoder_java": {"bleu": (2.15, 0.716, 0.662), "crystalbleu": (4.68, 0.770, 0.685)},
    "clcdsa_atcoder_python": {"bleu": (4.21, 0.898, 0.804), "crystalbleu": (75.5, 0.771, 0.716)},
}


def run_once(data: Path, name: str, seed: int, sampling: str) -> dict[str, Any]:
    """One disting run in a subprocess, with its costs."""
    argv = [sys.executable, "-m", "crystal_lsp.cli.main", "disting"]
    argv += [str(data / name / "items.jsonl.gz"), "--metric", ",".join(METRICS), "--n", "1000"]
    argv += ["-k", "500", "--seed", str(seed), "--pair-sampling", sampling, "--format", "json"]
    argv += ["--jobs", "2"]
    load_before = os.getloadavg()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, cwd=ROOT, check=False)
    out, err = proc.stdout, proc.stderr
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{name} seed {seed}: {err.decode(errors='replace').strip()}")
    doc = json.loads(out)
    return {
        "set": name,
        "seed": seed,
        "sampling": sampling,
        "wall_s": wall,
        "cpu_s": cpu,
        "max_rss_mb_so_far": after.ru_maxrss / 1024,
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "metrics": {
            m["metric"]: {
                "disting": m["distinguishability"],
                "auc": m["auc"],
                "accuracy": (m["classifier"] or {}).get("accuracy"),
                "seconds": m["seconds"],
                "cpu_seconds": m["cpu_seconds"],
            }
            for m in doc["metrics"]
        },
    }


def _stat(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.3f}" if values[0] < 10 else f"{values[0]:.1f}"
    mean, sd = statistics.mean(values), statistics.stdev(values)
    digits = 3 if mean < 10 else 1
    return f"{mean:.{digits}f} ± {sd:.{digits}f}"


def render(runs: list[dict[str, Any]], seeds: list[int]) -> str:
    """The Markdown report: ours (class-balanced, over seeds) and uniform next to the reference."""
    loads = [r["load_before"][0] for r in runs] + [r["load_after"][0] for r in runs]
    lines = [
        "# disting on the shared labeled sets vs the data README",
        "",
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; seeds {seeds}; N = 1000 + 1000 "
        f"test pairs, k = 500; load average (1 min) {min(loads):.1f}-{max(loads):.1f} on "
        f"{os.cpu_count()} CPUs.",
        "",
        "| set | metric | sampling | distinguishability | ROC AUC | threshold accuracy | "
        "CPU s (scoring) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in SETS:
        for metric in METRICS:
            ref = REFERENCE.get(name, {}).get(metric)
            if ref is not None:
                lines.append(
                    f"| {name} | {metric} | reference | {ref[0]} | {ref[1]} | {ref[2]} | |"
                )
            for sampling in ("class", "uniform"):
                rows = [r for r in runs if r["set"] == name and r["sampling"] == sampling]
                if not rows:
                    continue
                got = [r["metrics"][metric] for r in rows]
                lines.append(
                    f"| {name} | {metric} | {sampling} ({len(rows)} seed"
                    f"{'s' if len(rows) > 1 else ''}) | {_stat([g['disting'] for g in got])} | "
                    f"{_stat([g['auc'] for g in got])} | {_stat([g['accuracy'] for g in got])} | "
                    f"{_stat([g['cpu_seconds'] for g in got])} |"
                )
    lines += [
        "",
        "Per run (whole command: wall s, CPU s incl. tokenizer workers; load before/after):",
    ]
    lines.append("")
    for r in runs:
        lines.append(
            f"- {r['set']} seed {r['seed']} {r['sampling']}: {r['wall_s']:.1f} s wall, "
            f"{r['cpu_s']:.1f} s CPU, load {r['load_before'][0]:.1f} / {r['load_after'][0]:.1f}"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.environ.get("CRYSTAL_BENCH_DATA", "/work/shared/data"))
    parser.add_argument("--sets", nargs="*", default=list(SETS))
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    parser.add_argument("--no-uniform", action="store_true", help="skip the uniform anchor run")
    parser.add_argument("--out", default=str(HERE / "results" / "disting_bench"))
    args = parser.parse_args()
    data = Path(args.data)
    sets = [s for s in args.sets if (data / s / "items.jsonl.gz").exists()]
    if not sets:
        print(f"SKIPPED: no labeled sets under {data}")
        return 0
    plan = [(s, seed, "class") for seed in args.seeds for s in sets]
    if not args.no_uniform:
        plan += [(s, args.seeds[0], "uniform") for s in sets]
    runs = []
    for name, seed, sampling in plan:
        run = run_once(data, name, seed, sampling)
        runs.append(run)
        print(f"{name} seed {seed} {sampling}: {run['wall_s']:.1f} s", file=sys.stderr)
    report = render(runs, args.seeds)
    Path(args.out + ".json").write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
    Path(args.out + ".md").write_text(report, encoding="utf-8")
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
