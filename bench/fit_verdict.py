#!/usr/bin/env python3
"""Fit the calibrated verdict (crystal_lsp/data/verdict.json) on the judged real findings.

    .venv/bin/python bench/fit_verdict.py             # scan, fit, evaluate, write the model
    .venv/bin/python bench/fit_verdict.py --reuse     # reuse the saved scans
    .venv/bin/python bench/fit_verdict.py --evaluate-only --labels DIR --projects a,b

For every project of bench/real/labels/, crystal-lsp (this checkout's installation) scans the
pinned corpus (bench/real/corpora.py) with ``--all --format json``; every finding whose first
two ranges carry a label gives one example: the features its JSON carries
(``facts.features``, computed by crystal_lsp.clones.copies.verdict), the rules' level
(``facts.rules``), the invariant that decided it (``facts.invariant``) and its label (A = 1,
B and C = 0; where two labelers judged a finding, labeler 1's). A logistic regression with an
L2 penalty (hand-written IRLS over standardized features) is fitted and evaluated
**leave-one-project-out**: each project's findings are scored by the model fitted on the other
projects. The model moves a finding off the rules' level only where it is confident: the cuts
(demote a rules copy under one, promote rules similar structure from another) are the ones
with the best pooled out-of-project precision among those that show every genuine copy the
rules show (the union of every tool's A labels, and the A-labelled findings); (0, 2) is no
move. The model fitted on all projects is written with its cuts, the features' definitions,
the out-of-project figures of the model and of the rules, and the fit's provenance. Nothing
in-sample is reported.

Per project: precision of the default view (A / labelled), C shown, recall of the A-labelled
findings, recall of the union of genuine copies and the labels of the top 10 under each
ranking (weight, p x weight, p; ? = no label); pooled figures; on the projects two labelers
judged, the pooled figures on labeler 2's labels too.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from real import corpora, labels, normalize, score  # noqa: E402

LABELS_DIR = HERE / "real" / "labels"
OUT = REPO / "crystal_lsp" / "data" / "verdict.json"
RESULTS = HERE / "results" / "fit_verdict"
L2 = 1.0
KEEP = 0.9
"""Of the A-labelled findings the rules show, the share the chosen cut must keep."""
MODEL_FEATURES = (
    "share lines renamed types literals structure mirror copied crystalbleu covered same_file "
    "family members declarative vendored parallel twins short same_name sibling_names typed "
    "called"
).split()
"""The features the shipped model is fitted on (``--features`` for another set): chosen by
their leave-one-project-out figures (bench/results/fit_verdict.json)."""
BASELINE_FEATURES = MODEL_FEATURES[:20]
BASELINE_CUTS = (0.03, 2.0)
"""The verdict the chosen cut must beat: the rules, ranked by a model of these features, with
these cuts (the finder at 60abb79), evaluated leave-one-project-out like the new one."""
Example = dict[str, Any]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--labels", type=Path, default=LABELS_DIR)
    ap.add_argument("--projects", help="comma-separated subset")
    ap.add_argument("--venv", type=Path, default=REPO / ".venv")
    ap.add_argument("--cache", type=Path, default=corpora.DEFAULT_CACHE)
    ap.add_argument("--reuse", action="store_true", help="reuse saved scans")
    ap.add_argument("--scans", type=Path, help="where scans are saved (default: under --cache)")
    ap.add_argument("--keep", type=float, default=KEEP, help="share of the rules' A to keep")
    ap.add_argument(
        "--no-move",
        action="store_true",
        help="write cuts that move nothing off the rules (the chosen cut is reported only)",
    )
    ap.add_argument("--l2", type=float, default=L2)
    ap.add_argument("--features", help="comma-separated subset of the model's features")
    ap.add_argument("--evaluate-only", action="store_true", help="score with the shipped model")
    ap.add_argument("--labeler", help="only this labeler's labels (and those without a labeler)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--report", type=Path, default=RESULTS)
    return ap.parse_args(argv)


def scan(project: str, a: argparse.Namespace) -> dict[str, Any]:
    """crystal-lsp's findings (--all, JSON) on a pinned corpus, saved under the cache."""
    saved = (a.scans or a.cache / "verdict-scans") / f"{project}.json"
    if a.reuse and saved.is_file():
        return dict(json.loads(saved.read_text()))
    if project in corpora.PROJECTS:
        root = corpora.fetch(corpora.PROJECTS[project], a.cache)
    else:  # a project judged elsewhere (--labels), its corpus fetched by its own bench
        found = [p for p in sorted((a.cache / "corpora").glob(f"{project}-*")) if p.is_dir()]
        if not found:
            raise SystemExit(f"{project}: no corpus under {a.cache / 'corpora'}")
        root = found[0]
    exe = a.venv / "bin" / "crystal-lsp"
    argv = [str(exe), "scan", str(root), "--all", "--format", "json", "--no-progress", "--no-cache"]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    if r.returncode not in (0, 1):
        raise SystemExit(f"{project}: crystal-lsp failed ({r.returncode}): {r.stderr[-500:]}")
    doc: dict[str, Any] = json.loads(r.stdout)
    doc["root"] = str(root)
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps(doc))
    return doc


