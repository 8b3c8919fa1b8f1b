"""The judgment side of bench/hook_replay.py: pending warnings, label files and the scorer.

``pending.jsonl`` holds one record per distinct warning of a replay (the same original and copy
in one commit, whichever tools reported it):

    {"id": "express-1a2b3c4d-0", "project": ..., "commit": ..., "subject": ..., "tools": [...],
     "original": {"path", "first", "last", "excerpt"}, "copy": {...}, "similarity": 0.87}

``pending.md`` shows the same for reading. Each labeler writes
``labels/<labeler>.jsonl``, one line per judged warning:

    {"id": "express-1a2b3c4d-0", "label": "A", "note": "copied the router's param parsing"}

A: a real copy the commit added, worth a reviewer's time; B: similar code not worth blocking a
commit for; C: wrong (not similar, not added by the commit, or the original and copy swapped).
``score`` reports, per project and tool, judged precision (A over judged warnings) for each
labeler and for the warnings both labelers agree on, Cohen's kappa of the first two labelers,
and refused commits without a real copy per 100 commits (a refused commit none of whose judged
warnings is A; counted only when every warning of it is judged).
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

EXCERPT_LINES = 12
LABELS = ("A", "B", "C")


def _blob(repo: str, commit: str, path: str, cache: dict[tuple[str, str], list[str]]) -> list[str]:
    key = (commit, path)
    if key not in cache:
        done = subprocess.run(
            ["git", "-C", repo, "show", f"{commit}:{path}"], capture_output=True, check=False
        )
        text = done.stdout.decode("utf-8", "replace") if done.returncode == 0 else ""
        cache[key] = text.splitlines()
    return cache[key]


def _side(
    repo: str, commit: str, span: list[Any], cache: dict[tuple[str, str], list[str]]
) -> dict[str, Any]:
    path, first, last = span
    lines = _blob(repo, commit, path, cache)
    shown = lines[first - 1 : min(last, first + EXCERPT_LINES - 1)]
    excerpt = "\n".join(f"{first + i:5d}  {line[:120]}" for i, line in enumerate(shown))
    if last - first + 1 > EXCERPT_LINES:
        excerpt += f"\n      ... {last - first + 1 - EXCERPT_LINES} more lines"
    return {"path": path, "first": first, "last": last, "excerpt": excerpt}


def pending_records(projects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per distinct warning of the replay (see the module docstring)."""
    out: list[dict[str, Any]] = []
    cache: dict[tuple[str, str], list[str]] = {}
    for project in projects:
        for record in project["records"]:
            seen: dict[tuple[Any, ...], dict[str, Any]] = {}
            for tool, run in record["runs"].items():
                for w in run["warnings"]:
                    key = (tuple(w["original"]), tuple(w["copy"]))
                    if key in seen:
                        seen[key]["tools"].append(tool)
                        continue
                    sha = record["commit"]
                    item = {
                        "id": f"{project['project']}-{sha[:8]}-{len(seen)}",
                        "project": project["project"],
                        "commit": sha,
                        "subject": record["subject"],
                        "tools": [tool],
                        "original": _side(project["repo"], sha, w["original"], cache),
                        "copy": _side(project["repo"], sha, w["copy"], cache),
                        "similarity": w["similarity"],
                    }
                    seen[key] = item
                    out.append(item)
    return out


def _markdown(items: list[dict[str, Any]]) -> str:
    rows = [
        "# Hook replay: warnings pending judgment\n",
        "Label each id A (a real copy the commit added), B (similar, not worth blocking) or C "
        '(wrong) in `labels/<your name>.jsonl`: one line `{"id": ..., "label": ..., '
        '"note": ...}` per warning (see bench/hook_replay_labels.py). Judge by reading the '
        "code at the commit (`git show COMMIT:PATH`), before tuning anything on the project.\n",
    ]
    for it in items:
        o, c = it["original"], it["copy"]
        rows += [
            f"## {it['id']} ({', '.join(it['tools'])})\n",
            f'{it["project"]} {it["commit"][:10]} "{it["subject"]}"; similarity '
            f"{it['similarity'] if it['similarity'] is not None else '-'}\n",
            f"original `{o['path']}:{o['first']}-{o['last']}`\n\n```\n{o['excerpt']}\n```\n",
            f"copy `{c['path']}:{c['first']}-{c['last']}`\n\n```\n{c['excerpt']}\n```\n",
        ]
    return "\n".join(rows)


