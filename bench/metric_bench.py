#!/usr/bin/env python3
"""Metric-core benchmark: crystal_lsp against the reference packages, in one run.

    .venv/bin/python bench/metric_bench.py            # full run (~10-15 min on 2 cores)
    .venv/bin/python bench/metric_bench.py --quick    # smoke run (~1 min, gcj_java only)

Measures, each in its own subprocess (so peak RSS is per measurement):

1. sentence-level CrystalBLEU: ``crystal_lsp.sentence_bleu`` vs ``crystalbleu.sentence_bleu``
   (cold cache, cold cache and vocabulary, realistic cache, hot cache, and the
   ``CrystalBLEU.score_profiles`` path);
2. corpus-level CrystalBLEU: ``crystal_lsp.corpus_bleu`` vs ``crystalbleu.corpus_bleu``;
3. BLEU: the same two against ``nltk.translate.bleu_score`` (``ignoring=None``);
4. building S: ``crystal_lsp.metric.sset.build_sset`` vs the crystalbleu README approach;
5. tokenization: ``crystal_lsp.tokenize``/``tokens.lex`` vs raw Pygments, and
   ``parallel.tokenize_many`` with 1 and 2 processes;
6. distinguishability: ``crystal-lsp disting`` on the shared labeled sets, next to the
   reference figures of the data README;
7. profile memory: bytes per token of native and pure-Python profiles (``tracemalloc``).

The goals are judged on CPU-time ratios (the machine is shared; wall-clock ratios are shown
too). The implementation of the metric core in use (native or pure Python) is recorded.

Writes ``bench/results/metric_bench.md`` and ``bench/results/metric_bench.json``.
Data: ``--data DIR`` or ``$CRYSTAL_BENCH_DATA`` (default ``/work/shared/data``), read in place.
Token streams of the data sets are cached outside the project (``--cache DIR`` or
``$CRYSTAL_BENCH_CACHE``, default ``~/.cache/crystal-lsp-bench``) so reruns skip tokenizing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from typing import Any

from benchlib.corpus import DEFAULT_CACHE, DEFAULT_DATA, dataset_path
from benchlib.processes import CPU_USED, _git_head, _versions
from metricbench.goals import evaluate_goals
from metricbench.inputs import cache_dir_for
from metricbench.measures import child_main
from metricbench.plan import ALL_SETS, HERE, SECTIONS, make_plan
from metricbench.render import render_markdown
from metricbench.sections import (
    bench_disting,
    bench_scoring,
    bench_sset,
    bench_tokenize,
    reference_figures,
    run_measure,
)


def _core_status() -> str:
    from crystal_lsp.metric.ngrams import native_status

    return native_status()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Benchmark crystal_lsp's metric core against NLTK, crystalbleu and Pygments."
    )
    parser.add_argument("--quick", action="store_true", help="smoke run (~1 minute)")
    parser.add_argument(
        "--data",
        default=os.environ.get("CRYSTAL_BENCH_DATA", DEFAULT_DATA),
        help="directory of the labeled data sets (env CRYSTAL_BENCH_DATA; default %(default)s)",
    )
    parser.add_argument(
        "--cache",
        default=os.environ.get("CRYSTAL_BENCH_CACHE", DEFAULT_CACHE),
        help="token cache directory, outside the project (env CRYSTAL_BENCH_CACHE)",
    )
    parser.add_argument("--out", default=str(HERE / "results"), help="where to write the report")
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated sections to run (default: all of {','.join(SECTIONS)})",
    )
    parser.add_argument(
        "--render", metavar="JSON", help="only re-render the markdown report from a results JSON"
    )
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--spec", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        return child_main(args.measure, args.spec, args.result)
    if args.render:
        with open(args.render) as fh:
            loaded = json.load(fh)
        loaded["goals"] = evaluate_goals(loaded)
        _set_load_warning(loaded["meta"])
        os.makedirs(args.out, exist_ok=True)
        md_path = os.path.join(args.out, "metric_bench.md")
        with open(md_path, "w") as fh:
            fh.write(render_markdown(loaded))
        print(f"wrote {md_path}")
        return 0

    sections = {s.strip() for s in args.only.split(",") if s.strip()}
    unknown = sections - set(SECTIONS)
    if unknown:
        parser.error(f"unknown section(s) {', '.join(sorted(unknown))}")
    plan = make_plan(args.quick)
    started = time.perf_counter()

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {message}", flush=True)

    available = [n for n in ALL_SETS if os.path.exists(dataset_path(args.data, n))]
    if not available:
        print(
            f"metric_bench: SKIPPED: no labeled data sets under {args.data!r} (expected "
            f"<name>/items.jsonl.gz for {', '.join(ALL_SETS)}). Point --data or "
            "CRYSTAL_BENCH_DATA at the shared data directory.",
            file=sys.stderr,
        )
        return 0
    missing = [n for n in ALL_SETS if n not in available]
    if missing:
        log(f"data sets not found under {args.data}, skipped: {', '.join(missing)}")
    plan.score_sets = [n for n in plan.score_sets if n in available]
    plan.disting = [d for d in plan.disting if d["set"] in available]
    if plan.sset_set not in available:
        plan.sset_set = available[0]

    needed = set()
    if sections & {"sentence", "corpus"}:
        needed.update(plan.score_sets)
    if "sset" in sections:
        needed.add(plan.sset_set)
    os.makedirs(args.cache, exist_ok=True)
    caches: dict[str, str] = {}
    prepare: dict[str, Any] = {}
    for name in sorted(needed):
        caches[name] = cache_dir_for(args.cache, args.data, name)
        log(f"preparing {name} (tokens and S, cached in {caches[name]})")
        spec = {"set": name, "dataset": dataset_path(args.data, name), "cache_dir": caches[name]}
        result = run_measure("prepare", spec, log)
        if "error" in result:
            print(f"metric_bench: preparing {name} failed: {result['error']}", file=sys.stderr)
            return 3
        prepare[name] = {**result, "cache_dir": caches[name]}

    import psutil

    versions = _versions()
    load_start = os.getloadavg()[0]
    results: dict[str, Any] = {
        "meta": {
            "command": "python bench/metric_bench.py" + (" --quick" if args.quick else ""),
            "plan": plan.name,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "cpus": os.cpu_count(),
            "mem_gb": psutil.virtual_memory().total / 2**30,
            "platform": platform.platform(),
            "python": platform.python_version(),
            "git": _git_head(),
            "data": args.data,
            "load_start": load_start,
            "core": _core_status(),
            **versions,
        },
        "prepare": prepare,
        "reference_figures": reference_figures(args.data),
    }
    if sections & {"sentence", "corpus"}:
        log("scoring benchmarks")
        results["scoring"] = bench_scoring(plan, caches, sections, log)
    if "sset" in sections:
        log("S-set benchmarks")
        results["sset"] = bench_sset(plan, caches, log)
    if "tokenize" in sections:
        log("tokenization benchmarks")
        results["tokenize"] = bench_tokenize(plan, args.data, log)
    if "disting" in sections:
        log("distinguishability runs")
        results["disting"] = bench_disting(plan, args.data, log)
    results["goals"] = evaluate_goals(results)
    meta = results["meta"]
    meta["load_end"] = os.getloadavg()[0]
    meta["total_s"] = time.perf_counter() - started
    meta["cpu_s"] = CPU_USED[0]
    _set_load_warning(meta)
    _strip_bulky(results)
    os.makedirs(args.out, exist_ok=True)
    json_path = os.path.join(args.out, "metric_bench.json")
    md_path = os.path.join(args.out, "metric_bench.md")
    with open(json_path, "w") as fh:
        json.dump(results, fh, indent=1, allow_nan=True)
        fh.write("\n")
    with open(md_path, "w") as fh:
        fh.write(render_markdown(results))
    log(f"wrote {md_path} and {json_path}")
    for goal in results["goals"]:
        state = "met" if goal["met"] else "INCONCLUSIVE" if goal.get("inconclusive") else "MISSED"
        print(f"  {state:12s} {goal['goal']}")
    return 0


def _set_load_warning(meta: dict[str, Any]) -> None:
    loads = [meta["load_start"], meta["load_end"]]
    meta.pop("load_warning", None)
    if max(loads) > (os.cpu_count() or 1) * 0.75:
        meta["load_warning"] = (
            f"the machine was busy with other work (load average up to {max(loads):.1f} on "
            f"{os.cpu_count()} CPUs): wall-clock times are inflated and noisy; trust the CPU-time "
            "ratios."
        )


def _strip_bulky(results: dict[str, Any]) -> None:
    """Drop per-pair scores and S listings from the JSON (digests and diffs are kept)."""
    for per_set in results.get("scoring", {}).values():
        for key, entry in per_set.items():
            if key == "profile_memory":
                continue
            for section in entry.values():
                for row in section.get("rows", []):
                    row.pop("scores", None)


if __name__ == "__main__":
    sys.exit(main())