def examples(project: str, doc: dict[str, Any], store: dict[Any, Any]) -> list[Example]:
    """Every finding of a scan, with its features, rank, weight and label (None: not judged)."""
    root = Path(doc.get("root", "."))
    judged = [
        ((labels.parse(r["a"]), labels.parse(r["b"])), r["label"])
        for k, r in store.items()
        if k[0] == project
    ]
    out = []
    for rank, f in enumerate(doc["findings"]):
        locs = [list(normalize.location(loc, root)[0]) for loc in f["locations"]]
        a, b = (locs[0][0], locs[0][1], locs[0][2]), (locs[1][0], locs[1][1], locs[1][2])
        rec = store.get(labels.key(project, a, b))
        label = None if rec is None else rec["label"]
        if label is None:  # a label of the same copy (another tool's, or earlier ranges)
            near = {lab for pair, lab in judged if score.same_copy(pair, (a, b))}
            label = near.pop() if len(near) == 1 else None
        facts = f.get("facts") or {}
        out.append(
            {
                "project": project,
                "rank": rank,
                "locations": locs,
                "pairs": [[p["a"], p["b"]] for p in f["pairs"]],
                "features": facts.get("features", {}),
                "invariant": facts.get("invariant", ""),
                "rules": facts.get("rules", f["level"]),
                "weight": float(f["weight"]),
                "probability": f.get("probability"),
                "level": f["level"],
                "label": label,
                "exact_key": rec is not None,
            }
        )
    return out


