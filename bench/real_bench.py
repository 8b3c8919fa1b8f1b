#!/usr/bin/env python3
"""The real-code judge of the clone finder: crystal-lsp and its peers on pinned real projects.

    .venv/bin/python bench/real_bench.py                     # fetch, run all tools, score
    .venv/bin/python bench/real_bench.py --reuse             # re-score the saved findings
    .venv/bin/python bench/real_bench.py --reuse --pending   # what still needs a label
    .venv/bin/python bench/real_bench.py --label rich a.py:1-9 b.py:20-28 A "copy-paste"
    .venv/bin/python bench/real_bench.py --tools crystal-lsp --venv /other/.venv

Projects are fetched from PyPI / npm at pinned versions (bench/real/corpora.py), every tool
runs on each of them in turn (bench/real/tools.py), the findings are normalized and saved
under bench/results/real/, and scored with the labels of bench/real/labels/ (score.py).
Writes bench/results/real_bench.{md,json}.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from real import corpora, labels, normalize, report, score, tools  # noqa: E402

LABELS_DIR = HERE / "real" / "labels"
FINDINGS_DIR = HERE / "results" / "real"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--projects", help=f"comma-separated subset of {','.join(corpora.PROJECTS)}")
    ap.add_argument("--tools", help="comma-separated subset of the tools' names or slugs")
    ap.add_argument("--reuse", action="store_true", help="re-score the saved normalized findings")
    ap.add_argument("--venv", type=Path, default=REPO / ".venv", help="crystal-lsp's installation")
    ap.add_argument(
        "--cache", type=Path, default=corpora.DEFAULT_CACHE, help="corpora, tools, runs"
    )
    ap.add_argument("--findings", type=Path, default=FINDINGS_DIR, help="normalized findings")
    ap.add_argument("--seed", type=int, default=score.SEED)
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    ap.add_argument("--no-install", action="store_true", help="do not install missing peers")
    ap.add_argument(
        "--pending", action="store_true", help="print the judged findings without label"
    )
    ap.add_argument("--pending-lines", type=int, default=30, help="excerpt lines per location")
    ap.add_argument(
        "--label",
        nargs=5,
        action="append",
        metavar=("PROJECT", "A", "B", "LABEL", "REASON"),
        help="add a label (A, B as path:first-last) and exit; repeatable",
    )
    ap.add_argument(
        "--labeler",
        default="",
        help="who judges: kept in the records --label writes; when scoring, whose labels count",
    )
    ap.add_argument(
        "--agreement",
        nargs=2,
        metavar=("LABELER1", "LABELER2"),
        help="print the two labelers' agreement per project (findings both judged) and exit",
    )
    ap.add_argument(
        "--out", type=Path, default=HERE / "results" / "real_bench", help="report path stem"
    )
    return ap.parse_args(argv)


def _select(names: str | None, known: list[str], what: str) -> list[str]:
    if not names:
        return known
    picked = [s.strip() for s in names.split(",") if s.strip()]
    unknown = [s for s in picked if s not in known]
    if unknown:
        raise SystemExit(f"unknown {what}: {', '.join(unknown)} (known: {', '.join(known)})")
    return picked


def run_all(
    a: argparse.Namespace, projects: list[str], chosen: list[tools.Tool], roots: dict[str, Path]
) -> dict[str, Any]:
    """Run the chosen tools on every project, one tool after the other; save their findings."""
    tools_dir = a.cache / "tools"
    notes = [] if a.no_install else tools.install(tools_dir)
    versions = {t.name: tools.version(t, tools_dir) for t in chosen}
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    for project in projects:
        lang = corpora.PROJECTS[project].lang
        for t in chosen:
            if lang not in t.langs:
                continue
            print(f"[{project}] {t.name} ...", end=" ", flush=True)
            res = tools.run(t, roots[project], lang, a.cache / "runs" / project / t.slug, a.timeout)
            run = res["run"]
            print(
                f"{run['status'][:80]}, {len(res['findings'] or [])} findings, "
                f"{run['cpu']:.1f} s CPU, {run['wall']:.1f} s wall, load {run['load1']:.1f}",
                flush=True,
            )
            meta = {
                "tool": t.name,
                "project": project,
                "version": versions[t.name],
                "date": date,
                "unit": t.unit,
                "run": run,
            }
            normalize.save(res["findings"] or [], meta, a.findings / project / f"{t.slug}.jsonl")
    return {"notes": "; ".join(notes)} if notes else {}


def load_saved(
    findings_dir: Path, projects: list[str], all_tools: list[tools.Tool]
) -> dict[str, Any]:
    """(project, tool) -> (findings, meta) for every saved run."""
    out: dict[tuple[str, str], tuple[list[Any], dict[str, Any]]] = {}
    for project in projects:
        for t in all_tools:
            path = findings_dir / project / f"{t.slug}.jsonl"
            if path.is_file():
                out[(project, t.name)] = normalize.load(path)
    return out


def score_all(
    a: argparse.Namespace, projects: list[str], all_tools: list[tools.Tool], roots: dict[str, Path]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, list[Any]]]:
    """Rows (tool x project), the pending findings and the genuine copies (union) per project."""
    saved = load_saved(a.findings, projects, all_tools)
    store = labels.load(LABELS_DIR, a.labeler)
    slugs = {t.name: t.slug for t in all_tools}
    rows: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    copies: dict[str, list[Any]] = {}
    for project in projects:
        per_tool = {}
        for t in all_tools:
            if (project, t.name) not in saved:
                continue
            findings, meta = saved[(project, t.name)]
            row = {
                "project": project,
                "tool": t.name,
                "unit": meta.get("unit"),
                "version": meta.get("version"),
                "date": meta.get("date"),
                "run": meta.get("run", {}),
            }
            row["status"] = row["run"].get("status", "ok")
            if row["status"] == "ok":
                per_tool[t.name] = findings
                row.update(
                    score.tool_measures(project, t.slug, findings, store, roots[project], a.seed)
                )
            rows.append(row)
        rec = score.recall(project, per_tool, store, a.seed, slugs)
        copies[project] = rec["copies"]
        for row in rows:
            if row["project"] == project and row["tool"] in per_tool:
                row["found"], row["union"] = rec["found"][row["tool"]], rec["union"]
        pending += score.pending(project, per_tool, store, roots[project], a.seed, slugs)
    return rows, pending, copies


def write(
    a: argparse.Namespace,
    argv: list[str],
    rows: list[dict[str, Any]],
    roots: dict[str, Path],
    all_tools: list[tools.Tool],
    extra: dict[str, Any],
) -> None:
    doc: dict[str, Any] = {
        "version": 1,
        "command": "python bench/real_bench.py " + shlex.join(argv),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}",
        "cpus": os.cpu_count(),
        "seed": a.seed,
        "sample": score.SAMPLE,
        "corpora": {p: corpora.describe(corpora.PROJECTS[p], r) for p, r in roots.items()},
        "tools": [t.name for t in all_tools],
        "versions": {r["tool"]: r["version"] for r in rows if r.get("version")},
        "argv": {r["tool"]: r["run"]["argv"] for r in rows if r["run"].get("argv")},
        "notes": [extra["notes"]] if extra.get("notes") else [],
        "labels": extra.get("labels", 0),
        "rows": rows,
        "copies": extra.get("copies", {}),
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.with_suffix(".json").write_text(json.dumps(doc, indent=1) + "\n")
    a.out.with_suffix(".md").write_text(report.render(doc))
    print(f"wrote {a.out.with_suffix('.md')} and {a.out.with_suffix('.json')}")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    a = parse_args(argv)
    if a.label:
        for project, loc_a, loc_b, lab, reason in a.label:
            labels.append(LABELS_DIR, project, loc_a, loc_b, lab, reason, a.labeler)
        print(f"added {len(a.label)} label(s) to {LABELS_DIR}")
        return 0
    if a.agreement:
        rows = labels.agreement(LABELS_DIR, *a.agreement)
        if not rows:
            print(f"no finding judged by both {a.agreement[0]} and {a.agreement[1]}")
        for project, row in sorted(rows.items()):
            print(
                f"{project}: {row['same']} / {row['both']} alike ({row['agreement']}), kappa {row['kappa']}"
            )
        return 0
    projects = _select(a.projects, list(corpora.PROJECTS), "projects")
    all_tools = tools.all_tools(a.venv, a.cache / "tools")
    names = [t.name for t in all_tools] + [t.slug for t in all_tools]
    picked = set(_select(a.tools, names, "tools"))
    chosen = [t for t in all_tools if t.name in picked or t.slug in picked]
    roots = {p: corpora.fetch(corpora.PROJECTS[p], a.cache) for p in projects}
    extra = {} if a.reuse else run_all(a, projects, chosen, roots)
    rows, pending, copies = score_all(a, projects, all_tools, roots)
    extra["copies"] = copies
    extra["labels"] = len(labels.load(LABELS_DIR))
    write(a, argv, rows, roots, all_tools, extra)
    print(
        f"{len(pending)} judged finding(s) without a label" + (":" if a.pending and pending else "")
    )
    if a.pending:
        print(labels.CRITERIA + "\n")
        for item in pending:
            print(labels.pending_block(item, roots[item["project"]], a.pending_lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
