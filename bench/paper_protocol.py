"""The paper's Table-2 protocol: ``disting --protocol paper|paper-multiref`` beside the scripts.

Run from ``bench/disting_bench.py --paper``. Three sources of the same figures (corpus BLEU and
CrystalBLEU of the intra and inter sets, and their ratio, the distinguishability):

* ours: ``crystal-lsp disting SET --protocol paper|paper-multiref --n N -k K --seed S`` in a
  subprocess (its CPU time and the load recorded);
* ``reference_eval.py``'s ``multiref`` (the shared reference evaluation's ``d_multiref``), called in
  this process on the script's own tokens with ``random.Random(seed + 1)``, as its ``run()`` does;
* the authors' ``small_v1.py`` (sola-st/crystalbleu), when ``--authors-script PATH`` is given (it is
  not part of this project): run in a subprocess in a temporary folder after ``random.seed(S)``,
  on ``lang<L>.json`` written from the set (classes in the order they first appear, keyed
  ``1_<index>`` so that its ShareCode problem-name filter keeps every class, as ours does for
  names of another form), with three stated changes: ``bleu_ignoring`` is the ``crystalbleu``
  package (its PyPI release), ``CodeBLEU.code_bleu`` (the authors' local copy, not published) is
  absent and reported as ``nan`` (its figures are not compared), and ``sample_size = 1000`` is set
  to ``--n`` (the shared sets have fewer than 1,000 intra-class candidates: at most 20 per class of
  21 programs or more). Its printed corpus scores are read for k = 3^i (the script's k sweep;
  K must be one of them: 243 or 729 near the paper's 500). Only C, C++ and Java sets (its lexers).
"""

from __future__ import annotations

import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCRIPT_LANG = {"java": "java", "cpp": "c++", "c": "c"}
SCRIPT_FILE = {"java": 2, "cpp": 1, "c": 0}


def run_ours(data: Path, name: str, protocol: str, n: int, k: int, seed: int) -> dict[str, Any]:
    """``disting --protocol ...`` in a subprocess: corpus intra/inter per metric, CPU, load."""
    argv = [sys.executable, "-m", "crystal_lsp.cli.main", "disting"]
    argv += [str(data / name / "items.jsonl.gz"), "--protocol", protocol, "--n", str(n)]
    argv += ["-k", str(k), "--seed", str(seed), "--metric", "bleu,crystalbleu"]
    argv += ["--format", "json", "--jobs", "2"]
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, capture_output=True, cwd=ROOT, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        return {"error": proc.stderr.decode(errors="replace").strip()}
    doc = json.loads(proc.stdout)
    out: dict[str, Any] = {
        "argv": " ".join(argv[3:]),
        "protocol": doc["protocol_signature"],
        "cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        "load": (load, os.getloadavg()[0]),
    }
    for m in doc["metrics"]:
        out[m["metric"]] = (m["intra_mean"], m["inter_mean"])
    return out


def run_multiref(ref: ModuleType, name: str, n: int, k: int, seed: int) -> dict[str, Any]:
    """``reference_eval.multiref`` on the script's tokens (items without tokens left out)."""
    _, items, _ = ref.load(name)
    lexer = ref.LEXERS[items[0]["lang"]]()
    toks = {it["id"]: ref.tokenize(it["code"], lexer) for it in items}
    kept = [it for it in items if toks[it["id"]]]
    started = time.process_time()
    got = ref.multiref(
        kept, toks, items[0]["lang"], SimpleNamespace(k=k, n=n), random.Random(seed + 1)
    )
    return {
        "bleu": (got["BLEU_intra"], got["BLEU_inter"]),
        "crystalbleu": (got["CrystalBLEU_intra"], got["CrystalBLEU_inter"]),
        "R": got["R"],
        "cpu_s": time.process_time() - started,
    }


