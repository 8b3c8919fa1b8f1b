"""Corpus mode of ``crystal-lsp score``: items from JSONL, line files or two folders.

Every item keeps its id (JSONL ``id``, else ``line N``; a folder item's relative path).
The corpus score comes with its statistics (:mod:`crystal_lsp.metric.statistics`), optionally a
seeded bootstrap confidence interval and a paired bootstrap test against a baseline system's
outputs for the same items; ``--per-item FILE`` writes each item's scores and statistics as JSONL
(or CSV when FILE ends in ``.csv``).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from crystal_lsp.cli.common import corpus_lines, emit_json, read_code, warn
from crystal_lsp.cli.sset import load_or_build_sset
from crystal_lsp.errors import CrystalError, int_in
from crystal_lsp.metric.crystal import CrystalBLEU
from crystal_lsp.metric.registry import NEEDS_SSET
from crystal_lsp.metric.smoothing import Smoothing
from crystal_lsp.metric.statistics import (
    CorpusCounts,
    Statistics,
    bootstrap,
    paired_bootstrap,
    sentence_statistics,
)
from crystal_lsp.text.datafiles import loads, write_atomic
from crystal_lsp.text.lexers import canonical_name, resolve_lexer
from crystal_lsp.text.tokens import lex

MAX_BOOTSTRAP = 100_000
LABELS = {"bleu": "BLEU", "crystalbleu": "CrystalBLEU", "crystalbleu-if": "CrystalBLEU-IF"}
"""The BLEU family (``run_corpus``); other metrics go through the registry."""


def add_options(p: argparse.ArgumentParser) -> None:
    """Options of corpus mode: folders, per-item output, bootstrap and the paired test."""
    p.add_argument("--hyp-dir", metavar="DIR", help="corpus mode: one hypothesis per file")
    p.add_argument(
        "--ref-dir", metavar="DIR", help="with --hyp-dir: references, matched by relative path"
    )
    p.add_argument(
        "--per-item", metavar="FILE", help="write each item's scores (JSONL, or CSV for .csv)"
    )
    p.add_argument(
        "--bootstrap",
        type=int_in(0, MAX_BOOTSTRAP),
        default=0,
        metavar="N",
        help="corpus mode: 95%% confidence intervals from N bootstrap resamples (e.g. 1000; "
        f"at most {MAX_BOOTSTRAP:,})",
    )
    p.add_argument(
        "--baseline",
        metavar="PATH",
        help="corpus mode: a baseline system's outputs for the same items (as --jsonl, --hyp "
        "or --hyp-dir), compared by paired bootstrap resampling",
    )
    p.add_argument(
        "--seed",
        type=int_in(0, 2**63 - 1),
        default=12345,
        help="bootstrap seed (default: 12345, as sacrebleu)",
    )


@dataclass
class Items:
    """The items of a corpus: ids, hypothesis texts and reference texts."""

    ids: list[str]
    hyps: list[str]
    refs: list[list[str]]
    lexer_hint: str | None
    """A file name to take the language from (None: the text decides)."""
    where: list[str] | None = None
    """Where each item is (``FILE:LINE`` of a JSONL corpus), for messages about one item."""


def _jsonl(path: str, max_bytes: int) -> Items:
    ids, hyps, refs, where = [], [], [], []
    given: dict[str, int] = {}
    for lineno, line in corpus_lines(path, max_bytes, json_lines=True):
        if not line.strip():
            continue
        try:
            row = loads(line)
            hyp = row.get("hypothesis", row.get("hyp"))
            group = row.get("references", row.get("refs"))
            if group is None and "reference" in row:
                group = [row["reference"]]
            if not isinstance(hyp, str):
                raise TypeError("needs a string 'hypothesis'")
            if group is not None and (
                not isinstance(group, list) or not all(isinstance(r, str) for r in group)
            ):
                raise TypeError("'references' must be a list of strings")
        except (ValueError, TypeError, AttributeError) as exc:
            raise CrystalError(f"{path}:{lineno}: bad pair line ({exc})") from None
        # without ids, items (and a baseline's) are matched by line number
        ident = str(row["id"]) if "id" in row else f"line {lineno}"
        first = given.setdefault(ident, lineno)
        if first != lineno:
            raise CrystalError(f"{path}:{lineno}: duplicate id {ident!r} (first on line {first})")
        ids.append(ident)
        hyps.append(hyp)
        refs.append(group if group is not None else [])
        where.append(f"{path}:{lineno}")
    return Items(ids, hyps, refs, None, where)


def _text_lines(path: str, max_bytes: int) -> list[str]:
    return [line for _, line in corpus_lines(path, max_bytes)]


def _lines(hyp_path: str, ref_paths: Sequence[str], max_bytes: int) -> Items:
    hyp_lines = _text_lines(hyp_path, max_bytes)
    ref_lines = [_text_lines(r, max_bytes) for r in ref_paths]
    for path, lines in zip(ref_paths, ref_lines):
        if len(lines) != len(hyp_lines):
            raise CrystalError(f"{path} has {len(lines)} lines but {hyp_path} has {len(hyp_lines)}")
    ids = [f"{hyp_path}:{i}" for i in range(1, len(hyp_lines) + 1)]
    refs = [list(group) for group in zip(*ref_lines)] or [[] for _ in hyp_lines]
    return Items(ids, hyp_lines, refs, hyp_path)


def _files(root: str) -> dict[str, str]:
    out = {}
    for base, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if not name.startswith("."):
                full = os.path.join(base, name)
                out[os.path.relpath(full, root).replace(os.sep, "/")] = full
    return out


def _folders(hyp_dir: str, ref_dir: str | None, max_bytes: int) -> Items:
    if not os.path.isdir(hyp_dir):
        raise CrystalError(f"--hyp-dir {hyp_dir}: not a directory")
    hyps = _files(hyp_dir)
    refs = _files(ref_dir) if ref_dir else {}
    if ref_dir is not None and not os.path.isdir(ref_dir):
        raise CrystalError(f"--ref-dir {ref_dir}: not a directory")
    unmatched = sorted(set(hyps) - set(refs)) if ref_dir else []
    if unmatched:
        warn(f"{len(unmatched)} file(s) of {hyp_dir} have no reference in {ref_dir}; left out")
    ids = sorted(set(hyps) - set(unmatched))
    hint = hyps[ids[0]] if ids else None
    return Items(
        ids,
        [read_code(hyps[i], max_bytes) for i in ids],
        [[read_code(refs[i], max_bytes)] if ref_dir else [] for i in ids],
        hint,
    )


def load_items(args: argparse.Namespace) -> Items:
    """The corpus of the arguments (every item needs a reference)."""
    if args.jsonl:
        items = _jsonl(args.jsonl, args.max_bytes)
    elif args.hyp_dir:
        items = _folders(args.hyp_dir, args.ref_dir, args.max_bytes)
    else:
        items = _lines(args.hyp, args.ref, args.max_bytes)
    if not items.ids:
        raise CrystalError("no pairs to score (the input is empty)")
    if any(not r for r in items.refs):
        raise CrystalError("every hypothesis needs at least one reference")
    return items


def _baseline(args: argparse.Namespace, items: Items) -> list[str]:
    """The baseline's hypotheses, in the order of ``items`` (matched by id)."""
    path = args.baseline
    if os.path.isdir(path):
        theirs = _folders(path, None, args.max_bytes)
        found = dict(zip(theirs.ids, theirs.hyps))
    elif args.jsonl:
        theirs = _jsonl(path, args.max_bytes)
        found = dict(zip(theirs.ids, theirs.hyps))
    else:
        lines = _text_lines(path, args.max_bytes)
        found = {f"{args.hyp}:{i}": t for i, t in enumerate(lines, 1)}
    missing = [i for i in items.ids if i not in found]
    if missing or len(found) != len(items.ids):
        raise CrystalError(
            f"--baseline {path}: {len(missing)} of {len(items.ids)} items missing "
            f"({len(found)} given); a paired test needs the same items"
        )
    return [found[i] for i in items.ids]


