"""``crystal-lsp scan``: near-duplicate code in a repository, as text, JSON or SARIF."""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from crystal_lsp.cli.common import (
    JOBS,
    add_engine_options,
    add_progress,
    check_output,
    emit_json,
    progress_enabled,
)
from crystal_lsp.clones.findings import RANKING, display_path
from crystal_lsp.clones.options import add_scan_options, command_line_overrides
from crystal_lsp.distributed import engine_name
from crystal_lsp.errors import EXIT_FINDINGS, EXIT_OK, CrystalError

if TYPE_CHECKING:
    from crystal_lsp.clones.findings import Finding
    from crystal_lsp.clones.scan import ScanResult


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "scan",
        help="report near-duplicate code in a repository",
        description="Find clone classes (exact, renamed and near copies of functions, classes, "
        "blocks and statement runs) in a repository or directory. Settings come from "
        "[tool.crystal-lsp] in pyproject.toml, overridden by options.",
        epilog="exit codes: 0 no findings, 1 findings, 2 usage error, 3 internal error\n"
        "examples:\n  crystal-lsp scan\n  crystal-lsp scan src --format sarif > clones.sarif\n"
        "  crystal-lsp scan --new-since origin/main\n  crystal-lsp scan --update-baseline --baseline .crystal-baseline.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", nargs="?", default=None, help="repository or directory (default: .)")
    p.add_argument(
        "--demo",
        action="store_true",
        help="scan the small example project shipped with crystal-lsp",
    )
    p.add_argument(
        "--format",
        choices=("text", "json", "sarif", "agent"),
        default="text",
        help="output format (agent: one plain line per copy and a summary, for coding agents)",
    )
    add_scan_options(p)
    p.add_argument(
        "--baseline", metavar="FILE", help="do not report findings recorded in this baseline file"
    )
    p.add_argument(
        "--update-baseline",
        action="store_true",
        help="write the current findings to --baseline and exit 0",
    )
    p.add_argument(
        "--new-since",
        metavar="REF",
        help="only findings touching code changed since this git revision",
    )
    p.add_argument(
        "--show-ngrams", action="store_true", help="show the non-trivial n-grams copies share"
    )
    p.add_argument(
        "--show-skipped", action="store_true", help="list every skipped file in text output"
    )
    p.add_argument(
        "--no-cache", action="store_true", help="ignore cached results (the index is still reused)"
    )
    p.add_argument("--jobs", type=JOBS, help="tokenizer processes (default: all CPUs)")
    add_engine_options(p, "tokenizing, S-set counting and pair scoring")
    p.add_argument(
        "--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout"
    )
    add_progress(p)
    p.set_defaults(run=run)


def _demo_path() -> str:
    from importlib import resources

    return str(resources.files("crystal_lsp").joinpath("examples").joinpath("demo"))


def run(args: argparse.Namespace) -> int:
    # Imported here so that other subcommands (and --help) do not pay for numpy and the index.
    from crystal_lsp.clones.baseline import load_baseline, without_baselined, write_baseline
    from crystal_lsp.clones.files import list_files
    from crystal_lsp.clones.git import changed_lines
    from crystal_lsp.clones.settings import load_config

    root = _root(args)
    check_output(args.output, "--output")
    if args.update_baseline:
        check_output(args.baseline, "--baseline")
    config = load_config(root, command_line_overrides(args))
    paths = list_files(root, config)
    focus = changed_lines(root, args.new_since) if args.new_since else None
    if focus is not None:
        focus = {p: spans for p, spans in focus.items() if p in set(paths)}
    run_scan = _scan_runner(args)
    with _progress(args) as progress:
        result = run_scan(
            root,
            paths,
            config,
            focus_lines=focus,
            progress=progress,
            use_cache=not args.no_cache,
            with_ngrams=args.show_ngrams,
            jobs=args.jobs,
        )
    findings = result.findings
    if args.update_baseline:
        count = write_baseline(args.baseline, findings)
        print(
            f"crystal-lsp: wrote {count} findings to the baseline {args.baseline}", file=sys.stderr
        )
        return EXIT_OK
    baselined = 0
    if args.baseline:
        kept = without_baselined(findings, load_baseline(args.baseline))
        baselined = len(findings) - len(kept)
        result.findings = kept
    _report(result, args, baselined)
    return EXIT_FINDINGS if result.findings else EXIT_OK


def _scan_runner(args: argparse.Namespace) -> Callable[..., ScanResult]:
    """``run_scan``, or with ``--engine dask`` its heavy steps on a cluster.

    The engine adapters (:mod:`crystal_lsp.distributed`) are imported only for Dask: a local
    scan served from the cache needs neither them nor the clone finder they import.
    """
    if engine_name(args.engine, args.scheduler) == "local":
        from crystal_lsp.clones.scan import run_scan

        return run_scan
    from crystal_lsp.distributed.scan import scan_runner

    return scan_runner(args.engine, args.scheduler)


def _root(args: argparse.Namespace) -> str:
    """The folder to scan (``--demo``: the shipped example project)."""
    if args.demo:
        if args.path is not None:
            raise CrystalError("--demo takes no path")
        args.path = _demo_path()
    elif args.path is None:
        args.path = "."
    if not os.path.isdir(args.path):
        raise CrystalError(f"{args.path}: not a directory")
    if args.update_baseline and not args.baseline:
        raise CrystalError("--update-baseline needs --baseline FILE")
    return os.path.abspath(str(args.path))


