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
import gc
import hashlib
import json
import math
import os
import pickle
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_DATA = "/work/shared/data"
DEFAULT_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "crystal-lsp-bench")
ALL_SETS = ("gcj_java", "clcdsa_atcoder_python", "clcdsa_atcoder_java")
K = 500
EPSILON = 1e-4
SENTENCE_GOAL = 20.0
SSET_GOAL = 10.0
TOKENIZE_GOAL = 0.9
SCALING_GOAL = 1.5  # speedup with 2 processes over 1 that we call "scales with cores"
EXACT_TOLERANCE = 1e-12
SECTIONS = ("sentence", "corpus", "sset", "tokenize", "disting")


# --------------------------------------------------------------------------------------------
# Plans


@dataclass
class Plan:
    """What one run measures."""

    name: str
    score_sets: list[str]
    n_pairs: int
    corpus_repeats: int
    corpus_ref_repeats: int
    sset_set: str
    tokenize: list[tuple[str, str, int]]  # (language, data set, bytes of code to tokenize)
    tokenize_passes: int
    disting: list[dict[str, Any]] = field(default_factory=list)


def make_plan(quick: bool) -> Plan:
    if quick:
        return Plan(
            name="quick",
            score_sets=["gcj_java"],
            n_pairs=200,
            corpus_repeats=3,
            corpus_ref_repeats=1,
            sset_set="gcj_java",
            tokenize=[("java", "gcj_java", 300_000), ("python", "clcdsa_atcoder_python", 150_000)],
            tokenize_passes=3,
            disting=[{"set": "gcj_java", "seed": 0, "protocol": "pairs", "aggregate": "mean"}],
        )
    disting: list[dict[str, Any]] = []
    for name in ALL_SETS:
        for seed in (0, 1, 2):
            disting.append({"set": name, "seed": seed, "protocol": "pairs", "aggregate": "mean"})
        # gcj_java classes have up to 478 programs: a classwise pair merges hundreds of reference
        # profiles (~190 CPU s at n = 1000), so that one row uses n = 200.
        disting.append(
            {
                "set": name,
                "seed": 0,
                "protocol": "classwise",
                "aggregate": "mean",
                "n": 200 if name == "gcj_java" else 1000,
            }
        )
        disting.append({"set": name, "seed": 0, "protocol": "pairs", "aggregate": "corpus"})
    return Plan(
        name="full",
        score_sets=list(ALL_SETS),
        n_pairs=1000,
        corpus_repeats=3,
        corpus_ref_repeats=2,
        sset_set="clcdsa_atcoder_java",
        tokenize=[
            ("java", "clcdsa_atcoder_java", 4_000_000),
            ("python", "clcdsa_atcoder_python", 2_000_000),
        ],
        tokenize_passes=2,
        disting=disting,
    )


# --------------------------------------------------------------------------------------------
# Small helpers


def dataset_path(data: str, name: str) -> str:
    return os.path.join(data, name, "items.jsonl.gz")


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def maxrss_mb(who: int = resource.RUSAGE_SELF) -> float:
    """Peak RSS in MB (Linux reports KiB)."""
    return resource.getrusage(who).ru_maxrss / 1024


def cpu_seconds(who: int = resource.RUSAGE_SELF) -> float:
    ru = resource.getrusage(who)
    return ru.ru_utime + ru.ru_stime


def digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, ensure_ascii=False).encode()).hexdigest()[:16]


def fmt_s(seconds: float | None) -> str:
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "-"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.1f} µs"


def fmt_x(ratio: float | None) -> str:
    if ratio is None or math.isnan(ratio):
        return "-"
    return f"{ratio:.1f}x" if ratio >= 10 else f"{ratio:.2f}x"


def fmt_mb(mb: float | None) -> str:
    return "-" if mb is None else f"{mb:.0f}"


def timed_calls(calls: Iterable[Callable[[], Any]]) -> dict[str, Any]:
    """Run thunks, timing each; total wall and CPU time of the whole loop."""
    values: list[Any] = []
    times: list[float] = []
    clock = time.perf_counter_ns
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for call in calls:
        t0 = clock()
        values.append(call())
        times.append((clock() - t0) / 1e9)
    return {
        "values": values,
        "times": times,
        "wall_s": time.perf_counter() - wall0,
        "cpu_s": time.process_time() - cpu0,
    }


