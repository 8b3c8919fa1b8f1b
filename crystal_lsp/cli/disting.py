"""``crystal-lsp disting``: distinguishability, ROC AUC and threshold classification of metrics.

By default it is the reference evaluation of the shared labeled datasets (``reference_eval.py``,
NLTK and ``crystalbleu``): the same pairs drawn with the same seed (items without tokens left out
first), each scored with its first program as the reference, S the ``k`` most frequent n-grams
of the train split as ``Counter.most_common`` ranks them. Every other protocol is an option, and
the output's protocol line names the one used (ending in ``|reference`` for the reference's).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from typing import Any

from pygments.lexer import Lexer

from crystal_lsp.cli.common import (
    MAX_ITEM_BYTES,
    add_engine_options,
    add_format,
    add_progress,
    check_item_sizes,
    emit_json,
    item_bytes,
    progress_bar,
    progress_enabled,
    setting_int,
    warn,
    warn_hash_seed,
)
from crystal_lsp.cli.disting_inputs import Dataset, Drawn, draw, read_dataset
from crystal_lsp.distributed.disting import EngineSteps, Steps, disting_steps
from crystal_lsp.errors import JOBS, CrystalError, int_in
from crystal_lsp.metric.datasets import SPLIT_SEED
from crystal_lsp.metric.disting import AGGREGATES, MetricReport
from crystal_lsp.metric.pairdata import layout_of
from crystal_lsp.metric.paper import PAPER_PROTOCOLS
from crystal_lsp.metric.registry import (
    NEEDS_SSET,
    MetricConfig,
    PreparedItem,
    parse_metric_list,
)
from crystal_lsp.metric.sampling import FIRSTS, PROTOCOLS, SAMPLINGS, PairSets
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import DEFAULT_TIE_BREAK, TIE_BREAKS, TriviallySharedSet
from crystal_lsp.text.lexers import canonical_name, lexer_label, resolve_lexer
from crystal_lsp.text.sources import DEFAULT_MAX_BYTES
from crystal_lsp.text.tokens import Tokens

REFERENCE_PROTOCOL = {
    "protocol": "pairs",
    "pair_sampling": "class",
    "first_is": "reference",
    "tie_break": "first-seen",
    "aggregate": "mean",
    "exact": False,
}
"""The options under which ``disting`` is the reference evaluation of the shared datasets."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "disting",
        help="distinguishability, ROC AUC and threshold accuracy of metrics on labeled code",
        description="Evaluate similarity metrics on a class-labeled JSONL dataset "
        '({"id","class","lang","code"[,"split"]} per line): distinguishability (mean intra-class / '
        "mean inter-class score), ROC AUC, and the paper's mean-midpoint threshold classifier "
        "(threshold from train-split pairs, quality on test-split pairs). S is built from the "
        "train split unless --sset is given. By default the pairs, their direction and S are "
        "those of the reference evaluation scripts (reference_eval.py of the shared datasets); "
        "other protocols are options, named in the protocol line of the output.",
        epilog="example:\n  crystal-lsp disting data/gcj_java/items.jsonl.gz --metric bleu,crystalbleu -k 500 --n 1000 --seed 0",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "dataset",
        metavar="DATASET",
        help="class-labeled JSONL dataset (optionally .gz), or a pair-labeled folder "
        "(code.jsonl + pairs.jsonl, or CodeXGLUE BigCloneBench data.jsonl + train/valid/test.txt)",
    )
    p.add_argument(
        "--metric",
        default="bleu,crystalbleu",
        help="comma-separated metrics (default: bleu,crystalbleu)",
    )
    p.add_argument(
        "-k", "--k", type=setting_int("k"), default=500, dest="k", help="size of S (default: 500)"
    )
    p.add_argument(
        "--n",
        type=int_in(1, 10_000_000),
        default=1000,
        help="sampled intra- and inter-class pairs each (default: 1000)",
    )
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default: 0)")
    _add_sampling(p)
    p.add_argument(
        "--sset", metavar="FILE", help="use this S instead of building one from the train split"
    )
    p.add_argument("--lang", help="language of the items (default: their 'lang' field)")
    p.add_argument(
        "--smoothing", default="m1:eps=0.0001", help="NLTK smoothing (default: m1:eps=0.0001)"
    )
    p.add_argument(
        "--max-n", type=setting_int("max_n"), default=4, help="highest n-gram order (default: 4)"
    )
    p.add_argument("--keep-comments", action="store_true", help="keep comment tokens")
    p.add_argument(
        "--jobs", type=JOBS, default=None, help="tokenizer processes (default: the idle CPUs)"
    )
    add_engine_options(p, "tokenizing, S counting and pair scoring")
    add_format(p)
    add_progress(p)
    p.set_defaults(run=run)


