"""``crystal-lsp sset build|show``: the trivially shared set S and its frequency curve."""

from __future__ import annotations

import argparse
import io
import os
from collections import Counter
from typing import Any

from crystal_lsp.cli.common import (
    MAX_ITEM_BYTES,
    add_engine_options,
    add_format,
    add_progress,
    check_item_sizes,
    check_output,
    emit_json,
    item_bytes,
    progress_bar,
    progress_enabled,
    setting_int,
    warn,
)
from crystal_lsp.clones.files import walk_files
from crystal_lsp.distributed import engine_name
from crystal_lsp.distributed.inputs import Selection, pair_documents
from crystal_lsp.errors import JOBS, CrystalError, int_in, missing_extra
from crystal_lsp.metric.datasets import iter_items
from crystal_lsp.metric.pairdata import layout_of
from crystal_lsp.metric.sset import (
    DEFAULT_K,
    DEFAULT_TIE_BREAK,
    TIE_BREAKS,
    TriviallySharedSet,
    build_sset,
    builtin_sset,
    suggest_k,
)
from crystal_lsp.text.datafiles import write_atomic
from crystal_lsp.text.lexers import GENERIC, canonical_name, lexer_label, resolve_lexer
from crystal_lsp.text.parallel import Job, tokenize_many
from crystal_lsp.text.sources import DEFAULT_MAX_BYTES, SkippedFile, read_source

DATASET_SUFFIXES = (".jsonl", ".jsonl.gz")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("sset", help="build or show a trivially shared set S")
    cmds = p.add_subparsers(dest="sset_command", required=True, metavar="{build,show}")
    b = cmds.add_parser(
        "build",
        help="the k most frequent 1..n-grams of a corpus",
        description="Count every 1..max-n-gram of every file (or dataset item) and keep the k "
        "most frequent. Ties at the k-th count: first-seen (default), as Counter.most_common "
        "ranks them in reading order (the reference's); canonical: lower order, then tokens in "
        "code-point order (independent of reading order; what --engine dask needs).",
        epilog="examples:\n  crystal-lsp sset build src/ --lang java -k 500 -o java.sset.json\n"
        "  crystal-lsp sset build data.jsonl.gz --split train -o s.json.gz",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    b.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="files, directories, zip/tar archives, JSONL datasets, pair-labeled dataset folders "
        "(code.jsonl + pairs.jsonl) or globs of them",
    )
    b.add_argument(
        "-k", type=setting_int("k"), default=DEFAULT_K, help=f"size of S (default: {DEFAULT_K})"
    )
    b.add_argument(
        "-o", "--output", required=True, metavar="FILE", help="where to write S (.json or .json.gz)"
    )
    b.add_argument("--lang", help="language; default: the one language of the files")
    b.add_argument(
        "--max-n", type=setting_int("max_n"), default=4, help="highest n-gram order (default: 4)"
    )
    _add_selection(b)
    add_engine_options(b, "reading, tokenizing and counting")
    b.add_argument(
        "--plot", metavar="PNG", help="also save the frequency curve as an image (needs matplotlib)"
    )
    add_format(b)
    add_progress(b)
    b.set_defaults(run=run_build)
    _add_show(cmds)


def _add_selection(b: argparse.ArgumentParser) -> None:
    """What ``sset build`` counts and how: ties, split, comments, processes, item size."""
    b.add_argument(
        "--tie-break",
        choices=TIE_BREAKS,
        default=None,
        help="how equal counts at the k cut are ordered (default: first-seen, the reference's "
        "Counter.most_common; canonical: order, then tokens)",
    )
    b.add_argument(
        "--split",
        help="for datasets: only items of this split (e.g. train; in a pair-labeled folder, the "
        "programs of that split's pairs)",
    )
    b.add_argument("--keep-comments", action="store_true", help="keep comment tokens")
    b.add_argument(
        "--jobs", type=JOBS, default=None, help="tokenizer processes (default: the idle CPUs)"
    )
    b.add_argument(
        "--max-bytes",
        type=item_bytes,
        default=DEFAULT_MAX_BYTES,
        help=f"skip files larger than this; a larger dataset item is an error (default: "
        f"{DEFAULT_MAX_BYTES:,}; at most {MAX_ITEM_BYTES:,}, 0 for that)",
    )


