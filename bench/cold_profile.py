#!/usr/bin/env python3
"""Stage-by-stage CPU of a cold scan's per-file work (what every index worker does per file).

    .venv/bin/python bench/cold_profile.py                    # CPython stdlib (the planted corpus)
    .venv/bin/python bench/cold_profile.py --lang java --rounds 2

Runs :func:`crystal_lsp.clones.index.build_job` -- tokenize, entry, cache encoding -- on every
file of the planted benchmark's unmodified corpus in this one process, with each stage's
function wrapped in a CPU timer (``process_time``; the wrappers cost about 1 µs a call, a few
hundred thousand calls in all, so the figures are a little high), and the executor on and off
in alternating rounds. Then the main process's share of a cold scan: storing the encoded
values and decoding the light entry. Stages are exclusive (the entry's time is what is left
after its parts). Prints a Markdown table, and writes bench/results/cold_profile.{json,md}.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "planted"))

import generate  # noqa: E402

from crystal_lsp.clones.index import repo as index  # noqa: E402
from crystal_lsp.clones.index import state as index_state  # noqa: E402
from crystal_lsp.clones.store import decode  # noqa: E402
from crystal_lsp.text import entries, lexers  # noqa: E402

# (module, attribute, stage): every call of module.attribute is timed as that stage
STAGES = [
    (entries, "resolve_lexer", "choose the lexer (file name)"),
    (entries, "lex", "lexing (Pygments rules)"),
    (entries, "categories", "token categories"),
    (entries, "token_lines", "token lines"),
    (entries, "line_starts", "line starts"),
    (entries, "extract", "snippets (units)"),
    (entries, "text_sha", "snippet digests"),
    (entries, "file_view", "normalized view"),
    (entries, "token_hashes", "n-gram shingles"),
    (entries, "ngram_hashes", "n-gram shingles"),
    (entries, "noise_ranges", "noise ranges"),
    (entries, "detect_status", "generated/minified check"),
    (entries.Entry, "light_json", "light entry to JSON"),
    (entries.Heavy, "to_json", "heavy entry to JSON"),
    (index_state, "encode", "cache encoding (JSON + zlib)"),
]


def _wrap(totals: dict[str, float], stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            totals[stage] += time.process_time() - t0

    return timed


def one_round(jobs: list[index.BuildJob], fastlex: bool) -> dict[str, float]:
    """CPU per stage of building every job once."""
    totals: dict[str, float] = defaultdict(float)
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in STAGES]
    for owner, name, stage in STAGES:
        setattr(owner, name, _wrap(totals, stage, getattr(owner, name)))
    os.environ["CRYSTAL_LSP_FASTLEX"] = "1" if fastlex else "0"
    # a worker resolves each file name once: start from empty name caches as it does
    lexers._lexer_for_suffix.cache_clear()
    lexers._filename_patterns.cache_clear()
    try:
        t0 = time.process_time()
        encoded = [index.build_job(job) for job in jobs]
        totals["total per-file work"] = time.process_time() - t0
        t1 = time.process_time()
        for light, _heavy in encoded:
            index.Entry.from_light_json(decode(light))
        totals["main process: decode light entries"] = time.process_time() - t1
    finally:
        for owner, name, fn in saved:
            setattr(owner, name, fn)
        os.environ["CRYSTAL_LSP_FASTLEX"] = "1"
    parts = sum(v for k, v in totals.items() if not k.startswith(("total", "main")))
    totals["entry assembly (rest)"] = totals["total per-file work"] - parts
    return dict(totals)


def render(doc: dict[str, Any]) -> str:
    """The Markdown table: stage, CPU with the executor and with Pygments' loop, share."""
    on, off = doc["fastlex"], doc["pygments"]
    total = on["total per-file work"]
    lines = [
        f"# cold_profile ({doc['lang']}: {doc['files']} files, {doc['when']}, "
        f"load {doc['load'][0]}–{doc['load'][1]})",
        "",
        "| stage | CPU s, fastlex | share | CPU s, Pygments loop |",
        "|---|---|---|---|",
    ]
    for stage in sorted(on, key=lambda k: -on[k]):
        share = "" if stage.startswith(("total", "main")) else f"{100 * on[stage] / total:.0f} %"
        lines.append(f"| {stage} | {on[stage]:.2f} | {share} | {off.get(stage, 0):.2f} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lang", default="python", choices=("python", "java"))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workdir", type=Path, default=generate.DEFAULT_WORKDIR)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "cold_profile")
    a = ap.parse_args()
    generate.prepare_original(a.lang, a.workdir)
    root = a.workdir / a.lang / "original"
    paths = sorted(p for p in root.rglob("*") if p.is_file())
    jobs: list[index.BuildJob] = [
        (str(p.relative_to(root)), p.read_text(encoding="utf-8", errors="replace"), None, 0, 50, 5)
        for p in paths
    ]
    load0 = os.getloadavg()[0]
    runs: dict[str, list[dict[str, float]]] = {"fastlex": [], "pygments": []}
    one_round(jobs[:20], True)  # imports, lexer tables
    for r in range(a.rounds):
        for mode in ("fastlex", "pygments") if r % 2 == 0 else ("pygments", "fastlex"):
            runs[mode].append(one_round(jobs, mode == "fastlex"))
    doc: dict[str, Any] = {
        "lang": a.lang,
        "files": len(jobs),
        "when": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load": [round(load0, 2), round(os.getloadavg()[0], 2)],
    }
    for mode, rounds in runs.items():
        doc[mode] = {k: min(r[k] for r in rounds) for k in rounds[0]}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.with_suffix(".json").write_text(json.dumps({**doc, "rounds": runs}, indent=1) + "\n")
    a.out.with_suffix(".md").write_text(render(doc))
    print(render(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
