#!/usr/bin/env python3
"""CPU of a one-file rescan and of a scan with nothing changed, before and after, alternating.

    .venv/bin/python bench/rescan_ab.py --baseline /tmp/before        # stdlib and django, 5 rounds
    .venv/bin/python bench/rescan_ab.py --baseline /tmp/before --corpora cpython-lib --rounds 9

Issue 32 item 2 (a rescan costs what changed). ``--baseline DIR`` is an older source tree (a
``git worktree`` of main with the built native core copied in), run as ``python -m crystal_lsp``
with ``PYTHONPATH=DIR``; the current tree is this checkout's ``.venv``. Each installation first
scans the corpus cold into a cache of its own (not timed). Then, every round, one new function
is appended to one file (a different one each round, so each round is a one-file change against
a warm cache) and each installation in turn (the order alternates) scans it: **one file
changed**; then each again with nothing changed: **nothing changed** (the cached result). The
findings of the two installations are compared run by run (the JSON findings, exactly): a
difference is reported and fails the run. CPU is user + system time of the process
(``benchlib.peers.measure``), with the 1-minute load average at its start; both trees' byte code
is compiled first, as an installed package's is (``PYTHONDONTWRITEBYTECODE`` is dropped).
Goals (issue 32, idle machine): one file changed <= 0.5 s CPU, nothing changed <= 0.3 s.
Writes ``results/rescan_ab.{md,json}``.
"""

from __future__ import annotations

import argparse
import compileall
import datetime as dt
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import ratio_bench  # noqa: E402
from benchlib.peers import measure  # noqa: E402
from real import corpora  # noqa: E402

GOALS = {"one file changed": 0.5, "nothing changed": 0.3}
CORPORA = {
    "cpython-lib": ratio_bench.CORPORA["cpython-lib"],
    "django": ratio_bench.Corpus(
        "django",
        "python",
        "utils/text.py",
        lambda cache: corpora.fetch(corpora.PROJECTS["django"], cache),
        "PyPI django==5.1.3, django/",
    ),
}


def _command(
    tree: Path | None, root: Path, out: Path, cache: Path
) -> tuple[list[str], dict[str, str]]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
    }
    env["CRYSTAL_LSP_CACHE_DIR"] = str(cache)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    python = str(REPO / ".venv" / "bin" / "python")
    argv = [python, "-m", "crystal_lsp", "scan", str(root), "--format", "json", "--no-progress"]
    return [*argv, "-o", str(out)], env


def _findings(out: Path) -> Any:
    return json.loads(out.read_text())["findings"]


def _run(name: str, tree: Path | None, root: Path, work: Path) -> dict[str, Any]:
    out = work / f"{name}.json"
    out.unlink(missing_ok=True)
    argv, env = _command(tree, root, out, work / f"cache-{name}")
    m = measure(argv, work, env=env, timeout=1800)
    if m["timed_out"] or m["rc"] not in (0, 1):
        raise RuntimeError(f"{name}: rc {m['rc']}: {m['stderr'][-500:]}")
    return {"cpu": m["cpu"], "wall": m["wall"], "rss_mb": m["rss_mb"], "load1": m["load1"]}


def one_corpus(
    corpus: ratio_bench.Corpus, root: Path, trees: dict[str, Path | None], rounds: int, work: Path
) -> dict[str, Any]:
    """The cold set-up, then ``rounds`` rounds of both scenarios (module docstring)."""
    original = (root / corpus.changed).read_bytes()
    runs: list[dict[str, Any]] = []
    try:
        for name, tree in trees.items():
            _run(name, tree, root, work)  # cold: each installation's own warm cache
        for number in range(rounds):
            ratio_bench._change(root / corpus.changed, corpus.lang, 2000 + number)
            names = list(trees)[:: 1 if number % 2 == 0 else -1]
            row: dict[str, Any] = {}
            for scenario in GOALS:
                found = {}
                for name in names:
                    row[f"{scenario}|{name}"] = _run(name, trees[name], root, work)
                    found[name] = _findings(work / f"{name}.json")
                row[f"{scenario}|identical"] = len({json.dumps(f) for f in found.values()}) == 1
                row[f"{scenario}|findings"] = len(next(iter(found.values())))
            print(f"[{corpus.name} {number}] " + _line(row), flush=True)
            runs.append(row)
    finally:
        (root / corpus.changed).write_bytes(original)
    return {"runs": runs, "summary": _summary(runs, list(trees))}


