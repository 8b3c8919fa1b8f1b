#!/usr/bin/env python3
"""``crystal-lsp disting`` with its default options against the reference figures, pair by pair.

    .venv/bin/python bench/disting_bench.py                 # 3 sets, seed 0 (~6 min here)
    .venv/bin/python bench/disting_bench.py --sets gcj_java --seeds 0 1 --uniform

Each run is ``crystal-lsp disting <set>/items.jsonl.gz --metric bleu,crystalbleu,crystalbleu-if
--seed S --format json --pairs-out FILE --jobs 2`` in its own subprocess, with **no other
option** (``--pair-sampling uniform`` added for the ``--uniform`` runs): its wall and CPU time
(``os.wait4``), peak RSS and the load average before and after are recorded.

Three comparisons:

1. the data README's figures (distinguishability, ROC AUC, threshold accuracy of BLEU and
   CrystalBLEU, seed 0), as printed: ours rounded to the README's digits must equal them;
2. the reference script itself (``reference_eval.py``, from ``--reference-tools`` or
   ``$CRYSTAL_REFERENCE_TOOLS``, run in this process through ``bench/reference.py``): its
   full-precision figures, with the largest difference (goal: at most 1e-4; it is 0);
3. pair by pair: the reference's drawn pairs (ids, in order, per split and label) against the
   rows of ``--pairs-out``, and each pair's BLEU and CrystalBLEU score; pairs that differ are
   counted and the first ones listed.

With ``--paper`` it instead runs the paper's Table-2 protocol (``--protocol paper`` and
``paper-multiref``) beside the scripts they reproduce (``bench/paper_protocol.py``: the reference
evaluation's ``multiref``, and the authors' ``small_v1.py`` given as ``--authors-script PATH``),
writing ``bench/results/disting_paper.{json,md}``.

Writes ``bench/results/disting_bench.{json,md}``. Data from ``--data`` or ``$CRYSTAL_BENCH_DATA``
(default ``/work/shared/data``), read in place; without it: ``SKIPPED``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from reference import DEFAULT_TOOLS, GROUPS, load_reference, run_reference  # noqa: E402

SETS = ("gcj_java", "clcdsa_atcoder_java", "clcdsa_atcoder_python")
METRICS = ("bleu", "crystalbleu", "crystalbleu-if")
FIGURES = ("disting", "auc", "accuracy")
# the data README (seed 0): distinguishability, ROC AUC, threshold accuracy (BLEU, CrystalBLEU)
README = {
    "gcj_java": {"bleu": ("1.58", "0.791", "0.717"), "crystalbleu": ("3.40", "0.800", "0.752")},
    "clcdsa_atcoder_java": {
        "bleu": ("2.15", "0.716", "0.662"),
        "crystalbleu": ("4.68", "0.770", "0.685"),
    },
    "clcdsa_atcoder_python": {
        "bleu": ("4.21", "0.898", "0.804"),
        "crystalbleu": ("75.5", "0.771", "0.716"),
    },
}
TOLERANCE = 1e-4


def run_once(data: Path, name: str, seed: int, sampling: str, pairs_out: Path) -> dict[str, Any]:
    """One disting run in a subprocess, with its costs; default options but the seed."""
    argv = [sys.executable, "-m", "crystal_lsp.cli.main", "disting"]
    argv += [str(data / name / "items.jsonl.gz"), "--metric", ",".join(METRICS)]
    argv += ["--seed", str(seed), "--format", "json", "--pairs-out", str(pairs_out)]
    argv += ["--jobs", "2"] + (["--pair-sampling", sampling] if sampling != "class" else [])
    load_before = os.getloadavg()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, cwd=ROOT, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{name} seed {seed}: {proc.stderr.decode(errors='replace').strip()}")
    doc = json.loads(proc.stdout)
    return {
        "set": name,
        "seed": seed,
        "sampling": sampling,
        "argv": argv[3:],
        "protocol": doc["protocol_signature"],
        "wall_s": wall,
        "cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        "max_rss_mb_so_far": after.ru_maxrss / 1024,
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "metrics": {
            m["metric"]: {
                "disting": m["distinguishability"],
                "auc": m["auc"],
                "accuracy": (m["classifier"] or {}).get("accuracy"),
                "threshold": (m["classifier"] or {}).get("threshold"),
                "cpu_seconds": m["cpu_seconds"],
            }
            for m in doc["metrics"]
        },
    }


def readme_check(run: dict[str, Any]) -> dict[str, Any]:
    """Ours rounded to the README's digits against the README (seed 0, class sampling)."""
    out: dict[str, Any] = {}
    for metric, printed in README.get(run["set"], {}).items():
        for figure, text in zip(FIGURES, printed):
            digits = len(text.split(".")[1])
            ours = run["metrics"][metric][figure]
            out[f"{metric} {figure}"] = {
                "readme": text,
                "ours": ours,
                "equal_as_printed": f"{ours:.{digits}f}" == text,
            }
    return out


