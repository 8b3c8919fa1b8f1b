"""The measures of the real-code judge (see /work/shared/data/real_clones/README.md).

* precision = A / labelled on a seeded random sample of findings per tool and project;
* C count in that sample;
* genuine copies found / union: the A-labelled findings of all tools, grouped into distinct
  copies (same copy = both locations overlap by at least half of the shorter range); a tool
  finds a copy when one of its pairs overlaps both locations that way;
* lines that correspond: ``aligned.share`` of every finding's first two locations, median;
* the labels of the tool's top 10 by its own order.
"""

from __future__ import annotations

import random
import statistics
from pathlib import Path
from typing import Any

from real import aligned, labels, normalize

Loc = tuple[str, int, int]
Finding = dict[str, Any]
SAMPLE = 20
TOP = 10
SEED = 13


def sample_ranks(
    n: int, project: str, tool_slug: str, seed: int = SEED, k: int = SAMPLE
) -> list[int]:
    """The sampled findings (by rank), drawn from a generator seeded by project and tool."""
    rng = random.Random(f"real-bench:{seed}:{project}:{tool_slug}")
    return sorted(rng.sample(range(n), min(k, n)))


def overlaps(x: Loc, y: Loc) -> bool:
    """Same file, and the ranges share at least half of the shorter one's lines."""
    if x[0] != y[0]:
        return False
    inter = min(x[2], y[2]) - max(x[1], y[1]) + 1
    shorter = min(x[2] - x[1], y[2] - y[1]) + 1
    return inter > 0 and 2 * inter >= shorter


def same_copy(p: tuple[Loc, Loc], q: tuple[Loc, Loc]) -> bool:
    (a, b), (c, d) = p, q
    return (overlaps(a, c) and overlaps(b, d)) or (overlaps(a, d) and overlaps(b, c))


