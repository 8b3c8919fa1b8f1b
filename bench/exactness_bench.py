#!/usr/bin/env python3
"""Exactness against the reference on every file and every pair of the shared labeled sets.

    .venv/bin/python bench/exactness_bench.py                    # 3 sets + the stdlib (~8 min)
    .venv/bin/python bench/exactness_bench.py --sets gcj_java --no-stdlib

1. **Tokens.** Every program of ``gcj_java``, ``clcdsa_atcoder_java`` and
   ``clcdsa_atcoder_python`` is lexed by the reference (``reference_eval.py``'s ``tokenize``:
   Pygments' ``get_tokens`` with default options, whitespace and comments dropped) and by
   ``crystal_lsp.text.tokens.lex``; so is every module of Python's standard library, as it is,
   with CRLF line ends and without its final line end. Files whose token texts differ are counted
   (the goal is none).
2. **S.** The reference's ``dict(count_ngrams(train).most_common(500))`` against
   ``build_sset(..., tie_break="first-seen")`` over the same train programs in the same order:
   equal members, counts and order.
3. **Scores.** Every pair the reference evaluation draws (seed 0: 1000 + 1000 test and 1000 +
   1000 train pairs) and a *chain* that puts every program of the set in a pair (each program
   against the next one in file order, the first as the reference): NLTK ``sentence_bleu`` and
   ``crystalbleu.sentence_bleu`` on the reference's tokens against ``crystal_lsp.sentence_bleu``
   (the drop-in API) and against the metric objects ``disting`` scores with (``bleu``,
   ``crystalbleu`` of the registry), on ours; and ``corpus_bleu`` of each pair group. Reported:
   the largest absolute difference and how many pairs differ at all (the goal is 0 and 0).

Writes ``bench/results/exactness_bench.{json,md}``. Data from ``--data`` or ``$CRYSTAL_BENCH_DATA``
(default ``/work/shared/data``), the reference script from ``--reference-tools`` or
``$CRYSTAL_REFERENCE_TOOLS`` (default ``/work/shared/tools``), both read in place; without
them: ``SKIPPED``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from reference import DEFAULT_TOOLS, GROUPS, ReferenceRun, load_reference, run_reference  # noqa: E402

SETS = ("gcj_java", "clcdsa_atcoder_java", "clcdsa_atcoder_python")
EPSILON = 1e-4
K = 500


def compare_tokens(ref: Any, run: ReferenceRun) -> dict[str, Any]:
    """Files of a set whose tokens differ (reference tokens are those of ``run``)."""
    from crystal_lsp.text.lexers import lexer_by_language
    from crystal_lsp.text.tokens import lex

    lexer = lexer_by_language(run.lang)
    started = time.process_time()
    ours = {it["id"]: lex(it["code"], lexer) for it in run.items}
    cpu = time.process_time() - started
    differ = [i for i, toks in ours.items() if toks.texts != run.tokens[i]]
    return {
        "files": len(ours),
        "tokens": sum(len(t) for t in ours.values()),
        "differ": len(differ),
        "first_differing": differ[:5],
        "cpu_s_ours": cpu,
        "_tokens": ours,
    }


def stdlib_tokens(ref: Any) -> dict[str, Any]:
    """The standard library lexed both ways: as it is, with CRLF, without its final line end."""
    from pygments.lexers import PythonLexer

    from crystal_lsp.text.lexers import lexer_by_language
    from crystal_lsp.text.tokens import lex

    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts)
    theirs, ours = PythonLexer(), lexer_by_language("python")
    out: dict[str, Any] = {"root": str(root), "files": 0, "bytes": 0}
    for variant in ("as is", "crlf", "no final line end"):
        out[variant] = {"differ": 0, "first_differing": []}
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out["files"] += 1
        out["bytes"] += len(text)
        for variant, source in (
            ("as is", text),
            ("crlf", text.replace("\n", "\r\n")),
            ("no final line end", text.rstrip("\n")),
        ):
            if ref.tokenize(source, theirs) != lex(source, ours).texts:
                out[variant]["differ"] += 1
                if len(out[variant]["first_differing"]) < 5:
                    out[variant]["first_differing"].append(str(path.relative_to(root)))
    return out


def chain(run: ReferenceRun) -> list[tuple[str, str]]:
    """Every program with tokens against the next one, in file order."""
    ids = [it["id"] for it in run.items if run.tokens[it["id"]]]
    return list(itertools.pairwise(ids))


class Ours:
    """Our two scoring paths on our tokens: the drop-in functions and disting's metric objects."""

    def __init__(self, run: ReferenceRun, lexed: dict[str, Any]) -> None:
        import crystal_lsp
        from crystal_lsp.metric.registry import MetricConfig, PreparedItem, make_metric
        from crystal_lsp.metric.smoothing import Smoothing
        from crystal_lsp.metric.sset import build_sset
        from crystal_lsp.text.lexers import canonical_name, lexer_by_language

        tokens = {ident: t.texts for ident, t in lexed.items()}
        self.tokens = tokens
        self.sset = build_sset((tokens[i] for i in run.train_ids), K, 4, tie_break="first-seen")
        self.smooth = crystal_lsp.SmoothingFunction(epsilon=EPSILON).method1
        self.api = crystal_lsp
        ids = [it["id"] for it in run.items]
        self.where = {ident: k for k, ident in enumerate(ids)}
        language = canonical_name(lexer_by_language(run.lang))
        config = MetricConfig(
            sset=self.sset, smoothing=Smoothing(1, epsilon=EPSILON), language=language
        )
        # what disting scores with (cli/disting.py: make_metric, prepare, score)
        prepared = [PreparedItem(it["code"], lexed[it["id"]]) for it in run.items]
        self.metrics = {name: make_metric(name, config) for name in ("bleu", "crystalbleu")}
        for metric in self.metrics.values():
            metric.prepare(prepared)

    def ignoring(self, metric: str) -> Any:
        return self.sset.counts if metric == "crystalbleu" else None

    def sentence(self, metric: str, pairs: list[tuple[str, str]]) -> list[float]:
        t, ign = self.tokens, self.ignoring(metric)
        score = self.api.sentence_bleu
        return [score([t[a]], t[b], smoothing_function=self.smooth, ignoring=ign) for a, b in pairs]

    def metric(self, metric: str, pairs: list[tuple[str, str]]) -> list[float]:
        m, where = self.metrics[metric], self.where
        return [m.score(where[b], (where[a],)) for a, b in pairs]

    def corpus(self, metric: str, pairs: list[tuple[str, str]]) -> tuple[float, float]:
        t, ign = self.tokens, self.ignoring(metric)
        drop_in = self.api.corpus_bleu(
            [[t[a]] for a, _ in pairs],
            [t[b] for _, b in pairs],
            smoothing_function=self.smooth,
            ignoring=ign,
        )
        where = self.where
        objects = self.metrics[metric].corpus([(where[b], (where[a],)) for a, b in pairs])
        return float(drop_in), float(objects)  # type: ignore[arg-type]


