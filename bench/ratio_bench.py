#!/usr/bin/env python3
"""Scan CPU of crystal-lsp next to jscpd 5, alternating run by run in one run (issue 22's ratios).

    .venv/bin/python bench/ratio_bench.py                          # 3 corpora, 3 rounds (~15 min)
    .venv/bin/python bench/ratio_bench.py --corpora werkzeug --rounds 5
    .venv/bin/python bench/ratio_bench.py --baseline /tmp/old      # and an older source tree
    .venv/bin/python bench/ratio_bench.py --render bench/results/ratio_bench.json

Corpora, each a git repository under ``--cache`` (fetched once with the package clients):

* ``cpython-lib``: the running interpreter's standard library (``.py``; tests and
  site-packages excluded, as in bench/planted/generate.py);
* ``werkzeug``: werkzeug 3.1.3's ``src/werkzeug`` (PyPI sdist), a Python web framework;
* ``three``: three.js 0.170.0's ``src/`` (npm), a JavaScript 3D library.

Every round, for each corpus and each tool in turn (the order rotates between rounds):

* **cold**: crystal-lsp on an empty cache; jscpd (it keeps no cache: each of its runs is cold);
* **warm**: crystal-lsp again, nothing changed; jscpd again;
* **one file changed**: a new function appended to one file, crystal-lsp on its warm cache;
  jscpd again. The file is restored afterwards.

crystal-lsp runs as ``crystal-lsp scan ROOT --format json -o FILE --no-progress`` (the
installed console script of ``--venv``); with ``--baseline DIR`` also as ``python -m crystal_lsp``
with ``PYTHONPATH=DIR`` (e.g. ``git archive`` of an older commit, with its native core copied
in), so that before and after are measured in the same run. jscpd 5 (the Rust build from PyPI,
pinned in clone_bench.py) runs as ``jscpd --format LANG -r json -o DIR -a --silent --no-tips
ROOT``. CPU is user + system time of the process tree (children's rusage), peak RSS the tree's
(clone_bench.measure), with the 1-minute load average at the start of each run. Tables give
medians over rounds and the ratios crystal-lsp / jscpd of the medians. Goals (issue 22): cold
CPU <= 5x jscpd's, warm <= 0.3x, one changed file <= 0.5 s CPU, peak RSS <= jscpd's.
Writes bench/results/ratio_bench.{json,md}.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import clone_bench  # noqa: E402  (also puts bench/planted on sys.path)
import generate  # noqa: E402
import hook_bench  # noqa: E402
from real import corpora  # noqa: E402

OURS, BASE, JSCPD = "crystal-lsp", "crystal-lsp (baseline)", "jscpd 5"
SCENARIOS = ("cold", "warm", "one file changed")
GOALS = {"cold": 5.0, "warm": 0.3}
ONE_FILE_GOAL_S = 0.5
THREE = corpora.Project("three", "npm", "three@0.170.0", "package/src", "javascript")
# the function a commit adds in hook_bench.py; {i} and {n} make each one new
PY_FUNCTION = "\n\n" + hook_bench.ADDED_FUNCTIONS[0]
JS_FUNCTION = """