def _add_show(cmds: Any) -> None:
    """``sset show``."""
    s = cmds.add_parser("show", help="show S, its frequency curve and the suggested k")
    s.add_argument("file", metavar="FILE", help="an S file from `sset build`")
    s.add_argument(
        "--top", type=int_in(0, 10**7), default=20, help="how many n-grams to list (default: 20)"
    )
    s.add_argument(
        "--plot", metavar="PNG", help="save the frequency curve as an image (needs matplotlib)"
    )
    add_format(s)
    s.set_defaults(run=run_show)


def _is_dataset(path: str) -> bool:
    return path.endswith(DATASET_SUFFIXES) and os.path.isfile(path)


def collect_jobs(
    paths: list[str], language: str | None, split: str | None, max_bytes: int
) -> tuple[list[Job], str, list[tuple[str, str]]]:
    """Tokenizer jobs for the files/items of one language, and the files skipped (with why).

    Files are recognised by name (then shebang); with ``language`` given, files of other
    languages are left out, without it all files must be of one language.
    """
    wanted = canonical_name(resolve_lexer(language)) if language else None
    jobs: list[Job] = []
    skipped: list[tuple[str, str]] = []
    by_language: Counter[str] = Counter()
    for path in paths:
        if os.path.isdir(path) and layout_of(path) is not None:
            for doc in pair_documents(path, Selection(wanted, split, max_bytes)):
                by_language[doc.language] += 1
                jobs.append((doc.name, doc.text, doc.language))
            continue
        if _is_dataset(path):
            for item in iter_items(path):
                if split and item.split != split:
                    continue
                name = wanted or canonical_name(
                    resolve_lexer(item.lang or None, None, item.code, guess=False)
                )
                by_language[name] += 1
                jobs.append((f"{path}#{item.id}", item.code, name))
            continue
        within = path if os.path.isdir(path) else None  # a tree's symlinks stay in it
        for file in walk_files([path]):
            try:
                source = read_source(file, max_bytes, within)
            except SkippedFile as exc:
                skipped.append((file, exc.reason))
                continue
            name = canonical_name(resolve_lexer(None, file, source.text, guess=False))
            if name == GENERIC:
                skipped.append((file, "unknown language"))
                continue
            if wanted and name != wanted:
                continue
            by_language[name] += 1
            jobs.append((file, source.text, name))
    if not jobs:
        raise CrystalError(
            "no code found in the given paths" + (f" for {wanted}" if wanted else "")
        )
    if wanted:
        return jobs, wanted, skipped
    if len(by_language) > 1:
        found = ", ".join(f"{lang} ({n})" for lang, n in by_language.most_common())
        raise CrystalError(f"the paths hold several languages ({found}); choose one with --lang")
    return jobs, next(iter(by_language)), skipped


def build_from_paths(args: argparse.Namespace, language: str | None, k: int) -> TriviallySharedSet:
    """Tokenize the paths (in parallel) and build S; no token at all is an error."""
    sset = _build_from_paths(args, language, k)
    if sset.tokens == 0:
        raise CrystalError(
            "no tokens in the given paths (files empty or only comments): S would be empty"
        )
    return sset


def _build_from_paths(args: argparse.Namespace, language: str | None, k: int) -> TriviallySharedSet:
    # `sset build` streams its inputs through an engine (crystal_lsp.distributed)
    if hasattr(args, "engine"):
        return _build_on_engine(args, language, k)
    jobs, chosen, skipped = collect_jobs(
        args.paths if hasattr(args, "paths") else args.corpus,
        language,
        getattr(args, "split", None),
        args.max_bytes,
    )
    _warn_skipped(skipped)
    with progress_bar(len(jobs), "tokenizing", progress_enabled(args)) as update:
        streams = tokenize_many(
            jobs,
            processes=getattr(args, "jobs", None),
            keep_comments=args.keep_comments,
            progress=update,
        )
    lexer = resolve_lexer(chosen)
    return build_sset(
        (t.texts for t in streams),
        k,
        args.max_n,
        language=chosen,
        tie_break=tie_break_of(args),
        tokenizer=lexer_label(lexer) + (" comments:yes" if args.keep_comments else ""),
    )


