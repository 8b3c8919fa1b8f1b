"""``crystal-lsp disting``: distinguishability, ROC AUC and threshold classification of metrics."""

from __future__ import annotations

import argparse
import math
from typing import Any

from pygments.lexer import Lexer

from crystal_lsp.cli.common import (
    JOBS,
    add_engine_options,
    add_format,
    add_progress,
    emit_json,
    int_in,
    progress_bar,
    progress_enabled,
    setting_int,
    warn,
)
from crystal_lsp.cli.disting_pairs import Inputs, pair_inputs
from crystal_lsp.distributed.disting import EngineSteps, Steps, disting_steps
from crystal_lsp.errors import CrystalError
from crystal_lsp.metric.datasets import load_items
from crystal_lsp.metric.disting import (
    AGGREGATES,
    EXACT_PAIR_LIMIT,
    PROTOCOLS,
    SAMPLINGS,
    MetricReport,
    PairSets,
    count_exact_pairs,
    exact_pairs,
    sample_pairs,
)
from crystal_lsp.metric.pairdata import layout_of
from crystal_lsp.metric.registry import (
    NEEDS_SSET,
    MetricConfig,
    PreparedItem,
    parse_metric_list,
)
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.sset import TriviallySharedSet
from crystal_lsp.text.lexers import canonical_name, lexer_label, resolve_lexer
from crystal_lsp.text.tokens import Tokens


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "disting",
        help="distinguishability, ROC AUC and threshold accuracy of metrics on labeled code",
        description="Evaluate similarity metrics on a class-labeled JSONL dataset "
        '({"id","class","lang","code"[,"split"]} per line): distinguishability (mean intra-class / '
        "mean inter-class score), ROC AUC, and the paper's mean-midpoint threshold classifier "
        "(threshold from train-split pairs, quality on test-split pairs). S is built from the "
        "train split unless --sset is given.",
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
        "--aggregate",
        choices=AGGREGATES,
        default="mean",
        help="mean of sentence scores, or the metric over the whole pair set (corpus BLEU)",
    )
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
        "--jobs", type=JOBS, default=None, help="tokenizer processes (default: all CPUs)"
    )
    add_engine_options(p, "tokenizing, S counting and pair scoring")
    add_format(p)
    add_progress(p)
    p.set_defaults(run=run)


def _add_sampling(p: argparse.ArgumentParser) -> None:
    """Which pairs are scored: all, or sampled by a protocol."""
    p.add_argument("--exact", action="store_true", help="score every pair instead of sampling")
    p.add_argument(
        "--pair-sampling",
        choices=SAMPLINGS,
        default="class",
        help="class (default, the reference protocol): classes chosen uniformly, then programs; "
        "uniform: uniformly over all pairs (large classes dominate)",
    )
    p.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="pairs",
        help="pairs: one reference per pair; classwise: the paper's Definition 3.1",
    )


def _pairs(classes: list[str], indices: list[int], args: argparse.Namespace, seed: int) -> PairSets:
    if args.exact:
        intra, inter = count_exact_pairs(classes, indices)
        total = intra + inter if args.protocol == "pairs" else len(indices) * 2
        if total > EXACT_PAIR_LIMIT:
            raise CrystalError(
                f"--exact would score {total:,} pairs (limit {EXACT_PAIR_LIMIT:,}); sample with --n"
            )
        return exact_pairs(classes, indices, args.protocol)
    return sample_pairs(classes, indices, args.n, seed, args.protocol, args.pair_sampling)


def run(args: argparse.Namespace) -> int:
    # where tokenizing, S counting and pair scoring run (crystal_lsp.distributed)
    with disting_steps(args.engine, args.scheduler, args.jobs) as steps:
        return _run(args, steps)


def _class_inputs(args: argparse.Namespace) -> Inputs:
    """A class-labeled JSONL set: pairs sampled (or all) from its classes."""
    items = load_items(args.dataset)
    _lexer(args, [it.lang for it in items])
    classes = [it.cls for it in items]
    train_idx = [i for i, it in enumerate(items) if it.split == "train"]
    test_idx = [i for i, it in enumerate(items) if it.split == "test"]
    test = _pairs(classes, test_idx, args, args.seed)
    train = (
        _pairs(classes, train_idx, args, args.seed + 1)
        if len({classes[i] for i in train_idx}) > 1
        else None
    )
    if train is None:
        warn("the train split has fewer than two classes: no threshold classifier")
    short: dict[str, int] = {}
    for split, pairs in (("test", test), ("train", train)):
        for kind, got in (
            ("intra", pairs.intra if pairs else []),
            ("inter", pairs.inter if pairs else []),
        ):
            if pairs is not None and not args.exact and len(got) < args.n:
                short[f"{kind}-class {split} pairs fewer than --n (all distinct ones taken)"] = (
                    args.n - len(got)
                )
    mode = f"{args.protocol} protocol"
    if not args.exact and args.protocol == "pairs":
        mode += ", class-balanced" if args.pair_sampling == "class" else ", uniform over pairs"
    return Inputs(
        [it.id for it in items],
        [it.code for it in items],
        [it.lang for it in items],
        test,
        train,
        train_idx,
        f"{len(items):,} items ({len(train_idx):,} train / {len(test_idx):,} test)",
        short,
        len(test_idx),
        mode,
    )


