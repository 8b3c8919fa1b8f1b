"""``crystal-lsp scan``: near-duplicate code in a repository, as text, JSON, SARIF or HTML."""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from crystal_lsp.cli.common import (
    add_engine_options,
    add_progress,
    check_output,
    emit_json,
    progress_enabled,
)
from crystal_lsp.clones.findings import at_level
from crystal_lsp.clones.options import add_scan_options, command_line_overrides
from crystal_lsp.distributed import engine_name
from crystal_lsp.errors import EXIT_FINDINGS, EXIT_OK, JOBS, CrystalError
from crystal_lsp.text.datafiles import write_atomic

if TYPE_CHECKING:
    from crystal_lsp.clones.reports.annotations import Focus
    from crystal_lsp.clones.scan import ScanResult


FORMATS = ("text", "json", "sarif", "agent", "html", "github", "gitlab")
FORMAT_HELP = (
    "output format (agent: one plain line per copy and a summary, for coding agents; "
    "html: one self-contained page, copies side by side, best with -o report.html; "
    "github: annotations for GitHub Actions' log and pull request; gitlab: GitLab's Code "
    "Quality report, for merge requests; docs/ci.md has both recipes)"
)
EPILOG = (
    "exit codes: 0 no copies, 1 copies (with --all: any finding), 2 usage error, "
    "3 internal error\n"
    "examples:\n  crystal-lsp scan\n  crystal-lsp scan src --format sarif > clones.sarif\n"
    "  crystal-lsp scan --format html -o report.html\n"
    '  crystal-lsp scan --new-since "$(git merge-base origin/main HEAD)" --format github\n'
    "  crystal-lsp scan --update-baseline --baseline .crystal-baseline.json"
)


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "scan",
        help="report near-duplicate code in a repository",
        description="Find clone classes (exact, renamed and near copies of functions, classes, "
        "blocks and statement runs) in a repository or directory. Settings come from "
        "[tool.crystal-lsp] in pyproject.toml, overridden by options.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", nargs="?", default=None, help="repository or directory (default: .)")
    p.add_argument(
        "--demo",
        action="store_true",
        help="scan the small example project shipped with crystal-lsp",
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
        "--no-cache", action="store_true", help="ignore cached results (the index is still reused)"
    )
    p.add_argument("--jobs", type=JOBS, help="tokenizer processes (default: the idle CPUs)")
    add_engine_options(p, "tokenizing, S-set counting and pair scoring")
    _add_report_options(p)
    add_progress(p)
    p.set_defaults(run=run)


def _add_report_options(p: argparse.ArgumentParser) -> None:
    """What the report shows, in which format, and where it goes."""
    p.add_argument("--format", choices=FORMATS, default="text", help=FORMAT_HELP)
    p.add_argument(
        "--all",
        dest="show_similar",
        action="store_const",
        const=True,
        help="also show findings of similar structure (the setting show-similar)",
    )
    p.add_argument(
        "--show-ngrams", action="store_true", help="show the non-trivial n-grams copies share"
    )
    p.add_argument(
        "--show-skipped", action="store_true", help="list every skipped file in text output"
    )
    p.add_argument(
        "--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout"
    )


def _demo_path() -> str:
    from importlib import resources

    return str(resources.files("crystal_lsp").joinpath("examples").joinpath("demo"))


def run(args: argparse.Namespace) -> int:
    # Imported here so that other subcommands (and --help) do not pay for numpy and the index.
    from crystal_lsp.clones.created import change_since, keep_created
    from crystal_lsp.clones.files import filter_paths, list_files
    from crystal_lsp.clones.reports.baseline import load_baseline, without_baselined, write_baseline
    from crystal_lsp.clones.settings import load_config

    root = _root(args)
    check_output(args.output, "--output")
    if args.update_baseline:
        check_output(args.baseline, "--baseline")
    config = load_config(root, command_line_overrides(args))
    paths = list_files(root, config)
    before = None
    focus = None
    if args.new_since:
        added, before = change_since(root, args.new_since, untracked=not config.tracked_only)
        focus = {p: spans for p, spans in added.items() if p in set(paths)}
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
    if before is not None and focus is not None:
        # only the copies the change creates: edits of older copies are counted, not reported
        keep_created(result, focus, before, paths, lambda p: filter_paths(p, config))
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
    _report(result, args, baselined, paths, focus)
    shown = at_level(result.findings, result.config.show_similar)
    return EXIT_FINDINGS if shown else EXIT_OK


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