def _add_sampling(p: argparse.ArgumentParser) -> None:
    """Which pairs are scored (all, or drawn by a protocol), in which direction, and S's ties."""
    p.add_argument("--exact", action="store_true", help="score every pair instead of sampling")
    p.add_argument(
        "--aggregate",
        choices=AGGREGATES,
        default=None,
        help="mean of sentence scores (default), or the metric over the whole pair set (corpus "
        "BLEU; the default of the paper protocols)",
    )
    p.add_argument(
        "--pair-sampling",
        choices=SAMPLINGS,
        default="class",
        help="class (default, the reference protocol): classes chosen uniformly, then programs; "
        "uniform: uniformly over all pairs (large classes dominate); both draw as the reference "
        "scripts draw",
    )
    p.add_argument(
        "--protocol",
        choices=PROTOCOLS + PAPER_PROTOCOLS,
        default="pairs",
        help="pairs: one reference per pair; classwise: the paper's Definition 3.1; paper: the "
        "authors' Table-2 script (small_v1.py: hypotheses against 20 references of their class "
        "or of another, corpus scores, S from a random 30 %% of all programs; its random seeded "
        "by --seed); paper-multiref: the reference evaluation's version of it (d_multiref)",
    )
    p.add_argument(
        "--first-is",
        choices=FIRSTS,
        default="reference",
        help="the first program of a drawn pair is the reference (default: the reference "
        "scripts score sentence_bleu([a], b)) or the hypothesis",
    )
    p.add_argument(
        "--tie-break",
        choices=TIE_BREAKS,
        default=DEFAULT_TIE_BREAK,
        help="S's ties at the k cut: first-seen (default) is Counter.most_common over the train "
        "split in the reference's order; canonical: count, order, then tokens (with --sset, the "
        "given S's own tie-break applies and is named in the protocol line)",
    )
    p.add_argument(
        "--max-bytes",
        type=item_bytes,
        default=DEFAULT_MAX_BYTES,
        help="a larger item is an error, as in score (default: "
        f"{DEFAULT_MAX_BYTES:,}; at most {MAX_ITEM_BYTES:,}, 0 for that)",
    )
    p.add_argument(
        "--pairs-out",
        metavar="FILE",
        help="also write every scored pair (split, label, ids, each metric's score) as JSONL",
    )


def run(args: argparse.Namespace) -> int:
    # where tokenizing, S counting and pair scoring run (crystal_lsp.distributed)
    with disting_steps(args.engine, args.scheduler, args.jobs) as steps:
        return _run(args, steps)


def _run(args: argparse.Namespace, steps: Steps | EngineSteps) -> int:
    if args.aggregate is None:
        args.aggregate = "corpus" if args.protocol in PAPER_PROTOCOLS else "mean"
    metrics = parse_metric_list(args.metric)
    warn_hash_seed(metrics)
    smoothing = Smoothing.parse(args.smoothing)
    data = read_dataset(args.dataset, layout_of(args.dataset) is not None)
    if args.protocol in PAPER_PROTOCOLS:
        data.assigned_split = ""  # the paper protocols use no split
    check_item_sizes(args.dataset, data.ids, data.codes, args.max_bytes)
    lexer = _lexer(args, data.langs)
    language = canonical_name(lexer)
    with progress_bar(len(data.codes), "tokenizing", progress_enabled(args)) as update:
        tokens = steps.tokenize_many(
            [(ident, code, language) for ident, code in zip(data.ids, data.codes)],
            processes=args.jobs,
            keep_comments=args.keep_comments,
            progress=update,
        )
    usable = [len(t) > 0 for t in tokens]
    if not any(usable):
        raise CrystalError(f"{args.dataset}: no item has {language} tokens: nothing to score")
    if data.assigned_split:
        warn(
            f"{args.dataset}: no item has a 'split' field: using a seeded, per-class stratified "
            f"30 % train / 70 % test split (seed {SPLIT_SEED}); the protocol line names it"
        )
    left_out = dict(data.left_out)
    if not all(usable) and args.protocol != "paper":  # the authors' script keeps them
        left_out["items without tokens (left out before drawing pairs)"] = usable.count(False)
    drawn = draw(data, usable, args)
    if drawn.train is None and args.protocol not in PAPER_PROTOCOLS:
        warn(
            "the train split lacks pairs of both labels: no threshold classifier"
            if data.pairs is not None
            else "the train split has no intra- or no inter-class pair: no threshold classifier"
        )
    left_out.update(drawn.short)
    sset = (
        _sset(args, steps, tokens, drawn.train_docs, language, lexer)
        if any(m in NEEDS_SSET for m in metrics)
        else None
    )
    prepared = [PreparedItem(code, t) for code, t in zip(data.codes, tokens)]
    config = MetricConfig(sset=sset, smoothing=smoothing, max_n=args.max_n, language=language)
    reports = [
        _evaluate(args, steps, name, config, prepared, drawn.test, drawn.train) for name in metrics
    ]
    if args.pairs_out:
        write_pairs(args.pairs_out, data.ids, drawn, reports)
    _print(Outcome(args, reports, language, data, drawn, left_out, sset))
    return 0


