"""The Markdown report of a metric benchmark run (``bench/results/metric_bench.md``)."""

from __future__ import annotations

import math
from typing import Any

from benchlib.timing import fmt_mb, fmt_s, fmt_x

from metricbench.plan import K


def _fmt_range(name: str, value: Any) -> str:
    """``name: lo–hi`` over the data sets (wall clock), with the CPU-time range if known."""
    if not isinstance(value, (list, tuple)):
        return f"{name}: {fmt_x(value)}"
    text = f"{name}: {fmt_x(value[0])}" + (f"–{fmt_x(value[1])}" if value[1] != value[0] else "")
    if len(value) == 4 and value[2]:
        text += f" (CPU {fmt_x(value[2])}" + (f"–{fmt_x(value[3])}" if value[3] != value[2] else "")
        text += ")"
    return text


def _status(goal: dict[str, Any]) -> str:
    if goal["met"]:
        return "**met**"
    if goal.get("inconclusive"):
        return f"**inconclusive** ({goal['inconclusive']})"
    return "**MISSED**"


def render_markdown(results: dict[str, Any]) -> str:
    meta = results["meta"]
    lines: list[str] = []
    add = lines.append
    add("# Metric-core benchmark")
    add("")
    add(
        f"Command: `{meta['command']}` ({meta['plan']} plan), {meta['date']}; "
        f"{meta['total_s'] / 60:.1f} min wall"
        + (
            f", {meta['cpu_s'] / 60:.1f} min CPU in the measurement processes (most are "
            "single-threaded, so the CPU figure is close to the wall time on an idle machine)."
            if meta.get("cpu_s")
            else "."
        )
    )
    add("")
    add(
        f"Machine: {meta['cpus']} CPUs, {meta['mem_gb']:.0f} GB, {meta['platform']}; "
        f"Python {meta['python']}, Pygments {meta['pygments']}, NLTK {meta['nltk']}, "
        f"crystalbleu {meta['crystalbleu']}, crystal_lsp {meta['crystal_lsp']} "
        f"(git {meta['git']}; metric core: {meta.get('core', '?')}). Load average at "
        f"start/end: {meta['load_start']:.2f} / {meta['load_end']:.2f}."
    )
    add("")
    add(
        "Every measurement ran in its own subprocess. *Peak RSS* is that process's high-water "
        "mark (``wait4``, includes its pool workers); *Δ* is the growth during the timed part "
        "over the RSS after loading its inputs. Ratios are reference time / our time, by "
        "wall clock and by CPU time (the latter is less affected by other load; the goals are "
        "judged on it). Latencies are per call (nearest-rank p50/p95). *Cold* clears the "
        "profile caches before every call but keeps the token vocabulary (an interning table, "
        "like the conversion of `ignoring` the pure-Python path also keeps); *cold + fresh "
        "vocabulary* forgets that too."
    )
    add("")
    if meta.get("load_warning"):
        add(f"> Note: {meta['load_warning']}")
        add("")
    add("## Goals")
    add("")
    add("| goal | status | numbers |")
    add("|---|---|---|")
    for g in results.get("goals", []):
        nums = ", ".join(_fmt_range(k, v) for k, v in g["ratios"].items())
        if "max_abs_diff" in g and g["max_abs_diff"] is not None:
            nums += f"; max abs score diff {g['max_abs_diff']:.3g}"
        add(f"| {g['goal']} | {_status(g)} | {nums} |")
    add("")
    scoring = results.get("scoring", {})
    for kind, title in (("sentence", "Sentence level"), ("corpus", "Corpus level")):
        for metric, ref_name in (("crystalbleu", "crystalbleu 0.2"), ("bleu", "NLTK 3.10.4")):
            sections = [
                (n, s[metric][kind]) for n, s in scoring.items() if kind in s.get(metric, {})
            ]
            if not sections:
                continue
            label = "CrystalBLEU" if metric == "crystalbleu" else "BLEU"
            add(f"## {title}: {label} vs {ref_name}")
            add("")
            for name, section in sections:
                info = section["info"]
                add(
                    f"**{name}**: {info.get('pairs', '?')} test pairs (intra + inter, seed 0), "
                    f"{info.get('distinct_sequences', '?')} distinct sequences in "
                    f"{info.get('sequence_slots', '?')} slots, "
                    f"{info.get('mean_tokens', 0):.0f} tokens each on average"
                    + (f", S = top {K} 1-4-grams of the train split" if metric != "bleu" else "")
                    + "."
                    + _cache_note(info)
                )
                add("")
                if kind == "sentence":
                    add(
                        "| implementation | total | p50 | p95 | ratio | ratio (CPU) | max abs diff "
                        "| peak RSS MB (Δ) |"
                    )
                    add("|---|---|---|---|---|---|---|---|")
                    for r in section["rows"]:
                        if "error" in r:
                            add(f"| {r['label']} | error: {r['error'][:80]} | | | | | | |")
                            continue
                        diff = r.get("max_abs_diff")
                        add(
                            f"| {r['label']} | {fmt_s(r['wall_s'])} | {fmt_s(r.get('p50_s'))} | "
                            f"{fmt_s(r.get('p95_s'))} | {fmt_x(r.get('ratio'))} | "
                            f"{fmt_x(r.get('ratio_cpu'))} | "
                            f"{'-' if diff is None else f'{diff:.3g}'} | "
                            f"{fmt_mb(r.get('rss_peak_mb'))}"
                            + (
                                f" ({r['rss_delta_mb']:+.0f})"
                                if r.get("rss_delta_mb") is not None
                                else ""
                            )
                            + " |"
                        )
                else:
                    add(
                        "| implementation | per call (mean) | p50 | p95 | calls | ratio "
                        "| ratio (CPU) | score | max abs diff | peak RSS MB (Δ) |"
                    )
                    add("|---|---|---|---|---|---|---|---|---|---|")
                    for r in section["rows"]:
                        if "error" in r:
                            add(f"| {r['impl']} | error: {r['error'][:80]} | | | | | | | | |")
                            continue
                        diff = r.get("max_abs_diff")
                        add(
                            f"| {r['label']} | {fmt_s(r['per_call_s'])} | {fmt_s(r['p50_s'])} | "
                            f"{fmt_s(r['p95_s'])} | {r['calls']} | {fmt_x(r.get('ratio'))} | "
                            f"{fmt_x(r.get('ratio_cpu'))} | {r['score']:.6f} | {'-' if diff is None else f'{diff:.3g}'} | "
                            f"{fmt_mb(r.get('rss_peak_mb'))} ({r['rss_delta_mb']:+.0f}) |"
                        )
                add("")
    memory = [
        (n, s["profile_memory"])
        for n, s in scoring.items()
        if "profile_memory" in s and "error" not in s["profile_memory"]
    ]
    if memory:
        add("## Profile memory")
        add("")
        budget = memory[0][1].get("cache_budget_tokens")
        cost = memory[0][1].get("set_profile_cost")
        add(
            "Bytes held per token by the profiles (orders 1-4, S removed) of a set's first 3000 "
            "test items, measured with `tracemalloc` (the native arrays are allocated with "
            "`PyMem_Malloc`, so they are traced too). The profile caches' budget "
            f"`PROFILE_CACHE_TOKENS` is {budget:,} tokens of native profiles; a token of a "
            f"pure-Python profile counts {cost} times."
        )
        add("")
        add("| set | items | tokens | native B/token | pure Python B/token | smaller by |")
        add("|---|---|---|---|---|---|")
        for name, m in memory:
            native = m.get("native", {}).get("bytes_per_token")
            pure = m.get("pure", {}).get("bytes_per_token")
            add(
                f"| {name} | {m['items']:,} | {m['tokens']:,} | "
                f"{'-' if native is None else f'{native:.1f}'} | "
                f"{'-' if pure is None else f'{pure:.1f}'} | "
                f"{fmt_x(pure / native) if native and pure else '-'} |"
            )
        add("")
    sset = results.get("sset")
    if sset:
        add(f"## S-set build (k = {K}) on {sset['set']}")
        add("")
        add(
            "Reference: `for n in 1..4: all_ngrams.extend(nltk.util.ngrams(tokens, n))` per "
            "document, then `Counter(all_ngrams).most_common(k)`. Ours: `build_sset` (which also "
            'computes the frequency curve) with `tie_break="first-seen"` (must equal the '
            "reference, order included) and the default canonical tie-break."
        )
        add("")
        add(
            "| split | implementation | docs | tokens | time | ratio | ratio (CPU) "
            "| identical to reference | peak RSS MB (Δ) |"
        )
        add("|---|---|---|---|---|---|---|---|---|")
        for split, rows in sset["splits"].items():
            for r in rows:
                if "error" in r:
                    add(f"| {split} | {r['impl']} | error: {r['error'][:80]} | | | | | | |")
                    continue
                if r["impl"] == "ref":
                    same = "-"
                    detail = ", ".join(f"{k[:-2]} {fmt_s(v)}" for k, v in r["phases"].items())
                    impl = f"reference ({detail}; {r['ngrams']:,} n-grams, {r['distinct_ngrams']:,} distinct)"
                else:
                    impl = f"build_sset, {r['impl']}"
                    if r.get("identical_order"):
                        same = "yes (same n-grams, counts, order)"
                    elif r.get("identical_set"):
                        same = "same set, different order"
                    else:
                        same = f"no: {r.get('overlap')}/{K} n-grams shared (tie-break differs)"
                add(
                    f"| {split} | {impl} | {r['documents']:,} | {r['tokens']:,} | "
                    f"{fmt_s(r['wall_s'])} | {fmt_x(r.get('ratio'))} | "
                    f"{fmt_x(r.get('ratio_cpu'))} | {same} | "
                    f"{fmt_mb(r['rss_peak_mb'])} ({r['rss_delta_mb']:+.0f}) |"
                )
        add("")
    tok = results.get("tokenize")
    if tok:
        add("## Tokenization")
        add("")
        add(
            "Same code strings, same lexer object (`resolve_lexer(lang)`: Pygments' default "
            "options; *lex* prepares the input as `get_tokens` does). *raw* = "
            "`list(lexer.get_tokens_unprocessed(src))`; *lex* = "
            "`crystal_lsp.text.tokens.lex(src, lexer)`; *tokenize* = `crystal_lsp.tokenize(src, lang)`; "
            "*many/N* = `parallel.tokenize_many(jobs, processes=N)` (wall time includes starting "
            "the pool; best of several passes by CPU time; *parent CPU* is the serial share: unpickling results and mapping token "
            "types back in the parent). MB/s per core = bytes / CPU seconds of the process and "
            "its workers; *load* is the 1-minute load average when the measurement started."
        )
        add("")
        add(
            "| language | implementation | files | MB | MB/s (wall) | MB/s per core (CPU) "
            "| vs raw per core | p50 / p95 per file | speedup | parent CPU | load | peak RSS MB |"
        )
        add("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for language, entry in tok.items():
            for r in entry["rows"]:
                if "error" in r:
                    add(
                        f"| {language} | {r['impl']} | error: {r['error'][:80]} | | | | | | | | | |"
                    )
                    continue
                impl = {"many1": "many/1", "many2": "many/2"}.get(r["impl"], r["impl"])
                lat = (
                    f"{fmt_s(r['p50_s'])} / {fmt_s(r['p95_s'])}"
                    if r.get("p50_s") is not None
                    else "-"
                )
                add(
                    f"| {language} ({entry['set']}) | {impl} | {r['files']:,} | {r['bytes'] / 1e6:.2f} | "
                    f"{r['mb_per_s_wall']:.2f} | {r['mb_per_s_cpu']:.2f} | "
                    f"{fmt_x(r.get('vs_raw_cpu'))} | {lat} | {fmt_x(r.get('speedup'))} | "
                    f"{fmt_s(r.get('parent_cpu_s')) if r['impl'].startswith('many') else '-'} | "
                    f"{r.get('load_before', float('nan')):.1f} | "
                    f"{fmt_mb(max(r['rss_peak_mb'] or 0, r['children_rss_mb'] or 0))} |"
                )
        add("")
    disting = results.get("disting")
    if disting:
        lines.extend(_render_disting(disting, results.get("reference_figures", {})))
    if results.get("prepare"):
        add("## Preparation")
        add("")
        for name, p in results["prepare"].items():
            state = "cached" if p.get("cached") else f"tokenized in {fmt_s(p.get('tokenize_s'))}"
            add(f"* {name}: {state} (`tokenize_many`, all CPUs), cache `{p.get('cache_dir')}`")
        add("")
    return "\n".join(lines) + "\n"


def _cache_note(info: dict[str, Any]) -> str:
    budget = info.get("cache_budget_tokens")
    tokens = info.get("distinct_tokens")
    if not budget or not tokens or tokens <= budget:
        return ""
    return (
        f" ⚠ The distinct sequences hold {tokens:,} tokens, more than the profile cache's "
        f"budget (`PROFILE_CACHE_TOKENS` = {budget:,}): oldest-first eviction drops every "
        "profile before its next use in a repeated scan, so warm/hot calls get no cache hits."
    )


def _render_disting(rows: list[dict[str, Any]], ref: dict[str, Any]) -> list[str]:
    lines = ["## Distinguishability (`crystal-lsp disting`, k = 500, n = 1000)", ""]
    lines.append(
        "Reference figures: the data README (NLTK 3.10.4 BLEU and crystalbleu 0.2, one seed). "
        "Each cell is BLEU / CrystalBLEU / CrystalBLEU-if; *acc* is the threshold classifier's "
        "test accuracy. ⚠ marks CrystalBLEU separating worse than BLEU (lower AUC or accuracy)."
    )
    lines.append("")
    lines.append("| set | run | distinguishability | ROC AUC | acc | time | peak RSS MB |")
    lines.append("|---|---|---|---|---|---|---|")

    def trio(metrics: dict[str, Any], key: str, fmt: str) -> str:
        vals = []
        for m in ("bleu", "crystalbleu", "crystalbleu-if"):
            v = metrics.get(m, {}).get(key)
            vals.append("-" if v is None else format(v, fmt))
        return " / ".join(vals)

    by_set: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_set.setdefault(r["set"], []).append(r)
    for name, runs in by_set.items():
        if name in ref:
            fig = ref[name]
            lines.append(
                f"| {name} | **reference** | {fig['distinguishability'][0]:.2f} / "
                f"{fig['distinguishability'][1]:.2f} | {fig['auc'][0]:.3f} / {fig['auc'][1]:.3f} | "
                f"{fig['accuracy'][0]:.3f} / {fig['accuracy'][1]:.3f} | | |"
            )
        seeds = []
        for r in runs:
            run = f"seed {r['seed']}"
            if r["protocol"] != "pairs":
                run += f", {r['protocol']}"
            if r.get("n", 1000) != 1000:
                run += f", n = {r['n']}"
            if r["aggregate"] != "mean":
                run += f", {r['aggregate']} aggregate"
            if "error" in r:
                lines.append(f"| {name} | {run} | error: {r['error']} | | | | |")
                continue
            m = r["metrics"]
            warn = ""
            b, c = m.get("bleu", {}), m.get("crystalbleu", {})
            if c.get("auc", 1) < b.get("auc", 0) or (c.get("accuracy") or 1) < (
                b.get("accuracy") or 0
            ):
                warn = " ⚠"
            lines.append(
                f"| {name} | {run} | {trio(m, 'distinguishability', '.2f')} | "
                f"{trio(m, 'auc', '.3f')}{warn} | {trio(m, 'accuracy', '.3f')} | "
                f"{r['process']['wall_s']:.1f} s | {r['process']['rss_peak_mb']:.0f} |"
            )
            if r["protocol"] == "pairs" and r["aggregate"] == "mean":
                seeds.append(m)
        if len(seeds) > 1:
            cells = []
            for key in ("distinguishability", "auc", "accuracy"):
                parts = []
                for metric in ("bleu", "crystalbleu", "crystalbleu-if"):
                    vals = [s[metric][key] for s in seeds if s.get(metric, {}).get(key) is not None]
                    if vals:
                        mean = sum(vals) / len(vals)
                        sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / max(1, len(vals) - 1))
                        parts.append(f"{mean:.3g}±{sd:.2g}")
                cells.append(" / ".join(parts))
            lines.append(
                f"| {name} | mean ± sd over {len(seeds)} seeds | {cells[0]} | {cells[1]} | "
                f"{cells[2]} | | |"
            )
    lines.append("")
    worse = []
    for r in rows:
        if "metrics" not in r or r["protocol"] != "pairs" or r["aggregate"] != "mean":
            continue
        b, c = r["metrics"].get("bleu", {}), r["metrics"].get("crystalbleu", {})
        if c.get("auc", 1) < b.get("auc", 0):
            worse.append(f"{r['set']} seed {r['seed']} (AUC {b['auc']:.3f} → {c['auc']:.3f})")
    if worse:
        lines.append("CrystalBLEU has a lower ROC AUC than BLEU on: " + "; ".join(worse) + ".")
        lines.append("")
    return lines
