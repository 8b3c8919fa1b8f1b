"""Replay real commits through the pre-commit hook, as a developer's ``git commit`` meets them.

For each project (git bundles of /work/shared/data/histories/: express (JavaScript, held out:
reported first), cobra (Go), click (Python)), the last N non-merge commits, oldest first: the
commit is checked out with its parent as ``HEAD`` and its changes staged (``git checkout -f
COMMIT; git reset --soft PARENT``), and each tool runs on it, in alternating order:

* ``before`` / ``after``: ``crystal-clones --format agent -- <staged files>`` (as pre-commit runs
  it) with two installations' interpreters (``--before``: main's venv; ``--after``: this
  checkout's), each with its own cache directory, warmed once on the first parent (one warm cache);
* ``jscpd``: jscpd 5 ``--changed`` (its clones absent from HEAD's baseline), if installed.

Measured per tool: commits refused (exit 1 / a new jscpd clone) per 100, warnings per 100, CPU
seconds per commit (the child's user+system time, median and p95). Every warning goes, with
short excerpts of both sides, to ``pending.jsonl`` / ``pending.md`` for two labelers (A: a real
copy the commit added; B: similarity not worth blocking; C: wrong); ``score`` reads their label
files and reports judged precision and refused commits without a real copy
(:mod:`hook_replay_labels`).

    python bench/hook_replay.py run --before /work/main/.venv/bin/python -n 100
    python bench/hook_replay.py score
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hook_replay_labels import score, write_pending

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "hook_replay"
HISTORIES = Path("/work/shared/data/histories")
PROJECTS = (  # held-out first: nothing was tuned on any of them; express is reported first
    ("express", "javascript"),
    ("cobra", "go"),
    ("click", "python"),
)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "replay",
    "GIT_AUTHOR_EMAIL": "replay@example.invalid",
    "GIT_COMMITTER_NAME": "replay",
    "GIT_COMMITTER_EMAIL": "replay@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
}
HOOK = "crystal_lsp_hooks.clone_check"


@dataclass
class Warning:
    """One warning of one tool: the original and the copy the commit is said to add."""

    original: tuple[str, int, int]
    copy: tuple[str, int, int]
    similarity: float | None = None


@dataclass
class Run:
    """One tool on one commit."""

    tool: str
    refused: bool
    cpu: float
    warnings: list[Warning] = field(default_factory=list)
    error: str = ""


def git(repo: Path, *args: str, check: bool = True) -> str:
    """``git ARGS`` in ``repo``; its stdout."""
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=False
    )
    if check and done.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def child_cpu() -> float:
    """User plus system CPU seconds of every finished child so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(
    cmd: list[str], cwd: Path, env: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run ``cmd``; the result and its CPU seconds (children run one at a time)."""
    before = child_cpu()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, check=False)
    return done, child_cpu() - before


def stage(repo: Path, commit: str) -> list[str]:
    """Check out ``commit`` with its parent as HEAD: its changes staged. The staged files."""
    git(repo, "checkout", "-q", "-f", "--detach", commit)
    git(repo, "clean", "-q", "-f", "-d", "-x")
    git(repo, "reset", "-q", "--soft", f"{commit}^")
    out = git(repo, "diff", "--cached", "--name-only", "-z", "--diff-filter=ACMRTUXB")
    return [p for p in out.split("\0") if p]


def parse_agent(stdout: str) -> list[Warning]:
    """``original:a-b ~ copy:c-d similarity 0.87 (...)`` lines of ``--format agent``."""
    out = []
    for line in stdout.splitlines():
        left, sep, right = line.partition(" ~ ")
        if not sep:
            continue
        copy, _, rest = right.partition(" similarity ")
        try:
            out.append(Warning(_span(left), _span(copy), float(rest.split()[0])))
        except (ValueError, IndexError):
            continue
    return out


def _span(text: str) -> tuple[str, int, int]:
    path, _, lines = text.rpartition(":")
    first, _, last = lines.partition("-")
    return path, int(first), int(last or first)


class Tools:
    """The tools of one project: interpreters and caches, and how each runs on a commit."""

    def __init__(self, pythons: dict[str, str], jscpd: str | None, lang: str, work: Path) -> None:
        self.pythons = pythons
        self.jscpd = jscpd
        self.lang = lang
        self.work = work

    @property
    def names(self) -> list[str]:
        """The tools run, in their first order."""
        return [*self.pythons, *(["jscpd"] if self.jscpd else [])]

    def env(self, tool: str) -> dict[str, str]:
        """The environment of a tool: its own cache directory, no pre-commit variables."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
        env.update(GIT_ENV)
        env["CRYSTAL_LSP_CACHE_DIR"] = str(self.work / f"cache-{tool}")
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env

    def run(self, tool: str, repo: Path, files: list[str]) -> Run:
        """One tool on the staged change."""
        if tool == "jscpd":
            return self._jscpd(repo)
        extra = ["--max-warnings", "0"] if tool != "before" else []
        cmd = [self.pythons[tool], "-m", HOOK, "--format", "agent", *extra, "--", *files]
        done, cpu = timed(cmd, repo, self.env(tool))
        if done.returncode not in (0, 1):
            return Run(tool, False, cpu, error=(done.stderr.strip().splitlines() or ["?"])[-1])
        return Run(tool, done.returncode == 1, cpu, parse_agent(done.stdout))

    def _jscpd(self, repo: Path) -> Run:
        assert self.jscpd is not None
        out = self.work / "jscpd-out"
        shutil.rmtree(out, ignore_errors=True)
        cmd = [
            self.jscpd,
            "--changed",
            "--baseline",
            str(self.work / "jscpd-baseline.json"),
            "--format",
            self.lang,
            "-r",
            "json",
            "-o",
            str(out),
            "--silent",
            "--no-tips",
            ".",
        ]
        done, cpu = timed(cmd, repo, self.env("jscpd"))
        report = out / "jscpd-report.json"
        if not report.exists():
            return Run("jscpd", False, cpu, error=(done.stderr.strip().splitlines() or ["?"])[-1])
        dups = [d for d in json.loads(report.read_text())["duplicates"] if d.get("isNew")]
        warnings = [
            Warning(
                (d["firstFile"]["name"], d["firstFile"]["start"], d["firstFile"]["end"]),
                (d["secondFile"]["name"], d["secondFile"]["start"], d["secondFile"]["end"]),
            )
            for d in dups
        ]
        return Run("jscpd", bool(warnings), cpu, warnings)


def commits(repo: Path, n: int) -> list[str]:
    """The last ``n`` non-merge commits with a parent, oldest first."""
    out = git(repo, "rev-list", "--no-merges", "--min-parents=1", "-n", str(n), "HEAD")
    return list(reversed(out.split()))


def replay(project: str, lang: str, tools: Tools, n: int, keep: Path) -> None:
    """Replay one project, newest commit first; each record appended to its JSONL file.

    Newest first, so that a replay stopped early still holds the last K commits.
    """
    repo = tools.work / project
    if not repo.exists():
        git(Path("/"), "clone", "-q", str(HISTORIES / f"{project}.bundle"), str(repo))
    shas = commits(repo, n)[::-1]
    meta = {"project": project, "language": lang, "repo": str(repo), "tools": tools.names}
    (keep / f"{project}.meta.json").write_text(json.dumps(meta) + "\n")
    # warm every cache on the first parent, as one developer's cache is warm
    git(repo, "checkout", "-q", "-f", "--detach", f"{shas[0]}^")
    for tool, python in tools.pythons.items():
        cmd = [python, "-m", "crystal_lsp", "scan", ".", "--no-progress", "-o", os.devnull]
        timed(cmd, repo, tools.env(tool))
    out = keep / f"{project}.records.jsonl"
    out.write_text("")
    for i, sha in enumerate(shas):
        files = stage(repo, sha)
        order = tools.names if i % 2 == 0 else list(reversed(tools.names))
        runs = {tool: tools.run(tool, repo, files) for tool in order}
        record = {
            "commit": sha,
            "subject": git(repo, "log", "-1", "--format=%s", sha).strip(),
            "files": len(files),
            "load": _load(),
            "runs": {t: asdict(r) for t, r in runs.items()},
        }
        with out.open("a") as fh:
            fh.write(json.dumps(record) + "\n")
        shown = " ".join(
            f"{t}={len(r.warnings)}{'!' if r.refused else ''}" for t, r in runs.items()
        )
        print(f"{project} {i + 1}/{len(shas)} {sha[:8]} {shown}", file=sys.stderr, flush=True)


def load_projects(keep: Path) -> list[dict[str, Any]]:
    """The replayed projects found in ``keep``, in :data:`PROJECTS` order."""
    out = []
    for name, _ in PROJECTS:
        meta_path = keep / f"{name}.meta.json"
        if meta_path.exists():
            meta = json.loads(meta_path.read_text())
            lines = (keep / f"{name}.records.jsonl").read_text().splitlines()
            meta["records"] = [json.loads(x) for x in lines if x.strip()]
            out.append(meta)
    return out


def summarize(project: dict[str, Any], tools: list[str]) -> dict[str, Any]:
    """Refused and warnings per 100 commits, CPU per commit, for each tool."""
    records = project["records"]
    n = len(records)
    out: dict[str, Any] = {"project": project["project"], "commits": n, "tools": {}}
    for tool in tools:
        runs = [r["runs"][tool] for r in records]
        cpu = sorted(r["cpu"] for r in runs)
        out["tools"][tool] = {
            "refused_per_100": round(100 * sum(r["refused"] for r in runs) / n, 1),
            "warnings_per_100": round(100 * sum(len(r["warnings"]) for r in runs) / n, 1),
            "cpu_median_s": round(statistics.median(cpu), 3),
            "cpu_p95_s": round(cpu[min(n - 1, int(0.95 * n))], 3),
            "errors": sum(1 for r in runs if r["error"]),
        }
    return out


def markdown(summaries: list[dict[str, Any]], load: str) -> str:
    """The summary table."""
    rows = [
        "# Hook replay: the last non-merge commits of each project\n",
        f"Load averages (first ... last commit): {load}. CPU: the tool process's user+system "
        "seconds (RUSAGE_CHILDREN).",
        "Every project is held out (nothing was tuned on any); express is reported first.\n",
        "| project | tool | refused / 100 | warnings / 100 | CPU median s | CPU p95 s | errors |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in summaries:
        for tool, t in s["tools"].items():
            rows.append(
                f"| {s['project']} | {tool} | {t['refused_per_100']} | {t['warnings_per_100']} "
                f"| {t['cpu_median_s']} | {t['cpu_p95_s']} | {t['errors']} |"
            )
    return "\n".join(rows) + "\n"


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main_run(args: argparse.Namespace) -> int:
    """``run``: replay, then :func:`main_report`."""
    after = os.path.abspath(args.after)  # not resolved: a venv's python is a symlink
    pythons = {"after": after}
    if args.before:
        pythons = {"before": os.path.abspath(args.before), "after": after}
    jscpd = None if args.no_jscpd else (args.jscpd or shutil.which("jscpd"))
    jscpd = os.path.abspath(jscpd) if jscpd else None
    keep = Path(args.out)
    keep.mkdir(parents=True, exist_ok=True)
    work = Path(args.work or tempfile.mkdtemp(prefix="hook-replay-"))
    for name, lang in [p for p in PROJECTS if not args.project or p[0] in args.project]:
        tools = Tools(pythons, jscpd, lang, work / f"{name}-work")
        tools.work.mkdir(parents=True, exist_ok=True)
        replay(name, lang, tools, args.n, keep)
    code = main_report(args)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return code


def main_report(args: argparse.Namespace) -> int:
    """``report``: the summary and the pending-judgment files from the records in ``--out``."""
    keep = Path(args.out)
    projects = load_projects(keep)
    summaries = [summarize(p, p["tools"]) for p in projects]
    loads = [r["load"] for p in projects for r in p["records"]]
    load = f"{loads[0]} ... {loads[-1]}" if loads else "-"
    (keep / "summary.json").write_text(
        json.dumps({"load": load, "projects": summaries}, indent=1) + "\n"
    )
    (keep / "summary.md").write_text(markdown(summaries, load))
    write_pending(projects, keep)
    print(markdown(summaries, load))
    return 0


def main_planted(args: argparse.Namespace) -> int:
    """``planted``: a renamed copy planted in K of the last N commits of each project."""
    import random

    from hook_replay_planted import EXT, caught, plant

    after = os.path.abspath(args.after)
    pythons = (
        {"before": os.path.abspath(args.before), "after": after}
        if args.before
        else {"after": after}
    )
    keep = Path(args.out)
    keep.mkdir(parents=True, exist_ok=True)
    work = Path(args.work or tempfile.mkdtemp(prefix="hook-planted-"))
    load, results = _load(), []
    for name, lang in [p for p in PROJECTS if not args.project or p[0] in args.project]:
        tools = Tools(pythons, None, lang, work / f"{name}-work")
        tools.work.mkdir(parents=True, exist_ok=True)
        repo = tools.work / name
        if not repo.exists():
            git(Path("/"), "clone", "-q", str(HISTORIES / f"{name}.bundle"), str(repo))
        shas = commits(repo, args.n)[:: max(1, args.n // args.k)][: args.k]
        git(repo, "checkout", "-q", "-f", "--detach", f"{shas[0]}^")
        for tool, python in pythons.items():
            timed(
                [python, "-m", "crystal_lsp", "scan", ".", "--no-progress", "-o", os.devnull],
                repo,
                tools.env(tool),
            )
        rng = random.Random(f"{name}-planted")
        for sha in shas:
            staged = stage(repo, sha)
            files = [f for f in git(repo, "ls-files", "-z").split("\0") if f.endswith(EXT[lang])]
            planted = plant(repo, lang, files, rng)
            if planted is None:
                continue
            git(repo, "add", "--", planted["copy"])
            runs = {t: tools.run(t, repo, [*staged, planted["copy"]]) for t in tools.names}
            got = {t: caught(planted, [asdict(w) for w in r.warnings]) for t, r in runs.items()}
            results.append({"project": name, "commit": sha, **planted, "result": got})
            print(f"planted {name} {sha[:8]} {planted['copy']} {got}", file=sys.stderr, flush=True)
    rows = [
        f"# Planted renamed copies (load {load} / {_load()})\n",
        "| project | tool | caught | reversed | missed |",
        "|---|---|---|---|---|",
    ]
    for name, _ in PROJECTS:
        for tool in pythons:
            got = Counter(r["result"][tool] for r in results if r["project"] == name)
            if got:
                rows.append(
                    f"| {name} | {tool} | {got['caught']} | {got['reversed']} | {got['missed']} |"
                )
    (keep / "planted.json").write_text(json.dumps(results, indent=1) + "\n")
    (keep / "planted.md").write_text("\n".join(rows) + "\n")
    print("\n".join(rows))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="replay commits and write the pending-judgment files")
    run.add_argument("-n", type=int, default=100, help="commits per project (default 100)")
    run.add_argument("--before", help="python of the 'before' installation (e.g. main's venv)")
    run.add_argument("--after", default=sys.executable, help="python of the 'after' installation")
    run.add_argument("--jscpd", help="jscpd 5 executable (default: on PATH)")
    run.add_argument("--no-jscpd", action="store_true")
    run.add_argument("--project", action="append", help="only these projects (repeatable)")
    run.add_argument("--work", help="keep clones and caches here (default: a temporary directory)")
    run.add_argument("--out", default=str(OUT), help="results directory")
    pl = sub.add_parser("planted", help="plant a renamed copy in K of the last N commits")
    pl.add_argument("-n", type=int, default=100, help="commits per project to pick from")
    pl.add_argument("-k", type=int, default=10, help="planted commits per project (default 10)")
    pl.add_argument("--before", help="python of the 'before' installation")
    pl.add_argument("--after", default=sys.executable, help="python of the 'after' installation")
    pl.add_argument("--project", action="append", help="only these projects (repeatable)")
    pl.add_argument("--work", help="keep clones and caches here (default: a temporary directory)")
    pl.add_argument("--out", default=str(OUT), help="results directory")
    rp = sub.add_parser("report", help="summary and pending-judgment files from the records")
    rp.add_argument("--out", default=str(OUT), help="results directory")
    sc = sub.add_parser("score", help="judged precision from the labelers' files")
    sc.add_argument("--out", default=str(OUT), help="results directory")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    commands = {"run": main_run, "planted": main_planted, "report": main_report}
    code = commands[args.command](args) if args.command in commands else score(Path(args.out))
    print(f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
