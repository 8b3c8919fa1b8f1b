"""Running a peer tool (or ours) as a whole process tree: wall and CPU seconds, the tree's peak RSS
(psutil, and ``/usr/bin/time``'s maximum), exit code, the load average when it started."""

from __future__ import annotations

import os
import resource
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

try:
    import psutil
except ImportError:  # pragma: no cover - psutil is in the bench extra
    psutil = None


TIME_BIN = "/usr/bin/time" if Path("/usr/bin/time").exists() else None


def _tree_rss(proc: Any) -> int:
    total = 0
    try:
        procs = [proc, *proc.children(recursive=True)]
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return total


def _kill_tree(pid: int) -> None:
    if psutil is None:
        return
    try:
        parent = psutil.Process(pid)
        kids = parent.children(recursive=True)
    except psutil.NoSuchProcess:
        return
    for p in [*kids, parent]:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass


def measure(
    argv: list[str],
    cwd: Path,
    stdout: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 900.0,
) -> dict[str, Any]:
    """Run argv; wall seconds, peak RSS (MB) of the process tree, exit code, stderr tail."""
    fd, timefile = tempfile.mkstemp(prefix="cb-time-")
    os.close(fd)
    full = [TIME_BIN, "-f", "%M", "-o", timefile, *argv] if TIME_BIN else list(argv)
    peak = 0
    timed_out = False
    load1 = os.getloadavg()[0]
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with (
        open(stdout, "wb") if stdout else open(os.devnull, "wb") as out,
        tempfile.TemporaryFile() as err,
    ):
        t0 = time.perf_counter()
        p = subprocess.Popen(full, cwd=cwd, stdout=out, stderr=err, env=env)
        ps = psutil.Process(p.pid) if psutil is not None else None
        while p.poll() is None:
            if ps is not None:
                peak = max(peak, _tree_rss(ps))
            elapsed = time.perf_counter() - t0
            if elapsed > timeout:
                timed_out = True
                _kill_tree(p.pid)
                p.wait()
                break
            time.sleep(0.01 if elapsed < 2 else 0.05)
        wall = time.perf_counter() - t0
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        err.seek(0)
        tail = err.read()[-3000:].decode("utf-8", "replace")
    try:
        maxrss_kb = int(Path(timefile).read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        maxrss_kb = 0
    Path(timefile).unlink(missing_ok=True)
    return {
        "wall": round(wall, 3),
        "cpu": round(ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime, 2),
        "load1": round(load1, 2),
        "rss_mb": round(max(peak, maxrss_kb * 1024) / 2**20, 1),
        "rc": p.returncode,
        "timed_out": timed_out,
        "stderr": tail,
    }
