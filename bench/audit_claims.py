#!/usr/bin/env python3
"""Audit the claims crystal-lsp prints next to random findings of a real project.

    .venv/bin/python bench/audit_claims.py --project gin            # scan its pinned corpus
    .venv/bin/python bench/audit_claims.py --findings F.json --root DIR -n 50 --seed 31

Takes ``-n`` random findings (every level: ``--all``) of a scan's JSON and checks each printed
claim against the source text, independently of how crystal-lsp computed it:

* **identical lines**: the evidence's ``N of M code lines identical`` is the facts' count; M
  is at most the lines of the longer side that hold a letter or digit and are not comments (a
  line of braces is no code line); N is at most the lines the two texts share in order;
* **renaming**: ``names changed one-to-one`` only with ``facts.renaming``, whose pairs are
  one-to-one both ways and whose names occur as words on their sides;
* **differing lines**: the kinds printed are the facts' counts, which cover every differing
  line (a paired line once);
* **scores**: similarities and CrystalBLEU in range, ``score`` the lowest similarity,
  ``weight`` the best pair's copied tokens x raw CrystalBLEU, ``probability`` in [0, 1];
* **phrases**: a short repeat's copied tokens are the best pair's (and under the bound it
  states), a family's members and files are the locations';
* **unit names**: a unit's name occurs on its first lines after the comments above it (its
  signature; a callback's name is the call's), a range's unit encloses it.

Writes ``--out`` .json (every check of every finding) and .md (the failures).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

IDENTITY = re.compile(r"^(?:all (\d+)|(\d+) of (\d+)) code lines identical$")
SIGNATURE_LINES = 6
"""How many lines from a unit's start its name may take to appear (decorators, templates)."""
TOLERANCE = 1e-3
FACTS = ("identical lines", "renaming", "differing lines")
"""The checks of the claims read off the best pair's facts."""


INLINE_BLOCK = re.compile(r"\s*/\*.*?\*/")
"""A ``/* ... */`` comment closed on its line, before or after code (comments are no tokens:
lines compare without them; ``/** @type {number} */ (x)`` is code)."""
HASH_COMMENTS = frozenset(
    "python ruby php perl bash sh shell zsh r elixir coffeescript julia nim crystal yaml toml "
    "make cmake powershell tcl".split()
)
"""Languages where ``#`` opens a comment (in C it opens a preprocessor line, in Rust and PHP
``#[`` an attribute, in JavaScript ``#name`` a private field: code)."""


def comment(text: str, language: str = "python") -> bool:
    """Whether a stripped line is a comment line (``#`` only where the language says so)."""
    if text.startswith(("//", "/*", "* ", "*/")) or text == "*":
        return True
    return text.startswith("#") and language in HASH_COMMENTS and not text.startswith("#[")


def code(lines: list[str], language: str = "python") -> list[str]:
    """Lines with a letter or digit that are not comments: an upper bound of code lines."""
    out = []
    for line in lines:
        text = INLINE_BLOCK.sub(" ", line).split(" // ")[0].split("  # ")[0].strip()
        if any(c.isalnum() or c in "_'\"`" for c in text) and not comment(text, language):
            out.append(" ".join(text.split()))
    return out


def text_of(root: Path, loc: dict[str, Any]) -> list[str]:
    lines = (root / loc["path"]).read_text(encoding="utf-8", errors="replace").splitlines()
    return lines[loc["start"]["line"] - 1 : loc["end"]["line"]]


def check(doc: dict[str, Any], root: Path) -> dict[str, str]:
    """Every claim of one finding: check name -> "" (true) or why it is not."""
    out: dict[str, str] = {}
    facts = doc.get("facts") or {}
    locs = doc["locations"]
    pair = facts.get("pair", [0, 1])
    named = ({**loc, "language": doc["language"]} for loc in locs)
    units = "; ".join(filter(None, (_unit(root, loc) for loc in named)))
    if max(pair) >= len(locs):
        stale = f"facts of locations {pair}, the finding lists {len(locs)}"
        stale_facts = dict.fromkeys((*FACTS, "phrases"), stale)
        return {**stale_facts, "scores": _scores(doc), "unit names": units}
    a, b = (locs[k] for k in pair)
    la, lb = text_of(root, a), text_of(root, b)
    ca, cb = code(la, doc["language"]), code(lb, doc["language"])
    n_a, n_b = facts["code_lines"]
    ident = facts["identical"]
    shown = sum(m.size for m in SequenceMatcher(None, ca, cb, autojunk=False).get_matching_blocks())
    claims = [m for e in doc["evidence"] if (m := IDENTITY.match(e))]
    why = []
    if len(claims) != 1:
        why.append(f"{len(claims)} identity claims")
    else:
        m = claims[0]
        n, of = (int(m[1]), int(m[1])) if m[1] else (int(m[2]), int(m[3]))
        if (n, of) != (ident, max(n_a, n_b)):
            why.append(f"printed {n} of {of}, facts {ident} of {max(n_a, n_b)}")
    if n_a > len(ca) or n_b > len(cb):
        why.append(f"code lines {n_a}/{n_b} over the text's {len(ca)}/{len(cb)}")
    if ident > min(n_a, n_b, shown):
        why.append(f"{ident} identical, the texts share {shown} lines in order")
    out["identical lines"] = "; ".join(why)
    out["renaming"] = _renaming(doc, facts, "\n".join(la), "\n".join(lb))
    out["differing lines"] = _differing(doc, facts, n_a, n_b, ident)
    out["scores"] = _scores(doc)
    out["unit names"] = units
    out["phrases"] = _phrases(doc, pair)
    return out