def _build_on_engine(args: argparse.Namespace, language: str | None, k: int) -> TriviallySharedSet:
    from crystal_lsp.distributed.build import build_on_engine, plan_build
    from crystal_lsp.distributed.engine import open_engine

    tie_break = tie_break_of(args)
    parts = plan_build(
        args.paths,
        language=language,
        k=k,
        max_n=args.max_n,
        tie_break=tie_break,
        engine=args.engine,
        scheduler=args.scheduler,
    )
    with open_engine(args.engine, args.scheduler, args.jobs) as engine:
        with progress_bar(None, "tokenizing", progress_enabled(args)) as update:
            sset, skipped = build_on_engine(
                engine,
                parts,
                language=language,
                k=k,
                max_n=args.max_n,
                split=getattr(args, "split", None),
                keep_comments=args.keep_comments,
                max_bytes=args.max_bytes,
                tie_break=tie_break,
                progress=lambda stats: update(stats.documents),
            )
    _warn_skipped(skipped)
    return sset


def check_datasets(paths: list[str], split: str | None, max_bytes: int) -> None:
    """Check each class-labeled dataset's items and ``--split`` before anything is counted.

    An item over ``max_bytes`` is an error (the bound ``score`` and ``disting`` apply).
    A split no item has, or ``--split`` on a dataset without split fields, is an error naming the
    splits found (``disting`` assigns a seeded split to such a file; ``sset build`` does not guess).
    When a split's classes are not contiguous, first-seen ties follow file order while ``disting``
    counts class by class (the reference's order): a warning says so.
    """
    for path in paths:
        if not _is_dataset(path):
            continue
        found: Counter[str] = Counter()
        seen: set[str] = set()
        last = None
        scattered = False
        for item in iter_items(path):
            check_item_sizes(path, [item.id], [item.code], max_bytes)
            found[item.split or "(none)"] += 1
            if item.split == split and item.cls != last:
                scattered = scattered or item.cls in seen
                seen.add(item.cls)
                last = item.cls
        if split and found[split] == 0:
            named = ", ".join(f"{name} {n:,}" for name, n in sorted(found.items()))
            hint = (
                " (no item has a 'split' field: drop --split)" if set(found) == {"(none)"} else ""
            )
            raise CrystalError(f"{path}: no item of split {split!r}; splits found: {named}{hint}")
        if scattered:
            warn(
                f"{path}: the {split} items of a class are not contiguous: first-seen ties follow "
                "the file's order, while disting counts class by class; sort the file by class "
                "for the same S"
            )


def tie_break_of(args: argparse.Namespace) -> str:
    """The tie-break asked for, else the default (first-seen), which only the local engine keeps."""
    chosen = getattr(args, "tie_break", None)
    if chosen is not None:
        return str(chosen)
    if engine_name(getattr(args, "engine", None), getattr(args, "scheduler", None)) != "local":
        raise CrystalError(
            "the default tie-break (first-seen, the reference's) depends on reading order, which "
            "--engine dask does not keep: pass --tie-break canonical"
        )
    return DEFAULT_TIE_BREAK


def _warn_skipped(skipped: list[tuple[str, str]]) -> None:
    for file, reason in skipped[:20]:
        warn(f"skipped {file}: {reason}")
    if len(skipped) > 20:
        warn(f"... and {len(skipped) - 20} more skipped files")


def load_or_build_sset(args: argparse.Namespace, language: str) -> TriviallySharedSet:
    """S for ``score``/``disting``: from --sset, --corpus, or the built-in set of the language."""
    if getattr(args, "sset", None):
        return TriviallySharedSet.load(args.sset)
    if getattr(args, "corpus", None):
        return build_from_paths(args, language, args.k)
    if language == GENERIC:
        raise CrystalError(
            "the language of the input is unknown: pass --lang LANG (or --sset FILE / --corpus PATH)"
        )
    builtin = builtin_sset(language)
    if builtin is None:
        raise CrystalError(
            f"no built-in trivially shared set for {language}: pass --sset FILE or --corpus PATH"
        )
    if args.k != builtin.k:
        builtin = builtin.restricted(args.k) if args.k < builtin.k else builtin
        if args.k > builtin.k:
            warn(f"the built-in {language} set has only k={builtin.k}; using that")
    return builtin


