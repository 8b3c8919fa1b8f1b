#!/usr/bin/env python3
"""RUBY benchmark: BLEU, CrystalBLEU, STS, TRS, GRS and RUBY side by side, in one run.

    .venv/bin/python bench/ruby_bench.py            # full run: n = 1000 (~15-20 min on 2 cores)
    .venv/bin/python bench/ruby_bench.py --quick    # smoke run: n = 100

For each labelled set (gcj_java, clcdsa_atcoder_python, clcdsa_atcoder_java), as
``crystal-lsp disting`` does it: n intra- and n inter-class *test* pairs and as many *train* pairs
(for the threshold classifier) are drawn with ``crystal_lsp.metric.sampling.sample_pairs`` (seeds 0 and
1), S is the top k = 500 1-4-grams of the train split, and every metric is scored on the same
pairs with ``crystal_lsp.metric.disting.evaluate_metric``. Reported per metric: distinguishability
(mean intra / mean inter), ROC AUC, the threshold classifier's test accuracy, the time per 100
pairs (preparing the items, i.e. n-gram profiles or parse trees and graphs, plus scoring) and, for
the RUBY family, how often each level produced the score.

``--choices`` measures the design choices instead (edit-distance and tree-edit-distance backends,
node labels) and writes bench/results/ruby_choices.md.

Data: ``--data DIR`` or ``$CRYSTAL_BENCH_DATA`` (default /work/shared/data), read in place; a
missing directory or set is skipped with a message. Results: bench/results/ruby_bench.md
(``--json FILE`` for every number, wall-clock times included).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from crystal_lsp.metric.datasets import load_items
from crystal_lsp.metric.disting import evaluate_metric
from crystal_lsp.metric.registry import MetricConfig, PreparedItem, make_metric
from crystal_lsp.metric.sampling import PairSets, sample_pairs
from crystal_lsp.metric.sset import build_sset
from crystal_lsp.ruby.trees import Unbuilt
from crystal_lsp.text.lexers import canonical_name, lexer_label, resolve_lexer
from crystal_lsp.text.parallel import tokenize_many
from crystal_lsp.text.tokens import Tokens
from crystal_lsp.version import __version__

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = "/work/shared/data"
SETS = ("gcj_java", "clcdsa_atcoder_python", "clcdsa_atcoder_java")
METRICS = ("bleu", "crystalbleu", "sts", "trs", "grs", "ruby")
K = 500


class Counting:
    """A metric wrapper that counts the level behind every score."""

    def __init__(self, metric: Any) -> None:
        self.metric = metric
        self.name = metric.name
        self.levels: Counter[str] = Counter()

    @property
    def signature(self) -> str:
        return str(self.metric.signature)

    def prepare(self, items: Sequence[PreparedItem | None]) -> None:
        self.metric.prepare(items)

    def score(self, hyp: int, refs: Sequence[int]) -> float:
        value = float(self.metric.score(hyp, refs))
        details = getattr(self.metric, "last_details", None)
        if details:
            self.levels[details["level"]] += 1
        return value

    def corpus(self, pairs: Sequence[tuple[int, Sequence[int]]]) -> float:
        return float(self.metric.corpus(pairs))


def load_set(data: str, name: str, n: int, seed: int) -> dict[str, Any] | None:
    path = os.path.join(data, name, "items.jsonl.gz")
    if not os.path.exists(path):
        print(f"skip {name}: {path} not found", file=sys.stderr)
        return None
    items = load_items(path)
    language = canonical_name(resolve_lexer(items[0].lang))
    classes = [it.cls for it in items]
    train_idx = [i for i, it in enumerate(items) if it.split == "train"]
    test_idx = [i for i, it in enumerate(items) if it.split == "test"]
    test = sample_pairs(classes, test_idx, n, seed)
    train = sample_pairs(classes, train_idx, n, seed + 1)
    used = set(train_idx)
    for pairs in (test, train):
        for hyp, refs in pairs.intra + pairs.inter:
            used.add(hyp)
            used.update(refs)
    order = sorted(used)
    started = time.perf_counter()
    streams = tokenize_many([(items[i].id, items[i].code, language) for i in order])
    tokens: dict[int, Tokens] = dict(zip(order, streams))
    tokenize_seconds = time.perf_counter() - started
    lexer = resolve_lexer(language)
    sset = build_sset(
        (tokens[i].texts for i in train_idx),
        K,
        4,
        language=language,
        tokenizer=lexer_label(lexer),
    )
    scored = {h for pairs in (test, train) for h, refs in pairs.intra + pairs.inter} | {
        r for pairs in (test, train) for _, refs in pairs.intra + pairs.inter for r in refs
    }
    prepared = [
        PreparedItem(items[i].code, tokens[i]) if i in scored else None for i in range(len(items))
    ]
    return {
        "name": name,
        "items": items,
        "language": language,
        "test": test,
        "train": train,
        "sset": sset,
        "prepared": prepared,
        "scored_items": len(scored),
        "tokenize_seconds": tokenize_seconds,
    }


def run_metric(data: dict[str, Any], name: str) -> dict[str, Any]:
    config = MetricConfig(sset=data["sset"], language=data["language"])
    metric = Counting(make_metric(name, config))
    test: PairSets = data["test"]
    train: PairSets = data["train"]
    started, cpu_started = time.perf_counter(), time.process_time()
    metric.prepare(data["prepared"])
    prepare_seconds = time.perf_counter() - started
    report = evaluate_metric(metric, test, train)
    cpu = time.process_time() - cpu_started
    pairs = len(test.intra) + len(test.inter) + len(train.intra) + len(train.inter)
    total = prepare_seconds + report.seconds
    out = report.to_json()
    out.update(
        prepare_seconds=prepare_seconds,
        pairs=pairs,
        wall_seconds_per_100=100 * total / pairs,
        seconds_per_100=100 * cpu / pairs,
        levels=dict(metric.levels),
    )
    return out


def fmt_levels(levels: dict[str, int]) -> str:
    total = sum(levels.values())
    if not total or (set(levels) <= {"sts"} and not levels.get("sts") == total):
        return "-"
    return " / ".join(f"{k} {100 * levels.get(k, 0) / total:.1f}%" for k in ("grs", "trs", "sts"))


def render(results: list[dict[str, Any]], args: argparse.Namespace, seconds: float) -> str:
    lines = [
        "# RUBY benchmark",
        "",
        f"Command: `python bench/ruby_bench.py{' --quick' if args.quick else ''}`, "
        f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, total {seconds:.0f} s.",
        "",
        f"Machine: {os.cpu_count()} CPUs, {platform.platform()}; Python "
        f"{platform.python_version()}, crystal_lsp {__version__}; "
        f"backends: {backends()}. Load average at end: {os.getloadavg()[0]:.2f}.",
        "",
        f"Pairs per set: n = {args.n} intra + {args.n} inter test pairs (seed {args.seed}) and as "
        f"many train pairs (seed {args.seed + 1}) for the threshold; S = top {K} 1-4-grams of the "
        "train split; BLEU smoothing method 1 (epsilon 1e-4). *disting* = mean intra / mean "
        "inter (test pairs); *acc* = test accuracy of the threshold at the midpoint of the train "
        "means; *s/100 pairs* = CPU seconds of preparing the items + scoring, per 100 of the 4n pairs (CPU time, because the machine may be shared; wall-clock with --json); *levels* = "
        "share of the 4n scores that came from each level (GRS and TRS fall back to STS when "
        "their representation cannot be built).",
        "",
        "| set | metric | intra | inter | disting | ROC AUC | acc | s/100 pairs | levels (grs / trs / sts) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for m in r["metrics"]:
            c = m["classifier"]
            levels = m["levels"] if m["metric"] in ("trs", "grs", "ruby") else {}
            lines.append(
                f"| {r['name']} | {m['metric']} | {m['intra_mean']:.4f} | {m['inter_mean']:.4f} "
                f"| {m['distinguishability']:.3f} | {m['auc']:.3f} "
                f"| {c['accuracy'] if c else float('nan'):.3f} | {m['seconds_per_100']:.2f} "
                f"| {fmt_levels(levels) if levels else '-'} |"
            )
    lines += ["", "Signatures:", ""]
    for r in results[:1]:
        lines += [f"* `{m['signature']}`" for m in r["metrics"]]
    lines.append("")
    return "\n".join(lines)


def backends() -> str:
    from crystal_lsp.ruby import lexical, ted

    return f"edit distance {lexical.backend()}, tree edit distance {ted.backend()}"


# --------------------------------------------------------------------------------------------
# Design choices: backends and labels


def _types_only(node: Any, leaf: bool) -> str:
    return str(node.type)


def _kind_only(base: Any) -> Any:
    def label(node: Any) -> str:
        return str(base(node)).split(":", 1)[0]

    return label


def _auc_variant(data: dict[str, Any], metric_name: str) -> tuple[float, float, float]:
    result = run_metric(data, metric_name)
    c = result["classifier"]
    return result["auc"], c["accuracy"] if c else float("nan"), result["seconds_per_100"]


def measure_choices(args: argparse.Namespace, out: Path) -> None:
    import functools
    import random

    from crystal_lsp.ruby import ensemble, lexical, pdg_java, pdg_python, ted, trees
    from crystal_lsp.ruby.ensemble import RubyItem
    from crystal_lsp.ruby.ged import graph_edit_distance

    lines = ["# RUBY design choices, measured", ""]
    n = min(args.n, 300)
    lines += [
        f"Label and GED variants: n = {n} intra + {n} inter test pairs and as many train pairs "
        "per set (seeds as in ruby_bench.md).",
        "",
        "| set | variant | ROC AUC | acc | s/100 pairs |",
        "|---|---|---|---|---|",
    ]
    timing_lines: list[str] = []
    for name in args.sets.split(","):
        data = load_set(args.data, name, n, args.seed)
        if data is None:
            continue
        original_label = trees._label
        variants: list[tuple[str, str, Any]] = [
            ("trs, labels: type + leaf text + operator (chosen)", "trs", None),
            ("trs, labels: node type only", "trs", ("tree", _types_only)),
            ("grs, labels: statement kind + first callee (chosen)", "grs", None),
            ("grs, labels: statement kind only", "grs", ("graph", None)),
            ("grs, 0 WL rounds (labels only)", "grs", ("rounds", 0)),
            ("grs, 1 WL round", "grs", ("rounds", 1)),
            ("grs, 3 WL rounds", "grs", ("rounds", 3)),
        ]
        for title, metric_name, patch in variants:
            saved = (pdg_python.label, pdg_java.label)
            if patch and patch[0] == "tree":
                trees._label = patch[1]
            elif patch and patch[0] == "rounds":
                ensemble.graph_edit_distance = functools.partial(  # type: ignore[assignment]
                    graph_edit_distance, rounds=patch[1]
                )
            elif patch:
                pdg_python.label = _kind_only(saved[0])  # type: ignore[assignment]
                pdg_java.label = _kind_only(saved[1])  # type: ignore[assignment]
            try:
                auc, acc, speed = _auc_variant(data, metric_name)
            finally:
                ensemble.graph_edit_distance = graph_edit_distance  # type: ignore[assignment]
                trees._label = original_label
                pdg_python.label, pdg_java.label = saved  # type: ignore[assignment]
            lines.append(f"| {name} | {title} | {auc:.3f} | {acc:.3f} | {speed:.2f} |")
            print(lines[-1], flush=True)
        timing_lines += _backend_timings(data, random.Random(args.seed), lexical, ted, RubyItem)
        timing_lines += _ged_gap(data, RubyItem, graph_edit_distance)
    lines += ["", *timing_lines, ""]
    out.write_text("\n".join(lines))
    print("\n".join(lines))


def _sample_items(data: dict[str, Any], rng: Any, count: int) -> list[tuple[Any, Any]]:
    from crystal_lsp.ruby.lexical import TokenIds

    ids = TokenIds()
    pairs = data["test"].intra + data["test"].inter
    chosen = rng.sample(pairs, min(count, len(pairs)))
    items = data["items"]
    prepared = data["prepared"]
    out = []
    for hyp, refs in chosen:
        a, b = prepared[hyp], prepared[refs[0]]
        out.append(
            (
                (items[hyp].code, ids(a.tokens.texts)),
                (items[refs[0]].code, ids(b.tokens.texts)),
            )
        )
    return out


def _backend_timings(
    data: dict[str, Any], rng: Any, lexical: Any, ted: Any, item: Any
) -> list[str]:
    name, language = data["name"], data["language"]
    sample = _sample_items(data, rng, 200)
    lines = [f"## {name}", ""]
    timings = {}
    values = {}
    for backend, fn in (
        ("rapidfuzz", lexical.levenshtein),
        ("pure Python (bit-parallel)", lexical.levenshtein_bitparallel),
    ):
        started = time.process_time()
        values[backend] = [fn(a[1], b[1]) for a, b in sample]
        timings[backend] = time.process_time() - started
    same = len(set(map(tuple, values.values()))) == 1
    lines += [
        f"Token edit distance on {len(sample)} sampled test pairs "
        f"(mean {sum(len(a[1]) + len(b[1]) for a, b in sample) / (2 * len(sample)):.0f} tokens): "
        + ", ".join(f"{k} {1000 * v / len(sample):.3f} CPU ms/pair" for k, v in timings.items())
        + f"; identical results: {same}.",
        "",
    ]
    trees_ = []
    for a, b in sample:
        x, y = item(a[0], a[1], language), item(b[0], b[1], language)
        if not isinstance(x.ast, Unbuilt) and not isinstance(y.ast, Unbuilt):
            trees_.append((x.ast, y.ast))
    trees_.sort(key=lambda p: len(p[0]) * len(p[1]))
    buckets = [trees_[: len(trees_) // 3], trees_[len(trees_) // 3 : 2 * len(trees_) // 3]]
    buckets.append(trees_[2 * len(trees_) // 3 :])
    lines += [
        "Tree edit distance (Zhang–Shasha; `apted` and `zss` packages where installed), "
        "CPU ms per pair on sampled test pairs, by size tercile (mean nodes per tree):",
        "",
        "| tercile | nodes | numba | pure Python | apted | zss | identical |",
        "|---|---|---|---|---|---|---|",
    ]
    for index, bucket in enumerate(buckets, 1):
        bucket = bucket[:: max(1, len(bucket) // 6)][:6]
        if not bucket:
            continue
        row = {}
        results = {}
        ted.tree_edit_distance(*bucket[0], backend="numba")  # compile outside the timing
        for backend in ("numba", "python"):
            started = time.process_time()
            results[backend] = [ted.tree_edit_distance(x, y, backend=backend) for x, y in bucket]
            row[backend] = f"{1000 * (time.process_time() - started) / len(bucket):.1f}"
        for package, limit in (("apted", 700), ("zss", 250)):
            small = [p for p in bucket if len(p[0]) + len(p[1]) <= limit][:2]
            if not small or not _has(package):
                row[package] = "-"
                continue
            started = time.perf_counter()
            results[package] = [_reference_ted(package, x, y) for x, y in small]
            row[package] = f"{1000 * (time.perf_counter() - started) / len(small):.1f}" + (
                "" if len(small) == len(bucket) else f" ({len(small)} smallest)"
            )
        agree = all(
            results[k] == results["numba"][: len(results[k])] for k in results if k != "numba"
        )
        size = sum(len(x) + len(y) for x, y in bucket) / (2 * len(bucket))
        lines.append(
            f"| {index} | {size:.0f} | {row['numba']} | {row['python']} | {row['apted']} "
            f"| {row['zss']} | {agree} |"
        )
    lines.append("")
    return lines


def _has(package: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(package) is not None


class _Node:
    def __init__(self, label: int) -> None:
        self.label = label
        self.children: list[_Node] = []


def _to_nodes(tree: Any) -> _Node:
    stack: list[_Node] = []
    for label, leftmost in zip(tree.labels, tree.leftmost):
        node = _Node(label)
        children = []
        while stack and stack[-1].first >= leftmost:  # type: ignore[attr-defined]
            children.append(stack.pop())
        node.children = children[::-1]
        node.first = leftmost  # type: ignore[attr-defined]
        stack.append(node)
    return stack[-1]


def _reference_ted(package: str, a: Any, b: Any) -> int:
    x, y = _to_nodes(a), _to_nodes(b)
    if package == "apted":
        from apted import APTED, Config

        class _Config(Config):  # type: ignore[misc]
            def rename(self, p: Any, q: Any) -> int:
                return 0 if p.label == q.label else 1

            def children(self, node: Any) -> Any:
                return node.children

        return int(APTED(x, y, _Config()).compute_edit_distance())
    import zss

    return int(
        zss.simple_distance(
            x,
            y,
            get_children=lambda node: node.children,
            get_label=lambda node: node.label,
            label_dist=lambda p, q: 0 if p == q else 1,
        )
    )


def _ged_gap(data: dict[str, Any], item: Any, ged: Any) -> list[str]:
    import random

    sample = _sample_items(data, random.Random(1), 300)
    language = data["language"]
    gaps = []
    started = time.process_time()
    sizes = []
    for a, b in sample:
        x, y = item(a[0], a[1], language).pdg, item(b[0], b[1], language).pdg
        if isinstance(x, Unbuilt) or isinstance(y, Unbuilt):
            continue
        result = ged(x, y)
        total = x.size + y.size
        sizes.append((len(x.labels), len(x.edges)))
        gaps.append((result.distance / total, result.lower_bound / total))
    seconds = time.process_time() - started
    if not gaps:
        return []
    upper = sum(g[0] for g in gaps) / len(gaps)
    lower = sum(g[1] for g in gaps) / len(gaps)
    nodes = sum(s[0] for s in sizes) / len(sizes)
    edges = sum(s[1] for s in sizes) / len(sizes)
    return [
        f"Graph edit distance on {len(gaps)} sampled test pairs (mean {nodes:.0f} nodes, "
        f"{edges:.0f} edges per graph; building the graphs included: "
        f"{1000 * seconds / len(gaps):.1f} ms/pair): mean normalised edit-path cost (1 − GRS) "
        f"{upper:.3f}, mean normalised label-count lower bound {lower:.3f}; the exact GED "
        "lies between them.",
        "",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("CRYSTAL_BENCH_DATA", DEFAULT_DATA))
    parser.add_argument("--quick", action="store_true", help="n = 100 pairs of each kind")
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--metrics", default=",".join(METRICS))
    parser.add_argument("--out", default=str(HERE / "results" / "ruby_bench"))
    parser.add_argument("--json", metavar="FILE", help="also write every number as JSON")
    parser.add_argument("--choices", action="store_true", help="measure the design choices instead")
    args = parser.parse_args(argv)
    args.n = args.n or (100 if args.quick else 1000)
    if not os.path.isdir(args.data):
        print(f"skip: data directory {args.data} not found (set CRYSTAL_BENCH_DATA)")
        return 0
    started = time.perf_counter()
    if args.choices:
        measure_choices(args, Path(args.out).with_name("ruby_choices.md"))
        return 0
    results = []
    for name in args.sets.split(","):
        data = load_set(args.data, name, args.n, args.seed)
        if data is None:
            continue
        metrics = []
        for metric in args.metrics.split(","):
            m = run_metric(data, metric)
            metrics.append(m)
            print(
                f"{name:<24}{metric:<12} disting {m['distinguishability']:8.3f}  AUC {m['auc']:.3f}"
                f"  s/100 {m['seconds_per_100']:7.2f}  {fmt_levels(m['levels'])}",
                flush=True,
            )
        results.append({"name": name, "language": data["language"], "metrics": metrics})
    seconds = time.perf_counter() - started
    if not results:
        print("skip: no data set found")
        return 0
    text = render(results, args, seconds)
    Path(args.out + ".md").write_text(text)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str) + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
