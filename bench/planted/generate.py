"""Plant copies of real functions into a real corpus: the clone-quality probe.

Two corpora: CPython's standard library of the running interpreter (tests
excluded) and a subset of the JDK's ``java.base`` sources of the same size.
For each clone type (t1 exact, t2 consistently renamed, t3 renamed plus one
statement inserted and one deleted) the generator makes its own full copy of
the corpus, plants N copies of N real functions (each into a different existing
file) and writes a manifest with the original's and the copy's line ranges.
The same N originals and the same target files are used for the three types,
so the three columns of a results table differ only by the transformation.

Deterministic: everything follows from --seed and the corpus.  Run
``python bench/planted/generate.py --help``.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))  # bench/: benchlib

from benchlib.sources import (
    PY_EXCLUDED_DIRS,
    find_java_src_zip,
    prepare_original,
    python_corpus_files,
    python_stdlib,
)
from plant_common import Plan
from plant_java import java_candidates, java_plant, java_targets
from plant_python import python_candidates, python_plant, python_targets

# the corpora are prepared by benchlib.sources; other benchmarks reach them through this module
__all__ = [
    "DEFAULT_WORKDIR",
    "PY_EXCLUDED_DIRS",
    "find_java_src_zip",
    "generate",
    "prepare_original",
    "python_corpus_files",
    "python_stdlib",
]

GENERATOR_VERSION = 3


TYPES = ("t1", "t2", "t3")


DEFAULT_WORKDIR = Path(tempfile.gettempdir()) / "crystal-bench"


def _choose(
    plans: list[Plan], targets_any: list[str], targets_cls: list[str], n: int, seed: int
) -> list[tuple[Plan, str]]:
    rng = random.Random(seed)
    order = list(plans)
    rng.shuffle(order)
    origins: set[str] = set()
    used_targets: set[str] = set()
    chosen: list[tuple[Plan, str]] = []
    for p in order:
        if len(chosen) == n:
            break
        if p.path in origins or p.path in used_targets:
            continue
        pool = targets_cls if p.is_method and p.indent else targets_any
        avail = [t for t in pool if t not in used_targets and t not in origins and t != p.path]
        if not avail:
            continue
        tgt = rng.choice(avail)
        origins.add(p.path)
        used_targets.add(tgt)
        chosen.append((p, tgt))
    if len(chosen) < n:
        raise RuntimeError(f"only {len(chosen)} of {n} functions could be planted")
    return chosen


def _javac_check(paths: list[Path]) -> str | None:
    """Parse-only javac run over the planted files: None when all parse."""
    javac = shutil.which("javac")
    if not javac or not paths:
        return None
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run(
            [
                javac,
                "-XDshould-stop.ifNoError=PARSE",
                "-XDshould-stop.ifError=PARSE",
                "-d",
                out,
                *map(str, paths),
            ],
            capture_output=True,
            text=True,
        )
    return None if proc.returncode == 0 else proc.stderr[-4000:]


def planted_dir(workdir: Path, lang: str, n: int, seed: int) -> Path:
    return workdir / lang / f"planted-n{n}-s{seed}"


def generate(
    lang: str, workdir: Path, n: int = 30, seed: int = 20240601, java_src: str | None = None
) -> dict[str, object]:
    """Make (or reuse) the corpora and manifests; return {type: manifest path, ...}."""
    info = prepare_original(lang, workdir, java_src)
    orig = workdir / lang / "original"
    out = planted_dir(workdir, lang, n, seed)
    key = hashlib.sha256(
        json.dumps([GENERATOR_VERSION, lang, n, seed, info], sort_keys=True).encode()
    ).hexdigest()[:16]
    stamp = out / "generator.json"
    manifests = {t: out / f"manifest_{t}.json" for t in TYPES}
    if stamp.is_file() and json.loads(stamp.read_text()).get("key") == key:
        if all(p.is_file() for p in manifests.values()) and all((out / t).is_dir() for t in TYPES):
            return {
                "original": str(orig),
                "info": info,
                **{t: str(p) for t, p in manifests.items()},
            }
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    if lang == "python":
        files = python_corpus_files(orig)
        plans = python_candidates(orig, files, seed)
        t_any, t_cls = python_targets(orig, files)
        plant = python_plant
    else:
        files = sorted(
            os.path.relpath(os.path.join(d, f), orig)
            for d, _, fs in os.walk(orig)
            for f in fs
            if f.endswith(".java")
        )
        plans = java_candidates(orig, files, seed)
        t_any = java_targets(orig, files)
        t_cls = t_any
        plant = java_plant
    chosen = _choose(plans, t_any, t_cls, n, seed)
    for t in TYPES:
        root = out / t
        shutil.copytree(orig, root)
        entries = []
        changed: list[Path] = []
        for i, (p, tgt) in enumerate(chosen):
            tpath = root / tgt
            new_text, start = plant(tpath.read_bytes().decode("utf-8"), p.texts[t])
            tpath.write_bytes(new_text.encode("utf-8"))
            changed.append(tpath)
            n_lines = p.texts[t].count("\n")
            if lang == "python":
                tree = ast.parse(new_text, filename=str(tpath))
                node = _find_def(tree, start)
                if node is None or (node.end_lineno or 0) != start + n_lines - 1:
                    raise RuntimeError(f"planted copy not found where expected in {tpath}")
            entry: dict[str, object] = {
                "id": i,
                "name": p.name,
                "original": {"path": p.path, "start": p.start, "end": p.end},
                "copy": {"path": tgt, "start": start, "end": start + n_lines - 1},
            }
            if t != "t1":
                entry["renames"] = p.renames
            if t == "t3":
                entry["inserted"] = {"line": start + p.inserted_line - 1, "text": p.inserted}
                entry["deleted"] = {
                    "original_line": p.start + p.deleted_line - 1,
                    "text": p.deleted,
                }
            entries.append(entry)
        if lang == "java":
            err = _javac_check(changed)
            if err:
                raise RuntimeError(f"planted Java files do not parse ({t}):\n{err}")
        manifest = {
            "version": 1,
            "lang": lang,
            "type": t,
            "seed": seed,
            "n": n,
            "corpus": info,
            "root": str(root),
            "original_root": str(orig),
            "plants": entries,
        }
        manifests[t].write_text(json.dumps(manifest, indent=1) + "\n")
    stamp.write_text(json.dumps({"key": key, "candidates": len(plans)}) + "\n")
    return {"original": str(orig), "info": info, **{t: str(p) for t, p in manifests.items()}}


def _find_def(tree: ast.Module, line: int) -> ast.FunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.lineno == line:
            return node
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--lang", choices=("python", "java", "all"), default="all")
    ap.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    ap.add_argument("-n", type=int, default=30, help="planted copies per type (default 30)")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--java-src", help="a JDK src.zip (default: openjdk-17-source's)")
    a = ap.parse_args(argv)
    for lang in ("python", "java") if a.lang == "all" else (a.lang,):
        res = generate(lang, a.workdir, a.n, a.seed, a.java_src)
        print(json.dumps({"lang": lang, **res}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