def pair_check(ref: Any, run: dict[str, Any], pairs_out: Path) -> dict[str, Any]:
    """The reference script's pairs and scores against ours, pair by pair, and its figures."""
    theirs = run_reference(ref, run["set"], seed=run["seed"], mode=run["sampling"])
    rows = [json.loads(line) for line in pairs_out.read_text(encoding="utf-8").splitlines()]
    ours: dict[str, list[dict[str, Any]]] = {g: [] for g in GROUPS}
    for row in rows:
        ours[f"{row['split']}_{'intra' if row['label'] else 'inter'}"].append(row)
    out: dict[str, Any] = {"groups": {}, "figures": {}}
    for group in GROUPS:
        mine = [(r["references"][0], r["hypothesis"]) for r in ours[group]]
        same_pairs = mine == theirs.pairs[group]
        entry: dict[str, Any] = {"pairs": len(mine), "same_pairs_in_order": same_pairs}
        if not same_pairs:
            entry["first_differing"] = [
                (k, a, b) for k, (a, b) in enumerate(zip(mine, theirs.pairs[group])) if a != b
            ][:5]
        for metric in ("bleu", "crystalbleu"):
            got = [r[metric] for r in ours[group]]
            want = theirs.scores[metric][group]
            diffs = [abs(x - y) for x, y in zip(got, want)]
            entry[metric] = {
                "max_abs_diff": max(diffs, default=0.0),
                "pairs_differing": sum(d != 0 for d in diffs),
                "first_differing": [(k, got[k], want[k]) for k, d in enumerate(diffs) if d][:5],
            }
        out["groups"][group] = entry
    for metric, figures in theirs.figures.items():
        for figure in FIGURES:
            ours_value = run["metrics"][metric][figure]
            out["figures"][f"{metric} {figure}"] = {
                "reference": figures[figure],
                "ours": ours_value,
                "abs_diff": abs(ours_value - figures[figure]),
            }
    return out


