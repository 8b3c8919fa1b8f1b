#!/usr/bin/env python3
"""``crystal-lsp mcp`` for agents: check_duplication latency and recall, next to jscpd 5's MCP.

    .venv/bin/python bench/mcp_bench.py               # 30 renamed + 30 gapped copies, 3 rounds
    .venv/bin/python bench/mcp_bench.py --rounds 1    # one round
    .venv/bin/python bench/mcp_bench.py --startup 20  # start-up only: 20 starts of each server

The corpus is CPython's standard library of the running interpreter (tests excluded), copied
unmodified by ``bench/planted/generate.py`` (the clone benchmark's generator, same seed): the
snippets are that generator's 30 type-2 copies (functions consistently renamed) and 30 type-3
copies ("gapped": renamed, one statement inserted and one deleted) of real stdlib functions,
dedented, sent as an agent would send them. A call finds its original when a reported location
is in the original's file and overlaps its lines.

Both servers run over stdio, driven by the official MCP SDK's client: ``crystal-lsp mcp ROOT``
(its own cache directory, warm after the first run) and, when the clone benchmark's tools venv
holds jscpd 5 with ``--mcp``, ``jscpd --mcp ROOT`` asked twice per snippet: with its defaults
(exact clones) and with ``kinds: [exact, renamed, similar]``. The index is built first (a
warm-up call waits for it; that time is reported as time-to-ready); then every round sends every
snippet to each server, alternating which goes first. Reported: latency p50/p95/max per call
(client wall-clock), the servers' CPU time over the measured calls (psutil), their peak RSS
(VmHWM), and the load average before and after each phase (2 shared cores).

Writes bench/results/mcp_bench.{md,json}.

``--startup N`` measures start-up alone: N fresh starts of each server on the same corpus,
alternating (``crystal-lsp mcp``; the same with the handshake left to the SDK,
``CRYSTAL_LSP_MCP_FRONT=0``; ``jscpd --mcp``), each timed from the spawn to the answer of
``initialize`` and of ``tools/list`` (client wall-clock), with the server's CPU time until then
and the load average; writes bench/results/mcp_startup.{md,json}.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import statistics
import sys
import textwrap
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE / "planted"))

import generate  # noqa: E402
import psutil  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

SEED = 20240601
N = 30
JSCPD = Path.home() / ".cache" / "crystal-lsp-bench" / "real" / "tools" / "venv" / "bin" / "jscpd"
TIMEOUT = 1800.0
OURS = "crystal-lsp mcp"
J_DEFAULT = "jscpd 5 --mcp (default kinds)"
J_ALL = "jscpd 5 --mcp (exact+renamed+similar)"


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def snippets(workdir: Path) -> tuple[Path, list[dict[str, Any]]]:
    """The unmodified corpus and the 60 snippets (renamed and gapped copies) with their origin."""
    made = generate.generate("python", workdir, n=N, seed=SEED)
    out = []
    for kind, t in (("renamed", "t2"), ("gapped", "t3")):
        manifest = json.loads(Path(str(made[t])).read_text())
        root = Path(manifest["root"])
        for plant in manifest["plants"]:
            copy = plant["copy"]
            lines = (root / copy["path"]).read_text(encoding="utf-8").splitlines(keepends=True)
            code = textwrap.dedent("".join(lines[copy["start"] - 1 : copy["end"]]))
            out.append(
                {"kind": kind, "id": plant["id"], "name": plant["name"], "code": code}
                | {"original": plant["original"]}
            )
    return Path(str(made["original"])), out


def overlaps(path: str, first: int, last: int, original: dict[str, Any]) -> bool:
    return path == original["path"] and first <= original["end"] and original["start"] <= last


def ours_hit(result: Any, original: dict[str, Any]) -> bool:
    found = (result.structured_content or {}).get("duplicates", [])
    return any(
        overlaps(
            d["original"]["path"], d["original"]["start_line"], d["original"]["end_line"], original
        )
        for d in found
    )


def jscpd_hit(result: Any, original: dict[str, Any]) -> bool:
    doc = result.structured_content
    if doc is None and result.content:
        try:
            doc = json.loads(result.content[0].text)
        except (ValueError, AttributeError):
            doc = {}
    return any(
        overlaps(d.get("file", ""), d.get("fileStartLine", 0), d.get("fileEndLine", 0), original)
        for d in (doc or {}).get("duplications", [])
    )


class Server:
    """One MCP server subprocess with a client session."""

    def __init__(self, name: str, params: StdioServerParameters, call: Any, hit: Any) -> None:
        self.name, self.params, self.make_args, self.hit = name, params, call, hit
        self.session: ClientSession | None = None
        self.proc: psutil.Process | None = None
        self.latencies: list[float] = []
        self.cpu_per_call: list[float] = []
        self.hits: dict[str, set[int]] = {"renamed": set(), "gapped": set()}
        self.misses: dict[str, set[int]] = {"renamed": set(), "gapped": set()}
        self.errors = 0
        self.ready_seconds = 0.0

    async def start(self, stack: AsyncExitStack) -> None:
        before = {p.pid for p in psutil.Process().children(recursive=True)}
        read, write = await stack.enter_async_context(
            stdio_client(self.params, errlog=open(os.devnull, "w"))
        )
        self.session = await stack.enter_async_context(
            ClientSession(read, write, read_timeout_seconds=TIMEOUT)
        )
        await self.session.initialize()
        new = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
        self.proc = min(new, key=lambda p: p.create_time()) if new else None

    async def call(self, snippet: dict[str, Any], record: bool = True) -> float:
        assert self.session is not None
        name, args = self.make_args(snippet)
        cpu = self.cpu()
        started = time.perf_counter()
        result = await self.session.call_tool(name, args)
        seconds = time.perf_counter() - started
        if record:
            self.latencies.append(seconds)
            self.cpu_per_call.append(self.cpu() - cpu)
            if result.is_error:
                self.errors += 1
            kind = snippet["kind"]
            if not result.is_error and self.hit(result, snippet["original"]):
                self.hits[kind].add(snippet["id"])
            else:
                self.misses[kind].add(snippet["id"])
        return seconds

    def cpu(self) -> float:
        if self.proc is None:
            return float("nan")
        times = self.proc.cpu_times()
        return times.user + times.system + times.children_user + times.children_system

    def peak_rss_mb(self) -> float:
        if self.proc is None:
            return float("nan")
        with open(f"/proc/{self.proc.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return float("nan")


def servers(root: Path, cache: Path, with_jscpd: bool) -> list[Server]:
    env = {"CRYSTAL_LSP_CACHE_DIR": str(cache)}
    ours = Server(
        OURS,
        StdioServerParameters(
            # the bench measures answers on the index, so its first call waits for it
            command=sys.executable,
            args=["-m", "crystal_lsp", "mcp", str(root), "--wait", "3600"],
            env=env,
        ),
        lambda s: ("check_duplication", {"code": s["code"], "language": "python"}),
        ours_hit,
    )
    out = [ours]
    if with_jscpd:
        params = StdioServerParameters(command=str(JSCPD), args=["--mcp", str(root)])
        out.append(
            Server(
                J_DEFAULT,
                params,
                lambda s: ("check_duplication", {"code": s["code"], "format": "python"}),
                jscpd_hit,
            )
        )
        out.append(
            Server(
                J_ALL,
                params,
                lambda s: (
                    "check_duplication",
                    {
                        "code": s["code"],
                        "format": "python",
                        "kinds": ["exact", "renamed", "similar"],
                    },
                ),
                jscpd_hit,
            )
        )
    return out


def jscpd_offers_mcp() -> tuple[bool, str]:
    if not JSCPD.exists():
        return False, f"jscpd 5 is not installed at {JSCPD} (bench/clone_bench.py installs it)"
    import subprocess

    help_text = subprocess.run([str(JSCPD), "--help"], capture_output=True, text=True).stdout
    version = subprocess.run([str(JSCPD), "--version"], capture_output=True, text=True).stdout
    if "--mcp" not in help_text:
        return False, f"{version.strip()} has no --mcp"
    return True, version.strip()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    root, items = snippets(args.workdir)
    has_jscpd, jscpd_note = jscpd_offers_mcp()
    doc: dict[str, Any] = {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python bench/mcp_bench.py " + " ".join(sys.argv[1:]),
        "machine": f"{os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}",
        "corpus": json.loads((args.workdir / "python" / "original.json").read_text()),
        "snippets": {"renamed": N, "gapped": N},
        "rounds": args.rounds,
        "jscpd": jscpd_note,
        "servers": {},
    }
    cache = args.workdir / "mcp-cache"
    warm_before = cache.exists()
    all_servers = servers(root, cache, has_jscpd)
    async with AsyncExitStack() as stack:
        for server in all_servers:
            phase_load = load()
            started = time.perf_counter()
            await server.start(stack)
            await server.call(items[0], record=False)  # waits for the index / the scan
            server.ready_seconds = time.perf_counter() - started
            doc["servers"][server.name] = {
                "ready_s": round(server.ready_seconds, 2),
                "ready_load": [phase_load, load()],
            }
        cpu_before = [s.cpu() for s in all_servers]
        measure_load = load()
        for r in range(args.rounds):
            for i, snippet in enumerate(items):
                order = all_servers if (i + r) % 2 == 0 else list(reversed(all_servers))
                for server in order:
                    await server.call(snippet, record=True)
        measure_load_after = load()
        for server, before in zip(all_servers, cpu_before):
            lat = server.latencies
            calls = len(lat)
            doc["servers"][server.name].update(
                {
                    "calls": calls,
                    "errors": server.errors,
                    "p50_ms": round(1000 * statistics.median(lat), 1),
                    "p95_ms": round(1000 * percentile(lat, 0.95), 1),
                    "max_ms": round(1000 * max(lat), 1),
                    "cpu_ms_per_call": round(1000 * (server.cpu() - before) / calls, 1),
                    "cpu_p50_ms": round(1000 * statistics.median(server.cpu_per_call), 1),
                    "cpu_p95_ms": round(1000 * percentile(server.cpu_per_call, 0.95), 1),
                    "peak_rss_mb": round(server.peak_rss_mb(), 0),
                    "found": {k: len(v) for k, v in server.hits.items()},
                    "missed": {k: sorted(server.misses[k] - server.hits[k]) for k in server.misses},
                    "load": [measure_load, measure_load_after],
                }
            )
    doc["cache_warm_at_start"] = warm_before
    return doc


def report(doc: dict[str, Any]) -> str:
    rows = []
    for name, s in doc["servers"].items():
        rows.append(
            f"| {name} | {s['found']['renamed']}/30 | {s['found']['gapped']}/30 | {s['p50_ms']} | "
            f"{s['p95_ms']} | {s['max_ms']} | {s['cpu_ms_per_call']} | {s['cpu_p50_ms']} | "
            f"{s['cpu_p95_ms']} | {s['peak_rss_mb']:.0f} | "
            f"{s['ready_s']} | {s['errors']} |"
        )
    ours = doc["servers"][OURS]
    loads = ours["load"]
    lines = [
        "# MCP benchmark: check_duplication on CPython's standard library",
        "",
        f"{doc['date']}, `{doc['command']}`, {doc['machine']}.",
        f"Corpus: {doc['corpus']['source']} ({doc['corpus']['files']} files, "
        f"{doc['corpus']['lines']:,} lines), unmodified. Snippets: the clone benchmark's 30 "
        "renamed (type-2) and 30 gapped (type-3: renamed, one statement inserted, one deleted) "
        "copies of stdlib functions (seed 20240601), dedented. "
        f"{doc['rounds']} rounds of the 60 snippets per server, servers alternating.",
        f"jscpd: {doc['jscpd']}.",
        f"crystal-lsp cache warm at start: {doc['cache_warm_at_start']}.",
        "",
        "| server | renamed found | gapped found | p50 ms | p95 ms | max ms | CPU ms / call | "
        "CPU p50 ms | CPU p95 ms | peak RSS MB | time to ready s | tool errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"Load average (1, 5, 15 min) during the measured calls: {loads[0]} before, {loads[1]} after; "
        "while indexing: "
        + "; ".join(
            f"{n} {s['ready_load'][0]} → {s['ready_load'][1]}" for n, s in doc["servers"].items()
        )
        + ".",
        "",
        "Latency is the client's wall-clock time per call over stdio (the SDK's client); CPU is the "
        "server process's (and its children's) user + system time over the measured calls divided "
        "by the calls, and per call (psutil, clock-tick resolution: 10 ms); peak RSS is the server "
        "process's VmHWM. On a loaded machine the CPU figures are the ones to compare; wall-clock "
        "latency includes waiting for a core. Goals: p95 ≤ 150 ms on a warm index; ≥ 29 of 30 "
        "found for each kind.",
        "",
        "Missed (snippet ids): "
        + "; ".join(f"{n}: {s['missed']}" for n, s in doc["servers"].items()),
        "",
    ]
    return "\n".join(lines)


STARTUP = {
    OURS: ([sys.executable, "-m", "crystal_lsp", "mcp"], {}),
    f"{OURS} (handshake by the SDK)": (
        [sys.executable, "-m", "crystal_lsp", "mcp"],
        {"CRYSTAL_LSP_MCP_FRONT": "0"},
    ),
    "jscpd 5 --mcp": ([str(JSCPD), "--mcp"], {}),
}


async def start_once(command: list[str], env: dict[str, str], root: Path) -> tuple[float, ...]:
    """Seconds from the spawn to the answer of initialize and of tools/list, and CPU seconds."""
    params = StdioServerParameters(command=command[0], args=[*command[1:], str(root)], env=env)
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    started = time.perf_counter()
    async with stdio_client(params, errlog=open(os.devnull, "w")) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=TIMEOUT) as client:
            await client.initialize()
            initialized = time.perf_counter() - started
            await client.list_tools()
            listed = time.perf_counter() - started
            new = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
            cpu = float("nan")
            if new:
                times = min(new, key=lambda p: p.create_time()).cpu_times()
                cpu = times.user + times.system
    return initialized, listed, cpu


async def startup(args: argparse.Namespace) -> dict[str, Any]:
    root, _ = snippets(args.workdir)
    has_jscpd, jscpd_note = jscpd_offers_mcp()
    env = {"CRYSTAL_LSP_CACHE_DIR": str(args.workdir / "mcp-cache"), "PATH": os.environ["PATH"]}
    names = [n for n in STARTUP if has_jscpd or not n.startswith("jscpd")]
    samples: dict[str, list[tuple[float, ...]]] = {n: [] for n in names}
    loads = [load()]
    for r in range(args.startup):
        for name in names if r % 2 == 0 else list(reversed(names)):
            command, extra = STARTUP[name]
            samples[name].append(await start_once(command, {**env, **extra}, root))
    loads.append(load())
    doc: dict[str, Any] = {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python bench/mcp_bench.py " + " ".join(sys.argv[1:]),
        "machine": f"{os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}",
        "root": str(root),
        "starts": args.startup,
        "jscpd": jscpd_note,
        "load": loads,
        "servers": {},
    }
    for name, rows in samples.items():
        init, listed, cpu = ([row[k] for row in rows] for k in range(3))
        doc["servers"][name] = {
            "initialize_p50_ms": round(1000 * statistics.median(init), 1),
            "initialize_p95_ms": round(1000 * percentile(init, 0.95), 1),
            "tools_list_p50_ms": round(1000 * statistics.median(listed), 1),
            "tools_list_p95_ms": round(1000 * percentile(listed, 0.95), 1),
            "cpu_p50_ms": round(1000 * statistics.median(cpu), 1),
        }
    return doc


def startup_report(doc: dict[str, Any]) -> str:
    rows = [
        f"| {name} | {s['initialize_p50_ms']} | {s['initialize_p95_ms']} | "
        f"{s['tools_list_p50_ms']} | {s['tools_list_p95_ms']} | {s['cpu_p50_ms']} |"
        for name, s in doc["servers"].items()
    ]
    return "\n".join(
        [
            "# MCP start-up: from the spawn to the answers of initialize and tools/list",
            "",
            f"{doc['date']}, `{doc['command']}`, {doc['machine']}; root {doc['root']}.",
            f"{doc['starts']} starts of each server, alternating. jscpd: {doc['jscpd']}.",
            "",
            "| server | initialize p50 ms | p95 ms | tools/list p50 ms | p95 ms | "
            "CPU until tools/list, p50 ms |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
            f"Load average (1, 5, 15 min): {doc['load'][0]} before, {doc['load'][1]} after "
            "(2 shared cores: wall-clock times include waiting for a core; CPU is the server "
            "process's own, psutil, 10 ms resolution). Goal: initialize and tools/list ≤ 500 ms.",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=generate.DEFAULT_WORKDIR)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    ap.add_argument("--startup", type=int, metavar="N", help="measure start-up only, N starts")
    args = ap.parse_args(argv)
    try:
        generate.python_stdlib()
    except Exception as exc:  # pragma: no cover - a Python without its stdlib sources
        print(f"SKIPPED: no stdlib sources ({exc})")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    name, measure, write = (
        ("mcp_startup", startup, startup_report) if args.startup else ("mcp_bench", run, report)
    )
    doc = asyncio.run(measure(args))
    (args.out / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
    text = write(doc)
    (args.out / f"{name}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
