"""One measurement each, run in its own process (``metric_bench.py --measure NAME``)."""

from __future__ import annotations

import gc
import json
import math
import resource
import time
from collections.abc import Callable
from typing import Any

from benchlib.timing import cpu_seconds, digest, maxrss_mb, summarize, timed_calls

from metricbench.inputs import (
    TokenCache,
    _code_sample,
    _reference_functions,
    _scoring_inputs,
    prepare_set,
)
from metricbench.plan import EPSILON, K


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
