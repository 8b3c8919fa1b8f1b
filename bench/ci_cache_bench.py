#!/usr/bin/env python3
"""What keeping the cache between CI runs saves: a fresh checkout scanned cold and with a restored cache.

    .venv/bin/python bench/ci_cache_bench.py              # CPython stdlib, 3 rounds (~4 min)
    .venv/bin/python bench/ci_cache_bench.py --lang java --rounds 2

A CI job starts from a fresh clone: every file has a new mtime, so nothing can be trusted by
size and mtime and every file is read and hashed. What a restored ``CRYSTAL_LSP_CACHE_DIR``
still saves is everything keyed by content: the index entries (tokens, units, shingles) and
the alignment of pairs whose files did not change. Each round, on a copy of the planted
benchmark's unmodified corpus at a fixed path (the cache's per-repository directory is keyed by
the checkout's real path, as CI's workspace path is fixed), alternating:

* *cold*: an empty cache directory;
* *restored, nothing changed*: the cache directory of a previous scan copied in (as
  ``actions/cache`` restores it), every file's mtime set to now (a fresh clone);
* *restored, 10 files changed*: the same with a comment line appended to 10 files (a pull
  request).

CPU = the process tree's user + system time. Writes bench/results/ci_cache_bench.{json,md}.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import clone_bench  # noqa: E402  (also puts bench/planted on sys.path)
import generate  # noqa: E402

MODES = ("cold", "restored, nothing changed", "restored, 10 files changed")


def _scan(root: Path, cache: Path, out: Path) -> dict[str, Any]:
    exe = REPO / ".venv" / "bin" / "crystal-lsp"
    env = dict(os.environ, CRYSTAL_LSP_CACHE_DIR=str(cache))
    argv = [str(exe), "scan", str(root), "--format", "json", "--no-progress"]
    res = clone_bench.measure(argv, root, out, env=env)
    doc = json.loads(out.read_text() or "{}")
    res["findings"] = len(doc.get("findings", []))
    res["timings"] = doc.get("timings")
    res.pop("stderr", None)
    return res


def _fresh_checkout(original: Path, root: Path, changed: int) -> None:
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(original, root)  # new mtimes, like a fresh clone
    if not changed:
        return
    files = sorted(p for p in root.rglob("*") if p.is_file())
    for p in files[:: max(1, len(files) // changed)][:changed]:
        with p.open("a", encoding="utf-8") as f:
            f.write("\n# changed in this pull request\n" if p.suffix == ".py" else "\n// changed\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lang", default="python", choices=("python", "java"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=generate.DEFAULT_WORKDIR)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "ci_cache_bench")
    a = ap.parse_args()
    info = generate.prepare_original(a.lang, a.workdir)
    original = a.workdir / a.lang / "original"
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory(prefix="ci-cache-") as tmp:
        base = Path(tmp)
        root, saved = base / "checkout", base / "saved-cache"
        _fresh_checkout(original, root, 0)
        _scan(root, saved, base / "seed.json")  # the cache a previous CI run left
        for r in range(a.rounds):
            for mode in MODES if r % 2 == 0 else tuple(reversed(MODES)):
                cache = base / "cache"
                shutil.rmtree(cache, ignore_errors=True)
                if mode != "cold":
                    shutil.copytree(saved, cache)
                _fresh_checkout(original, root, 10 if "10 files" in mode else 0)
                res = _scan(root, cache, base / "f.json")
                runs[mode].append(res)
                print(f"[ci-cache] {mode}: {res['cpu']} s CPU, {res['wall']} s wall", flush=True)
        size_mb = sum(p.stat().st_size for p in saved.rglob("*") if p.is_file()) / 2**20
    doc = {
        "when": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "corpus": info,
        "cache_mb": round(size_mb, 1),
        "runs": runs,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.with_suffix(".json").write_text(json.dumps(doc, indent=1) + "\n")
    lines = [
        f"# ci_cache_bench ({info['source']}: {info['files']} files, {info['lines']:,} lines; "
        f"{doc['when']}; cache {doc['cache_mb']} MB)",
        "",
        "| run | median CPU s | median wall s | findings | load |",
        "|---|---|---|---|---|",
    ]
    for mode, rs in runs.items():
        loads = [r["load1"] for r in rs]
        lines.append(
            f"| {mode} | {statistics.median(r['cpu'] for r in rs):.2f} "
            f"| {statistics.median(r['wall'] for r in rs):.2f} | {rs[0]['findings']} "
            f"| {min(loads)}–{max(loads)} |"
        )
    a.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
