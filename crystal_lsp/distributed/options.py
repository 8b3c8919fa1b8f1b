"""The ``--engine`` and ``--scheduler`` options shared by ``sset build``, ``scan`` and ``disting``."""

from __future__ import annotations

import argparse

from crystal_lsp.distributed import ENGINES


def add_engine_options(parser: argparse.ArgumentParser, work: str) -> None:
    """Add ``--engine local|dask`` and ``--scheduler ADDRESS``; ``work`` says what they run."""
    group = parser.add_argument_group("engine")
    group.add_argument(
        "--engine",
        choices=ENGINES,
        default=None,
        help=f"run {work} in local processes (default) or on a Dask cluster "
        "(needs crystal-lsp[dask]; without --scheduler, a local cluster of --jobs workers)",
    )
    group.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Dask scheduler to use, e.g. tcp://10.0.0.5:8786 (implies --engine dask; "
        "default: $DASK_SCHEDULER_ADDRESS, else a local cluster)",
    )
