"""Entry point of ``crystal-lsp``: argument parsing, inside the one error boundary.

Exit codes (:func:`crystal_lsp.errors.run_guarded`): 0 success / no findings, 1 findings,
2 usage or input error (a failing git too: ``git failed: ...``), 3 internal error, 130
interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from crystal_lsp.errors import run_guarded
from crystal_lsp.version import __version__

PROG = "crystal-lsp"
COMMANDS = ("scan", "score", "sset", "disting", "serve", "mcp")
"""The subcommands, each a module of this package with ``add_parser(sub)`` and a ``run``."""


def _core() -> str:
    """Which implementation of the metric core is in use, for ``--version``."""
    from crystal_lsp.metric.ngrams import native_status

    return f"core: {native_status()}"


class _Version(argparse.Action):
    """``--version``, naming the metric core (which is loaded only to answer this)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        sys.stdout.write(f"{parser.prog} {__version__} ({_core()})\n")
        parser.exit()


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser: every subcommand, or only the one ``argv`` starts with.

    A command line that names its subcommand first is parsed the same either way; loading only
    that subcommand's module spares it the imports of the others (the metric and numpy for
    ``score``, Dask's adapters for ``disting``), which a cached scan does not need.
    """
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="CrystalBLEU code similarity: scores, trivially shared n-grams, "
        "distinguishability, near-duplicate reports and a language server.",
        epilog="exit codes: 0 ok, 1 findings, 2 usage or input error, 3 internal error",
    )
    parser.add_argument(
        "-V", "--version", action=_Version, nargs=0, help="show the version and exit"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    named = [argv[0]] if argv and argv[0] in COMMANDS else COMMANDS
    for name in named:
        importlib.import_module(f"crystal_lsp.cli.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``crystal-lsp`` and return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    return run_guarded(PROG, lambda: _run(build_parser(args).parse_args(args)))


def _run(args: argparse.Namespace) -> int:
    return int(args.run(args))


if __name__ == "__main__":
    raise SystemExit(main())