def _report(
    result: ScanResult,
    args: argparse.Namespace,
    baselined: int,
    paths: list[str],
    focus: Focus | None,
) -> None:
    """Write the report in the chosen format to ``--output`` or stdout."""
    from crystal_lsp.clones.reports.annotations import to_code_quality, to_github
    from crystal_lsp.clones.reports.sarif import to_sarif

    shown = at_level(result.findings, result.config.show_similar)
    # a file gets the whole report at once (written atomically), or keeps what it held
    out: Any = io.StringIO() if args.output else sys.stdout
    if args.format == "json":
        doc = result.to_json(with_ngrams=args.show_ngrams)
        doc["summary"]["baselined"] = baselined
        _write_json(doc, out)
    elif args.format == "sarif":
        _write_json(to_sarif(result, focus), out)
    elif args.format == "gitlab":
        _write_json(to_code_quality(shown, focus), out)
    elif args.format == "github":
        out.write("".join(line + "\n" for line in to_github(shown, focus)))
    elif args.format == "agent":
        _print_agent(result, baselined, out)
    elif args.format == "html":
        out.write(_html(result, args, baselined, paths))
    else:
        _print_text(result, args, baselined, out)
    if args.output:
        data = out.getvalue().encode("utf-8", "backslashreplace")
        write_atomic(args.output, data, "--output")


def _html(result: ScanResult, args: argparse.Namespace, baselined: int, paths: list[str]) -> str:
    """The HTML page; its ``path:line`` links are relative to where it is written."""
    from urllib.parse import quote

    from crystal_lsp.clones.reports.htmlcode import SourceFiles
    from crystal_lsp.clones.reports.htmlreport import line_counts, render

    root, limit = result.root, result.config.max_file_bytes
    skipped = {p for p, _ in result.skipped}
    lines = line_counts(root, [p for p in paths if p not in skipped], limit)
    base = os.path.dirname(os.path.abspath(args.output)) if args.output else os.getcwd()

    def link(path: str, line: int) -> str:
        rel = os.path.relpath(os.path.join(root, path), base).replace(os.sep, "/")
        return quote(rel.encode("utf-8", "surrogateescape")) + f"#L{line}"

    doc = result.to_json(with_ngrams=args.show_ngrams)
    return render(doc, SourceFiles(root, limit), lines, link, baselined)


def _write_json(doc: Any, out: Any) -> None:
    if out is sys.stdout:
        emit_json(doc)
        return
    from crystal_lsp.cli.jsonout import dumps_indented

    # one write, as emit_json: json.dump streams hundreds of thousands of writes
    out.write(dumps_indented(doc) + "\n")


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
    from crystal_lsp.clones.reports.text import write_text

    write_text(
        result,
        out.write,
        show_all=result.config.show_similar,
        show_ngrams=args.show_ngrams,
        show_skipped=args.show_skipped,
        baselined=baselined,
    )


def _print_agent(result: ScanResult, baselined: int, out: Any) -> None:
    """``--format agent``: one line per copy, then one summary line (no colour codes)."""
    from crystal_lsp.clones.reports.agent import agent_lines, agent_summary

    shown = at_level(result.findings, result.config.show_similar)
    summary = agent_summary(
        result.findings,
        result.files,
        result.config.threshold,
        skipped=len(result.skipped),
        filtered=sum(result.filtered.values()),
        baselined=baselined,
        show_all=result.config.show_similar,
    )
    out.write("".join(line + "\n" for line in [*agent_lines(shown), summary]))
