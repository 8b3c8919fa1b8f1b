#!/usr/bin/env python3
"""S-set build on the Dask engine against the local engine, on a corpus >= 10x CPython's stdlib.

    .venv/bin/python bench/dask_bench.py             # full run (~10 min on 2 idle cores)
    .venv/bin/python bench/dask_bench.py --quick     # smoke run: the first 3 parts only
    .venv/bin/python bench/dask_bench.py --configs local-2,dask-2 --src /path/to/src.zip

Corpus: a JDK's ``lib/src.zip`` (Temurin 25 here), every ``.java`` member, read *from the
archive* by ``crystal_lsp.distributed.inputs`` (never extracted). CPython 3.11's standard library
without tests is 1.45 M tokens (``crystal_lsp/data/README.md``); the JDK sources are well over
ten times that.

Each configuration runs in its own process (so peak memory is per measurement):

* ``local-N``: ``LocalEngine`` with ``N`` processes: the parent sums the parts' tables and ranks
  the full table; peaks are the parent's and the largest pool child's ``ru_maxrss``;
* ``dask-N``: a loopback ``LocalCluster`` of ``N`` single-threaded worker processes, started
  before the clock starts (its start-up is reported separately); the map-reduce of
  ``crystal_lsp.distributed.topk``; peaks are each worker's ``ru_maxrss`` (read on the workers
  after the build) and the client's.

Every configuration's S (k = 500) must be identical; the run fails otherwise. Writes
``bench/results/dask_bench.md`` and ``.json`` (``--quick``: ``dask_bench_quick.*``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
SRC_CANDIDATES = (
    "/usr/lib/jvm/temurin-25-jdk-amd64/lib/src.zip",
    "/usr/lib/jvm/openjdk-17/src.zip",
    "/usr/lib/jvm/java-17-openjdk-amd64/lib/src.zip",
)
STDLIB_TOKENS = 1_450_000  # CPython 3.11 stdlib without tests (crystal_lsp/data/README.md)
K = 500
CONFIGS = ("local-1", "local-2", "dask-1", "dask-2")


def peak_rss_mb() -> float:
    """This process's peak resident set size in MB (Linux: ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def children_peak_rss_mb() -> float:
    """The largest peak RSS of this process's finished children, in MB."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def cpu_seconds(who: int = resource.RUSAGE_SELF) -> float:
    """User plus system CPU time of this process (or its finished children)."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def measure(config: str, src: str, parts_limit: int | None, out: Path) -> None:
    """One configuration, in this (fresh) process; writes its numbers and S to ``out``."""
    from crystal_lsp.distributed.build import build_on_engine
    from crystal_lsp.distributed.engine import DaskEngine, LocalEngine
    from crystal_lsp.distributed.inputs import plan

    kind, workers = config.split("-")
    parts = plan([src])
    if parts_limit:
        parts = parts[:parts_limit]
    row: dict[str, Any] = {
        "config": config,
        "workers": int(workers),
        "parts": len(parts),
        "load_before": os.getloadavg(),
    }
    if kind == "local":
        cpu = cpu_seconds() + cpu_seconds(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        sset, skipped = build_on_engine(LocalEngine(int(workers)), parts, language="java", k=K)
        row["seconds"] = time.perf_counter() - started
        row["cpu_seconds"] = cpu_seconds() + cpu_seconds(resource.RUSAGE_CHILDREN) - cpu
        row["client_peak_mb"] = peak_rss_mb()
        row["worker_peak_mb"] = (
            [children_peak_rss_mb()] if int(workers) > 1 else [row["client_peak_mb"]]
        )
    else:
        import distributed

        started = time.perf_counter()
        with (
            distributed.LocalCluster(
                n_workers=int(workers),
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                silence_logs=logging.ERROR,
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            row["cluster_start_seconds"] = time.perf_counter() - started
            engine = DaskEngine(client)
            row["buckets"] = engine.buckets
            cpu = cpu_seconds() + sum(client.run(cpu_seconds).values())
            started = time.perf_counter()
            sset, skipped = build_on_engine(engine, parts, language="java", k=K)
            row["seconds"] = time.perf_counter() - started
            row["cpu_seconds"] = cpu_seconds() + sum(client.run(cpu_seconds).values()) - cpu
            peaks = client.run(peak_rss_mb)
            row["worker_peak_mb"] = [peaks[w] for w in sorted(peaks)]
            row["client_peak_mb"] = peak_rss_mb()
    row["load_after"] = os.getloadavg()
    row["documents"] = sset.documents
    row["tokens"] = sset.tokens
    row["skipped"] = len(skipped)
    row["fingerprint"] = sset.fingerprint()
    row["sset"] = sset.to_json()
    out.write_text(json.dumps(row))


def run_config(config: str, src: str, parts_limit: int | None, workdir: Path) -> dict[str, Any]:
    out = workdir / f"{config}.json"
    cmd = [sys.executable, __file__, "--measure", config, "--src", src, "--out", str(out)]
    if parts_limit:
        cmd += ["--parts", str(parts_limit)]
    print(f"  {config} ...", file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True)
    row: dict[str, Any] = json.loads(out.read_text())
    print(
        f"  {config}: {row['seconds']:.1f} s, worker peaks {row['worker_peak_mb']} MB",
        file=sys.stderr,
        flush=True,
    )
    return row


def render(rows: list[dict[str, Any]], src: str, quick: bool) -> str:
    first = rows[0]
    tokens = first["tokens"]
    base = {r["config"]: r["seconds"] for r in rows}
    lines = [
        "# S-set build: Dask engine vs local engine" + (" (quick run)" if quick else ""),
        "",
        f"Corpus: `{src}`, every `.java` member read from the archive: {first['documents']:,} files, "
        f"{tokens:,} tokens, {first['parts']} parts "
        f"({tokens / STDLIB_TOKENS:.1f}x CPython 3.11's stdlib of {STDLIB_TOKENS / 1e6:.2f} M tokens). "
        f"`sset build --lang java -k {K}` (orders 1-4, canonical ties).",
        "",
        f"Machine: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{platform.platform()}. **The machine is shared with other jobs** (load averages below): "
        "wall times are indicative only, and a 2-core machine cannot show more than a 2x speed-up.",
        "",
        "| engine | workers | wall s | speed-up vs local-1 | CPU s, all processes | peak RSS per worker MB | client peak MB | cluster start s | load 1-min before/after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    ref = base.get("local-1")
    for r in rows:
        speed = f"{ref / r['seconds']:.2f}x" if ref else "-"
        start = f"{r['cluster_start_seconds']:.1f}" if "cluster_start_seconds" in r else "-"
        peaks = ", ".join(f"{p:,.0f}" for p in r["worker_peak_mb"])
        lines.append(
            f"| {r['config'].split('-')[0]} | {r['workers']} | {r['seconds']:.1f} | {speed} | "
            f"{r['cpu_seconds']:.0f} | {peaks} | {r['client_peak_mb']:,.0f} | {start} | "
            f"{r['load_before'][0]:.1f} / {r['load_after'][0]:.1f} |"
        )
    fingerprints = {r["fingerprint"] for r in rows}
    lines += [
        "",
        f"S identical in every configuration: **{'yes' if len(fingerprints) == 1 else 'NO'}** "
        f"(fingerprint {', '.join(sorted(fingerprints))}; the whole S file, curve included, compared).",
        "",
        "Notes:",
        "",
        "* *CPU s* is user + system time of every process of the configuration (the parent and "
        "its pool children; the client, which hosts the scheduler, and the workers), which the "
        "other jobs on the machine disturb less than wall time.",
        "* local-1 runs in one process: its worker peak is the process itself (it holds the whole "
        "count table). local-2's worker peak is the largest pool child (one part's table); its "
        "client (the parent) holds the whole table.",
        "* dask-N: a worker holds the tables of its parts until they are merged and its share of "
        "the buckets (`buckets` = 4 x workers); the client holds only the buckets' top-k lists. "
        "The per-worker peak falls as workers are added, which is what lets a table larger than "
        "one machine's memory be counted. Peaks include each process's interpreter, Pygments "
        "and Dask.",
        "* Per part, Pygments takes about 75-80 % of the time, reading the archive about 8 % and "
        "counting about 15 %. Each part's n-grams are about 90 % its own (8 parts: 3.17 M "
        "partial counts, 2.84 M distinct), so the exact reduce sums tens of millions of partial "
        "counts in Python dicts. The local engine's parent does that while its pool tokenizes; the "
        "Dask engine does it on the workers, in a tree per bucket (a worker's parts first, then "
        "across workers), which costs the extra CPU seconds above. On one machine the local "
        "engine is the faster choice; the Dask engine is for corpora and count tables beyond it.",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", help="a JDK src.zip (default: the first one found)")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated configs")
    parser.add_argument("--quick", action="store_true", help="only the first 3 parts")
    parser.add_argument("--workdir", default="/tmp/crystal-dask-bench")
    parser.add_argument(
        "--render", action="store_true", help="only rewrite the .md from the last .json"
    )
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--parts", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    src = args.src or next((p for p in SRC_CANDIDATES if os.path.isfile(p)), None)
    if src is None:
        parser.error("no JDK src.zip found; pass --src")
    if args.measure:
        measure(args.measure, src, args.parts, Path(args.out))
        return 0
    stem = "dask_bench_quick" if args.quick else "dask_bench"
    if args.render:
        doc = json.loads((RESULTS / f"{stem}.json").read_text())
        (RESULTS / f"{stem}.md").write_text(render(doc["rows"], doc["src"], args.quick))
        return 0
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    parts_limit = 3 if args.quick else None
    rows = [run_config(c, src, parts_limit, workdir) for c in args.configs.split(",")]
    identical = all(r["sset"] == rows[0]["sset"] for r in rows)
    for r in rows:
        r.pop("sset")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{stem}.json").write_text(
        json.dumps({"src": src, "k": K, "identical": identical, "rows": rows}, indent=2) + "\n"
    )
    (RESULTS / f"{stem}.md").write_text(render(rows, src, args.quick))
    print((RESULTS / f"{stem}.md").read_text())
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