def make_scorers(
    args: argparse.Namespace, metrics: Sequence[str], smoothing: Smoothing, language: str
) -> dict[str, CrystalBLEU]:
    """One configured scorer per BLEU-family metric."""
    sset = load_or_build_sset(args, language) if any(m in NEEDS_SSET for m in metrics) else None
    return {
        name: CrystalBLEU(
            sset if name in NEEDS_SSET else None,
            variant="weight" if name == "crystalbleu-if" else "remove",
            max_n=args.max_n,
            smoothing=smoothing,
            language=language,
            comments=args.keep_comments,
        )
        for name in metrics
    }


def run_corpus(args: argparse.Namespace, metrics: Sequence[str], smoothing: Smoothing) -> int:
    """Score a corpus (module docstring)."""
    items = load_items(args)
    lexer = resolve_lexer(args.lang, items.lexer_hint, "\n".join(items.hyps[:200]))
    language = canonical_name(lexer)

    def tokens(text: str) -> list[str]:
        return list(lex(text, lexer, keep_comments=args.keep_comments).texts)

    hyps = [tokens(h) for h in items.hyps]
    refs = [[tokens(r) for r in group] for group in items.refs]
    if items.where is not None:
        _check_tokens(items.where, hyps, refs)
    base = [tokens(h) for h in _baseline(args, items)] if args.baseline else None
    scorers = make_scorers(args, metrics, smoothing, language)
    doc: dict[str, Any] = {"language": language, "pairs": len(hyps), "signatures": {}}
    doc["statistics"], doc["bootstrap"], doc["paired"] = {}, {}, {}
    for name, scorer in scorers.items():
        corpus = CorpusCounts(scorer, hyps, refs)
        stats = corpus.statistics()
        doc[name] = stats.score
        doc["statistics"][name] = stats.to_json()
        signature = scorer.signature
        if args.bootstrap > 0 or base is not None:
            signature = signature.with_(bootstrap=args.bootstrap or 1000, seed=args.seed)
        doc["signatures"][name] = str(signature)
        if args.bootstrap > 0:
            doc["bootstrap"][name] = bootstrap(corpus, args.bootstrap, args.seed).to_json()
        if base is not None:
            other = CorpusCounts(scorer, base, refs)
            resamples = args.bootstrap or 1000
            doc["paired"][name] = paired_bootstrap(corpus, other, resamples, args.seed).to_json()
    for key in ("bootstrap", "paired"):
        if not doc[key]:
            del doc[key]
    per_item: list[dict[str, Any]] = [
        {"id": i, **{n: sentence_statistics(s, h, r) for n, s in scorers.items()}}
        for i, h, r in zip(items.ids, hyps, refs)
    ]
    if args.per_item:
        _write_items(args.per_item, per_item, list(scorers))
    if args.sentences:
        doc["sentences"] = [
            {"pair": row["id"], **{n: row[n].score for n in scorers}} for row in per_item
        ]
    if args.format == "json":
        emit_json(doc)
    else:
        _print(doc, scorers, args)
    return 0