def curve_table(curve: list[int]) -> list[tuple[int, int]]:
    """(rank, count) at ranks 1, 2, 5, 10, 20, 50, ... within the curve."""
    rows = []
    rank = 1
    steps = (1, 2, 5)
    decade = 1
    while rank <= len(curve):
        rows.append((rank, curve[rank - 1]))
        for step in steps:
            candidate = step * decade
            if candidate > rank:
                rank = candidate
                break
        else:
            decade *= 10
            rank = decade
    return rows


def _report(sset: TriviallySharedSet, top: int, fmt: str, output: str | None) -> None:
    curve = list(sset.meta.get("curve", []))
    knee = suggest_k(curve) if len(curve) > 20 else None
    if fmt == "json":
        emit_json(
            {
                "file": output,
                "language": sset.language,
                "k": sset.k,
                "max_n": sset.max_n,
                "documents": sset.documents,
                "tokens": sset.tokens,
                "fingerprint": sset.fingerprint(),
                "suggested_k": knee,
                "tie_break": sset.tie_break,
                "tokenizer": sset.tokenizer,
                "top": [{"ngram": list(g), "count": c} for g, c in sset.top(top)],
                "curve": [{"rank": r, "count": c} for r, c in curve_table(curve)],
            }
        )
        return
    print(
        f"S: {sset.language or '?'}  k={sset.k}  n<={sset.max_n}  from {sset.documents:,} documents, "
        f"{sset.tokens:,} tokens  fingerprint {sset.fingerprint()}"
        + (f"  -> {output}" if output else "")
    )
    if knee is not None:
        print(f"suggested k (knee of the frequency curve): {knee}")
    if curve:
        print("\n  rank      count")
        for rank, count in curve_table(curve):
            marker = "  <- k" if rank == sset.k else ""
            print(f"  {rank:>6}  {count:>9,}{marker}")
    if top:
        print(f"\n  top {min(top, len(sset))} n-grams:")
        for rank, (gram, count) in enumerate(sset.top(top), 1):
            print(f"  {rank:>4}. {count:>9,}  {' '.join(gram)}")


def _pyplot() -> Any:
    """Matplotlib's pyplot on the Agg backend, or the error saying how to install it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise missing_extra("--plot", "plot", exc) from None
    return plt


def plot_curve(sset: TriviallySharedSet, path: str) -> None:
    """Save the rank-frequency curve (log-log) with k and the knee marked."""
    plt = _pyplot()
    curve = list(sset.meta.get("curve", []))
    if not curve:
        raise CrystalError("this S file has no frequency curve to plot")
    fig, ax = plt.subplots(figsize=(6, 4), dpi=120)
    ax.loglog(range(1, len(curve) + 1), curve, color="#1f77b4")
    ax.axvline(sset.k, color="#d62728", linestyle="--", label=f"k = {sset.k}")
    if len(curve) > 20:
        knee = suggest_k(curve)
        ax.axvline(knee, color="#2ca02c", linestyle=":", label=f"knee = {knee}")
    ax.set_xlabel("rank of n-gram")
    ax.set_ylabel("count in corpus")
    ax.set_title(f"Most frequent 1-{sset.max_n}-grams ({sset.language})")
    ax.legend()
    fig.tight_layout()
    image = io.BytesIO()
    fig.savefig(image, format=os.path.splitext(path)[1][1:].lower() or "png")
    plt.close(fig)
    write_atomic(path, image.getvalue(), "--plot")


def run_build(args: argparse.Namespace) -> int:
    check_output(args.output, "--output")
    check_output(args.plot, "--plot")
    if args.plot:
        _pyplot()  # say it is missing before the build, not after
    check_datasets(args.paths, args.split, args.max_bytes)
    sset = build_from_paths(args, args.lang, args.k)
    sset.save(args.output)
    _report(sset, 10, args.format, args.output)
    if args.plot:
        plot_curve(sset, args.plot)
    return 0


def run_show(args: argparse.Namespace) -> int:
    check_output(args.plot, "--plot")
    sset = TriviallySharedSet.load(args.file)
    _report(sset, args.top, args.format, None)
    if args.plot:
        plot_curve(sset, args.plot)
    return 0
