"""The sections of a run: each question's measurements, run in subprocesses, and their summaries."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchlib.corpus import dataset_path
from benchlib.processes import _strip_io, run_process

from metricbench.plan import ALL_SETS, HERE, K, Plan


def run_measure(name: str, spec: dict[str, Any], log: Callable[[str], None]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        result_path = os.path.join(tmp, "result.json")
        cmd = [
            sys.executable,
            str(HERE / "metric_bench.py"),
            "--measure",
            name,
            "--spec",
            json.dumps(spec),
            "--result",
            result_path,
        ]
        proc = run_process(cmd)
        if proc["returncode"] != 0 or not os.path.exists(result_path):
            tail = proc["stderr"].strip().splitlines()[-5:]
            log(f"    ! {name} failed (exit {proc['returncode']}): {' | '.join(tail)}")
            return {"error": "\n".join(tail), "process": _strip_io(proc)}
        with open(result_path) as fh:
            result = json.load(fh)
    result["process"] = _strip_io(proc)
    return result


def _max_abs_diff(a: Sequence[float], b: Sequence[float]) -> float | None:
    if not a or not b or len(a) != len(b):
        return None
    return max(abs(x - y) for x, y in zip(a, b))


def _ratio(ref: float | None, ours: float | None) -> float | None:
    if not ref or not ours:
        return None
    return ref / ours


def _mem(result: dict[str, Any]) -> dict[str, Any]:
    proc = result.get("process", {})
    return {
        "rss_peak_mb": proc.get("rss_peak_mb"),
        "rss_setup_mb": result.get("rss_setup_mb"),
        "rss_delta_mb": (result.get("rss_peak_self_mb") or 0) - (result.get("rss_setup_mb") or 0)
        if "rss_setup_mb" in result
        else None,
    }


def bench_scoring(
    plan: Plan, caches: dict[str, str], sections: set[str], log: Callable[[str], None]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in plan.score_sets:
        for metric in ("crystalbleu", "bleu"):
            base = {"cache_dir": caches[name], "n": plan.n_pairs, "seed": 0, "metric": metric}
            entry: dict[str, Any] = {}
            if "sentence" in sections:
                log(f"  sentence {metric} on {name}")
                raw = {
                    impl: run_measure("sentence", {**base, "impl": impl}, log)
                    for impl in ("ref", "cold", "coldvocab", "warm", "metric")
                }
                entry["sentence"] = _sentence_summary(raw)
            if "corpus" in sections:
                log(f"  corpus {metric} on {name}")
                raw = {
                    "ref": run_measure(
                        "corpus", {**base, "impl": "ref", "repeats": plan.corpus_ref_repeats}, log
                    ),
                    "ours": run_measure(
                        "corpus", {**base, "impl": "ours", "repeats": plan.corpus_repeats}, log
                    ),
                }
                entry["corpus"] = _corpus_summary(raw)
            out.setdefault(name, {})[metric] = entry
        if "sentence" in sections:
            log(f"  profile memory on {name}")
            out[name]["profile_memory"] = run_measure(
                "profile_memory", {"cache_dir": caches[name], "items": 3000}, log
            )
    return out


def _sentence_summary(raw: dict[str, dict[str, Any]]) -> dict[str, Any]:
    ref_run = raw["ref"].get("runs", {}).get("ref")
    info = raw["ref"].get("info") or raw["cold"].get("info") or {}
    rows: list[dict[str, Any]] = []
    ref_scores = ref_run["scores"] if ref_run else []
    ref_wall = ref_run["wall_s"] if ref_run else None
    ref_cpu = ref_run["cpu_s"] if ref_run else None
    labels = {
        "ref": "reference package",
        "cold": "ours, cold (clear_caches() before every pair)",
        "coldvocab": "ours, cold + fresh vocabulary (clear_caches(vocabulary=True) before every pair)",
        "warm": "ours, realistic (cache on, one pass over the pairs)",
        "hot": "ours, hot (second pass, every profile cached)",
        "profiles": "ours, CrystalBLEU.profile() of the distinct items (once)",
        "metric": "ours, CrystalBLEU.score_profiles() on precomputed profiles",
    }
    for impl, result in raw.items():
        if "error" in result:
            rows.append({"impl": impl, "label": labels.get(impl, impl), "error": result["error"]})
            continue
        for label, run in result["runs"].items():
            row = {
                "impl": label,
                "label": labels.get(label, label),
                "calls": run["calls"],
                "wall_s": run["wall_s"],
                "cpu_s": run["cpu_s"],
                "p50_s": run["p50_s"],
                "p95_s": run["p95_s"],
                **_mem(result),
            }
            if label not in ("ref", "profiles"):
                row["ratio"] = _ratio(ref_wall, run["wall_s"])
                row["ratio_cpu"] = _ratio(ref_cpu, run["cpu_s"])
            if "scores" in run and label != "ref":
                row["max_abs_diff"] = _max_abs_diff(ref_scores, run["scores"])
            rows.append(row)
    # The metric-object path including the one-off profile building.
    by = {r["impl"]: r for r in rows if "error" not in r}
    if "profiles" in by and "metric" in by and ref_wall:
        total = by["profiles"]["wall_s"] + by["metric"]["wall_s"]
        rows.append(
            {
                "impl": "metric+profiles",
                "label": "ours, metric object incl. building the profiles",
                "calls": by["metric"]["calls"],
                "wall_s": total,
                "cpu_s": by["profiles"]["cpu_s"] + by["metric"]["cpu_s"],
                "ratio": _ratio(ref_wall, total),
                "ratio_cpu": _ratio(ref_cpu, by["profiles"]["cpu_s"] + by["metric"]["cpu_s"]),
            }
        )
    return {"info": info, "rows": rows}


def _corpus_summary(raw: dict[str, dict[str, Any]]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    ref = raw["ref"].get("runs", {}).get("ref")
    ref_per_call = ref["sum_s"] / ref["calls"] if ref else None
    ref_cpu = ref["cpu_s"] / ref["calls"] if ref else None
    ref_score = ref["scores"][0] if ref else None
    labels = {
        "ref": "reference package",
        "cold": "ours, cold (clear_caches() before the call)",
        "warm": "ours, warm (profiles cached by an earlier call)",
    }
    for result in raw.values():
        if "error" in result:
            rows.append({"impl": "?", "error": result["error"]})
            continue
        for label, run in result["runs"].items():
            per_call = run["sum_s"] / run["calls"]
            row = {
                "impl": label,
                "label": labels[label],
                "calls": run["calls"],
                "per_call_s": per_call,
                "cpu_per_call_s": run["cpu_s"] / run["calls"],
                "p50_s": run["p50_s"],
                "p95_s": run["p95_s"],
                "score": run["scores"][0],
                **_mem(result),
            }
            if label != "ref":
                row["ratio"] = _ratio(ref_per_call, per_call)
                row["ratio_cpu"] = _ratio(ref_cpu, run["cpu_s"] / run["calls"])
                if ref_score is not None:
                    row["max_abs_diff"] = max(abs(s - ref_score) for s in run["scores"])
            rows.append(row)
    return {"info": raw["ref"].get("info", {}), "rows": rows}


def bench_sset(plan: Plan, caches: dict[str, str], log: Callable[[str], None]) -> dict[str, Any]:
    out: dict[str, Any] = {"set": plan.sset_set, "splits": {}}
    for split in ("train", "all"):
        log(f"  S-set build on {plan.sset_set} ({split})")
        results = {
            impl: run_measure(
                "sset", {"cache_dir": caches[plan.sset_set], "split": split, "impl": impl}, log
            )
            for impl in ("ref", "first-seen", "canonical")
        }
        ref = results["ref"]
        rows = []
        for impl, result in results.items():
            if "error" in result:
                rows.append({"impl": impl, "error": result["error"]})
                continue
            row = {
                "impl": impl,
                "wall_s": result["wall_s"],
                "cpu_s": result["cpu_s"],
                "documents": result["documents"],
                "tokens": result["tokens"],
                "ngrams": result["ngrams"],
                "distinct_ngrams": result["distinct_ngrams"],
                "phases": result["phases"],
                "top_digest": result["top_digest"],
                **_mem(result),
            }
            if impl != "ref" and "error" not in ref:
                row["ratio"] = _ratio(ref["wall_s"], result["wall_s"])
                row["ratio_cpu"] = _ratio(ref["cpu_s"], result["cpu_s"])
                row["identical_order"] = result["top_digest"] == ref["top_digest"]
                row["identical_set"] = result["set_digest"] == ref["set_digest"]
                ref_grams = {tuple(g) for g, _ in ref["top"]}
                row["overlap"] = sum(tuple(g) in ref_grams for g, _ in result["top"])
            rows.append(row)
        out["splits"][split] = rows
    return out


def bench_tokenize(plan: Plan, data: str, log: Callable[[str], None]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for language, name, max_bytes in plan.tokenize:
        path = dataset_path(data, name)
        if not os.path.exists(path):
            continue
        log(f"  tokenization {language} ({name}, {max_bytes / 1e6:.1f} MB)")
        base = {
            "dataset": path,
            "lang": language,
            "max_bytes": max_bytes,
            "passes": plan.tokenize_passes,
        }
        results = {
            "raw": run_measure("tokenize", {**base, "impl": "raw"}, log),
            "lex": run_measure("tokenize", {**base, "impl": "lex"}, log),
            "tokenize": run_measure("tokenize", {**base, "impl": "tokenize"}, log),
            "many1": run_measure("tokenize", {**base, "impl": "many", "processes": 1}, log),
            "many2": run_measure("tokenize", {**base, "impl": "many", "processes": 2}, log),
        }
        rows = []
        raw = results["raw"]
        for impl, r in results.items():
            if "error" in r:
                rows.append({"impl": impl, "error": r["error"]})
                continue
            row = {
                "impl": impl,
                "files": r["files"],
                "bytes": r["bytes"],
                "tokens": r["tokens"],
                "wall_s": r["wall_s"],
                "cpu_s": r["cpu_s"] + r["children_cpu_s"],
                "parent_cpu_s": r["cpu_s"],
                "load_before": r["process"]["load_before"],
                "mb_per_s_wall": r["mb_per_s_wall"],
                "mb_per_s_cpu": r["mb_per_s_cpu"],
                "p50_s": r["p50_s"] if r["calls"] > 1 else None,
                "p95_s": r["p95_s"] if r["calls"] > 1 else None,
                "children_rss_mb": r["children_rss_mb"],
                **_mem(r),
            }
            if impl in ("lex", "tokenize") and "error" not in raw:
                row["vs_raw_cpu"] = r["mb_per_s_cpu"] / raw["mb_per_s_cpu"]
                row["vs_raw_wall"] = r["mb_per_s_wall"] / raw["mb_per_s_wall"]
            rows.append(row)
        by = {r["impl"]: r for r in rows if "error" not in r}
        if "many1" in by and "many2" in by:
            by["many2"]["speedup"] = by["many1"]["wall_s"] / by["many2"]["wall_s"]
        out[language] = {"set": name, "rows": rows}
    return out


def _cli() -> list[str]:
    script = Path(sys.executable).parent / "crystal-lsp"
    return [str(script)] if script.exists() else [sys.executable, "-m", "crystal_lsp"]


def bench_disting(plan: Plan, data: str, log: Callable[[str], None]) -> list[dict[str, Any]]:
    rows = []
    for run in plan.disting:
        path = dataset_path(data, run["set"])
        if not os.path.exists(path):
            continue
        cmd = [
            *_cli(),
            "disting",
            path,
            "--metric",
            "bleu,crystalbleu,crystalbleu-if",
            "-k",
            str(K),
            "--n",
            str(run.get("n", 1000)),
            "--seed",
            str(run["seed"]),
            "--protocol",
            run["protocol"],
            "--aggregate",
            run["aggregate"],
            "--format",
            "json",
            "--no-progress",
        ]
        log(f"  disting {run['set']} seed {run['seed']} {run['protocol']}/{run['aggregate']}")
        proc = run_process(cmd)
        row: dict[str, Any] = {
            **run,
            "n": run.get("n", 1000),
            "command": "crystal-lsp " + " ".join(cmd[len(_cli()) :]),
            "process": _strip_io(proc),
        }
        if proc["returncode"] != 0:
            row["error"] = proc["stderr"].strip().splitlines()[-1:] or ["?"]
            log(f"    ! disting failed: {row['error']}")
        else:
            doc = json.loads(proc["stdout"])
            row["metrics"] = {
                m["metric"]: {
                    "intra": m["intra_mean"],
                    "inter": m["inter_mean"],
                    "distinguishability": m["distinguishability"],
                    "auc": m["auc"],
                    "accuracy": (m["classifier"] or {}).get("accuracy"),
                    "f1": (m["classifier"] or {}).get("f1"),
                    "seconds": m["seconds"],
                }
                for m in doc["metrics"]
            }
        rows.append(row)
    return rows


def reference_figures(data: str) -> dict[str, dict[str, tuple[float, float]]]:
    """The reference table of the data README: set -> quantity -> (BLEU, CrystalBLEU)."""
    out: dict[str, dict[str, tuple[float, float]]] = {}
    try:
        text = Path(data, "README.md").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] not in ALL_SETS:
            continue
        try:
            values = [tuple(float(v) for v in c.split("/")) for c in cells[1:]]
        except ValueError:
            continue
        if all(len(v) == 2 for v in values):
            out[cells[0]] = dict(zip(("distinguishability", "auc", "accuracy"), values))  # type: ignore[arg-type]
    return out
