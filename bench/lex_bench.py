#!/usr/bin/env python3
"""Lexing throughput of the fastlex executor against Pygments, and the cold scan against jscpd 5.

    .venv/bin/python bench/lex_bench.py                 # full run (~15 min on 2 busy cores)
    .venv/bin/python bench/lex_bench.py --quick         # 60 files a language, 1 scan round
    .venv/bin/python bench/lex_bench.py --skip-scan     # lexing only

Lexing, per language, on the same files with the same lexer object (``resolve_lexer``: Pygments'
default options; ``tokens.lex`` prepares the input as ``get_tokens`` does, see
``crystal_lsp/text/lexinput.py``): Pygments' ``list(lexer.get_tokens_unprocessed(src))`` against
``list(crystal_lsp.text.fastlex.get_tokens(lexer, src))`` (*raw*), and ``tokens.lex`` with the
executor off (``CRYSTAL_LSP_FASTLEX=0``) against on (*lex*, what the scan runs), and ``tokens.lex``
on the executor with its loops in Python instead of the native core's (*pure loop*: the
columns loop, and for lexers with an override such as C's the token loop; the same as on when
the extension is not built). First a pass that checks every file's token
stream (type and value) is identical, and that the three ``lex`` variants give the same columns
-- it also builds the executor's tables, and its time is reported as the one-off *first pass*;
then ``--rounds`` rounds, the five variants alternating (the order reversed every other round),
CPU time (``process_time``) per file. Ratio = Pygments CPU / executor CPU over all rounds;
*native loop* = pure-loop CPU / executor CPU.

Corpora (read in place, sampled with a fixed seed): Python, CPython's stdlib (tests and
site-packages excluded); Java, the JDK's src.zip (java.base); JavaScript, moment 2.30.1, and
TypeScript, rxjs 7.8.1 (the pinned trees ``bench/real_bench.py`` fetches into its cache); C,
``/usr/include``'s headers; C++, libstdc++'s headers. A language whose tree is missing is
reported as skipped.

Cold scan: ``crystal-lsp scan <root> --format json`` with an empty ``CRYSTAL_LSP_CACHE_DIR``,
with the executor and with Pygments' loop, and jscpd 5 (defaults, the tools venv of
``bench/real_bench.py``, installed when missing), alternating, on the planted benchmark's
unmodified corpora (CPython stdlib, JDK java.util/io/time). CPU = the process tree's user +
system time (``RUSAGE_CHILDREN``). The load average is recorded with every figure.

Writes bench/results/lex_bench.{json,md}.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import clone_bench  # noqa: E402  (also puts bench/planted on sys.path)
import generate  # noqa: E402

from crystal_lsp.text.fastlex import get_tokens, program_for  # noqa: E402
from crystal_lsp.text.fastlex.columns import (  # noqa: E402
    native_loop,
    set_native_loop,
    set_native_tokens,
)
from crystal_lsp.text.fastlex.select import columns_for, runner_for  # noqa: E402
from crystal_lsp.text.lexers import lexer_by_language  # noqa: E402
from crystal_lsp.text.tokens import lex  # noqa: E402

LANGS = ("python", "java", "javascript", "typescript", "c", "cpp")
TOOLS_DIR = Path.home() / ".cache" / "crystal-lsp-bench" / "real" / "tools"
REAL = TOOLS_DIR.parent / "corpora"  # bench/real_bench.py's pinned projects
Corpus = list[tuple[str, str]]


def _sample(paths: list[Path], n: int, seed: int) -> Corpus:
    paths = sorted(p for p in paths if p.is_file() and not p.name.endswith(".min.js"))
    random.Random(seed).shuffle(paths)
    out: Corpus = []
    for p in paths:
        text = p.read_bytes().decode("utf-8", "replace")
        if text.strip():
            out.append((str(p), text))
        if len(out) == n:
            break
    return out


def corpus(lang: str, n: int, seed: int) -> tuple[Corpus, str]:
    """``n`` files of a language and where they come from (empty when the tree is missing)."""
    if lang == "java":
        try:
            zpath = generate.find_java_src_zip(None)
        except FileNotFoundError:
            return [], "no JDK src.zip"
        with zipfile.ZipFile(zpath) as z:
            names = sorted(
                x for x in z.namelist() if x.startswith("java.base/") and x.endswith(".java")
            )
            random.Random(seed).shuffle(names)
            return [(x, z.read(x).decode("utf-8", "replace")) for x in names[:n]], str(zpath)
    if lang == "python":
        root = generate.python_stdlib()
        paths = [root / rel for rel in generate.python_corpus_files(root)]
        return _sample(paths, n, seed), str(root)
    root, pattern = {
        "javascript": (REAL / "moment-2.30.1", "**/*.js"),
        "typescript": (REAL / "rxjs-7.8.1", "**/*.ts"),
        "c": (Path("/usr/include"), "**/*.h"),
        "cpp": (max(Path("/usr/include/c++").glob("*"), default=Path("/nonexistent")), "**/*"),
    }[lang]
    if not root.is_dir():
        return [], f"{root} missing"
    return _sample(list(root.glob(pattern)), n, seed), f"{root}/{pattern}"


def _timed(fn: Callable[[str], object], texts: list[str]) -> list[float]:
    out = []
    for text in texts:
        t0 = time.process_time()
        fn(text)
        out.append(time.process_time() - t0)
    return out


def _lex_with(flag: str, lexer: Any) -> Callable[[str], object]:
    def run(text: str) -> object:
        os.environ["CRYSTAL_LSP_FASTLEX"] = flag
        try:
            return lex(text, lexer)
        finally:
            os.environ["CRYSTAL_LSP_FASTLEX"] = "1"

    return run


def _lex_pure(lexer: Any) -> Callable[[str], object]:
    def run(text: str) -> object:
        loop, tokens = set_native_loop(None), set_native_tokens(None)
        try:
            return lex(text, lexer)
        finally:
            set_native_loop(loop)
            set_native_tokens(tokens)

    return run


def _columns(tokens: Any) -> tuple[list[str], list[int], list[Any]]:
    return tokens.texts, tokens.starts, tokens.types


def bench_language(lang: str, files: Corpus, rounds: int) -> dict[str, Any]:
    """Identity check, then alternating rounds of the four variants on one language."""
    lexer = lexer_by_language(lang)
    texts = [t for _, t in files]
    load0 = os.getloadavg()[0]
    t0 = time.process_time()
    differing = [
        name
        for name, t in files
        if list(get_tokens(lexer, t)) != list(lexer.get_tokens_unprocessed(t))
        or not (
            _columns(lex(t, lexer))
            == _columns(_lex_with("0", lexer)(t))
            == _columns(_lex_pure(lexer)(t))
        )
    ]
    check_cpu = time.process_time() - t0
    t0 = time.process_time()
    for t in texts:
        list(get_tokens(lexer, t))
    warm_pass = time.process_time() - t0
    variants: dict[str, Callable[[str], object]] = {
        "pygments_raw": lambda t: list(lexer.get_tokens_unprocessed(t)),
        "fastlex_raw": lambda t: list(get_tokens(lexer, t)),
        "pygments_lex": _lex_with("0", lexer),
        "fastlex_lex": _lex_with("1", lexer),
        "pure_loop_lex": _lex_pure(lexer),
    }
    per_file: dict[str, list[list[float]]] = {k: [] for k in variants}
    loads = [load0]
    for r in range(rounds):
        order = list(variants) if r % 2 == 0 else list(reversed(variants))
        for name in order:
            per_file[name].append(_timed(variants[name], texts))
        loads.append(os.getloadavg()[0])
    row: dict[str, Any] = {
        "lang": lang,
        "files": len(texts),
        "bytes": sum(len(t.encode("utf-8")) for t in texts),
        "tokens": sum(1 for t in texts for _ in get_tokens(lexer, t)),
        "compiled": program_for(lexer) is not None,
        "native_loop": native_loop() is not None,
        "columns_loop": columns_for(lexer, "", False) is not None,
        "runner": getattr(runner_for(lexer), "__name__", "?"),
        "differing_files": differing,
        "identity_check_cpu": round(check_cpu, 3),
        "warm_pass_cpu": round(warm_pass, 3),
        "load": [round(x, 2) for x in loads],
    }
    for name, runs in per_file.items():
        total = sum(map(sum, runs)) / rounds
        best = [min(col) for col in zip(*runs)]
        row[name] = {
            "cpu": round(total, 3),
            "mb_per_s": round(row["bytes"] / 2**20 / total, 2) if total else None,
            "p50_ms": round(statistics.median(best) * 1000, 3),
            "p95_ms": round(sorted(best)[int(0.95 * (len(best) - 1))] * 1000, 3),
        }
    for kind in ("raw", "lex"):
        fast = row[f"fastlex_{kind}"]["cpu"]
        row[f"ratio_{kind}"] = round(row[f"pygments_{kind}"]["cpu"] / fast, 2) if fast else None
    fast = row["fastlex_lex"]["cpu"]
    row["ratio_native_loop"] = round(row["pure_loop_lex"]["cpu"] / fast, 2) if fast else None
    return row


def _scan_runs(lang: str, rounds: int, workdir: Path) -> dict[str, Any]:
    info = generate.prepare_original(lang, workdir)
    root = workdir / lang / "original"
    jscpd = clone_bench.anchor_tools(TOOLS_DIR)[0]
    exe = REPO / ".venv" / "bin" / "crystal-lsp"
    runs: dict[str, list[dict[str, Any]]] = {"fastlex": [], "pygments": [], "jscpd 5": []}
    for r in range(rounds):
        order = list(runs) if r % 2 == 0 else list(reversed(runs))
        for name in order:
            with tempfile.TemporaryDirectory(prefix="lexbench-") as tmp:
                out = Path(tmp)
                if name == "jscpd 5":
                    argv, cwd, _ = jscpd.command(root, lang, out)
                    res = clone_bench.measure(argv, cwd)
                else:
                    env = dict(os.environ, CRYSTAL_LSP_CACHE_DIR=str(out / "cache"))
                    env["CRYSTAL_LSP_FASTLEX"] = "1" if name == "fastlex" else "0"
                    argv = [str(exe), "scan", str(root), "--format", "json", "--no-progress"]
                    res = clone_bench.measure(argv, root, out / "f.json", env=env)
                    doc = json.loads((out / "f.json").read_text() or "{}")
                    res["timings"] = doc.get("timings")
                    res["findings"] = len(doc.get("findings", []))
                res.pop("stderr", None) if res["rc"] in (0, 1) else None
                runs[name].append(res)
                print(f"[scan] {lang} {name}: {res['cpu']} s CPU, load {res['load1']}", flush=True)
    return {"lang": lang, "corpus": info, "runs": runs}


def bench_scans(langs: list[str], rounds: int, workdir: Path) -> list[dict[str, Any]]:
    """Cold scans of the planted benchmark's unmodified corpora, alternating with jscpd 5."""
    if not (TOOLS_DIR / "venv" / "bin" / "jscpd").exists():
        for note in clone_bench.install_anchors(TOOLS_DIR):
            print("[install]", note, flush=True)
    out = []
    for lang in langs:
        row = _scan_runs(lang, rounds, workdir)
        cpu = {k: statistics.median(r["cpu"] for r in v) for k, v in row["runs"].items()}
        row["median_cpu"] = cpu
        row["ratio_vs_jscpd"] = {
            k: round(cpu[k] / cpu["jscpd 5"], 2) for k in ("fastlex", "pygments") if cpu["jscpd 5"]
        }
        out.append(row)
    return out