def run_small_v1(script: Path, data: Path, name: str, n: int, k: int, seed: int) -> dict[str, Any]:
    """The authors' script on the set (module docstring): its corpus scores at ``k``."""
    import gzip

    with gzip.open(data / name / "items.jsonl.gz", "rt", encoding="utf-8") as fh:
        items = [json.loads(line) for line in fh if line.strip()]
    lang = items[0]["lang"]
    if lang not in SCRIPT_LANG:
        return {"error": f"small_v1.py has no lexer for {lang}"}
    classes: dict[str, list[str]] = {}
    for it in items:
        classes.setdefault(it["class"], []).append(it["code"])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        keyed = {f"1_{i}": codes for i, codes in enumerate(classes.values())}
        (folder / f"lang{SCRIPT_FILE[lang]}.json").write_text(json.dumps(keyed), encoding="utf-8")
        (folder / "bleu_ignoring.py").write_text("from crystalbleu import *\n", encoding="utf-8")
        (folder / "CodeBLEU").mkdir()
        (folder / "CodeBLEU" / "__init__.py").write_text("", encoding="utf-8")
        (folder / "CodeBLEU" / "code_bleu.py").write_text(
            "def code_bleu(references, candidates):\n    return float('nan')  # not compared\n",
            encoding="utf-8",
        )
        source = script.read_text(encoding="utf-8")
        if "sample_size = 1000" not in source:
            return {"error": f"{script}: not the expected small_v1.py (no sample_size = 1000)"}
        (folder / "small_v1.py").write_text(
            source.replace("sample_size = 1000", f"sample_size = {n}"), encoding="utf-8"
        )
        runner = (
            "import random, runpy, sys; "
            f"random.seed({seed}); sys.argv = ['small_v1.py', {SCRIPT_LANG[lang]!r}]; "
            "runpy.run_path('small_v1.py', run_name='__main__')"
        )
        env = {**os.environ, "PYTHONPATH": str(folder), "MPLBACKEND": "Agg"}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run(
            [sys.executable, "-c", runner], cwd=folder, env=env, capture_output=True, check=False
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        return {"error": proc.stderr.decode(errors="replace").strip().splitlines()[-1]}
    return _parse(proc.stdout.decode(), k) | {
        "cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    }


def _parse(out: str, k: int) -> dict[str, Any]:
    """The script's printed corpus scores: BLEU, and CrystalBLEU at ``k`` top n-grams."""
    values: dict[str, dict[str, float]] = {"Intra": {}, "Inter": {}}
    current = None
    for line in out.splitlines():
        top = re.match(r"Calculation time for (\d+) top n-grams", line)
        if top:
            current = int(top.group(1))
        score = re.match(r"(Intra|Inter)-class corpus (CrystalBLEU|BLEU): (\S+)", line)
        if score:
            side, metric, value = score.groups()
            key = "bleu" if metric == "BLEU" else f"crystalbleu@{current}"
            values[side][key] = float(value)
    crystal = f"crystalbleu@{k}"
    if crystal not in values["Intra"]:
        return {"error": f"the script prints k = 3^i only; {k} is not one of them"}
    return {
        "bleu": (values["Intra"]["bleu"], values["Inter"]["bleu"]),
        "crystalbleu": (values["Intra"][crystal], values["Inter"][crystal]),
    }


def compare(
    data: Path, name: str, ref: ModuleType | None, script: Path | None, n: int, k: int, seed: int
) -> list[dict[str, Any]]:
    """Ours beside each script, one row per protocol."""
    rows = []
    theirs = run_multiref(ref, name, n, k, seed) if ref is not None else None
    rows.append(
        _row(
            name,
            "paper-multiref",
            "reference_eval.py multiref",
            run_ours(data, name, "paper-multiref", n, k, seed),
            theirs,
        )
    )
    authors = run_small_v1(script, data, name, n, k, seed) if script is not None else None
    rows.append(
        _row(name, "paper", "small_v1.py", run_ours(data, name, "paper", n, k, seed), authors)
    )
    for row in rows:
        row["seed"] = seed
    return rows


def _row(
    name: str, protocol: str, script: str, ours: dict[str, Any], theirs: dict[str, Any] | None
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "set": name,
        "protocol": protocol,
        "script": script,
        "ours": ours,
        "theirs": theirs,
    }
    if "error" in ours or theirs is None or "error" in theirs:
        return row
    diffs = [abs(a - b) for m in ("bleu", "crystalbleu") for a, b in zip(ours[m], theirs[m])]
    row["max_abs_diff"] = max(diffs)
    return row


def render(rows: list[dict[str, Any]], n: int, k: int, seed: int) -> list[str]:
    """Markdown lines: ours beside the script's, per set and protocol."""
    lines = [
        "",
        f"## The paper's Table-2 protocol (n = {n}, k = {k})",
        "",
        "| set | seed | protocol | script | BLEU intra / inter = disting (ours) | (script) "
        "| CrystalBLEU intra / inter = disting (ours) | (script) | max diff | CPU s ours / script |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ours, theirs = r["ours"], r["theirs"]
        if "error" in ours:
            lines.append(
                f"| {r['set']} | {r.get('seed', '')} | {r['protocol']} | {r['script']} | error: {ours['error']} | | | | | |"
            )
            continue
        cells = [_fig(ours, "bleu")]
        cells.append(_fig(theirs, "bleu") if theirs and "error" not in theirs else _why(theirs))
        cells.append(_fig(ours, "crystalbleu"))
        cells.append(_fig(theirs, "crystalbleu") if theirs and "error" not in theirs else "")
        diff = f"{r['max_abs_diff']:.3g}" if "max_abs_diff" in r else "-"
        cpu = f"{ours['cpu_s']:.1f} / " + (
            f"{theirs['cpu_s']:.1f}" if theirs and "cpu_s" in theirs else "-"
        )
        lines.append(
            f"| {r['set']} | {r.get('seed', '')} | {r['protocol']} | {r['script']} | "
            + " | ".join(cells)
            + f" | {diff} | {cpu} |"
        )
    loads = [x for r in rows if "load" in r["ours"] for x in r["ours"]["load"]]
    if loads:
        lines += ["", f"Load average (1 min) during our runs: {min(loads):.1f}-{max(loads):.1f}."]
    return lines


def _fig(side: dict[str, Any], metric: str) -> str:
    intra, inter = side[metric]
    ratio = intra / inter if inter else float("inf")
    return f"{intra:.6f} / {inter:.6f} = {ratio:.4f}"


def _why(theirs: dict[str, Any] | None) -> str:
    if theirs is None:
        return "not run (no --authors-script / reference tools)"
    return f"not run: {theirs['error']}"