def _check_tokens(where: list[str], hyps: list[list[str]], refs: list[list[list[str]]]) -> None:
    """An item whose hypothesis or a reference has no code token is an error (as for --hyp)."""
    for place, hyp, group in zip(where, hyps, refs):
        if not hyp:
            raise CrystalError(
                f"{place}: the hypothesis has no code tokens (empty or only comments)"
            )
        for number, ref in enumerate(group, 1):
            if not ref:
                raise CrystalError(
                    f"{place}: reference {number} has no code tokens (empty or only comments)"
                )


def run_registry_corpus(args: argparse.Namespace, metrics: Sequence[str]) -> int:
    """Corpus mode with a metric outside the BLEU family (CodeBLEU): each metric's corpus score."""
    from crystal_lsp.metric.registry import MetricConfig, PreparedItem, make_metric

    if args.baseline or args.bootstrap or args.per_item or args.sentences:
        raise CrystalError(
            "--baseline, --bootstrap, --per-item and --sentences support the BLEU family only "
            "(bleu, crystalbleu, crystalbleu-if)"
        )
    items = load_items(args)
    lexer = resolve_lexer(args.lang, items.lexer_hint, "\n".join(items.hyps[:200]))
    language = canonical_name(lexer)
    prepared: list[PreparedItem | None] = []
    pairs: list[tuple[int, list[int]]] = []
    for hyp, group in zip(items.hyps, items.refs):
        start = len(prepared)
        for text in (hyp, *group):
            prepared.append(PreparedItem(text, lex(text, lexer, keep_comments=args.keep_comments)))
        pairs.append((start, list(range(start + 1, len(prepared)))))
    if items.where is not None:
        _check_tokens(
            items.where,
            [list(prepared[h].tokens.texts) for h, _ in pairs],  # type: ignore[union-attr]
            [[list(prepared[r].tokens.texts) for r in refs] for _, refs in pairs],  # type: ignore[union-attr]
        )
    sset = load_or_build_sset(args, language) if any(m in NEEDS_SSET for m in metrics) else None
    smoothing = Smoothing.parse(args.smoothing)
    config = MetricConfig(sset=sset, smoothing=smoothing, max_n=args.max_n, language=language)
    doc: dict[str, Any] = {"language": language, "pairs": len(pairs), "signatures": {}}
    for name in metrics:
        metric = make_metric(name, config)
        metric.prepare(prepared)
        doc[name] = metric.corpus(pairs)
        doc["signatures"][name] = metric.signature
        details = getattr(metric, "last_details", None)
        if details:
            doc.setdefault("details", {})[name] = details
    if args.format == "json":
        emit_json(doc)
        return 0
    print(f"corpus of {doc['pairs']} pairs ({language})")
    for name in metrics:
        print(f"{LABELS.get(name, name):<15}{doc[name]:.4f}  {doc['signatures'][name]}")
    return 0