def _diff(a: list[float], b: list[float]) -> dict[str, Any]:
    assert len(a) == len(b)
    diffs = [abs(x - y) for x, y in zip(a, b)]
    return {"max_abs_diff": max(diffs, default=0.0), "pairs_differing": sum(d != 0 for d in diffs)}


def compare_scores(ref: Any, run: ReferenceRun, ours: Ours) -> dict[str, Any]:
    """Sentence and corpus scores of every pair group, reference against both of our paths."""
    groups = {g: run.pairs[g] for g in GROUPS}
    groups["chain"] = chain(run)
    out: dict[str, Any] = {"pairs": {g: len(p) for g, p in groups.items()}}
    cpu = {"reference": 0.0, "ours": 0.0}
    for metric in ("bleu", "crystalbleu"):
        rows: dict[str, Any] = {}
        for group, pairs in groups.items():
            started = time.process_time()
            if group in run.scores.get(metric, {}):
                theirs = run.scores[metric][group]
            else:
                b, c, _, _ = ref.sent_scores(pairs, run.tokens, run.ignoring)
                theirs = b if metric == "bleu" else c
            cb, cc, _, _ = ref.corpus_scores(pairs, run.tokens, run.ignoring)
            middle = time.process_time()
            got_api, got_metric = ours.sentence(metric, pairs), ours.metric(metric, pairs)
            corpus_api, corpus_metric = ours.corpus(metric, pairs)
            cpu["ours"] += time.process_time() - middle
            cpu["reference"] += middle - started
            reference_corpus = cb if metric == "bleu" else cc
            rows[group] = {
                "sentence_api": _diff(theirs, got_api),
                "sentence_metric": _diff(theirs, got_metric),
                "corpus_api_diff": abs(reference_corpus - corpus_api),
                "corpus_metric_diff": abs(reference_corpus - corpus_metric),
                "corpus": reference_corpus,
            }
        out[metric] = rows
    out["cpu_s"] = cpu
    return out


def run_set(ref: Any, name: str) -> dict[str, Any]:
    started = time.perf_counter()
    t0 = time.process_time()
    run = run_reference(ref, name, score=True)
    reference_cpu = time.process_time() - t0
    tokens = compare_tokens(ref, run)
    ours = Ours(run, tokens.pop("_tokens"))
    same_s = list(ours.sset.counts.items()) == list(run.ignoring.items())
    result = {
        "set": name,
        "tokens": tokens,
        "sset_equal_with_order": same_s,
        "sset_size": len(run.ignoring),
        "scores": compare_scores(ref, run, ours),
        "reference_tokenize_and_eval_cpu_s": reference_cpu,
        "wall_s": time.perf_counter() - started,
    }
    return result