def _line(row: dict[str, Any]) -> str:
    return "  ".join(
        f"{k.split('|')[0][:7]} {k.split('|')[1]} {v['cpu']:.2f}s"
        for k, v in row.items()
        if isinstance(v, dict)
    )


def _summary(runs: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for scenario in GOALS:
        row: dict[str, Any] = {"identical": all(r[f"{scenario}|identical"] for r in runs)}
        for name in names:
            cpu = [r[f"{scenario}|{name}"]["cpu"] for r in runs]
            load = [r[f"{scenario}|{name}"]["load1"] for r in runs]
            row[name] = {
                "cpu_median": statistics.median(cpu),
                "cpu_min": min(cpu),
                "cpu_max": max(cpu),
                "rss_mb": statistics.median(r[f"{scenario}|{name}"]["rss_mb"] for r in runs),
                "load": [min(load), max(load)],
            }
        out[scenario] = row
    return out


def render(doc: dict[str, Any]) -> str:
    """The Markdown report."""
    lines = [
        "# One-file rescans before and after, alternating",
        "",
        f"`{doc['command']}`, {doc['date']}; {doc['machine']}. {doc['rounds']} rounds per "
        "corpus; CPU = user + system of the process, median (min-max); the load average is the "
        "1-minute one at each run's start (min-max). Findings: the JSON findings of both "
        "installations compared run by run.",
        "",
        "| corpus | scenario | installation | CPU | peak RSS | goal | findings | load |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, corpus in doc["corpora"].items():
        for scenario, row in corpus["summary"].items():
            findings = "identical" if row["identical"] else "**DIFFER**"
            for tree, m in row.items():
                if tree == "identical":
                    continue
                goal = GOALS[scenario]
                verdict = f"<= {goal} s: {'met' if m['cpu_median'] <= goal else 'missed'}"
                lines.append(
                    f"| {name} | {scenario} | {tree} | {m['cpu_median']:.2f} s "
                    f"({m['cpu_min']:.2f}-{m['cpu_max']:.2f}) | {m['rss_mb']:.0f} MB | "
                    f"{verdict} | {findings} | {m['load'][0]:.1f}-{m['load'][1]:.1f} |"
                )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--baseline", type=Path, help="an older source tree (PYTHONPATH)")
    ap.add_argument("--corpora", default=",".join(CORPORA))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cache", type=Path, default=corpora.DEFAULT_CACHE, help="where corpora are")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "rescan_ab")
    a = ap.parse_args(argv)
    trees: dict[str, Path | None] = {"current": None}
    if a.baseline:
        trees = {"baseline": a.baseline.resolve(), "current": None}
    for tree in [REPO, *(t for t in trees.values() if t)]:
        compileall.compile_dir(str(tree / "crystal_lsp"), quiet=1)
    doc: dict[str, Any] = {
        "command": "python bench/rescan_ab.py " + " ".join(argv or sys.argv[1:]),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}",
        "rounds": a.rounds,
        "corpora": {},
    }
    failed = False
    for name in a.corpora.split(","):
        corpus = CORPORA[name]
        source = corpus.fetch(a.cache)
        with tempfile.TemporaryDirectory(prefix="rescan-ab-") as tmp:
            root = Path(tmp) / "corpus"
            shutil.copytree(source, root, symlinks=True)
            doc["corpora"][name] = one_corpus(corpus, root, trees, a.rounds, Path(tmp))
        failed = failed or not all(r["identical"] for r in doc["corpora"][name]["summary"].values())
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.with_suffix(".json").write_text(json.dumps(doc, indent=1) + "\n")
    a.out.with_suffix(".md").write_text(render(doc))
    print(render(doc))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
