"""Realistic typing against two installations of the server, alternating in one run.

    .venv/bin/python bench/typing_ab.py --baseline /path/to/older/.venv/bin/python

Both servers index CPython's standard library (each its own warm cache, tests excluded as in
``server_bench.py``) and open the same 3,000-line file; then, round by round with the order
rotating, each gets a statement typed character by character at the end of a function body and
never deleted (:func:`server_phases.typing_latencies`), every keystroke waited for. Reported per
server: the client's latency (``didChange`` to the ``publishDiagnostics`` of that version, minus
the debounce) and the server's own check time from its ``-vv`` log, p50/p95, with the load
average. Results: ``results/typing_ab.{md,json}``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

from server_bench import DEBOUNCE_MS, TARGET, Bench, server_checks, summary
from server_phases import Editor, typing_latencies

HERE = Path(__file__).resolve().parent


def _version(python: str) -> str:
    done = subprocess.run(
        [python, "-m", "crystal_lsp", "--version"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or done.stderr.strip()[-200:]


async def _session(root: Path, cache: Path, python: str) -> tuple[Bench, Editor]:
    bench = Bench(root, cache, python)
    await bench.start()
    await bench.ready()
    await bench.first_diagnostics(TARGET)
    uri = (root / TARGET).as_uri()
    editor = bench.editor = Editor(bench, uri, (root / TARGET).read_text(encoding="utf-8"))
    return bench, editor


async def run(args: argparse.Namespace) -> dict[str, Any]:
    root = Path(sysconfig.get_paths()["stdlib"]).resolve()
    workdir = Path(args.workdir)
    pythons = {"baseline": args.baseline, "current": args.current}
    sessions = {}
    for name, python in pythons.items():  # each its own warm cache: indexing is not measured
        cache = workdir / name / "cache"
        cache.mkdir(parents=True, exist_ok=True)
        warm, _ = await _session(root, cache, python)
        await warm.stop()
        sessions[name] = await _session(root, cache, python)
    typed: dict[str, list[float]] = {name: [] for name in pythons}
    loads = []
    for r in range(args.rounds):
        order = list(pythons) if r % 2 == 0 else list(reversed(pythons))
        for name in order:
            loads.append(os.getloadavg()[0])
            _, editor = sessions[name]
            typed[name] += await typing_latencies(editor, args.keys, args.seed + r, DEBOUNCE_MS)
    out: dict[str, Any] = {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}",
        "target": TARGET,
        "rounds": args.rounds,
        "keys_per_round": args.keys,
        "load_1min": [round(min(loads), 2), round(max(loads), 2)],
        "servers": {},
    }
    for name, (bench, _) in sessions.items():
        checks = [ms for v, ms in server_checks(bench.log) if v > 3]
        out["servers"][name] = {
            "python": pythons[name],
            "version": _version(pythons[name]),
            "typing_latency_ms": summary(typed[name]),
            "server_check_ms": summary(checks),
        }
        await bench.stop()
    return out


def render(doc: dict[str, Any]) -> str:
    """The Markdown report."""
    lines = [
        "# Realistic typing, two servers alternating",
        "",
        f"{doc['date']}; {doc['machine']}; `{doc['target']}` (3,000 lines); {doc['rounds']} "
        f"rounds of {doc['keys_per_round']} keystrokes per server, the order rotating; load "
        f"average (1 min) {doc['load_1min'][0]}-{doc['load_1min'][1]}. Latency: `didChange` to "
        f"its `publishDiagnostics`, minus the {DEBOUNCE_MS} ms debounce; check: the server's "
        "own time (its log).",
        "",
        "| server | installation | latency p50 | p95 | check p50 | p95 | keystrokes |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in doc["servers"].items():
        lat, chk = s["typing_latency_ms"], s["server_check_ms"]
        lines.append(
            f"| {name} | `{s['python']}` ({s['version']}) | {lat['p50']} ms | {lat['p95']} ms | "
            f"{chk['p50']} ms | {chk['p95']} ms | {lat['n']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", required=True, help="python of the older installation")
    ap.add_argument("--current", default=str(HERE.parent / ".venv" / "bin" / "python"))
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--keys", type=int, default=40, help="keystrokes per round and server")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", default="/tmp/crystal-typing-ab")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "typing_ab")
    args = ap.parse_args()
    doc = asyncio.run(run(args))
    args.out.with_suffix(".json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(render(doc), encoding="utf-8")
    print(render(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