def render(runs: list[dict[str, Any]]) -> str:
    """The Markdown report."""
    loads = [r["load_before"][0] for r in runs] + [r["load_after"][0] for r in runs]
    lines = [
        "# disting with its default options vs the reference evaluation",
        "",
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average (1 min) "
        f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs. Command: `crystal-lsp "
        "disting <set>/items.jsonl.gz --metric bleu,crystalbleu,crystalbleu-if --seed S "
        "--format json --pairs-out F --jobs 2` (no other option).",
        "",
        "| set | seed | sampling | metric | distinguishability | ROC AUC | threshold accuracy "
        "| README | max diff to reference_eval.py | CPU s (scoring) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        for metric in METRICS:
            m = r["metrics"][metric]
            printed = README.get(r["set"], {}).get(metric)
            readme = (
                " / ".join(printed) if printed and r["seed"] == 0 and r["sampling"] == "class"
                else "-"
            )  # fmt: skip
            figures = r.get("reference", {}).get("figures", {})
            diffs = [v["abs_diff"] for k, v in figures.items() if k.startswith(metric + " ")]
            diff = f"{max(diffs):.3g}" if diffs else "-"
            lines.append(
                f"| {r['set']} | {r['seed']} | {r['sampling']} | {metric} | {m['disting']:.4f} | "
                f"{m['auc']:.6f} | {m['accuracy']:.4f} | {readme} | {diff} | "
                f"{m['cpu_seconds']:.2f} |"
            )
    lines += ["", "Pair by pair against the reference script (pairs in order; scores):", ""]
    for r in runs:
        check = r.get("reference")
        if check is None:
            lines.append(f"- {r['set']} seed {r['seed']} {r['sampling']}: reference not run")
            continue
        parts = []
        for group, entry in check["groups"].items():
            worst = max(entry[m]["max_abs_diff"] for m in ("bleu", "crystalbleu"))
            differing = sum(entry[m]["pairs_differing"] for m in ("bleu", "crystalbleu"))
            same = "same pairs" if entry["same_pairs_in_order"] else "PAIRS DIFFER"
            parts.append(
                f"{group} {entry['pairs']} ({same}, {differing} scores differ, max {worst:.3g})"
            )
        lines.append(f"- {r['set']} seed {r['seed']} {r['sampling']}: " + "; ".join(parts))
    lines += ["", "Per run (whole command: wall s, CPU s incl. tokenizer workers; load):", ""]
    for r in runs:
        lines.append(
            f"- {r['set']} seed {r['seed']} {r['sampling']}: {r['wall_s']:.1f} s wall, "
            f"{r['cpu_s']:.1f} s CPU, load {r['load_before'][0]:.1f} / {r['load_after'][0]:.1f}; "
            f"`{r['protocol']}`"
        )
    lines += ["", f"Goal (README as printed, reference to {TOLERANCE:g}): **{goal(runs)}**."]
    return "\n".join(lines) + "\n"


def goal(runs: list[dict[str, Any]]) -> str:
    ok = all(v["equal_as_printed"] for r in runs for v in r.get("readme", {}).values())
    for r in runs:
        check = r.get("reference")
        if check is None:
            continue
        ok = ok and all(v["abs_diff"] <= TOLERANCE for v in check["figures"].values())
        ok = ok and all(e["same_pairs_in_order"] for e in check["groups"].values())
    return "met" if ok else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.environ.get("CRYSTAL_BENCH_DATA", "/work/shared/data"))
    parser.add_argument("--reference-tools", default=DEFAULT_TOOLS)
    parser.add_argument("--sets", nargs="*", default=list(SETS))
    parser.add_argument("--seeds", nargs="*", type=int, default=[0])
    parser.add_argument("--uniform", action="store_true", help="also --pair-sampling uniform")
    parser.add_argument("--no-reference", action="store_true", help="skip the pair-by-pair check")
    parser.add_argument("--out", default=None)
    parser.add_argument("--paper", action="store_true", help="the Table-2 protocol (see above)")
    parser.add_argument("--authors-script", type=Path, help="small_v1.py of sola-st/crystalbleu")
    parser.add_argument("--n", type=int, default=1000, help="--paper: hypotheses of each kind")
    parser.add_argument("-k", type=int, default=729, help="--paper: k (a power of 3 for small_v1)")
    args = parser.parse_args()
    data = Path(args.data)
    sets = [s for s in args.sets if (data / s / "items.jsonl.gz").exists()]
    if not sets:
        print(f"SKIPPED: no labeled sets under {data}")
        return 0
    ref = None if args.no_reference else load_reference(args.reference_tools, data)
    if args.paper:
        return paper(args, data, sets, ref)
    args.out = args.out or str(HERE / "results" / "disting_bench")
    plan = [(s, seed, "class") for seed in args.seeds for s in sets]
    if args.uniform:
        plan += [(s, args.seeds[0], "uniform") for s in sets]
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, seed, sampling in plan:
            pairs_out = Path(tmp) / f"{name}-{seed}-{sampling}.jsonl"
            run = run_once(data, name, seed, sampling, pairs_out)
            if seed == 0 and sampling == "class":
                run["readme"] = readme_check(run)
            if ref is not None:
                run["reference"] = pair_check(ref, run, pairs_out)
            runs.append(run)
            print(f"{name} seed {seed} {sampling}: {run['wall_s']:.1f} s", file=sys.stderr)
    report = render(runs)
    Path(args.out + ".json").write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
    Path(args.out + ".md").write_text(report, encoding="utf-8")
    print(report)
    return 0 if goal(runs) == "met" else 1


def paper(args: argparse.Namespace, data: Path, sets: list[str], ref: Any) -> int:
    """``--paper``: ours beside the scripts (bench/paper_protocol.py)."""
    from paper_protocol import compare
    from paper_protocol import render as render_paper

    rows = []
    for seed in args.seeds:
        for name in sets:
            n = args.n
            rows += compare(data, name, ref, args.authors_script, n, args.k, seed)
            print(f"{name} seed {seed}: done", file=sys.stderr)
    report = "\n".join(render_paper(rows, args.n, args.k, args.seeds[0])) + "\n"
    out = args.out or str(HERE / "results" / "disting_paper")
    Path(out + ".json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    Path(out + ".md").write_text(report, encoding="utf-8")
    print(report)
    compared = [r for r in rows if "max_abs_diff" in r]
    return 0 if compared and all(r["max_abs_diff"] == 0 for r in compared) else 1


if __name__ == "__main__":
    raise SystemExit(main())
