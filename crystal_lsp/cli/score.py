"""``crystal-lsp score``: BLEU and CrystalBLEU of hypotheses against references."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from crystal_lsp.cli.common import (
    MAX_ITEM_BYTES,
    add_format,
    add_progress,
    emit_json,
    item_bytes,
    read_code,
    setting_int,
    tokenize_file,
    warn_hash_seed,
)
from crystal_lsp.cli.score_batch import (
    LABELS,
    add_options,
    make_scorers,
    run_corpus,
    run_registry_corpus,
)
from crystal_lsp.cli.sset import load_or_build_sset
from crystal_lsp.errors import CrystalError, int_in
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.registry import NEEDS_SSET
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.statistics import Statistics, sentence_statistics
from crystal_lsp.text.lexers import GENERIC, canonical_name, resolve_lexer
from crystal_lsp.text.sources import DEFAULT_MAX_BYTES, MAX_REFERENCES


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "score",
        help="score hypotheses against references (BLEU, CrystalBLEU)",
        description="Score a hypothesis file against reference files, or a corpus of "
        "line-aligned or JSONL pairs, with BLEU and CrystalBLEU.",
        epilog="examples:\n"
        "  crystal-lsp score --ref ref.java --hyp hyp.java\n"
        "  crystal-lsp score --example\n"
        "  crystal-lsp score --lines --ref refs.txt --hyp hyps.txt --lang python --corpus src/\n"
        "  crystal-lsp score --jsonl pairs.jsonl --lang java --sset java.sset.json --format json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_inputs(p)
    _add_metric_options(p)
    add_options(p)
    p.add_argument(
        "--sentences",
        action="store_true",
        help="in corpus mode, also print each pair's sentence-level scores",
    )
    p.add_argument(
        "--max-bytes",
        type=item_bytes,
        default=DEFAULT_MAX_BYTES,
        help="refuse files larger than this (and lines of --lines and --jsonl corpora; default: "
        f"{DEFAULT_MAX_BYTES:,}; at most {MAX_ITEM_BYTES:,}, 0 for that)",
    )
    add_format(p)
    add_progress(p)
    p.set_defaults(run=run)


def _add_inputs(p: argparse.ArgumentParser) -> None:
    """What to score: files, a corpus of pairs or the paper's example, and their language."""
    p.add_argument(
        "--ref", action="append", default=[], metavar="FILE", help="reference file (repeatable)"
    )
    p.add_argument("--hyp", metavar="FILE", help="hypothesis file")
    p.add_argument(
        "--lines",
        action="store_true",
        help="--hyp and --ref files hold one snippet per line (corpus mode)",
    )
    p.add_argument(
        "--jsonl",
        metavar="FILE",
        help='corpus mode: JSONL lines {"id": optional, "hypothesis": str, "references": '
        '[str, ...]} ("hyp" and "refs" are accepted as short names, "reference": str for one); '
        "an empty hypothesis or reference is an error",
    )
    p.add_argument(
        "--against",
        metavar="PATH",
        help="find the references: the regions of this repository, folder or file that the "
        "hypothesis aligns with best (listed with their scores)",
    )
    p.add_argument(
        "--keep",
        type=int_in(1, MAX_REFERENCES),
        default=3,
        help="with --against: how many best regions become references (default: 3)",
    )
    p.add_argument("--example", action="store_true", help="score the paper's Fig. 1 Java example")
    p.add_argument(
        "--lang",
        help="language (Pygments name or editor id); default: from the hypothesis file name",
    )


def _add_metric_options(p: argparse.ArgumentParser) -> None:
    """The metrics and their knobs: S (given or built), n-gram order, smoothing, comments."""
    p.add_argument(
        "--metric",
        default="bleu,crystalbleu",
        help="comma-separated metrics (default: bleu,crystalbleu)",
    )
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--sset", metavar="FILE", help="trivially shared set to use (from `sset build`)"
    )
    group.add_argument(
        "--corpus",
        action="append",
        metavar="PATH",
        help="build S from these files/directories (repeatable)",
    )
    p.add_argument(
        "-k",
        type=setting_int("k"),
        default=500,
        help="size of S when built from --corpus (default: 500)",
    )
    p.add_argument(
        "--max-n", type=setting_int("max_n"), default=4, help="highest n-gram order (default: 4)"
    )
    p.add_argument(
        "--smoothing",
        default="m1:eps=0.0001",
        help="NLTK smoothing, e.g. m0, m1:eps=0.1, m4:k=5 (default: m1:eps=0.0001)",
    )
    p.add_argument("--keep-comments", action="store_true", help="keep comment tokens")


