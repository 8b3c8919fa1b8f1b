#!/usr/bin/env python3
"""How crystal-lsp's scan CPU time grows with the size of distinct code.

    .venv/bin/python bench/scale_bench.py                # 1x..4x CPython's stdlib, 2 rounds
    .venv/bin/python bench/scale_bench.py --levels 1,2 --rounds 1 --venv /other/.venv
    .venv/bin/python bench/scale_bench.py --render bench/results/scale_bench.json

Level 1 is the running interpreter's standard library (``.py``, tests excluded, as in
clone_bench.py); levels 2..4 add distinct real code from pinned PyPI sdists (tests excluded,
files under folders the scanner excludes by default left out, identical files dropped),
taken file by file, round-robin over the packages, until the corpus holds k times the stdlib's
lines.  Each level is a git repository under ``~/.cache/crystal-lsp-bench/real/scale``.
Every round scans every level from a cold cache (``CRYSTAL_LSP_CACHE_DIR`` fresh); the
minimum CPU time (children's rusage) per level is fitted as CPU ∝ n^e (least squares on
log-log), and so is each phase of the JSON ``timings``.  Writes bench/results/scale_bench.{md,json}.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import clone_bench  # noqa: E402
import generate  # noqa: E402  (bench/planted, on sys.path via clone_bench)
from real import corpora  # noqa: E402

EXTRA = ("django==5.1.4", "sqlalchemy==2.0.36", "twisted==24.11.0", "sympy==1.13.3")
SKIP_DIRS = {*generate.PY_EXCLUDED_DIRS, "vendor", "_vendor", "third_party", "third-party"}
SKIP_DIRS |= {"node_modules", "build", "dist", "site-packages", ".git"}
GOAL = 1.1


def _python_files(root: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        out += [
            Path(dirpath) / f
            for f in sorted(files)
            if f.endswith(".py") and not f.startswith("test_")
        ]
    return out


def sdist_files(spec: str, cache: Path) -> list[Path]:
    """The .py files (tests excluded) of a PyPI sdist, downloaded and unpacked once."""
    name = spec.replace("==", "-")
    dest = cache / "sdists" / name
    if not (dest / ".complete").is_file():
        shutil.rmtree(dest, ignore_errors=True)
        with tempfile.TemporaryDirectory(prefix="scale-dl-") as tmp:
            project = corpora.Project(name, "pypi", spec, ".", "python")
            archive = corpora.download(project, Path(tmp))
            corpora.unpack(archive, dest)
        (dest / ".complete").write_text(spec + "\n")
    return _python_files(dest)


def _round_robin(groups: list[list[Path]]) -> list[Path]:
    out = []
    for i in range(max(len(g) for g in groups)):
        out += [g[i] for g in groups if i < len(g)]
    return out


def build_levels(levels: list[int], cache: Path) -> list[dict[str, Any]]:
    """Level k: the stdlib plus distinct extra files up to k times its lines (nested levels)."""
    stdlib = generate.python_stdlib()
    base = [stdlib / rel for rel in generate.python_corpus_files(stdlib)]
    pool = _round_robin([sdist_files(s, cache) for s in EXTRA])
    seen: set[str] = set()
    chosen: list[tuple[Path, str, int]] = []  # source, relative destination, lines
    for src in [*base, *pool]:
        data = src.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if not data.strip() or digest in seen:
            continue
        seen.add(digest)
        top = "stdlib" if src.is_relative_to(stdlib) else src.relative_to(cache / "sdists").parts[0]
        rel = src.relative_to(stdlib if top == "stdlib" else cache / "sdists" / top)
        chosen.append((src, f"{top}/{rel}", data.count(b"\n")))
    n1 = sum(lines for src, _, lines in chosen if src.is_relative_to(stdlib))
    out = []
    for k in levels:
        picked, total = [], 0
        for item in chosen:
            if total >= k * n1:
                break
            picked.append(item)
            total += item[2]
        if total < k * n1 * 0.98:
            raise SystemExit(f"level {k}: only {total} lines of distinct code for {k * n1}")
        out.append(
            {
                "level": k,
                "root": _materialize(cache / "scale" / f"x{k}", picked),
                "files": len(picked),
                "lines": total,
            }
        )
    return out


def _materialize(root: Path, picked: list[tuple[Path, str, int]]) -> str:
    stamp = hashlib.sha256("\n".join(rel for _, rel, _ in picked).encode()).hexdigest()[:16]
    marker = root.with_name(root.name + ".stamp")
    if root.is_dir() and marker.is_file() and marker.read_text().strip() == stamp:
        return str(root)
    shutil.rmtree(root, ignore_errors=True)
    for src, rel, _ in picked:
        dst = root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    corpora.git_commit(root)
    marker.write_text(stamp + "\n")
    return str(root)


def scan(venv: Path, root: str, timeout: float) -> dict[str, Any]:
    exe = venv / "bin" / "crystal-lsp"
    cache_dir = tempfile.mkdtemp(prefix="scale-cache-")
    with tempfile.TemporaryDirectory(prefix="scale-out-") as tmp:
        out = Path(tmp) / "findings.json"
        argv = [str(exe), "scan", root, "--format", "json", "--no-progress"]
        env = {**os.environ, "CRYSTAL_LSP_CACHE_DIR": cache_dir}
        m = clone_bench.measure(argv, Path(root), stdout=out, env=env, timeout=timeout)
        doc = json.loads(out.read_text()) if m["rc"] in (0, 1) and out.stat().st_size else {}
    shutil.rmtree(cache_dir, ignore_errors=True)
    run = {k: m[k] for k in ("wall", "cpu", "load1", "rss_mb", "rc")}
    run["timings"] = doc.get("timings", {})
    run["summary"] = doc.get("summary", {})
    return run


def fit(ns: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of log y on log n."""
    pts = [(math.log(n), math.log(y)) for n, y in zip(ns, ys, strict=True) if y > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return round(sum((x - mx) * (y - my) for x, y in pts) / sxx, 3) if sxx else None


def summarize(levels: list[dict[str, Any]]) -> dict[str, Any]:
    """Per level the round with the least CPU; exponents of CPU, wall and each phase."""
    for lv in levels:
        lv["best"] = min(lv["runs"], key=lambda r: r["cpu"])
    ns = [lv["lines"] for lv in levels]
    phases: list[str] = []
    for lv in levels:
        phases += [p for p in lv["best"]["timings"] if p not in phases]
    return {
        "cpu": fit(ns, [lv["best"]["cpu"] for lv in levels]),
        "wall": fit(ns, [lv["best"]["wall"] for lv in levels]),
        "phases": {
            p: fit(ns, [lv["best"]["timings"].get(p, 0.0) for lv in levels]) for p in phases
        },
    }


def render(doc: dict[str, Any]) -> str:
    ex = doc["exponents"]
    status = "met" if ex["cpu"] is not None and ex["cpu"] <= GOAL else "**missed**"
    L = ["# crystal-lsp scan: CPU time against the size of distinct code\n"]
    L.append(f"Generated by `{doc['command']}` on {doc['date']}; {doc['machine']}.  ")
    L.append(
        f"Corpus: CPython {doc['python']} stdlib, then {', '.join(doc['extra'])} (distinct files).\n"
    )
    L.append(
        f"**Exponent of CPU ∝ n^e: e = {ex['cpu']}** (goal ≤ {GOAL}: {status}); wall: e = {ex['wall']}.\n"
    )
    phases = list(ex["phases"])
    L.append(
        "| level | files | lines | CPU s | wall s | peak RSS MB | load avg | findings | "
        + " | ".join(phases)
        + " |"
    )
    L.append("|---|---|---|---|---|---|---|---|" + "---|" * len(phases))
    for lv in doc["levels"]:
        b = lv["best"]
        cells = [f"{b['timings'].get(p, 0.0):.2f}" for p in phases]
        L.append(
            f"| {lv['level']}x | {lv['files']:,} | {lv['lines']:,} | {b['cpu']:.1f} | {b['wall']:.1f} "
            f"| {b['rss_mb']:.0f} | {b['load1']:.1f} | {b['summary'].get('findings', '–')} | "
            + " | ".join(cells)
            + " |"
        )
    L.append(
        "| exponent e | | | "
        + f"{ex['cpu']} | {ex['wall']} | | | | "
        + " | ".join(str(ex["phases"][p]) for p in phases)
        + " |"
    )
    L.append(
        "\nPhase columns: seconds of wall-clock time per phase from the scan's JSON `timings` "
        "(the round with the least CPU); CPU is user+sys of the scan and its worker processes.  "
        "All rounds (CPU s / load): "
        + "; ".join(
            f"{lv['level']}x " + ", ".join(f"{r['cpu']:.1f}/{r['load1']:.1f}" for r in lv["runs"])
            for lv in doc["levels"]
        )
        + ".\n"
    )
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--levels", default="1,2,3,4", help="multiples of the stdlib's size")
    ap.add_argument("--rounds", type=int, default=2, help="scans per level (alternating levels)")
    ap.add_argument("--venv", type=Path, default=REPO / ".venv", help="crystal-lsp's installation")
    ap.add_argument("--cache", type=Path, default=corpora.DEFAULT_CACHE)
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "scale_bench")
    ap.add_argument("--render", type=Path, help="re-render the .md of a results JSON and exit")
    a = ap.parse_args(argv)
    if a.render:
        a.render.with_suffix(".md").write_text(render(json.loads(a.render.read_text())))
        return 0
    levels = build_levels([int(x) for x in a.levels.split(",")], a.cache)
    for lv in levels:
        lv["runs"] = []
    for rnd in range(a.rounds):
        for lv in levels:
            run = scan(a.venv, lv["root"], a.timeout)
            lv["runs"].append(run)
            print(
                f"round {rnd + 1} {lv['level']}x ({lv['lines']:,} lines): {run['cpu']:.1f} s CPU, "
                f"{run['wall']:.1f} s wall, {run['rss_mb']:.0f} MB, load {run['load1']:.1f}",
                flush=True,
            )
    doc = {
        "command": "python bench/scale_bench.py " + " ".join(argv),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}",
        "python": sys.version.split()[0],
        "extra": list(EXTRA),
        "exponents": summarize(levels),
        "levels": [{k: v for k, v in lv.items() if k != "root"} for lv in levels],
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.with_suffix(".json").write_text(json.dumps(doc, indent=1) + "\n")
    a.out.with_suffix(".md").write_text(render(doc))
    print(f"e = {doc['exponents']['cpu']}; wrote {a.out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