def load_labels(folder: Path, labeler: str | None) -> dict[Any, dict[str, Any]]:
    """The labels of a folder (bench/real/labels.py's keys), of one labeler if given."""
    out: dict[Any, dict[str, Any]] = {}
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            key = labels.key(rec["project"], rec["a"], rec["b"])
            if labeler is not None and str(rec.get("labeler", labeler)) != labeler:
                continue
            if key in out and str(out[key].get("labeler", "1")) == "1":
                continue  # two labelers: labeler 1's label
            out[key] = rec
    return out


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    """L2-penalized logistic regression by IRLS on standardized columns; raw-scale weights."""
    mean, std = x.mean(axis=0), x.std(axis=0)
    std[std == 0] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / std])
    w = np.zeros(z.shape[1])
    penalty = np.diag([0.0] + [l2] * (z.shape[1] - 1))
    for _ in range(100):
        p = 1 / (1 + np.exp(-np.clip(z @ w, -30, 30)))
        grad = z.T @ (y - p) - penalty @ w
        hess = (z * (p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hess, grad)
        w += step
        if np.abs(step).max() < 1e-9:
            break
    coef = w[1:] / std
    return coef, float(w[0] - (coef * mean).sum())


def predict(x: np.ndarray, coef: np.ndarray, intercept: float) -> np.ndarray:
    return np.asarray(1 / (1 + np.exp(-np.clip(x @ coef + intercept, -30, 30))))


def matrix(rows: list[Example], names: list[str]) -> np.ndarray:
    x = np.array([[r["features"].get(n, 0.0) for n in names] for r in rows], dtype=float)
    return x.reshape(len(rows), len(names))


Cuts = tuple[float, float]
"""(demote, promote): a rules copy under ``demote`` is similar, rules similar from ``promote``
a copy (crystal_lsp.clones.copies.levels.level_of)."""
RULES: Cuts = (0.0, 2.0)


def is_copy(r: Example, p: float, cuts: Cuts) -> bool:
    """The default view's level: the invariants first, then the rules moved by the cuts."""
    if r["invariant"] in ("identical", "verbatim", "renamed"):
        return True
    if r["invariant"] == "type variants":
        return False
    return p >= cuts[0] if r["rules"] == "copy" else p >= cuts[1]


def tradeoff(
    by_project: dict[str, list[Example]],
    probs: dict[str, list[float]],
    store: dict[Any, Any],
    grid: list[float] | None = None,
) -> list[dict[str, Any]]:
    """Pooled out-of-project figures of the default view at each single cut (demote = promote).

    At cut ``c`` the verdict alone decides every finding no invariant decides: shown when its
    out-of-project probability is at least ``c``. Each row: the cut, precision, A and
    labelled findings shown, C shown, the union of genuine copies shown and the A of the
    top tens (ranked by probability x weight, as the finder ranks).
    """
    grid = grid if grid is not None else [round(0.01 * k, 2) for k in range(1, 61)]
    rows = []
    for c in grid:
        m = pooled(tables(by_project, probs, (c, c), store))
        rows.append(
            {
                "cut": c,
                "precision": m["precision"],
                "A": m["A"],
                "labelled": m["labelled"],
                "C": m["C"],
                "union": m["union"],
                "top10_A": m["top10_A"]["p x weight"],
            }
        )
    return rows


def choose_cut(rows: list[dict[str, Any]], before: dict[str, Any], keep: float) -> Cuts:
    """The cut of highest pooled out-of-project precision that keeps ``keep`` of the A the
    verdict ``before`` shows and at least its top-ten A, and beats its precision;
    :data:`RULES` (no move) when no cut does (ties: the lower cut)."""
    ok = [
        r
        for r in rows
        if r["A"] >= keep * before["A"]
        and r["top10_A"] >= before["top10_A"]["p x weight"]
        and r["precision"] is not None
        and r["precision"] > (before["precision"] or 0.0)
    ]
    if not ok:
        return RULES
    best = max(ok, key=lambda r: (r["precision"], -r["cut"]))
    return (best["cut"], best["cut"])


RANKINGS: dict[str, Callable[[Example, float], float]] = {
    "weight": lambda r, p: r["weight"],
    "p x weight": lambda r, p: p * r["weight"],
    "p": lambda r, p: p,
}


def measures(
    rows: list[Example], probs: list[float], cuts: Cuts, store: dict[Any, Any], project: str
) -> dict[str, Any]:
    """Figures of one project's default view under ``cuts``."""
    shown = [(r, p) for r, p in zip(rows, probs) if is_copy(r, p, cuts)]
    judged = [r["label"] for r, _ in shown if r["label"]]
    all_a = sum(r["label"] == "A" for r in rows)
    out: dict[str, Any] = {
        "findings": len(rows),
        "default": len(shown),
        "labelled": len(judged),
        "A": judged.count("A"),
        "B": judged.count("B"),
        "C": judged.count("C"),
        "precision": round(judged.count("A") / len(judged), 3) if judged else None,
        "recall_A": f"{judged.count('A')}/{all_a}",
        "pending": len(shown) - len(judged),
    }
    union = _union(store, project)
    found = sum(score.finds([r for r, _ in shown], c) for c in union)
    out["union"] = f"{found}/{len(union)}"
    for name, key in RANKINGS.items():
        top = sorted(shown, key=lambda e: -key(*e))[: score.TOP]
        out[f"top10 {name}"] = "".join(r["label"] or "?" for r, _ in top)
    return out


def _union(store: dict[Any, Any], project: str) -> list[list[tuple[Any, Any]]]:
    pairs = [(labels.parse(r["a"]), labels.parse(r["b"])) for k, r in store.items()]
    pairs = [p for k, p in zip(store, pairs) if k[0] == project and store[k]["label"] == "A"]
    return score.group_copies(pairs)


def lopo(
    by_project: dict[str, list[Example]], names: list[str], l2: float
) -> dict[str, list[float]]:
    """Each project's probabilities from the model fitted on the other projects."""
    out = {}
    for held in by_project:
        train = [r for p, rs in by_project.items() if p != held for r in rs if r["label"]]
        x, y = matrix(train, names), np.array([r["label"] == "A" for r in train], dtype=float)
        coef, intercept = fit(x, y, l2)
        out[held] = predict(matrix(by_project[held], names), coef, intercept).tolist()
    return out


def pooled(table: dict[str, dict[str, Any]]) -> dict[str, Any]:
    a = sum(m["A"] for m in table.values())
    lab = sum(m["labelled"] for m in table.values())
    tops = {name: sum(m[f"top10 {name}"].count("A") for m in table.values()) for name in RANKINGS}
    union = [m["union"].split("/") for m in table.values()]
    rec = [m["recall_A"].split("/") for m in table.values()]
    return {
        "precision": round(a / lab, 3) if lab else None,
        "A": a,
        "labelled": lab,
        "C": sum(m["C"] for m in table.values()),
        "recall_A": f"{sum(int(x) for x, _ in rec)}/{sum(int(y) for _, y in rec)}",
        "union": f"{sum(int(x) for x, _ in union)}/{sum(int(y) for _, y in union)}",
        "top10_A": tops,
        "projects_top10_ge9": {
            name: sum(m[f"top10 {name}"].count("A") >= 9 for m in table.values())
            for name in RANKINGS
        },
    }


def write_model(
    a: argparse.Namespace,
    names: list[str],
    coef: np.ndarray,
    intercept: float,
    cuts: Cuts,
    summary: dict[str, Any],
) -> None:
    from crystal_lsp.clones.copies.verdict import FEATURES

    doc = {
        "intercept": round(intercept, 6),
        "coefficients": {n: round(float(c), 6) for n, c in zip(names, coef)},
        "demote": cuts[0],
        "promote": cuts[1],
        "features": {n: FEATURES[n] for n in names},
        "label": "A (a copy worth acting on) = 1; B and C = 0",
        "provenance": {
            "script": "bench/fit_verdict.py",
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "projects": sorted(summary["per_project"]),
            "examples": summary["examples"],
            "l2": a.l2,
            "labels": "labeler 1 where two labelers judged the same finding",
            "cuts": summary["rule_of_choice"],
            "leave_one_project_out": summary["pooled"],
            "rules_on_the_same_findings": summary["rules_pooled"],
        },
    }
    a.out.write_text(json.dumps(doc, indent=1) + "\n")


def tables(
    by_project: dict[str, list[Example]],
    probs: dict[str, list[float]],
    cuts: Cuts,
    store: dict[Any, Any],
) -> dict[str, dict[str, Any]]:
    """Per project figures of the default view under ``cuts``."""
    return {p: measures(rs, probs[p], cuts, store, p) for p, rs in by_project.items()}


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    from crystal_lsp.clones.copies.verdict import FEATURES, model, parse

    store = load_labels(a.labels, a.labeler)
    projects = sorted({k[0] for k in store})
    if a.projects:
        projects = [p.strip() for p in a.projects.split(",") if p.strip()]
    docs = {p: scan(p, a) for p in projects}
    by_project = {p: examples(p, docs[p], store) for p in projects}
    n = sum(1 for rs in by_project.values() for r in rs if r["label"])
    print(
        f"{n} labelled findings of {sum(map(len, by_project.values()))} over {len(projects)} projects"
    )
    if a.evaluate_only:
        shipped = parse(a.out.read_text()) if a.out.is_file() else model()
        probs = {
            p: [shipped.probability(r["features"]) for r in rs] for p, rs in by_project.items()
        }
        cuts: Cuts = (shipped.demote, shipped.promote)
    else:
        names = a.features.split(",") if a.features else list(MODEL_FEATURES)
        unknown = set(names) - set(FEATURES)
        if unknown:
            raise SystemExit(f"unknown features: {sorted(unknown)}")
        probs = lopo(by_project, names, a.l2)
        cuts = RULES
    rules = tables(by_project, probs, RULES, store)
    curve = tradeoff(by_project, probs, store)
    base_probs = lopo(by_project, BASELINE_FEATURES, a.l2)
    before = pooled(tables(by_project, base_probs, BASELINE_CUTS, store))
    chosen = choose_cut(curve, before, a.keep)
    if not a.evaluate_only:
        cuts = RULES if a.no_move else chosen
    table = tables(by_project, probs, cuts, store)
    summary: dict[str, Any] = {
        "cuts": cuts,
        "examples": n,
        "per_project": table,
        "pooled": pooled(table),
        "rules_per_project": rules,
        "rules_pooled": pooled(rules),
        "before": before,
        "chosen_cut": chosen,
        "tradeoff": curve,
        "rule_of_choice": f"the cut of highest pooled precision keeping >= {a.keep} of the A "
        "and at least the top-ten A of the verdict before (the rules ranked by the 20-feature "
        "model, cuts 0.03/2, leave-one-project-out), beating its precision; else no move",
    }
    second = load_labels(a.labels, "2")
    twice = sorted({k[0] for k, r in second.items() if r.get("labeler") == "2"} & set(projects))
    if twice:  # the projects two labelers judged: the figures on labeler 2's labels too
        relabel = {p: examples(p, docs[p], second) for p in twice}
        summary["labeler_2"] = {
            "model": pooled(tables(relabel, probs, cuts, second)),
            "rules": pooled(tables(relabel, probs, RULES, second)),
            "projects": twice,
        }
    if not a.evaluate_only:
        train = [r for rs in by_project.values() for r in rs if r["label"]]
        x, y = matrix(train, names), np.array([r["label"] == "A" for r in train], dtype=float)
        coef, intercept = fit(x, y, a.l2)
        write_model(a, names, coef, intercept, cuts, summary)
        summary["coefficients"] = dict(zip(names, map(float, coef)))
    a.report.parent.mkdir(parents=True, exist_ok=True)
    suffix = "-heldout" if a.evaluate_only else ""
    Path(f"{a.report}{suffix}.json").write_text(json.dumps(summary, indent=1) + "\n")
    print("model", json.dumps(summary["pooled"]))
    print("rules", json.dumps(summary["rules_pooled"]))
    print("before", json.dumps(before))
    for p, m in table.items():
        print(p, json.dumps(m))
        print("  rules", json.dumps(rules[p]))
    if "labeler_2" in summary:
        print("labeler 2", json.dumps(summary["labeler_2"]))
    print("cut  precision  A/labelled  C  union  top10 A")
    for r in curve:
        print(
            f"{r['cut']:.2f}  {r['precision']}  {r['A']}/{r['labelled']}  {r['C']}  "
            f"{r['union']}  {r['top10_A']}"
        )
    print("cuts", cuts, "(written)" if not a.evaluate_only else "(shipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