export function ratioBenchWindow{n}(items, size = {n}) {{
  const window = [];
  const out = [];
  for (const item of items) {{
    window.push(item);
    if (window.length > size) window.shift();
    if (window.length === size) out.push(window.slice());
  }}
  return out;
}}
"""


@dataclass(frozen=True)
class Corpus:
    """A repository to scan, its language and the file the one-file scenario changes."""

    name: str
    lang: str
    changed: str
    fetch: Callable[[Path], Path]
    source: str


def _cpython_lib(cache: Path) -> Path:
    version = platform.python_version()
    root = cache / "corpora" / f"cpython-{version}-lib"
    if (root / ".git").is_dir():
        return root
    with tempfile.TemporaryDirectory(prefix="ratio-lib-") as tmp:
        generate.prepare_original("python", Path(tmp))
        shutil.rmtree(root, ignore_errors=True)
        root.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(Path(tmp) / "python" / "original", root)
    corpora.git_commit(root)
    return root


CORPORA = {
    c.name: c
    for c in (
        Corpus(
            "cpython-lib",
            "python",
            "argparse.py",
            _cpython_lib,
            f"CPython {platform.python_version()} standard library",
        ),
        Corpus(
            "werkzeug",
            "python",
            "utils.py",
            lambda cache: corpora.fetch(corpora.PROJECTS["werkzeug"], cache),
            "PyPI werkzeug==3.1.3, src/werkzeug",
        ),
        Corpus(
            "three",
            "javascript",
            "math/Vector3.js",
            lambda cache: corpora.fetch(THREE, cache),
            "npm three@0.170.0, src/",
        ),
    )
}


def _tools(venv: Path, jscpd: Path, baseline: Path | None) -> dict[str, Any]:
    """How to run each tool: ``(root, lang, out dir, cache dir) -> (argv, env)``."""

    def ours(root: Path, lang: str, out: Path, cache: Path) -> tuple[list[str], dict[str, str]]:
        argv = [str(venv / "bin" / "crystal-lsp"), "scan", str(root), "--format", "json"]
        env = {**os.environ, "CRYSTAL_LSP_CACHE_DIR": str(cache)}
        return [*argv, "--no-progress", "-o", str(out / "findings.json")], env

    def base(root: Path, lang: str, out: Path, cache: Path) -> tuple[list[str], dict[str, str]]:
        argv, env = ours(root, lang, out, cache)
        python = str(venv / "bin" / "python")
        return [python, "-m", "crystal_lsp", *argv[1:]], {**env, "PYTHONPATH": str(baseline)}

    def peer(root: Path, lang: str, out: Path, cache: Path) -> tuple[list[str], dict[str, str]]:
        argv = [str(jscpd), "--format", lang, "-r", "json", "-o", str(out), "-a", "--silent"]
        return [*argv, "--no-tips", str(root)], dict(os.environ)

    tools: dict[str, Any] = {OURS: ours, JSCPD: peer}
    if baseline is not None:
        tools[BASE] = base
    return tools


def _findings(tool: str, out: Path) -> int | None:
    try:
        if tool == JSCPD:
            return len(json.loads((out / "jscpd-report.json").read_text()).get("duplicates", []))
        return len(json.loads((out / "findings.json").read_text())["findings"])
    except (OSError, ValueError, KeyError):
        return None


def _run(tool: str, command: Any, corpus: Corpus, root: Path, work: Path, cache: Path) -> Any:
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    argv, env = command(root, corpus.lang, out, cache)
    m = clone_bench.measure(argv, work, env=env, timeout=1800)
    ok = not m["timed_out"] and m["rc"] in ((0, 1) if tool != JSCPD else (0,))
    return {
        "cpu": m["cpu"],
        "wall": m["wall"],
        "rss_mb": m["rss_mb"],
        "load1": m["load1"],
        "findings": _findings(tool, out) if ok else None,
        "status": "ok" if ok else f"failed (rc {m['rc']}): {m['stderr'][-300:]}",
    }


def _change(path: Path, lang: str, n: int) -> None:
    text = (PY_FUNCTION if lang == "python" else JS_FUNCTION).format(i=n, n=n)
    with path.open("a", encoding="utf-8") as f:
        f.write(text)


def one_round(
    corpus: Corpus, root: Path, tools: dict[str, Any], number: int, work: Path
) -> dict[str, dict[str, Any]]:
    """Every scenario of one corpus, each tool in turn (the order rotates with ``number``)."""
    names = list(tools)
    names = names[number % len(names) :] + names[: number % len(names)]
    caches = {name: work / f"cache-{number}-{i}" for i, name in enumerate(names)}
    runs: dict[str, dict[str, Any]] = {s: {} for s in SCENARIOS}
    original = (root / corpus.changed).read_bytes()
    try:
        for scenario in SCENARIOS:
            if scenario == "one file changed":
                _change(root / corpus.changed, corpus.lang, 1000 + number)
            for name in names:
                result = _run(name, tools[name], corpus, root, work, caches[name])
                runs[scenario][name] = result
                print(
                    f"[{corpus.name} round {number}] {scenario:16s} {name:24s} "
                    f"cpu {result['cpu']:6.2f} s  wall {result['wall']:6.2f} s  "
                    f"rss {result['rss_mb']:7.1f} MB  load {result['load1']:.1f}  "
                    f"findings {result['findings']}  {result['status'][:60]}",
                    flush=True,
                )
    finally:
        (root / corpus.changed).write_bytes(original)
        for cache in caches.values():
            shutil.rmtree(cache, ignore_errors=True)
    return runs


def summarize(rounds: list[dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """Medians per scenario and tool, and crystal-lsp's ratios to jscpd."""
    out: dict[str, Any] = {}
    for scenario in SCENARIOS:
        row: dict[str, Any] = {}
        for tool in rounds[0][scenario]:
            runs = [r[scenario][tool] for r in rounds if r[scenario][tool]["status"] == "ok"]
            if not runs:
                row[tool] = None
                continue
            row[tool] = {
                key: statistics.median(run[key] for run in runs)
                for key in ("cpu", "wall", "rss_mb")
            }
            row[tool]["n"] = len(runs)
            row[tool]["load"] = [min(r["load1"] for r in runs), max(r["load1"] for r in runs)]
            row[tool]["findings"] = runs[-1]["findings"]
        peer = row.get(JSCPD)
        for tool in (OURS, BASE):
            if row.get(tool) and peer:
                row[tool]["cpu_ratio"] = row[tool]["cpu"] / max(peer["cpu"], 1e-9)
                row[tool]["rss_ratio"] = row[tool]["rss_mb"] / max(peer["rss_mb"], 1e-9)
        out[scenario] = row
    return out