def _run(args: argparse.Namespace, steps: Steps | EngineSteps) -> int:
    metrics = parse_metric_list(args.metric)
    smoothing = Smoothing.parse(args.smoothing)
    inputs = pair_inputs(args) if layout_of(args.dataset) else _class_inputs(args)
    lexer = _lexer(args, inputs.langs)
    language = canonical_name(lexer)
    test, train, train_idx = inputs.test, inputs.train, inputs.train_idx
    needs_sset = any(m in NEEDS_SSET for m in metrics)
    order = _used_items(test, train, train_idx if needs_sset and not args.sset else [])
    enabled = progress_enabled(args)
    with progress_bar(len(order), "tokenizing", enabled) as update:
        streams = steps.tokenize_many(
            [(inputs.ids[i], inputs.codes[i], language) for i in order],
            processes=args.jobs,
            keep_comments=args.keep_comments,
            progress=update,
        )
    tokens = dict(zip(order, streams))
    sset = _sset(args, steps, tokens, train_idx, language, lexer) if needs_sset else None
    prepared = [
        PreparedItem(inputs.codes[i], tokens[i]) if i in tokens else None
        for i in range(len(inputs.codes))
    ]
    config = MetricConfig(sset=sset, smoothing=smoothing, max_n=args.max_n, language=language)
    reports = [
        _evaluate(args, steps, name, config, prepared, test, train, enabled) for name in metrics
    ]
    _print(args, reports, language, inputs, sset)
    return 0


def _lexer(args: argparse.Namespace, item_langs: list[str]) -> Lexer:
    """The lexer of ``--lang``, else of the one language all items are written in."""
    langs = {lang for lang in item_langs if lang}
    language = args.lang or (langs.pop() if len(langs) == 1 else None)
    if language is None:
        raise CrystalError("the dataset mixes languages or has none; choose one with --lang")
    return resolve_lexer(language)


def _used_items(test: PairSets, train: PairSets | None, extra: list[int]) -> list[int]:
    """The items that need tokens: those in a pair, plus ``extra`` (S's train split)."""
    used: set[int] = set()
    for pairs in (test, train):
        if pairs is not None:
            for hyp, refs in pairs.intra + pairs.inter:
                used.add(hyp)
                used.update(refs)
    used.update(extra)
    return sorted(used)


def _sset(
    args: argparse.Namespace,
    steps: Steps | EngineSteps,
    tokens: dict[int, Tokens],
    train_idx: list[int],
    language: str,
    lexer: Lexer,
) -> TriviallySharedSet:
    """S from ``--sset``, else built from the train split."""
    if args.sset:
        return TriviallySharedSet.load(args.sset)
    if not train_idx:
        raise CrystalError("the dataset has no train split to build S from; pass --sset")
    return steps.build_sset(
        (tokens[i].texts for i in train_idx),
        args.k,
        args.max_n,
        language=language,
        tokenizer=lexer_label(lexer),
    )


def _evaluate(
    args: argparse.Namespace,
    steps: Steps | EngineSteps,
    name: str,
    config: MetricConfig,
    prepared: list[PreparedItem | None],
    test: PairSets,
    train: PairSets | None,
    enabled: bool,
) -> MetricReport:
    """One metric's report on the test pairs (and its threshold from the train pairs)."""
    metric = steps.make_metric(name, config)
    metric.prepare(prepared)
    total = (
        len(test.intra) + len(test.inter) + (len(train.intra) + len(train.inter) if train else 0)
    )
    with progress_bar(total, name, enabled) as update:
        return steps.evaluate_metric(metric, test, train, args.aggregate, update)


def _fmt(x: float) -> str:
    if math.isinf(x):
        return "inf"
    return f"{x:.3f}" if abs(x) < 1000 else f"{x:.4g}"


def _print(
    args: argparse.Namespace,
    reports: list[Any],
    language: str,
    inputs: Inputs,
    sset: TriviallySharedSet | None,
) -> None:
    if args.format == "json":
        emit_json(
            {
                "dataset": args.dataset,
                "language": language,
                "items": len(inputs.codes),
                "train_items": len(inputs.train_idx),
                "test_items": inputs.test_items,
                "description": inputs.description,
                "left_out": inputs.left_out,
                "protocol": args.protocol,
                "pair_sampling": args.pair_sampling,
                "aggregate": args.aggregate,
                "exact": args.exact,
                "n": None if args.exact else args.n,
                "seed": args.seed,
                "k": args.k if sset is not None else None,
                "sset_fingerprint": sset.fingerprint() if sset is not None else None,
                "metrics": [r.to_json() for r in reports],
            }
        )
        return
    mode = "all pairs" if args.exact else f"{args.n} intra + {args.n} inter pairs, seed {args.seed}"
    print(
        f"{args.dataset}: {inputs.description}, {language}, {inputs.mode}, {mode}, "
        f"{args.aggregate} aggregate"
    )
    if inputs.left_out:
        print("  left out: " + ", ".join(f"{n:,} {why}" for why, n in inputs.left_out.items()))
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