def render(doc: dict[str, Any]) -> str:
    lines = [
        "# Exactness against the reference on the shared labeled sets",
        "",
        f"{doc['when']}; Pygments {doc['pygments']}, NLTK {doc['nltk']}, crystalbleu "
        f"{doc['crystalbleu']}; load average {doc['load'][0]:.1f} -> {doc['load_after'][0]:.1f}.",
        "",
        "## Tokens (reference `tokenize` vs `tokens.lex`)",
        "",
        "| files | tokens | files differing |",
        "|---|---|---|",
    ]
    for r in doc["sets"]:
        t = r["tokens"]
        lines.append(f"| {r['set']} ({t['files']:,}) | {t['tokens']:,} | {t['differ']} |")
    std = doc.get("stdlib")
    if std:
        for variant in ("as is", "crlf", "no final line end"):
            lines.append(
                f"| stdlib {variant} ({std['files']:,}) | {std['bytes']:,} chars | "
                f"{std[variant]['differ']} |"
            )
    lines += ["", "## S (k = 500, train split)", ""]
    for r in doc["sets"]:
        lines.append(
            f"- {r['set']}: {r['sset_size']} n-grams, equal with counts and order: "
            f"{'yes' if r['sset_equal_with_order'] else 'NO'}"
        )
    lines += [
        "",
        "## Scores: largest |reference - ours| (pairs differing)",
        "",
        "*api* = `crystal_lsp.sentence_bleu`/`corpus_bleu`; *metric* = the registry's metric "
        "objects `disting` scores with. Reference: NLTK for BLEU, crystalbleu for CrystalBLEU.",
        "",
        "| set | metric | group | pairs | sentence api | sentence metric | corpus api | "
        "corpus metric |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["sets"]:
        s = r["scores"]
        for metric in ("bleu", "crystalbleu"):
            for group, row in s[metric].items():
                a, m = row["sentence_api"], row["sentence_metric"]
                lines.append(
                    f"| {r['set']} | {metric} | {group} | {s['pairs'][group]:,} | "
                    f"{a['max_abs_diff']:.3g} ({a['pairs_differing']}) | "
                    f"{m['max_abs_diff']:.3g} ({m['pairs_differing']}) | "
                    f"{row['corpus_api_diff']:.3g} | {row['corpus_metric_diff']:.3g} |"
                )
    verdict = "met" if doc["exact"] else "MISSED"
    lines += ["", f"Goal (every file's tokens and every score equal, difference 0): **{verdict}**."]
    return "\n".join(lines) + "\n"


def is_exact(doc: dict[str, Any]) -> bool:
    ok = all(r["tokens"]["differ"] == 0 and r["sset_equal_with_order"] for r in doc["sets"])
    std = doc.get("stdlib")
    if std:
        ok = ok and all(std[v]["differ"] == 0 for v in ("as is", "crlf", "no final line end"))
    for r in doc["sets"]:
        for metric in ("bleu", "crystalbleu"):
            for row in r["scores"][metric].values():
                ok = ok and row["sentence_api"]["pairs_differing"] == 0
                ok = ok and row["sentence_metric"]["pairs_differing"] == 0
                ok = ok and row["corpus_api_diff"] == 0 and row["corpus_metric_diff"] == 0
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.environ.get("CRYSTAL_BENCH_DATA", "/work/shared/data"))
    parser.add_argument("--reference-tools", default=DEFAULT_TOOLS)
    parser.add_argument("--sets", nargs="*", default=list(SETS))
    parser.add_argument("--no-stdlib", action="store_true")
    parser.add_argument("--out", default=str(HERE / "results" / "exactness_bench"))
    args = parser.parse_args()
    data = Path(args.data)
    sets = [s for s in args.sets if (data / s / "items.jsonl.gz").exists()]
    ref = load_reference(args.reference_tools, data)
    if not sets or ref is None:
        print(f"SKIPPED: no labeled sets under {data} or no reference_eval.py")
        return 0
    import crystalbleu  # noqa: F401
    import nltk
    import pygments

    doc: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "pygments": pygments.__version__,
        "nltk": nltk.__version__,
        "crystalbleu": "0.2",
        "load": os.getloadavg(),
        "sets": [],
    }
    for name in sets:
        doc["sets"].append(run_set(ref, name))
        print(f"{name}: {doc['sets'][-1]['wall_s']:.0f} s", file=sys.stderr)
    if not args.no_stdlib:
        doc["stdlib"] = stdlib_tokens(ref)
    doc["load_after"] = os.getloadavg()
    doc["exact"] = is_exact(doc)
    Path(args.out + ".json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    report = render(doc)
    Path(args.out + ".md").write_text(report, encoding="utf-8")
    print(report)
    return 0 if doc["exact"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