def _renaming(doc: dict[str, Any], facts: dict[str, Any], text_a: str, text_b: str) -> str:
    claimed = any(e.startswith(RENAMED) for e in doc["evidence"])
    pairs = facts.get("renaming")
    if claimed != bool(pairs):
        return f"claimed {claimed}, facts {pairs!r}"
    if not pairs:
        return ""
    if len({x for x, _ in pairs}) != len(pairs) or len({y for _, y in pairs}) != len(pairs):
        return f"not one-to-one: {pairs}"
    (phrase,) = [e for e in doc["evidence"] if e.startswith(RENAMED)]
    listed, more = re.fullmatch(r"[^:]*: (.*?)(?: \(\+(\d+)\))?", phrase).groups()  # type: ignore[union-attr]
    shown = [tuple(x.split("->")) for x in listed.split(", ")]
    if not set(shown) <= {tuple(x) for x in pairs} or len(shown) + int(more or 0) != len(pairs):
        return f"printed {phrase!r}, facts {pairs}"
    missing = [
        f"{x}->{y}"
        for x, y in pairs
        if not re.search(word(x.lstrip(".")), text_a) or not re.search(word(y.lstrip(".")), text_b)
    ]
    return f"names not on their sides: {missing}" if missing else ""


def _differing(doc: dict[str, Any], facts: dict[str, Any], n_a: int, n_b: int, ident: int) -> str:
    kinds: dict[str, int] = facts.get("differing", {})
    total = sum(kinds.values())
    if not max(n_a, n_b) - ident <= total <= n_a + n_b - 2 * ident:
        return f"{total} differing lines for {n_a}/{n_b} code lines, {ident} identical"
    printed = [e for e in doc["evidence"] if e.startswith("differing lines: ")]
    expect = sorted(f"{n} {k}" for k, n in kinds.items() if n)
    got = sorted(printed[0][len("differing lines: ") :].split(", ")) if printed else []
    return "" if got == expect else f"printed {got}, facts {expect}"


def _scores(doc: dict[str, Any]) -> str:
    pairs = doc["pairs"]
    why = []
    if any(not (-TOLERANCE <= p["similarity"] <= 1 + TOLERANCE) for p in pairs):
        why.append("a similarity out of [0, 1]")
    if any(not (-1 - TOLERANCE <= p["crystalbleu"] <= 1 + TOLERANCE) for p in pairs):
        why.append("a CrystalBLEU out of [-1, 1]")
    if abs(doc["score"] - min(p["similarity"] for p in pairs)) > TOLERANCE:
        why.append(f"score {doc['score']} is not the lowest similarity")
    weight = max(p["copied"] * max(p["crystalbleu"], 0.0) for p in pairs)
    if abs(doc["weight"] - weight) > max(TOLERANCE, 1e-4 * weight):
        why.append(f"weight {doc['weight']} is not {weight:.3f}")
    p = doc.get("probability")
    if p is not None and not 0.0 <= p <= 1.0:
        why.append(f"probability {p}")
    return "; ".join(why)


RENAMED = "names changed one-to-one"
"""How a renaming's phrase opens (``... but on 1 edited line: a->b``, when a line was edited)."""
SHORT = re.compile(r"^a short repeat \((\d+) copied tokens, under (\d+)\)$")
FAMILY = re.compile(r"^family of parallel units: (\d+) members in (one file|(\d+) files)$")


def _phrases(doc: dict[str, Any], pair: list[int]) -> str:
    """The counts the descriptions state: a short repeat's copied tokens, a family's members."""
    why = []
    best = [p for p in doc["pairs"] if {p["a"], p["b"]} == set(pair)]
    for e in doc["evidence"]:
        if m := SHORT.match(e):
            copied, least = int(m[1]), int(m[2])
            if not best or best[0]["copied"] != copied or copied >= least:
                why.append(f"{e!r}: the best pair copies {best[0]['copied'] if best else '?'}")
        if m := FAMILY.match(e):
            files = len({loc["path"] for loc in doc["locations"]})
            if int(m[1]) != len(doc["locations"]) or (int(m[3]) if m[3] else 1) != files:
                why.append(f"{e!r}: {len(doc['locations'])} locations in {files} files")
    return "; ".join(why)