def protocol_signature(
    args: argparse.Namespace,
    pair_labeled: bool,
    sset: TriviallySharedSet | None = None,
    split: str = "",
) -> str:
    """Every option that changes which pairs are scored and how, as one line.

    A given S (``--sset``) is named by its fingerprint and tie-break; the run is the reference
    protocol only when S is the train split's, built here with the reference's ties.
    """
    if pair_labeled:
        pairs = "pairs:given" if args.exact else "pairs:given-drawn"
    elif args.protocol in PAPER_PROTOCOLS:
        pairs = f"{args.protocol}:{'small_v1' if args.protocol == 'paper' else 'reference_eval'}"
    elif args.exact:
        pairs = f"{args.protocol}:all"
    else:
        pairs = f"{args.protocol}:{args.pair_sampling if args.protocol == 'pairs' else 'drawn'}"
    parts = [pairs, f"first:{args.first_is}", f"agg:{args.aggregate}"]
    if split:
        parts.append(f"split:{split}")
    if args.sset:
        given = f":{sset.fingerprint()}|ties:{sset.tie_break}" if sset is not None else ""
        parts.append(f"S:given{given}")
    else:
        parts.append(f"ties:{args.tie_break}")
    if not args.exact:
        parts += [f"n:{args.n}", f"seed:{args.seed}"]
    reference = (
        not args.sset
        and not split
        and all(getattr(args, k) == v for k, v in REFERENCE_PROTOCOL.items())
    )
    return "disting|" + "|".join(parts) + ("|reference" if reference else "")


def _lexer(args: argparse.Namespace, item_langs: list[str]) -> Lexer:
    """The lexer of ``--lang``, else of the one language all items are written in."""
    langs = {lang for lang in item_langs if lang}
    language = args.lang or (langs.pop() if len(langs) == 1 else None)
    if language is None:
        raise CrystalError("the dataset mixes languages or has none; choose one with --lang")
    return resolve_lexer(language)


def _sset(
    args: argparse.Namespace,
    steps: Steps | EngineSteps,
    tokens: list[Tokens],
    train_docs: list[int],
    language: str,
    lexer: Lexer,
) -> TriviallySharedSet:
    """S from ``--sset``, else built from the train split (in the reference's order)."""
    if args.sset:
        return TriviallySharedSet.load(args.sset)
    if not train_docs:
        raise CrystalError("the dataset has no train split to build S from; pass --sset")
    return steps.build_sset(
        (tokens[i].texts for i in train_docs),
        args.k,
        args.max_n,
        language=language,
        tokenizer=lexer_label(lexer),
        tie_break=args.tie_break,
    )


def _evaluate(
    args: argparse.Namespace,
    steps: Steps | EngineSteps,
    name: str,
    config: MetricConfig,
    prepared: list[PreparedItem],
    test: PairSets,
    train: PairSets | None,
) -> MetricReport:
    """One metric's report on the test pairs (and its threshold from the train pairs)."""
    metric = steps.make_metric(name, config)
    metric.prepare(prepared)
    total = (
        len(test.intra) + len(test.inter) + (len(train.intra) + len(train.inter) if train else 0)
    )
    with progress_bar(total, name, progress_enabled(args)) as update:
        return steps.evaluate_metric(metric, test, train, args.aggregate, update)


