"""A person's judgments of findings, kept in ``bench/real/labels/<project>.jsonl``.

One JSON object a line: ``{"project", "a", "b", "label", "reason"}`` (and ``"labeler"`` where
several people judged the same findings independently) with ``a`` and ``b`` the
finding's first two locations as ``path:first-last`` (order-independent), ``label`` one of
A (a copy a reviewer wants to know about), B (real similarity nobody would act on), C (not a
copy, or ranges that do not correspond).  A later line for the same key replaces an earlier
one.  Any tool (or later version) that reports the same two ranges reuses the label.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Loc = tuple[str, int, int]
Key = tuple[str, str, str]
LABELS = ("A", "B", "C")
CRITERIA = (
    "A = a copy a reviewer wants to know about (copy-paste, refactoring candidate); "
    "B = real similarity nobody would act on (parallel API wrappers, per-backend overrides, "
    "sync/async twins, generated or transpiled code, data tables, import/export lists, "
    "overload stubs, licence headers); C = not a copy, or ranges that do not correspond."
)


def fmt(loc: Loc) -> str:
    return f"{loc[0]}:{loc[1]}-{loc[2]}"


def parse(text: str) -> Loc:
    path, _, rng = text.rpartition(":")
    first, _, last = rng.partition("-")
    return path, int(first), int(last)


def key(project: str, a: Loc | str, b: Loc | str) -> Key:
    sa = a if isinstance(a, str) else fmt(a)
    sb = b if isinstance(b, str) else fmt(b)
    lo, hi = sorted((sa, sb))
    return project, lo, hi


def records(labels_dir: Path) -> list[dict[str, Any]]:
    """Every label record, in file order."""
    out: list[dict[str, Any]] = []
    for path in sorted(labels_dir.glob("*.jsonl")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            rec = json.loads(line)
            if rec.get("label") not in LABELS:
                raise ValueError(f"{path}:{n}: label must be one of {LABELS}: {line}")
            out.append(rec)
    return out


def load(labels_dir: Path, labeler: str = "") -> dict[Key, dict[str, Any]]:
    """The label of each finding (the last record wins); with ``labeler``, that labeler's
    where several judged it (records without a labeler count for everyone)."""
    out: dict[Key, dict[str, Any]] = {}
    for rec in records(labels_dir):
        if labeler and rec.get("labeler", "") not in ("", labeler):
            continue
        out[key(rec["project"], rec["a"], rec["b"])] = rec
    return out


def agreement(labels_dir: Path, first: str, second: str) -> dict[str, dict[str, Any]]:
    """Per project: findings both labelers judged, how many they label alike, Cohen's kappa."""
    by = {who: load(labels_dir, who) for who in (first, second)}
    out: dict[str, dict[str, Any]] = {}
    for k, rec in by[first].items():
        other = by[second].get(k)
        if rec.get("labeler") != first or other is None or other.get("labeler") != second:
            continue
        row = out.setdefault(k[0], {"both": 0, "same": 0, "pairs": []})
        row["both"] += 1
        row["same"] += rec["label"] == other["label"]
        row["pairs"].append((rec["label"], other["label"]))
    for row in out.values():
        pairs = row.pop("pairs")
        n = len(pairs)
        chance = sum(
            (sum(a == x for a, _ in pairs) / n) * (sum(b == x for _, b in pairs) / n)
            for x in LABELS
        )
        row["agreement"] = round(row["same"] / n, 3)
        row["kappa"] = None if chance == 1 else round((row["same"] / n - chance) / (1 - chance), 3)
    return out


def append(
    labels_dir: Path, project: str, a: str, b: str, label: str, reason: str, labeler: str = ""
) -> None:
    """Add (or replace, by appending) the label of the finding whose first two ranges are a, b."""
    label = label.upper()
    if label not in LABELS:
        raise ValueError(f"label must be one of {LABELS}, not {label!r}")
    parse(a), parse(b)  # both must read as path:first-last
    _, lo, hi = key(project, a, b)
    rec = {"project": project, "a": lo, "b": hi, "label": label, "reason": reason.strip()}
    if labeler:
        rec["labeler"] = labeler
    labels_dir.mkdir(parents=True, exist_ok=True)
    with (labels_dir / f"{project}.jsonl").open("a") as fh:
        fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def _enclosing(lines: list[str], first: int) -> str:
    """The nearest def/class/function header at or above the range's first line."""
    words = ("def ", "async def ", "class ", "function ", "export ", "var ", "const ", "let ")
    for i in range(min(first, len(lines)) - 1, -1, -1):
        stripped = lines[i].lstrip()
        if stripped.startswith(words) or " function " in stripped:
            return f"{i + 1}: {stripped.strip()[:90]}"
    return "-"


def excerpt(root: Path, loc: Loc, max_lines: int) -> tuple[str, list[str]]:
    """(header, numbered lines) of a location, long ranges cut in the middle."""
    path, first, last = loc
    lines = (root / path).read_text(encoding="utf-8", errors="replace").split("\n")
    body = [f"{i:5d}| {lines[i - 1].rstrip()}" for i in range(first, min(last, len(lines)) + 1)]
    if len(body) > max_lines:
        head = max_lines * 2 // 3
        tail = max_lines - head
        body = [*body[:head], f"     | ... {len(body) - max_lines} lines ...", *body[-tail:]]
    size = last - first + 1
    return f"{fmt(loc)} ({size} lines; in {_enclosing(lines, first)})", body


def pending_block(item: dict[str, Any], root: Path, max_lines: int) -> str:
    """One pending finding, for a judge: where it is, who reports it, and both excerpts."""
    a, b = item["a"], item["b"]
    out = [f"### {item['project']} | {fmt(a)} | {fmt(b)}"]
    out.append(f"reported by: {', '.join(item['by'])}; lines that correspond: {item['share']}")
    if item.get("hint"):
        out.append(f"overlapping labelled finding: {item['hint']}")
    ha, la = excerpt(root, a, max_lines)
    hb, lb = excerpt(root, b, max_lines)
    out += [f"--- a: {ha}", *la, f"--- b: {hb}"]
    text_a = [ln.split("| ", 1)[-1] for ln in la]
    text_b = [ln.split("| ", 1)[-1] for ln in lb]
    out += ["     | (same text as a)"] if text_a == text_b else lb
    return "\n".join(out)
