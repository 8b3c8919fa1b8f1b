"""Running a measurement or a peer tool in its own process: wall and CPU time, its own peak RSS
(``wait4``), the load average before and after; and what ran (git head, package versions)."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
"""The repository (the working directory of every measured process)."""


CPU_USED = [0.0]  # CPU seconds of every measurement process (and its workers) so far


def run_process(cmd: list[str], timeout: float = 3600) -> dict[str, Any]:
    """Run a command; wall time, exit code, stdout/stderr and its own peak RSS (``wait4``).

    ``wait4`` reports the maximum RSS over the child and the descendants it waited for
    (e.g. a process pool), independently of any other child of this process.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        load0 = os.getloadavg()[0]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT)
        deadline = t0 + timeout
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, ru = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        CPU_USED[0] += ru.ru_utime + ru.ru_stime
        out.seek(0)
        err.seek(0)
        return {
            "returncode": proc.returncode,
            "wall_s": wall,
            "rss_peak_mb": ru.ru_maxrss / 1024,
            "cpu_s": ru.ru_utime + ru.ru_stime,
            "stdout": out.read().decode(errors="replace"),
            "stderr": err.read().decode(errors="replace"),
            "load_before": load0,
            "load_after": os.getloadavg()[0],
        }


def _strip_io(proc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in proc.items() if k not in ("stdout", "stderr")}


def _git_head() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip() + (
            "+dirty"
            if subprocess.run(
                ["git", "status", "--porcelain", "crystal_lsp"],
                cwd=ROOT,
                capture_output=True,
                text=True,
            ).stdout.strip()
            else ""
        )
    except OSError:
        return "?"


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    out = {}
    for dist, key in (
        ("pygments", "pygments"),
        ("nltk", "nltk"),
        ("crystalbleu", "crystalbleu"),
        ("crystal-lsp", "crystal_lsp"),
    ):
        try:
            out[key] = version(dist)
        except Exception:
            out[key] = "?"
    return out