def _unit(root: Path, loc: dict[str, Any]) -> str:
    lines = (root / loc["path"]).read_text(encoding="utf-8", errors="replace").splitlines()
    if loc["kind"] == "lines":
        unit = loc.get("unit")
        if not unit or not unit.get("name") or unit["name"][0] == "(":
            return ""
        first, last, name = unit["start"], unit["end"], unit["name"]
        if not first <= loc["start"]["line"] <= loc["end"]["line"] <= last:
            return f"{loc['path']}:{loc['start']['line']} outside its unit {name} {first}-{last}"
    elif loc["kind"] in ("file", "module") or not loc.get("name") or loc["name"][0] == "(":
        return ""
    else:
        first, name = loc["start"]["line"], loc["name"]
    head = "\n".join(signature(lines[first - 1 :], loc.get("language", "python")))
    own = name.split(" in ")[0].removesuffix(" callback").removeprefix("anonymous ")
    if own[0] != "(" and not re.search(word(own.split(".")[-1].split("::")[-1]), head):
        return f"{loc['path']}:{first} does not name {name}"
    return ""


def word(name: str) -> str:
    """A pattern of ``name`` as a whole word (names may hold ``$`` or start with ``\\``)."""
    return rf"(?<![\w$]){re.escape(name)}(?![\w$])"


def signature(lines: list[str], language: str) -> list[str]:
    """The first lines of a unit after its leading comments and blank lines (its docs).

    A unit starts at the documentation above it (a Rust ``///`` block, a javadoc): its name is
    on the :data:`SIGNATURE_LINES` lines that follow.
    """
    k, inside = 0, False
    while k < len(lines):
        text = lines[k].strip()
        if inside or text.startswith("/*"):
            inside = "*/" not in text[2:] if not inside else "*/" not in text
        elif text and not comment(text, language):
            break
        k += 1
    return lines[k : k + SIGNATURE_LINES]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--project", help="a project of bench/real/labels (scanned, --all)")
    ap.add_argument("--findings", type=Path, help="a scan's JSON (--all --format json)")
    ap.add_argument("--root", type=Path, help="the scanned folder (default: the JSON's root)")
    ap.add_argument("-n", type=int, default=50)
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--scans", type=Path, help="where fit_verdict.py keeps its scans")
    ap.add_argument("--index-cache", type=Path, help="crystal-lsp's cache (default: a fresh one)")
    ap.add_argument("--out", type=Path, help="default: results/audit_claims[_PROJECT]")
    a = ap.parse_args(argv)
    a.out = a.out or HERE / "results" / (
        "audit_claims_" + a.project if a.project else "audit_claims"
    )
    if a.findings:
        doc = json.loads(a.findings.read_text())
    elif a.project:
        import fit_verdict

        with tempfile.TemporaryDirectory() as fresh:
            # a fresh index: the shared one may hold entries another checkout's code made;
            # the scan saved apart from fit_verdict.py's (whose --reuse would take it)
            os.environ["CRYSTAL_LSP_CACHE_DIR"] = str(a.index_cache or Path(fresh, "index"))
            extra = ["--reuse", "--scans", str(a.scans)] if a.scans else ["--scans", fresh]
            doc = fit_verdict.scan(a.project, fit_verdict.parse_args(extra))
    else:
        ap.error("--project or --findings")
    root = a.root or Path(doc.get("root", "."))
    found = doc["findings"]
    sample = random.Random(a.seed).sample(found, min(a.n, len(found)))
    rows = [{"id": f["id"], "evidence": f["evidence"], "checks": check(f, root)} for f in sample]
    names = sorted({k for r in rows for k in r["checks"]})
    true = {k: sum(not r["checks"][k] for r in rows) for k in names}
    summary = {
        "project": a.project or str(a.findings),
        "command": "bench/audit_claims.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "findings": len(found),
        "sampled": len(rows),
        "true": true,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.with_suffix(".json").write_text(json.dumps({**summary, "rows": rows}, indent=1) + "\n")
    md = [f"# Claims of {len(rows)} random findings of {summary['project']} (seed {a.seed})", ""]
    md += [f"Run of {summary['date']}: `{summary['command']}`, {len(found)} findings (--all).", ""]
    md += [f"* {k}: {true[k]}/{len(rows)} true" for k in names]
    md += [""] + [
        f"* `{r['id']}` {k}: {why}" for r in rows for k, why in r["checks"].items() if why
    ]
    a.out.with_suffix(".md").write_text("\n".join(md) + "\n")
    print("\n".join(md[:14]))
    return 0 if all(v == len(rows) for v in true.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
