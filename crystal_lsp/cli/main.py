"""Entry point of ``crystal-lsp``: argument parsing, inside the one error boundary.

Exit codes (:func:`crystal_lsp.errors.run_guarded`): 0 success / no findings, 1 findings,
2 usage or input error (a failing git too: ``git failed: ...``), 3 internal error, 130
interrupted.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from crystal_lsp.errors import run_guarded
from crystal_lsp.version import __version__

PROG = "crystal-lsp"


def _core() -> str:
    """Which implementation of the metric core is in use, for ``--version``."""
    from crystal_lsp.metric.ngrams import native_status

    return f"core: {native_status()}"


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every subcommand."""
    from crystal_lsp.cli import disting, mcp, scan, score, serve, sset

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="CrystalBLEU code similarity: scores, trivially shared n-grams, "
        "distinguishability, near-duplicate reports and a language server.",
        epilog="exit codes: 0 ok, 1 findings, 2 usage or input error, 3 internal error",
    )
    parser.add_argument(
        "-V", "--version", action="version", version=f"%(prog)s {__version__} ({_core()})"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    scan.add_parser(sub)
    score.add_parser(sub)
    sset.add_parser(sub)
    disting.add_parser(sub)
    serve.add_parser(sub)
    mcp.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``crystal-lsp`` and return its exit code."""
    return run_guarded(PROG, lambda: _run(build_parser().parse_args(argv)))


def _run(args: argparse.Namespace) -> int:
    return int(args.run(args))


if __name__ == "__main__":
    raise SystemExit(main())
