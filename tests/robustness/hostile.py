"""Helpers of the hostile-input tests (issue 14).

Each test builds the hostile thing for real (a device symlink, a named pipe, a file name that is
not UTF-8, a full file system when the test may mount one) and runs the real command in a
subprocess with a memory limit and a time-out, so that a regression fails instead of hanging or
eating the machine.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

MEMORY_LIMIT = 3 << 30


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_cli(
    args: Sequence[str],
    cwd: Path,
    cache: Path,
    *,
    module: str = "crystal_lsp",
    timeout: float = 120,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """``python -m MODULE ARGS`` with its own cache, a memory limit and a time-out."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        capture_output=True,
        timeout=timeout,
        preexec_fn=_limit_memory,
        env={**os.environ, "CRYSTAL_LSP_CACHE_DIR": str(cache), **(env or {})},
    )


def git(cwd: Path, *args: str) -> None:
    """Run git quietly with a fixed identity."""
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


BODY = """def compute_totals(orders, tax_rate):
    subtotal = 0
    for order in orders:
        for item in order.items:
            subtotal += item.price * item.quantity
            if item.discount:
                subtotal -= item.discount
            if item.coupon is not None and item.coupon.active:
                subtotal -= item.coupon.rate * item.price
    tax = round(subtotal * tax_rate, 2)
    return subtotal + tax, tax
"""
BODY_LINES = BODY.count("\n")
"""Long enough to be a copy worth a look (not a short repeat) when pasted elsewhere."""