def _example_paths() -> tuple[str, list[str], str]:
    from importlib import resources

    base = resources.files("crystal_lsp").joinpath("examples")
    return (
        str(base / "fig1_hypothesis1.java"),
        [str(base / "fig1_reference.java")],
        str(base / "fig1_hypothesis2.java"),
    )


def run(args: argparse.Namespace) -> int:
    from crystal_lsp.metric.registry import parse_metric_list

    metrics = parse_metric_list(args.metric)
    warn_hash_seed(metrics)
    unsupported = [m for m in metrics if m not in LABELS]
    if unsupported:
        return _run_other_metrics(args, metrics)
    smoothing = Smoothing.parse(args.smoothing)
    if args.example:
        if args.hyp or args.ref or args.lines or args.jsonl:
            raise CrystalError("--example takes no --hyp, --ref, --lines or --jsonl")
        hyp_path, ref_paths, other = _example_paths()
        args.lang = args.lang or "java"
        return _score_files(args, metrics, smoothing, [(hyp_path, ref_paths), (other, ref_paths)])
    if args.against:
        if args.ref or args.lines or args.jsonl or not args.hyp:
            raise CrystalError("--against takes --hyp FILE and no --ref, --lines or --jsonl")
        return _score_against(args, metrics, smoothing)
    corpus_mode = args.lines or bool(args.jsonl) or bool(args.hyp_dir)
    if args.jsonl or args.hyp_dir:
        if args.hyp or args.ref or (args.jsonl and args.hyp_dir):
            raise CrystalError("--jsonl replaces --hyp and --ref (and so does --hyp-dir)")
    elif not args.hyp or not args.ref:
        raise CrystalError(
            "give --hyp FILE and at least one --ref FILE (or --against, --jsonl, --hyp-dir "
            "or --example)"
        )
    if not corpus_mode:
        if args.baseline or args.bootstrap or args.per_item:
            raise CrystalError("--baseline, --bootstrap and --per-item need a corpus mode")
        return _score_files(args, metrics, smoothing, [(args.hyp, args.ref)])
    return run_corpus(args, metrics, smoothing)


def _scorers(
    args: argparse.Namespace, metrics: Sequence[str], smoothing: Smoothing, language: str
) -> dict[str, CrystalBLEU]:
    return make_scorers(args, metrics, smoothing, language)


def _score_files(
    args: argparse.Namespace,
    metrics: Sequence[str],
    smoothing: Smoothing,
    jobs: list[tuple[str, list[str]]],
) -> int:
    results = []
    scorers: dict[str, CrystalBLEU] | None = None
    for hyp_path, ref_paths in jobs:
        hyp = tokenize_file(hyp_path, args.lang, args.max_bytes, args.keep_comments)
        language = args.lang or hyp.language
        if not args.lang:
            check_languages(hyp_path, hyp.language, ref_paths)
        refs = [tokenize_file(r, language, args.max_bytes, args.keep_comments) for r in ref_paths]
        if scorers is None:
            scorers = _scorers(args, metrics, smoothing, hyp.language)
        row: dict[str, Any] = {
            "hypothesis": hyp_path,
            "references": ref_paths,
            "language": hyp.language,
        }
        stats = {name: sentence_statistics(s, hyp, refs) for name, s in scorers.items()}
        row.update({name: st.score for name, st in stats.items()})
        row["statistics"] = {name: st.to_json() for name, st in stats.items()}
        row["signatures"] = {name: str(s.signature) for name, s in scorers.items()}
        results.append(row)
    assert scorers is not None
    if args.format == "json":
        emit_json(results[0] if len(results) == 1 else results)
        return 0
    for row in results:
        refs_text = ", ".join(row["references"])
        print(f"{row['hypothesis']}  vs  {refs_text}")
        for name in scorers:
            print(f"  {LABELS[name]:<15}{row[name]:.4f}  {row['signatures'][name]}")
            print(f"  {'':<15}{Statistics.from_json(row['statistics'][name]).line()}")
    return 0


def check_languages(hyp_path: str, language: str, ref_paths: Sequence[str]) -> None:
    """Refuse references whose file names say another language than the hypothesis's."""
    for path in ref_paths:
        theirs = canonical_name(resolve_lexer(None, path, "", guess=False))
        if theirs not in (language, GENERIC) and {theirs, language} != {"c", "cpp"}:
            raise CrystalError(
                f"{path} is {theirs} but {hyp_path} is {language}: "
                "give --lang to score both as one language"
            )