def write_pairs(path: str, ids: list[str], drawn: Drawn, reports: list[MetricReport]) -> None:
    """Every scored pair as a JSONL line: split, label (1 intra, 0 inter), ids, scores."""
    groups = [("test", 1, drawn.test.intra), ("test", 0, drawn.test.inter)]
    if drawn.train is not None:
        groups += [("train", 1, drawn.train.intra), ("train", 0, drawn.train.inter)]
    try:
        with open(path, "w", encoding="utf-8") as fh:
            for split, label, pairs in groups:
                key = f"{split}_{'intra' if label else 'inter'}"
                columns = [r.pair_scores.get(key, []) for r in reports]
                for k, (hyp, refs) in enumerate(pairs):
                    row: dict[str, Any] = {"split": split, "label": label, "hypothesis": ids[hyp]}
                    row["references"] = [ids[r] for r in refs]
                    row.update({r.metric: col[k] for r, col in zip(reports, columns) if col})
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise CrystalError(f"--pairs-out {path}: cannot write ({exc.strerror})") from None


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.3f}" if abs(x) < 1000 else f"{x:.4g}"


@dataclass
class Outcome:
    """One run: its options, dataset, pairs, S and reports, with what was left out."""

    args: argparse.Namespace
    reports: list[MetricReport]
    language: str
    data: Dataset
    drawn: Drawn
    left_out: dict[str, int]
    sset: TriviallySharedSet | None


def _summary(run: Outcome) -> dict[str, Any]:
    """The JSON document of a run."""
    args, data, drawn, sset = run.args, run.data, run.drawn, run.sset
    return {
        "dataset": args.dataset,
        "language": run.language,
        "items": len(data.codes),
        "train_items": len(drawn.train_docs),
        "test_items": drawn.test_items,
        "description": data.description,
        "left_out": run.left_out,
        "protocol_signature": protocol_signature(
            args, data.pairs is not None, sset, data.assigned_split
        ),
        "protocol": args.protocol,
        "pair_sampling": args.pair_sampling,
        "first_is": args.first_is,
        "tie_break": sset.tie_break if sset is not None else args.tie_break,
        "aggregate": args.aggregate,
        "exact": args.exact,
        "n": None if args.exact else args.n,
        "seed": args.seed,
        "k": args.k if sset is not None else None,
        "sset_fingerprint": sset.fingerprint() if sset is not None else None,
        "metrics": [r.to_json() for r in run.reports],
    }


def _print(run: Outcome) -> None:
    args, reports, data, left_out = run.args, run.reports, run.data, run.left_out
    if args.format == "json":
        emit_json(_summary(run))
        return
    test = run.drawn.test
    mode = f"{len(test.intra):,} intra + {len(test.inter):,} inter test pairs" + (
        "" if args.exact else f" (--n {args.n:,}), seed {args.seed}"
    )
    if run.drawn.references:
        mode = (
            f"{len(test.intra):,} intra + {len(test.inter):,} inter hypotheses with "
            f"{run.drawn.references} references each, seed {args.seed}"
        )
    print(f"{args.dataset}: {data.description}, {run.language}, {mode}, {args.aggregate} aggregate")
    print(
        f"  protocol: {protocol_signature(args, data.pairs is not None, run.sset, data.assigned_split)}"
    )
    if left_out:
        print("  left out: " + ", ".join(f"{n:,} {why}" for why, n in left_out.items()))
    if any(r.distinguishability is None for r in reports):
        warn("an inter-class value is 0: its distinguishability is undefined (shown as -)")
    header = f"{'metric':<16}{'intra':>8}{'inter':>9}{'disting':>9}{'AUC':>7}{'thresh':>8}{'acc':>7}{'prec':>7}{'rec':>7}{'F1':>7}{'sec':>7}{'cpu':>7}"
    print(header)
    for r in reports:
        c = r.classifier
        cls = (
            f"{c.threshold:>8.4f}{c.accuracy:>7.3f}{c.precision:>7.3f}{c.recall:>7.3f}{c.f1:>7.3f}"
            if c
            else f"{'-':>8}{'-':>7}{'-':>7}{'-':>7}{'-':>7}"
        )
        print(
            f"{r.metric:<16}{r.intra_mean:>8.4f}{r.inter_mean:>9.5f}{_fmt(r.distinguishability):>9}"
            f"{r.auc:>7.3f}{cls}{r.seconds:>7.1f}{r.cpu_seconds:>7.1f}"
        )
    for r in reports:
        print(f"  {r.signature}")
        levels = r.extra.get("levels")
        if levels:
            shares = ", ".join(f"{k} {v:.1%}" for k, v in levels.items())
            print(f"    levels scored: {shares} of {r.extra['level_pairs']:,} pairs")