def _report(result: ScanResult, args: argparse.Namespace, baselined: int) -> None:
    """Write the report in the chosen format to ``--output`` or stdout."""
    from crystal_lsp.clones.sarif import to_sarif

    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        if args.format == "json":
            doc = result.to_json(with_ngrams=args.show_ngrams)
            doc["summary"]["baselined"] = baselined
            _write_json(doc, out)
        elif args.format == "sarif":
            _write_json(to_sarif(result), out)
        elif args.format == "agent":
            _print_agent(result, baselined, out)
        else:
            _print_text(result, args, baselined, out)
    finally:
        if out is not sys.stdout:
            out.close()


def _write_json(doc: Any, out: Any) -> None:
    if out is sys.stdout:
        emit_json(doc)
        return
    import json

    # one write of json.dumps, as emit_json: json.dump streams hundreds of thousands of writes
    out.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


class _progress:
    """A phase-aware progress bar on stderr."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.enabled = progress_enabled(args)
        self.bar: Any = None
        self.phase = ""

    def __enter__(self) -> Any:
        return self.update if self.enabled else None

    def update(self, phase: str, done: int, total: int) -> None:
        from tqdm import tqdm

        if phase != self.phase:
            if self.bar is not None:
                self.bar.close()
            self.bar = tqdm(
                total=total, desc=phase, file=sys.stderr, leave=False, dynamic_ncols=True
            )
            self.phase = phase
        self.bar.total = total
        self.bar.n = done
        self.bar.refresh()

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()


def _print_text(result: ScanResult, args: argparse.Namespace, baselined: int, out: Any) -> None:
    write = out.write
    for number, finding in enumerate(result.findings, 1):
        _print_finding(number, finding, args.show_ngrams, write)
    copies = sum(len(f.locations) for f in result.findings)
    langs = ", ".join(f"{lang} S {fp}" for lang, fp in sorted(result.ssets.items()))
    summary = (
        f"{len(result.findings)} clone classes ({copies} copies) in {result.files} files, "
        f"{result.snippets} snippets, threshold {result.config.threshold:g}"
    )
    if baselined:
        summary += f", {baselined} baselined"
    write(f"\n{summary}\n")
    write(f"ranked by {RANKING}\n")
    if result.filtered:
        count = sum(result.filtered.values())
        why = ", ".join(f"{n} {r}" for r, n in sorted(result.filtered.items(), key=lambda x: -x[1]))
        noun = "copy" if count == 1 else "copies"
        write(f"{count} candidate {noun} filtered on purpose: {why}\n")
    if langs:
        write(f"signature {result.config.signature()}  {langs}\n")
    if result.generated:
        count = len(result.generated)
        write(
            f"{count} generated file{'s' if count != 1 else ''} compared only with hand-written code\n"
        )
    if result.undecodable:
        count = len(result.undecodable)
        write(
            f"{count} file{'s' if count != 1 else ''} partly undecodable"
            " (bytes replaced by U+FFFD): "
            + ", ".join(f"{display_path(p)} ({n})" for p, n in list(result.undecodable.items())[:5])
            + (" ..." if count > 5 else "")
            + "\n"
        )
    if result.skipped:
        reasons = Counter(_reason_group(r) for _, r in result.skipped)
        count = len(result.skipped)
        write(
            f"{count} file{'s' if count != 1 else ''} not indexed: "
            + ", ".join(f"{n} {r}" for r, n in reasons.most_common())
            + "\n"
        )
        shown = (
            result.skipped
            if args.show_skipped
            else [s for s in result.skipped if not s[1].startswith("not code")][:20]
        )
        for path, reason in shown:
            write(f"  skipped {display_path(path)}: {reason}\n")
        if not args.show_skipped and len(result.skipped) > len(shown):
            write(f"  ... (--show-skipped lists all {len(result.skipped)})\n")


def _print_agent(result: ScanResult, baselined: int, out: Any) -> None:
    """``--format agent``: one line per copy, then one summary line (no colour codes)."""
    from crystal_lsp.clones.agent import agent_lines, agent_summary

    summary = agent_summary(
        result.findings,
        result.files,
        result.config.threshold,
        skipped=len(result.skipped),
        filtered=sum(result.filtered.values()),
        baselined=baselined,
    )
    out.write("".join(line + "\n" for line in [*agent_lines(result.findings), summary]))


def _reason_group(reason: str) -> str:
    return reason.split(" (")[0]


def _print_finding(number: int, finding: Finding, show_ngrams: bool, write: Any) -> None:
    rep = finding.locations[finding.representative]
    write(
        f"[{number}] {finding.type} copies of {display_path(rep.path)}:{rep.first_line}-{rep.last_line}"
        f" ({display_path(rep.describe() or 'code')}), {finding.language}, {len(finding.locations)} locations,"
        f" lowest similarity {finding.score:.3f}, {finding.copied} copied tokens\n"
    )
    write(
        f"  {display_path(rep.path)}:{rep.first_line}-{rep.last_line}  {display_path(rep.describe())}  (representative)\n"
    )
    for pair in finding.pairs:
        loc = finding.locations[pair.b if pair.a == finding.representative else pair.a]
        write(
            f"  {display_path(loc.path)}:{loc.first_line}-{loc.last_line}  {display_path(loc.describe())}"
            f"  similarity {pair.similarity:.3f}  CrystalBLEU {pair.crystalbleu:.3f}"
            f"  copied {pair.copied} tokens\n"
        )
    if show_ngrams and finding.shared_ngrams:
        write(
            "    shared non-trivial n-grams: "
            + "  |  ".join(" ".join(g) for g in finding.shared_ngrams)
            + "\n"
        )