def render(doc: dict[str, Any]) -> str:
    """The Markdown report."""
    lines = [
        "# lex_bench",
        "",
        f"{doc['when']}, {doc['machine']}, Pygments {doc['pygments']}, "
        f"`{' '.join(doc['argv'])}`. Ratios are Pygments CPU / executor CPU (same files, "
        "alternating rounds); per-file p50/p95 are the best of the rounds.",
        "",
        "| language | files | MB | tokens | identical | raw: Pygments / fastlex MB/s | raw ratio "
        "| lex ratio | native loop | lex p50 / p95 ms (Pygments → fastlex) | first pass s | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["lexing"]:
        if "skipped" in r:
            lines.append(f"| {r['lang']} | skipped: {r['skipped']} ||||||||||| ")
            continue
        same = "yes" if not r["differing_files"] else f"NO ({len(r['differing_files'])})"
        pl, fl = r["pygments_lex"], r["fastlex_lex"]
        lines.append(
            f"| {r['lang']} | {r['files']} | {r['bytes'] / 2**20:.1f} | {r['tokens']:,} | {same} "
            f"| {r['pygments_raw']['mb_per_s']} / {r['fastlex_raw']['mb_per_s']} "
            f"| **{r['ratio_raw']}×** | **{r['ratio_lex']}×** | {r['ratio_native_loop']}× "
            f"| {pl['p50_ms']} / {pl['p95_ms']} → {fl['p50_ms']} / {fl['p95_ms']} "
            f"| {r['identity_check_cpu']} | {min(r['load'])}–{max(r['load'])} |"
        )
    if doc.get("scans"):
        lines += [
            "",
            "## Cold scan against jscpd 5 (median CPU s of the process tree)",
            "",
            "| corpus | files / lines | crystal-lsp (fastlex) | crystal-lsp (Pygments loop) "
            "| jscpd 5 | ratio fastlex / jscpd | ratio Pygments / jscpd | wall s (fastlex) "
            "| peak MB (fastlex) | load |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for s in doc["scans"]:
            cpu, runs = s["median_cpu"], s["runs"]
            loads = [r["load1"] for v in runs.values() for r in v]
            lines.append(
                f"| {s['lang']} | {s['corpus']['files']} / {s['corpus']['lines']:,} "
                f"| {cpu['fastlex']:.2f} | {cpu['pygments']:.2f} | {cpu['jscpd 5']:.2f} "
                f"| **{s['ratio_vs_jscpd'].get('fastlex')}×** "
                f"| {s['ratio_vs_jscpd'].get('pygments')}× "
                f"| {statistics.median(r['wall'] for r in runs['fastlex']):.1f} "
                f"| {max(r['rss_mb'] for r in runs['fastlex'])} "
                f"| {min(loads)}–{max(loads)} |"
            )
        lines.append("")
        lines.append("Per-phase wall times of crystal-lsp's runs (its JSON `timings`):")
        lines.append("")
        for s in doc["scans"]:
            for name in ("fastlex", "pygments"):
                for r in s["runs"][name]:
                    lines.append(f"- {s['lang']} {name}: `{json.dumps(r.get('timings'))}`")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=300, help="files per language")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scan-rounds", type=int, default=3)
    ap.add_argument("--langs", default=",".join(LANGS))
    ap.add_argument("--scan-langs", default="python,java")
    ap.add_argument("--skip-scan", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", type=Path, default=generate.DEFAULT_WORKDIR)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "lex_bench")
    a = ap.parse_args(argv)
    if a.quick:
        a.files, a.rounds, a.scan_rounds = 60, 2, 1
    doc: dict[str, Any] = {
        "when": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}",
        "pygments": __import__("pygments").__version__,
        "argv": ["bench/lex_bench.py", *(argv if argv is not None else sys.argv[1:])],
        "lexing": [],
        "scans": [],
    }
    for lang in a.langs.split(","):
        files, source = corpus(lang, a.files, a.seed)
        if not files:
            doc["lexing"].append({"lang": lang, "skipped": source})
            continue
        row = bench_language(lang, files, a.rounds)
        row["source"] = source
        doc["lexing"].append(row)
        print(f"[lex] {lang}: raw {row['ratio_raw']}x lex {row['ratio_lex']}x", flush=True)
    if not a.skip_scan:
        doc["scans"] = bench_scans(a.scan_langs.split(","), a.scan_rounds, a.workdir)
    doc["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.with_suffix(".json").write_text(json.dumps(doc, indent=1) + "\n")
    a.out.with_suffix(".md").write_text(render(doc))
    print(render(doc))
    return 1 if any(r.get("differing_files") for r in doc["lexing"]) else 0


if __name__ == "__main__":
    raise SystemExit(main())