def write_pending(projects: list[dict[str, Any]], out: Path) -> None:
    """Write ``pending.jsonl`` and ``pending.md`` and an empty ``labels/`` directory."""
    items = pending_records(projects)
    (out / "pending.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    (out / "pending.md").write_text(_markdown(items))
    (out / "labels").mkdir(exist_ok=True)
    (out / "labels" / "README.md").write_text(
        'One `<labeler>.jsonl` per labeler: `{"id": ..., "label": "A|B|C", "note": ...}` '
        "per line, ids from ../pending.jsonl. Then `python bench/hook_replay.py score`.\n"
    )


def _kappa(a: dict[str, str], b: dict[str, str]) -> float | None:
    both = sorted(set(a) & set(b))
    if not both:
        return None
    agree = sum(a[i] == b[i] for i in both) / len(both)
    ca, cb = Counter(a[i] for i in both), Counter(b[i] for i in both)
    chance = sum(ca[x] * cb[x] for x in LABELS) / len(both) ** 2
    return 1.0 if chance == 1 else (agree - chance) / (1 - chance)


def _labels(out: Path) -> dict[str, dict[str, str]]:
    labelers: dict[str, dict[str, str]] = {}
    for path in sorted((out / "labels").glob("*.jsonl")):
        got = {}
        for line in path.read_text().splitlines():
            if line.strip():
                doc = json.loads(line)
                if doc.get("label") in LABELS:
                    got[doc["id"]] = doc["label"]
        labelers[path.stem] = got
    return labelers


def score(out: Path) -> int:
    """Print judged precision per project and tool (see the module docstring)."""
    items = [json.loads(x) for x in (out / "pending.jsonl").read_text().splitlines() if x]
    labelers = _labels(out)
    if not labelers:
        print("no label files in", out / "labels")
        return 1
    names = list(labelers)
    agreed = {
        i: labelers[names[0]][i]
        for i in labelers[names[0]]
        if all(labelers[n].get(i) == labelers[names[0]][i] for n in names[1:])
    }
    views = {**labelers, "agreed": agreed}
    if len(names) >= 2:
        print(
            f"Cohen's kappa {names[0]} / {names[1]}: {_kappa(labelers[names[0]], labelers[names[1]])}"
        )
    summary = json.loads((out / "summary.json").read_text())
    commits = {p["project"]: p["commits"] for p in summary["projects"]}
    table: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    by_commit: dict[tuple[str, str, str, str], list[str]] = defaultdict(list)
    for it in items:
        for tool in it["tools"]:
            for view, got in views.items():
                label = got.get(it["id"], "?")
                table[(it["project"], tool, view)][label] += 1
                by_commit[(it["project"], tool, view, it["commit"])].append(label)
    print(
        "| project | tool | labels | judged | A | B | C | precision | refused w/o real copy / 100 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for (project, tool, view), count in sorted(table.items()):
        judged = count["A"] + count["B"] + count["C"]
        precision = f"{count['A'] / judged:.2f}" if judged else "-"
        empty = sum(
            1
            for (p, t, v, _), labels in by_commit.items()
            if (p, t, v) == (project, tool, view) and "?" not in labels and "A" not in labels
        )
        per100 = f"{100 * empty / commits[project]:.1f}" if project in commits else "-"
        print(
            f"| {project} | {tool} | {view} | {judged} | {count['A']} | {count['B']} | "
            f"{count['C']} | {precision} | {per100} |"
        )
    return 0