def _score_against(args: argparse.Namespace, metrics: Sequence[str], smoothing: Smoothing) -> int:
    """``--against PATH``: the best regions of PATH are the references."""
    from crystal_lsp.cli.score_against import find_references

    hyp = tokenize_file(args.hyp, args.lang, args.max_bytes, args.keep_comments)
    code = read_code(args.hyp, args.max_bytes)
    sset = (
        load_or_build_sset(args, hyp.language)
        if getattr(args, "sset", None) or getattr(args, "corpus", None)
        else None
    )
    found = find_references(args, hyp, code, hyp.language, sset)
    scorers = {
        name: CrystalBLEU(
            found.sset if name in NEEDS_SSET else None,
            variant="weight" if name == "crystalbleu-if" else "remove",
            max_n=args.max_n,
            smoothing=smoothing,
            language=hyp.language,
            comments=args.keep_comments,
        )
        for name in metrics
    }
    row: dict[str, Any] = {
        "hypothesis": args.hyp,
        "against": args.against,
        "language": hyp.language,
    }
    row["references"] = found.to_json()
    row["verdict"] = found.verdict.to_json()
    stats = (
        {name: sentence_statistics(s, hyp, found.references) for name, s in scorers.items()}
        if found.references
        else {}
    )
    for name in scorers:
        row[name] = stats[name].score if name in stats else 0.0
    if stats:
        row["statistics"] = {name: st.to_json() for name, st in stats.items()}
    row["signatures"] = {name: str(s.signature) for name, s in scorers.items()}
    if args.format == "json":
        emit_json(row)
        return 0
    count = len(found.labels)
    print(f"{args.hyp}  vs  the {count} best region{'' if count == 1 else 's'} of {args.against}")
    print(f"  verdict: {found.verdict.text}")
    for label, value in zip(found.labels, found.scores):
        print(f"  reference {label}  (CrystalBLEU {value:.4f})")
    if not found.labels:
        why = "none is left (see below)" if found.aligned else "no region aligns with it"
        print(f"  no reference for the hypothesis, {why}: every score is 0")
    left = ", ".join(f"{n} {reason}" for reason, n in found.left_out.items())
    print(f"  {found.aligned} regions aligned" + (f"; left out: {left}" if left else ""))
    for name in scorers:
        print(f"  {LABELS[name]:<15}{row[name]:.4f}  {row['signatures'][name]}")
        if "statistics" in row:
            print(f"  {'':<15}{Statistics.from_json(row['statistics'][name]).line()}")
    return 0


def _run_other_metrics(args: argparse.Namespace, metrics: Sequence[str]) -> int:
    """Metrics outside the BLEU family (e.g. RUBY) through the metric registry."""
    from crystal_lsp.cli.common import tokenize_file
    from crystal_lsp.metric.registry import MetricConfig, PreparedItem, make_metric

    if args.lines or args.jsonl or args.hyp_dir:
        return run_registry_corpus(args, metrics)
    if args.example:
        hyp_path, ref_paths, _ = _example_paths()
        args.lang = args.lang or "java"
    else:
        if not args.hyp or not args.ref:
            raise CrystalError("give --hyp FILE and at least one --ref FILE")
        hyp_path, ref_paths = args.hyp, args.ref
    hyp = tokenize_file(hyp_path, args.lang, args.max_bytes, args.keep_comments)
    if not args.lang:
        check_languages(hyp_path, hyp.language, ref_paths)
    refs = [
        tokenize_file(r, args.lang or hyp.language, args.max_bytes, args.keep_comments)
        for r in ref_paths
    ]
    codes = [read_code(p, args.max_bytes) for p in [hyp_path, *ref_paths]]
    items = [PreparedItem(code, toks) for code, toks in zip(codes, [hyp, *refs])]
    sset = load_or_build_sset(args, hyp.language) if any(m in NEEDS_SSET for m in metrics) else None
    config = MetricConfig(
        sset=sset,
        smoothing=Smoothing.parse(args.smoothing),
        max_n=args.max_n,
        language=hyp.language,
    )
    row: dict[str, Any] = {
        "hypothesis": hyp_path,
        "references": ref_paths,
        "language": hyp.language,
        "signatures": {},
    }
    for name in metrics:
        metric = make_metric(name, config)
        metric.prepare(items)
        row[name] = metric.score(0, list(range(1, len(items))))
        row["signatures"][name] = metric.signature
        extra = getattr(metric, "last_details", None)
        if extra:
            row.setdefault("details", {})[name] = extra
    if args.format == "json":
        emit_json(row)
    else:
        print(f"{hyp_path}  vs  {', '.join(ref_paths)}")
        for name in metrics:
            level = row.get("details", {}).get(name, {}).get("level")
            shown = f"{row[name]:.4f}" + (f" ({level})" if level else "")
            print(f"  {LABELS.get(name, name.upper()):<15}{shown}  {row['signatures'][name]}")
    return 0
