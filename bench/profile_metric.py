#!/usr/bin/env python3
"""cProfile the metric core's hot paths on a shared data set (companion of metric_bench.py).

    .venv/bin/python bench/profile_metric.py [--set gcj_java] [--n 1000] [--top 12]
        [--path cold,realistic,profiles,sset]

Paths: ``cold`` (``sentence_bleu`` with ``clear_caches()`` before every pair), ``realistic``
(cache on, one pass), ``profiles`` (``CrystalBLEU.score_profiles`` on precomputed profiles) and
``sset`` (``build_sset`` over the train split). Uses metric_bench's token cache (run
``metric_bench.py --quick`` or a full run first for the set) and the same data options.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib.corpus import DEFAULT_CACHE, DEFAULT_DATA, dataset_path
from metricbench.inputs import TokenCache, _scoring_inputs, cache_dir_for, prepare_set
from metricbench.plan import ALL_SETS, EPSILON, K

PATHS = ("cold", "realistic", "profiles", "sset")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--set", default="gcj_java", choices=ALL_SETS)
    parser.add_argument("--n", type=int, default=1000, help="intra and inter pairs each")
    parser.add_argument("--metric", default="crystalbleu", choices=("crystalbleu", "bleu"))
    parser.add_argument("--path", default=",".join(PATHS))
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--data", default=os.environ.get("CRYSTAL_BENCH_DATA", DEFAULT_DATA))
    parser.add_argument("--cache", default=os.environ.get("CRYSTAL_BENCH_CACHE", DEFAULT_CACHE))
    args = parser.parse_args()
    if not os.path.exists(dataset_path(args.data, args.set)):
        print(f"profile_metric: SKIPPED: {args.set} not found under {args.data}", file=sys.stderr)
        return 0
    cache_dir = cache_dir_for(args.cache, args.data, args.set)
    if not os.path.exists(os.path.join(cache_dir, "meta.json")):
        print(f"tokenizing {args.set} into {cache_dir} ...", file=sys.stderr)
        spec = {"set": args.set, "dataset": dataset_path(args.data, args.set)}
        prepare_set({**spec, "cache_dir": cache_dir})

    import crystal_lsp
    from crystal_lsp.metric import crystal
    from crystal_lsp.metric.smoothing import Smoothing

    spec = {"cache_dir": cache_dir, "n": args.n, "seed": 0, "metric": args.metric}
    hyps, refs, sset, info = _scoring_inputs(spec)
    kwargs = {"ignoring": sset.counts} if sset is not None else {}
    smooth = crystal_lsp.SmoothingFunction(epsilon=EPSILON).method1
    pairs = list(zip(refs, hyps))
    print(f"{args.set}: {info}")

    def cold() -> None:
        for r, h in pairs:
            crystal.clear_caches()
            crystal_lsp.sentence_bleu(r, h, smoothing_function=smooth, **kwargs)

    def realistic() -> None:
        crystal.clear_caches()
        for r, h in pairs:
            crystal_lsp.sentence_bleu(r, h, smoothing_function=smooth, **kwargs)

    metric = crystal_lsp.CrystalBLEU(sset, smoothing=Smoothing(1, epsilon=EPSILON))
    profiles = {id(s): metric.profile(s) for r, h in pairs for s in (h, *r)}

    def score_profiles() -> None:
        for r, h in pairs:
            metric.score_profiles(profiles[id(h)], [profiles[id(x)] for x in r])

    def sset_build() -> None:
        from crystal_lsp.metric.sset import build_sset

        cache = TokenCache(cache_dir)
        tokens = cache.load(cache.indices("train"))
        docs = [tokens[i] for i in sorted(tokens)]
        started = time.process_time()
        profiler = cProfile.Profile()
        profiler.enable()
        build_sset(docs, K)
        profiler.disable()
        print(f"\n=== sset: {time.process_time() - started:.2f} s CPU (with profiler)")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.top)

    runs = {"cold": cold, "realistic": realistic, "profiles": score_profiles}
    for name in [p.strip() for p in args.path.split(",") if p.strip()]:
        if name == "sset":
            sset_build()
            continue
        gc.collect()
        started = time.process_time()
        runs[name]()
        plain = time.process_time() - started
        profiler = cProfile.Profile()
        profiler.enable()
        runs[name]()
        profiler.disable()
        print(f"\n=== {name}: {plain:.3f} s CPU without the profiler")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
