"""Timing and memory of measurements: per-call percentiles, CPU seconds, peak RSS, and their
formatting."""

from __future__ import annotations

import hashlib
import json
import math
import resource
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def maxrss_mb(who: int = resource.RUSAGE_SELF) -> float:
    """Peak RSS in MB (Linux reports KiB)."""
    return resource.getrusage(who).ru_maxrss / 1024


def cpu_seconds(who: int = resource.RUSAGE_SELF) -> float:
    ru = resource.getrusage(who)
    return ru.ru_utime + ru.ru_stime


def digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, ensure_ascii=False).encode()).hexdigest()[:16]


def fmt_s(seconds: float | None) -> str:
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "-"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.1f} µs"


def fmt_x(ratio: float | None) -> str:
    if ratio is None or math.isnan(ratio):
        return "-"
    return f"{ratio:.1f}x" if ratio >= 10 else f"{ratio:.2f}x"


def fmt_mb(mb: float | None) -> str:
    return "-" if mb is None else f"{mb:.0f}"


def timed_calls(calls: Iterable[Callable[[], Any]]) -> dict[str, Any]:
    """Run thunks, timing each; total wall and CPU time of the whole loop."""
    values: list[Any] = []
    times: list[float] = []
    clock = time.perf_counter_ns
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for call in calls:
        t0 = clock()
        values.append(call())
        times.append((clock() - t0) / 1e9)
    return {
        "values": values,
        "times": times,
        "wall_s": time.perf_counter() - wall0,
        "cpu_s": time.process_time() - cpu0,
    }


def summarize(run: dict[str, Any]) -> dict[str, Any]:
    """Per-call statistics of a timed run (drops the raw per-call times)."""
    times = run.get("times") or []
    out = {k: v for k, v in run.items() if k not in ("times", "values")}
    out["calls"] = len(times)
    out["p50_s"] = percentile(times, 50)
    out["p95_s"] = percentile(times, 95)
    out["sum_s"] = sum(times)
    return out