def summarize(run: dict[str, Any]) -> dict[str, Any]:
    """Per-call statistics of a timed run (drops the raw per-call times)."""
    times = run.get("times") or []
    out = {k: v for k, v in run.items() if k not in ("times", "values")}
    out["calls"] = len(times)
    out["p50_s"] = percentile(times, 50)
    out["p95_s"] = percentile(times, 95)
    out["sum_s"] = sum(times)
    return out


# --------------------------------------------------------------------------------------------
# Token cache: every data set tokenized once (tokenize_many), outside the project tree.


def _source_fingerprint() -> str:
    import pygments

    import crystal_lsp

    h = hashlib.sha256()
    h.update(f"{crystal_lsp.__version__}|{pygments.__version__}|k={K}".encode())
    package = Path(crystal_lsp.__file__).resolve().parent
    # everything that tokenizes or counts: the text and metric layers (fastlex included)
    for path in sorted(package.glob("text/**/*.py")) + sorted(package.glob("metric/*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def cache_dir_for(cache_root: str, data: str, name: str) -> str:
    st = os.stat(dataset_path(data, name))
    key = hashlib.sha256(
        f"{os.path.abspath(dataset_path(data, name))}|{st.st_size}|{st.st_mtime_ns}|"
        f"{_source_fingerprint()}".encode()
    ).hexdigest()[:12]
    return os.path.join(cache_root, f"{name}-{key}")


def prepare_set(spec: dict[str, Any]) -> dict[str, Any]:
    """Tokenize a whole data set (all CPUs), build S from its train split, store both."""
    from crystal_lsp.metric.datasets import load_items
    from crystal_lsp.metric.sset import build_sset
    from crystal_lsp.text.lexers import canonical_name, lexer_label, resolve_lexer
    from crystal_lsp.text.parallel import tokenize_many

    target = spec["cache_dir"]
    if os.path.exists(os.path.join(target, "meta.json")):
        return {"cached": True}
    items = load_items(spec["dataset"])
    lexer = resolve_lexer(items[0].lang)
    language = canonical_name(lexer)
    t0 = time.perf_counter()
    streams = tokenize_many([(it.id, it.code, language) for it in items])
    tokenize_s = time.perf_counter() - t0
    tmp = f"{target}.tmp-{os.getpid()}"
    os.makedirs(tmp, exist_ok=True)
    offsets = [0]
    with open(os.path.join(tmp, "tokens.bin"), "wb") as fh:
        for tokens in streams:
            blob = pickle.dumps(tokens.texts, protocol=pickle.HIGHEST_PROTOCOL)
            fh.write(blob)
            offsets.append(offsets[-1] + len(blob))
    train = [s.texts for s, it in zip(streams, items) if it.split == "train"]
    sset = build_sset(train, K, language=language, tokenizer=lexer_label(lexer))
    sset.save(os.path.join(tmp, "sset.json.gz"))
    meta = {
        "set": spec["set"],
        "language": language,
        "classes": [it.cls for it in items],
        "splits": [it.split for it in items],
        "code_bytes": [len(it.code.encode()) for it in items],
        "tokens": [len(s) for s in streams],
        "offsets": offsets,
        "tokenize_s": tokenize_s,
    }
    with open(os.path.join(tmp, "meta.json"), "w") as fh:
        json.dump(meta, fh)
    os.replace(tmp, target)
    return {"cached": False, "tokenize_s": tokenize_s, "items": len(items)}


class TokenCache:
    """Read access to a prepared data set."""

    def __init__(self, cache_dir: str) -> None:
        self.dir = cache_dir
        with open(os.path.join(cache_dir, "meta.json")) as fh:
            self.meta = json.load(fh)
        self.classes: list[str] = self.meta["classes"]
        self.splits: list[str] = self.meta["splits"]

    def indices(self, split: str | None) -> list[int]:
        return [i for i, s in enumerate(self.splits) if split is None or s == split]

    def load(self, indices: Iterable[int]) -> dict[int, list[str]]:
        offsets = self.meta["offsets"]
        out: dict[int, list[str]] = {}
        with open(os.path.join(self.dir, "tokens.bin"), "rb") as fh:
            for i in sorted(set(indices)):
                fh.seek(offsets[i])
                out[i] = pickle.loads(fh.read(offsets[i + 1] - offsets[i]))
        return out

    def sset(self) -> Any:
        from crystal_lsp.metric.sset import TriviallySharedSet

        return TriviallySharedSet.load(os.path.join(self.dir, "sset.json.gz"))


# --------------------------------------------------------------------------------------------
# Measurements (each runs in its own subprocess: ``--measure NAME``)


def _pairs(cache: TokenCache, n: int, seed: int) -> tuple[list[tuple[int, tuple[int, ...]]], Any]:
    from crystal_lsp.metric.sampling import sample_pairs

    sets = sample_pairs(cache.classes, cache.indices("test"), n, seed)
    return sets.intra + sets.inter, sets


def _scoring_inputs(spec: dict[str, Any]) -> tuple[list[Any], list[Any], Any, dict[str, Any]]:
    """(hypotheses, reference lists, S or None, info) for the sampled test pairs of a set."""
    cache = TokenCache(spec["cache_dir"])
    pairs, _ = _pairs(cache, spec["n"], spec["seed"])
    used = [h for h, _ in pairs] + [r for _, refs in pairs for r in refs]
    tokens = cache.load(used)
    hyps = [tokens[h] for h, _ in pairs]
    refs = [[tokens[r] for r in rs] for _, rs in pairs]
    sset = cache.sset() if spec["metric"] == "crystalbleu" else None
    info = {
        "pairs": len(pairs),
        "sequence_slots": len(used),
        "distinct_sequences": len(set(used)),
        "mean_tokens": sum(len(tokens[i]) for i in used) / len(used),
        "distinct_tokens": sum(len(tokens[i]) for i in set(used)),
    }
    return hyps, refs, sset, info


def _reference_functions(metric: str) -> tuple[Any, Any, Any]:
    """(sentence_bleu, corpus_bleu, smoothing function) of the reference package."""
    if metric == "crystalbleu":
        import crystalbleu

        smooth = crystalbleu.SmoothingFunction(epsilon=EPSILON).method1
        return crystalbleu.sentence_bleu, crystalbleu.corpus_bleu, smooth
    from nltk.translate import bleu_score

    smooth = bleu_score.SmoothingFunction(epsilon=EPSILON).method1
    return bleu_score.sentence_bleu, bleu_score.corpus_bleu, smooth


def measure_sentence(spec: dict[str, Any]) -> dict[str, Any]:
    import crystal_lsp
    from crystal_lsp.metric import crystal
    from crystal_lsp.metric.smoothing import Smoothing

    hyps, refs, sset, info = _scoring_inputs(spec)
    info["cache_budget_tokens"] = crystal.PROFILE_CACHE_TOKENS
    impl, metric = spec["impl"], spec["metric"]
    kwargs: dict[str, Any] = {}
    if sset is not None:
        kwargs["ignoring"] = sset.counts  # the dict form both packages accept
    pairs = list(zip(refs, hyps))
    runs: dict[str, Any] = {}
    gc.collect()
    setup_rss = maxrss_mb()
    if impl == "ref":
        sentence, _, smooth = _reference_functions(metric)
        runs["ref"] = timed_calls(
            (lambda r=r, h=h: sentence(r, h, smoothing_function=smooth, **kwargs)) for r, h in pairs
        )
    elif impl in ("cold", "coldvocab", "warm"):
        smooth = crystal_lsp.SmoothingFunction(epsilon=EPSILON).method1
        score = crystal_lsp.sentence_bleu
        crystal.clear_caches()
        if impl in ("cold", "coldvocab"):
            # coldvocab also forgets the token vocabulary (and S encoded in it)
            fresh_vocabulary = impl == "coldvocab"

            def cold(r: Any, h: Any) -> float:
                crystal.clear_caches(vocabulary=fresh_vocabulary)
                return score(r, h, smoothing_function=smooth, **kwargs)  # type: ignore[return-value]

            runs[impl] = timed_calls((lambda r=r, h=h: cold(r, h)) for r, h in pairs)
        else:
            for label in ("warm", "hot"):
                runs[label] = timed_calls(
                    (lambda r=r, h=h: score(r, h, smoothing_function=smooth, **kwargs))
                    for r, h in pairs
                )
    elif impl == "metric":
        metric_obj = crystal_lsp.CrystalBLEU(sset, smoothing=Smoothing(1, epsilon=EPSILON))
        distinct: dict[int, Any] = {}
        for r, h in pairs:
            for seq in (h, *r):
                distinct.setdefault(id(seq), seq)
        built = timed_calls((lambda s=s: metric_obj.profile(s)) for s in distinct.values())
        profiles = dict(zip(distinct, built["values"]))
        runs["profiles"] = built
        runs["metric"] = timed_calls(
            (
                lambda r=r, h=h: metric_obj.score_profiles(
                    profiles[id(h)], [profiles[id(x)] for x in r]
                )
            )
            for r, h in pairs
        )
    else:
        raise SystemExit(f"unknown impl {impl}")
    out: dict[str, Any] = {"info": info, "rss_setup_mb": setup_rss, "runs": {}}
    for label, run in runs.items():
        summary = summarize(run)
        if label != "profiles":
            summary["scores"] = run["values"]
        out["runs"][label] = summary
    return out


def measure_corpus(spec: dict[str, Any]) -> dict[str, Any]:
    import crystal_lsp
    from crystal_lsp.metric import crystal

    hyps, refs, sset, info = _scoring_inputs(spec)
    info["cache_budget_tokens"] = crystal.PROFILE_CACHE_TOKENS
    impl, metric = spec["impl"], spec["metric"]
    kwargs: dict[str, Any] = {}
    if sset is not None:
        kwargs["ignoring"] = sset.counts
    gc.collect()
    setup_rss = maxrss_mb()
    runs: dict[str, Any] = {}
    if impl == "ref":
        _, corpus, smooth = _reference_functions(metric)
        runs["ref"] = timed_calls(
            (lambda: corpus(refs, hyps, smoothing_function=smooth, **kwargs))
            for _ in range(spec["repeats"])
        )
    else:
        smooth = crystal_lsp.SmoothingFunction(epsilon=EPSILON).method1

        def cold() -> Any:
            crystal.clear_caches()
            return crystal_lsp.corpus_bleu(refs, hyps, smoothing_function=smooth, **kwargs)

        runs["cold"] = timed_calls(cold for _ in range(spec["repeats"]))
        runs["warm"] = timed_calls(
            (lambda: crystal_lsp.corpus_bleu(refs, hyps, smoothing_function=smooth, **kwargs))
            for _ in range(spec["repeats"])
        )
    out: dict[str, Any] = {"info": info, "rss_setup_mb": setup_rss, "runs": {}}
    for label, run in runs.items():
        summary = summarize(run)
        summary["scores"] = run["values"]
        out["runs"][label] = summary
    return out


def measure_sset(spec: dict[str, Any]) -> dict[str, Any]:
    from collections import Counter

    from crystal_lsp.metric.sset import build_sset

    cache = TokenCache(spec["cache_dir"])
    split = None if spec["split"] == "all" else spec["split"]
    tokens = cache.load(cache.indices(split))
    docs = [tokens[i] for i in sorted(tokens)]
    del tokens
    gc.collect()
    setup_rss = maxrss_mb()
    phases: dict[str, float] = {}
    cpu0, t0 = time.process_time(), time.perf_counter()
    if spec["impl"] == "ref":
        from nltk.util import ngrams

        all_ngrams: list[Any] = []
        for doc in docs:
            for n in range(1, 5):
                all_ngrams.extend(ngrams(doc, n))
        phases["extend_s"] = time.perf_counter() - t0
        counts = Counter(all_ngrams)
        phases["counter_s"] = time.perf_counter() - t0 - phases["extend_s"]
        top = counts.most_common(K)
        n_grams, distinct = len(all_ngrams), len(counts)
    else:
        sset = build_sset(docs, K, tie_break=spec["impl"])
        top = list(sset.counts.items())
        n_grams, distinct = None, None
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    ordered = [[list(g), c] for g, c in top]
    return {
        "rss_setup_mb": setup_rss,
        "wall_s": wall,
        "cpu_s": cpu,
        "phases": phases,
        "documents": len(docs),
        "tokens": sum(map(len, docs)),
        "ngrams": n_grams,
        "distinct_ngrams": distinct,
        "top_digest": digest(ordered),
        "set_digest": digest(sorted(ordered)),
        "top": ordered,
    }


def measure_profile_memory(spec: dict[str, Any]) -> dict[str, Any]:
    """Bytes per token of the profiles of a set's test items, native and pure Python (with S)."""
    import tracemalloc

    from crystal_lsp.metric import crystal, ngrams

    cache = TokenCache(spec["cache_dir"])
    tokens = cache.load(cache.indices("test")[: spec["items"]])
    seqs = [tokens[i] for i in sorted(tokens)]
    ignore = cache.sset().as_frozenset()
    n_tokens = sum(map(len, seqs))
    out: dict[str, Any] = {
        "items": len(seqs),
        "tokens": n_tokens,
        "core": ngrams.native_status(),
        "cache_budget_tokens": crystal.PROFILE_CACHE_TOKENS,
        "set_profile_cost": crystal.SET_PROFILE_COST,
    }
    builders = [("pure", ngrams.build_set_profile)]
    if ngrams.native_available():
        builders.insert(0, ("native", ngrams.build_profile))
        ngrams.build_profile(seqs[0], 4, ignore)  # the vocabulary and S, encoded once
    for label, build in builders:
        gc.collect()
        tracemalloc.start()
        cpu0 = time.process_time()
        profiles = [build(s, 4, ignore) for s in seqs]
        cpu = time.process_time() - cpu0
        held, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out[label] = {
            "bytes_per_token": held / n_tokens,
            "build_ns_per_token_traced": cpu / n_tokens * 1e9,
        }
        del profiles
    return out


def _code_sample(path: str, max_bytes: int) -> list[tuple[str, str]]:
    """(id, code) of the data set's items in file order, up to ``max_bytes`` of UTF-8."""
    from crystal_lsp.metric.datasets import iter_items

    out: list[tuple[str, str]] = []
    total = 0
    for item in iter_items(path):
        out.append((item.id, item.code))
        total += len(item.code.encode())
        if total >= max_bytes:
            break
    return out


def measure_tokenize(spec: dict[str, Any]) -> dict[str, Any]:
    from crystal_lsp.text.lexers import resolve_lexer
    from crystal_lsp.text.parallel import tokenize_many
    from crystal_lsp.text.tokens import lex, tokenize

    files = _code_sample(spec["dataset"], spec["max_bytes"])
    language = spec["lang"]
    lexer = resolve_lexer(language)
    nbytes = sum(len(code.encode()) for _, code in files)
    # Warm up: Pygments compiles a lexer's regexes on first use.
    list(lexer.get_tokens_unprocessed(files[0][1]))
    tokenize(files[0][1], language)
    gc.collect()
    setup_rss = maxrss_mb()
    impl = spec["impl"]
    if impl == "raw":
        calls = [lambda c=c: list(lexer.get_tokens_unprocessed(c)) for _, c in files]
    elif impl == "lex":
        calls = [lambda c=c: lex(c, lexer) for _, c in files]
    elif impl == "tokenize":
        calls = [lambda c=c: tokenize(c, language) for _, c in files]
    elif impl == "many":
        jobs = [(name, code, language) for name, code in files]
        calls = [lambda: tokenize_many(jobs, processes=spec["processes"])]
    else:
        raise SystemExit(f"unknown impl {impl}")
    # Best of several passes (least CPU time): robust against other load on the machine.
    run: dict[str, Any] = {}
    child_cpu = math.inf
    for _ in range(spec.get("passes", 1)):
        child_cpu0 = cpu_seconds(resource.RUSAGE_CHILDREN)
        attempt = timed_calls(calls)
        attempt_child = cpu_seconds(resource.RUSAGE_CHILDREN) - child_cpu0
        if not run or attempt["cpu_s"] + attempt_child < run["cpu_s"] + child_cpu:
            run, child_cpu = attempt, attempt_child
    values = run["values"][0] if impl == "many" else run["values"]
    n_tokens = sum(map(len, values))
    if impl == "many":
        run["times"] = []
    summary = summarize(run)
    summary.update(
        {
            "rss_setup_mb": setup_rss,
            "files": len(files),
            "bytes": nbytes,
            "tokens": n_tokens,
            "children_cpu_s": child_cpu,
            "children_rss_mb": maxrss_mb(resource.RUSAGE_CHILDREN),
            "mb_per_s_wall": nbytes / 1e6 / run["wall_s"],
            "mb_per_s_cpu": nbytes / 1e6 / (run["cpu_s"] + child_cpu),
        }
    )
    return summary


MEASURES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "prepare": prepare_set,
    "sentence": measure_sentence,
    "corpus": measure_corpus,
    "sset": measure_sset,
    "tokenize": measure_tokenize,
    "profile_memory": measure_profile_memory,
}


def child_main(name: str, spec_json: str, result_path: str) -> int:
    spec = json.loads(spec_json)
    out = MEASURES[name](spec)
    out["rss_peak_self_mb"] = maxrss_mb()
    out["rss_peak_children_mb"] = maxrss_mb(resource.RUSAGE_CHILDREN)
    with open(result_path, "w") as fh:
        json.dump(out, fh)
    return 0


# --------------------------------------------------------------------------------------------
# Orchestration


CPU_USED = [0.0]  # CPU seconds of every measurement process (and its workers) so far


def run_process(cmd: list[str], timeout: float = 3600) -> dict[str, Any]:
    """Run a command; wall time, exit code, stdout/stderr and its own peak RSS (``wait4``).

    ``wait4`` reports the maximum RSS over the child and the descendants it waited for
    (e.g. a process pool), independently of any other child of this process.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        load0 = os.getloadavg()[0]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT)
        deadline = t0 + timeout
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, ru = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        CPU_USED[0] += ru.ru_utime + ru.ru_stime
        out.seek(0)
        err.seek(0)
        return {
            "returncode": proc.returncode,
            "wall_s": wall,
            "rss_peak_mb": ru.ru_maxrss / 1024,
            "cpu_s": ru.ru_utime + ru.ru_stime,
            "stdout": out.read().decode(errors="replace"),
            "stderr": err.read().decode(errors="replace"),
            "load_before": load0,
            "load_after": os.getloadavg()[0],
        }


def run_measure(name: str, spec: dict[str, Any], log: Callable[[str], None]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        result_path = os.path.join(tmp, "result.json")
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
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


def _strip_io(proc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in proc.items() if k not in ("stdout", "stderr")}


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


# --------------------------------------------------------------------------------------------
# Goals and report


def evaluate_goals(results: dict[str, Any]) -> list[dict[str, Any]]:
    goals: list[dict[str, Any]] = []

    def rows_of(kind: str, metric: str) -> list[tuple[str, dict[str, Any]]]:
        found = []
        for name, per_set in results.get("scoring", {}).items():
            section = per_set.get(metric, {}).get(kind)
            if section:
                found.extend((name, row) for row in section["rows"])
        return found

    for metric, ref_name in (("crystalbleu", "crystalbleu 0.2"), ("bleu", "NLTK 3.10.4")):
        label = "CrystalBLEU" if metric == "crystalbleu" else "BLEU"
        for kind in ("sentence", "corpus"):
            rows = [(n, r) for n, r in rows_of(kind, metric) if r.get("ratio")]
            if not rows:
                continue
            diffs = [r["max_abs_diff"] for _, r in rows if r.get("max_abs_diff") is not None]
            identical = bool(diffs) and max(diffs) <= EXACT_TOLERANCE
            paths = {}
            for impl in ("cold", "coldvocab", "warm", "hot", "metric", "metric+profiles"):
                ratios = [r["ratio"] for _, r in rows if r["impl"] == impl]
                cpu = [r.get("ratio_cpu") or 0.0 for _, r in rows if r["impl"] == impl]
                if ratios:
                    paths[impl] = (min(ratios), max(ratios), min(cpu), max(cpu))
            # The goal is about the drop-in functions: cold and realistic (warm) cache, judged on
            # CPU time (the machine is shared with other jobs; wall-clock ratios are shown too).
            headline = [paths[p][2] for p in ("cold", "warm") if p in paths]
            met = bool(headline) and min(headline) >= SENTENCE_GOAL and identical
            goals.append(
                {
                    "goal": f"{kind}-level {label} >= {SENTENCE_GOAL:.0f}x faster than {ref_name}, "
                    "identical scores (CPU time, cold and realistic cache)",
                    "met": met,
                    "identical": identical,
                    "max_abs_diff": max(diffs) if diffs else None,
                    "ratios": paths,
                }
            )
    sset = results.get("sset")
    if sset:
        ratios = [
            (split, r["impl"], r.get("ratio_cpu") or r["ratio"], r.get("identical_order"))
            for split, rows in sset["splits"].items()
            for r in rows
            if r.get("ratio")
        ]
        identical = all(ok for _, impl, _, ok in ratios if impl == "first-seen")
        best = min((x for _, _, x, _ in ratios), default=0.0)
        goals.append(
            {
                "goal": f"S-set build >= {SSET_GOAL:.0f}x faster than the reference approach "
                "(CPU time)",
                "met": bool(ratios) and best >= SSET_GOAL and identical,
                "identical": identical,
                "ratios": {f"{s}/{i}": x for s, i, x, _ in ratios},
            }
        )
    tok = results.get("tokenize")
    if tok:
        per_core = {}
        speedups = {}
        busy = []
        for language, entry in tok.items():
            for row in entry["rows"]:
                if row["impl"] in ("lex", "tokenize") and "vs_raw_cpu" in row:
                    per_core[f"{language}/{row['impl']}"] = row["vs_raw_cpu"]
                if row.get("speedup"):
                    speedups[language] = row["speedup"]
                    if row.get("load_before", 0) > (os.cpu_count() or 1) - 0.5:
                        busy.append(f"{language} (load {row['load_before']:.1f})")
        goals.append(
            {
                "goal": f"tokenization >= {TOKENIZE_GOAL}x raw Pygments per core",
                "met": bool(per_core) and min(per_core.values()) >= TOKENIZE_GOAL,
                "ratios": per_core,
            }
        )
        scaling: dict[str, Any] = {
            "goal": f"tokenization scales with cores (tokenize_many 2 processes >= "
            f"{SCALING_GOAL}x of 1)",
            "met": bool(speedups) and min(speedups.values()) >= SCALING_GOAL,
            "ratios": speedups,
        }
        if busy and not scaling["met"]:
            scaling["inconclusive"] = (
                "no idle core during the measurement: " + ", ".join(busy) + " on "
                f"{os.cpu_count()} CPUs"
            )
        goals.append(scaling)
    return goals


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


# --------------------------------------------------------------------------------------------
# Main


def _git_head() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip() + (
            "+dirty"
            if subprocess.run(
                ["git", "status", "--porcelain", "crystal_lsp"],
                cwd=ROOT,
                capture_output=True,
                text=True,
            ).stdout.strip()
            else ""
        )
    except OSError:
        return "?"


def _core_status() -> str:
    from crystal_lsp.metric.ngrams import native_status

    return native_status()


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    out = {}
    for dist, key in (
        ("pygments", "pygments"),
        ("nltk", "nltk"),
        ("crystalbleu", "crystalbleu"),
        ("crystal-lsp", "crystal_lsp"),
    ):
        try:
            out[key] = version(dist)
        except Exception:
            out[key] = "?"
    return out


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