def group_copies(pairs: list[tuple[Loc, Loc]]) -> list[list[tuple[Loc, Loc]]]:
    """Connected groups of pairs that are the same copy (union-find)."""
    parent = list(range(len(pairs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(pairs)):
        for j in range(i):
            if same_copy(pairs[i], pairs[j]):
                parent[find(i)] = find(j)
    groups: dict[int, list[tuple[Loc, Loc]]] = {}
    for i, p in enumerate(pairs):
        groups.setdefault(find(i), []).append(p)
    return list(groups.values())


def finds(findings: list[Finding], copy: list[tuple[Loc, Loc]]) -> bool:
    """Does one of the findings' pairs overlap both locations of one member of the copy?"""
    for f in findings:
        locs = [(p, int(s), int(e)) for p, s, e in f["locations"]]
        for x, y in copy:
            on_x = {i for i, loc in enumerate(locs) if overlaps(loc, x)}
            on_y = {i for i, loc in enumerate(locs) if overlaps(loc, y)}
            if not on_x or not on_y:
                continue
            if any(
                (i in on_x and j in on_y) or (j in on_x and i in on_y)
                for i, j in normalize.pairs_of(f)
            ):
                return True
    return False


def judged(findings: list[Finding], project: str, slug: str, seed: int) -> dict[str, list[int]]:
    """Ranks of the sampled findings and of the top 10."""
    return {
        "sample": sample_ranks(len(findings), project, slug, seed),
        "top": list(range(min(TOP, len(findings)))),
    }


def label_of(store: dict[Any, Any], project: str, f: Finding) -> str | None:
    a, b = normalize.first_two(f)
    rec = store.get(labels.key(project, a, b))
    return None if rec is None else str(rec["label"])


def inside(x: Loc, y: Loc) -> bool:
    """Whether range ``x`` lies within range ``y`` (same file)."""
    return x[0] == y[0] and y[1] <= x[1] and x[2] <= y[2]


def repeats(by_rank: list[Finding]) -> int:
    """Findings whose every location lies inside a location of one higher-ranked finding."""
    count = 0
    for k, f in enumerate(by_rank):
        locs = [(p, int(a), int(b)) for p, a, b in f["locations"]]
        for g in by_rank[:k]:
            outer = [(p, int(a), int(b)) for p, a, b in g["locations"]]
            if all(any(inside(x, y) for y in outer) for x in locs):
                count += 1
                break
    return count


def shares(root: Path, findings: list[Finding]) -> list[float]:
    return [aligned.share(root, *normalize.first_two(f)) for f in findings]


def _median(xs: list[float]) -> float | None:
    return round(statistics.median(xs), 3) if xs else None


def tool_measures(
    project: str, slug: str, findings: list[Finding], store: dict[Any, Any], root: Path, seed: int
) -> dict[str, Any]:
    """Everything but recall for one tool on one project."""
    by_rank = sorted(findings, key=lambda f: f["rank"])
    picks = judged(by_rank, project, slug, seed)
    sample = [label_of(store, project, by_rank[r]) for r in picks["sample"]]
    top = [label_of(store, project, by_rank[r]) for r in picks["top"]]
    done = [x for x in sample if x]
    all_shares = shares(root, by_rank)
    return {
        "findings": len(findings),
        "repeats": repeats(by_rank),
        "pairs": sum(len(normalize.pairs_of(f)) for f in findings),
        "sampled": len(sample),
        "labelled": len(done),
        "pending": sum(
            label_of(store, project, by_rank[r]) is None
            for r in set(picks["sample"]) | set(picks["top"])
        ),
        "A": done.count("A"),
        "B": done.count("B"),
        "C": done.count("C"),
        "precision": round(done.count("A") / len(done), 3) if done else None,
        "sample_ranks": picks["sample"],
        "sample_labels": sample,
        "top10": "".join(x or "?" for x in top),
        "top10_A": top.count("A"),
        "aligned_median": _median(all_shares),
        "aligned_median_sample": _median([all_shares[r] for r in picks["sample"]]),
    }


def recall(
    project: str,
    per_tool: dict[str, list[Finding]],
    store: dict[Any, Any],
    seed: int,
    slugs: dict[str, str],
) -> dict[str, Any]:
    """Union of the A-labelled judged findings of all tools, and which tools find each copy."""
    a_pairs: list[tuple[Loc, Loc]] = []
    for name, findings in per_tool.items():
        by_rank = sorted(findings, key=lambda f: f["rank"])
        picks = judged(by_rank, project, slugs[name], seed)
        for r in sorted(set(picks["sample"]) | set(picks["top"])):
            if label_of(store, project, by_rank[r]) == "A":
                pair = normalize.first_two(by_rank[r])
                if pair not in a_pairs:
                    a_pairs.append(pair)
    copies = group_copies(a_pairs)
    found = {name: sum(finds(fs, c) for c in copies) for name, fs in per_tool.items()}
    listing = [[labels.fmt(x) + " ~ " + labels.fmt(y) for x, y in c] for c in copies]
    return {"union": len(copies), "found": found, "copies": listing}


def pending(
    project: str,
    per_tool: dict[str, list[Finding]],
    store: dict[Any, Any],
    root: Path,
    seed: int,
    slugs: dict[str, str],
) -> list[dict[str, Any]]:
    """Judged findings (sample or top 10) without a label, one entry per pair of ranges."""
    items: dict[Any, dict[str, Any]] = {}
    labelled = [
        (labels.parse(r["a"]), labels.parse(r["b"]), r) for k, r in store.items() if k[0] == project
    ]
    for name, findings in per_tool.items():
        by_rank = sorted(findings, key=lambda f: f["rank"])
        picks = judged(by_rank, project, slugs[name], seed)
        for r in sorted(set(picks["sample"]) | set(picks["top"])):
            if label_of(store, project, by_rank[r]) is not None:
                continue
            a, b = normalize.first_two(by_rank[r])
            k = labels.key(project, a, b)
            item = items.setdefault(k, {"project": project, "a": a, "b": b, "by": []})
            item["by"].append(f"{name} #{r + 1}")
            item["share"] = aligned.share(root, a, b)
            hint = [
                f"{r2['label']} {r2['a']} | {r2['b']} ({r2['reason']})"
                for x, y, r2 in labelled
                if same_copy((a, b), (x, y))
            ]
            item["hint"] = "; ".join(hint[:2])
    return list(items.values())