def _write_items(path: str, rows: list[dict[str, Any]], names: list[str]) -> None:
    out = io.StringIO(newline="")
    if path.endswith(".csv"):
        writer = csv.writer(out)
        writer.writerow(["id", *[f"{n}{suffix}" for n in names for suffix in CSV_COLUMNS]])
        for row in rows:
            writer.writerow([row["id"], *[v for n in names for v in _csv(row[n])]])
    else:
        for row in rows:
            item = {"id": row["id"]}
            item.update({n: row[n].score for n in names})
            item["statistics"] = {n: row[n].to_json() for n in names}
            out.write(json.dumps(item) + "\n")
    write_atomic(path, out.getvalue().encode("utf-8", "backslashreplace"), "--per-item")


CSV_COLUMNS = ("", "_matches", "_totals", "_bp", "_hyp_len", "_ref_len")


def _csv(stats: Statistics) -> list[Any]:
    return [
        stats.score,
        " ".join(str(m) for m in stats.matches),
        " ".join(str(t) for t in stats.totals),
        stats.brevity_penalty,
        stats.hyp_len,
        stats.ref_len,
    ]


def _print(doc: dict[str, Any], scorers: dict[str, CrystalBLEU], args: argparse.Namespace) -> None:
    print(f"corpus of {doc['pairs']} pairs ({doc['language']})")
    for name in scorers:
        print(f"{LABELS[name]:<15}{doc[name]:.4f}  {doc['signatures'][name]}")
        stats = doc["statistics"][name]
        print(f"{'':<15}{Statistics.from_json(stats).line()}")
        if name in doc.get("bootstrap", {}):
            b = doc["bootstrap"][name]
            print(
                f"{'':<15}95% CI {b['mean']:.4f} ± {b['ci95']:.4f} "
                f"({b['resamples']} resamples, seed {b['seed']})"
            )
        if name in doc.get("paired", {}):
            p = doc["paired"][name]
            print(
                f"{'':<15}vs baseline {p['baseline']:.4f}: difference {p['difference']:+.4f}, "
                f"p = {p['pValue']:.4f} (paired bootstrap, seed {args.seed})"
            )
    for row in doc.get("sentences", []):
        print(f"{row['pair']}: " + "  ".join(f"{LABELS[n]} {row[n]:.4f}" for n in scorers))
