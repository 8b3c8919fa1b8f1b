"""Entry point of ``crystal-lsp``: argument parsing and the one error boundary.

Exit codes: 0 success / no findings, 1 findings, 2 usage or input error, 3 internal error,
130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from crystal_lsp.errors import EXIT_INTERNAL, CrystalError
from crystal_lsp.version import __version__


def _core() -> str:
    """Which implementation of the metric core is in use, for ``--version``."""
    from crystal_lsp.metric.ngrams import native_status

    return f"core: {native_status()}"


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every subcommand."""
    from crystal_lsp.cli import disting, scan, score, serve, sset

    parser = argparse.ArgumentParser(
        prog="crystal-lsp",
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``crystal-lsp`` and return its exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except CrystalError as exc:
        print(f"crystal-lsp: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("crystal-lsp: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception:
        print(
            f"crystal-lsp: internal error (crystal-lsp {__version__}); please report it with this trace:",
            file=sys.stderr,
        )
        traceback.print_exc(file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    raise SystemExit(main())