def _verdict(scenario: str, ours: dict[str, Any]) -> str:
    if scenario in GOALS:
        goal = GOALS[scenario]
        met = ours["cpu_ratio"] <= goal
        return f"<= {goal:g}x: **{'met' if met else 'missed'}**"
    met = ours["cpu"] <= ONE_FILE_GOAL_S
    return f"<= {ONE_FILE_GOAL_S} s CPU: **{'met' if met else 'missed'}**"


def render(doc: dict[str, Any]) -> str:
    """The Markdown report."""
    lines = [
        "# ratio_bench: crystal-lsp and jscpd 5, alternating in one run",
        "",
        f"Command: `{doc['command']}`, {doc['date']}; {doc['machine']}. "
        f"{doc['rounds']} rounds per corpus; medians; CPU = user + system of the process "
        "tree; ratio = crystal-lsp / jscpd 5. jscpd keeps no cache: its warm and one-file "
        "runs are cold runs too.",
        "",
    ]
    for name, corpus in doc["corpora"].items():
        info = corpus["info"]
        lines += [
            f"## {name}: {info['files']} files, {info['lines']:,} lines ({info['source']})",
            "",
            "| scenario | tool | CPU | ratio | goal | wall | peak RSS | RSS ratio | findings "
            "| load |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for scenario, row in corpus["summary"].items():
            for tool, m in row.items():
                if m is None:
                    lines.append(f"| {scenario} | {tool} | failed | | | | | | | |")
                    continue
                ratio = f"{m['cpu_ratio']:.2f}x" if "cpu_ratio" in m else ""
                rss_ratio = f"{m['rss_ratio']:.2f}x" if "rss_ratio" in m else ""
                goal = _verdict(scenario, m) if tool == OURS and "cpu_ratio" in m else ""
                lines.append(
                    f"| {scenario} | {tool} | {m['cpu']:.2f} s | {ratio} | {goal} | "
                    f"{m['wall']:.2f} s | {m['rss_mb']:.0f} MB | {rss_ratio} | "
                    f"{m['findings']} | {m['load'][0]:.1f}-{m['load'][1]:.1f} |"
                )
        lines.append("")
    if doc["machine_busy"]:
        lines.append(
            "The load average exceeded the CPU count during the run: wall times include "
            "waiting for a core; the CPU times and their ratios are the figures to compare."
        )
    return "\n".join(lines) + "\n"


def _describe(root: Path, lang: str, source: str) -> dict[str, Any]:
    suffix = corpora.SOURCE_SUFFIXES[lang]
    files = [p for p in root.rglob("*") if p.suffix in suffix and ".git" not in p.parts]
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    return {"files": len(files), "lines": lines, "source": source}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--corpora", default=",".join(CORPORA), help="comma-separated subset")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--venv", type=Path, default=REPO / ".venv", help="crystal-lsp's installation")
    ap.add_argument("--baseline", type=Path, help="also run crystal-lsp from this source tree")
    ap.add_argument("--cache", type=Path, default=corpora.DEFAULT_CACHE, help="corpora, tools")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "ratio_bench")
    ap.add_argument("--render", type=Path, help="re-render the Markdown of a saved JSON")
    a = ap.parse_args(argv)
    if a.render:
        doc = json.loads(a.render.read_text())
        a.out.with_suffix(".md").write_text(render(doc))
        return 0
    notes = clone_bench.install_anchors(a.cache / "tools")
    jscpd = a.cache / "tools" / "venv" / "bin" / "jscpd"
    if not jscpd.exists():
        sys.exit(f"jscpd 5 is not installed: {notes}")
    tools = _tools(a.venv, jscpd, a.baseline)
    doc: dict[str, Any] = {
        "command": "python bench/ratio_bench.py " + " ".join(argv or sys.argv[1:]),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{os.cpu_count()} CPUs, {platform.platform()}, Python "
        f"{platform.python_version()}",
        "rounds": a.rounds,
        "baseline": str(a.baseline) if a.baseline else None,
        "corpora": {},
    }
    busy = False
    with tempfile.TemporaryDirectory(prefix="ratio-bench-") as tmp:
        for name in a.corpora.split(","):
            corpus = CORPORA[name]
            root = corpus.fetch(a.cache)
            rounds = []
            for number in range(a.rounds):
                rounds.append(one_round(corpus, root, tools, number, Path(tmp)))
            busy = busy or any(
                run["load1"] > (os.cpu_count() or 1)
                for r in rounds
                for row in r.values()
                for run in row.values()
            )
            doc["corpora"][name] = {
                "info": _describe(root, corpus.lang, corpus.source),
                "rounds": rounds,
                "summary": summarize(rounds),
            }
    doc["machine_busy"] = busy
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.with_suffix(".json").write_text(json.dumps(doc, indent=1) + "\n")
    a.out.with_suffix(".md").write_text(render(doc))
    print(render(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
