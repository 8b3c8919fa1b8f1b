#!/usr/bin/env python3
"""Server RSS while typing only appends (issue 32 item 1): after 100 and after 1,000 keystrokes.

    .venv/bin/python bench/append_soak.py                         # this checkout, 1,000 keys
    .venv/bin/python bench/append_soak.py --keys 2000 --baseline /tmp/before   # and an older tree

The workspace and the warm start are ``server_bench.py``'s (CPython's standard library, the
3,000-line ``email/_header_value_parser.py`` opened). Keystrokes are typed one at a time at the
end of a function body and never deleted, each waiting for the ``publishDiagnostics`` of its
version: statements of :data:`server_phases.STATEMENTS` with a running number in every name and
constant, so that no typed line repeats another (a repeated line would be a legitimate new copy
to keep). The server's RSS (psutil, the server process alone) is read at the keystrokes of
:data:`MARKS`. With ``--baseline DIR`` the same is run, before this checkout, with
``PYTHONPATH=DIR`` (a worktree of an older commit with the native core copied in). Goal: RSS
after the last mark within 10 % of RSS after 100. Writes ``results/append_soak.{md,json}``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import sys
import sysconfig
from pathlib import Path
from typing import Any

from server_bench import TARGET, Bench, load
from server_phases import STATEMENTS, Editor, _body_line

HERE = Path(__file__).resolve().parent
MARKS = (1, 100, 250, 500, 1000, 1500, 2000)


def _keys(count: int, indent: str) -> str:
    """``count`` characters of new statements, every line distinct."""
    out: list[str] = []
    n = 0
    while sum(map(len, out)) < count:
        for statement in STATEMENTS:
            numbered = statement.replace("total", f"total_{n}").replace("offset", f"offset + {n}")
            out.append("\n" + indent + numbered)
        n += 1
    return "".join(out)[:count]


async def one(python: str, pythonpath: str | None, keys: int, workdir: Path) -> dict[str, Any]:
    """A warm server of one installation, ``keys`` appended keystrokes, RSS at the marks."""
    root = Path(sysconfig.get_paths()["stdlib"]).resolve()
    cache = workdir / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    saved = os.environ.get("PYTHONPATH")
    if pythonpath:
        os.environ["PYTHONPATH"] = pythonpath
    try:
        warm = Bench(root, cache, python)  # the first start indexes; the measured one is warm
        await warm.start()
        await warm.ready()
        await warm.stop()
        bench = Bench(root, cache, python)
        await bench.start()
        ready = await bench.ready()
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved
    await bench.first_diagnostics(TARGET)
    uri = (root / TARGET).as_uri()
    editor = bench.editor = Editor(bench, uri, (root / TARGET).read_text(encoding="utf-8"))
    result: dict[str, Any] = {
        "ready_s": round(ready, 2),
        "rss_opened_mb": round(bench.rss()["server_mb"], 1),
        "load_start": load(),
        "rss_mb": {},
    }
    line = _body_line(editor, 0)
    indent = " " * (len(editor.lines[line]) - len(editor.lines[line].lstrip(" ")))
    col = len(editor.lines[line])
    for n, key in enumerate(_keys(keys, indent), 1):
        version = editor.insert(line, col, key)
        line, col = (line + 1, 0) if key == "\n" else (line, col + 1)
        await bench.wait(lambda v=version: (uri, v) in bench.published, 120)
        bench.published.pop((uri, version - 1), None)
        if n in MARKS or n == keys:
            result["rss_mb"][n] = round(bench.rss()["server_mb"], 1)
            print(f"  keystroke {n}: {result['rss_mb'][n]} MB, load {load()}", flush=True)
    result["load_end"] = load()
    await bench.stop()
    return result


def render(doc: dict[str, Any]) -> str:
    """The Markdown report."""
    marks = sorted({int(k) for r in doc["runs"].values() for k in r["rss_mb"]})
    lines = [
        "# Server RSS while typing only appends",
        "",
        f"`{doc['command']}` on {doc['date']}: a warm server on the standard library, "
        f"`{TARGET}` (3,000 lines) opened, {doc['keys']} keystrokes typed at the end of a "
        "function body and never deleted (every typed line distinct), each waiting for its "
        "diagnostics. RSS of the server process (MB) at keystroke:",
        "",
        "| installation | opened | " + " | ".join(str(m) for m in marks) + " | last / 100 | load |",
        "|---|---|" + "---|" * len(marks) + "---|---|",
    ]
    for name, run in doc["runs"].items():
        rss = {int(k): v for k, v in run["rss_mb"].items()}
        last = rss[max(rss)]
        ratio = f"{(last / rss[100] - 1) * 100:+.1f} %" if 100 in rss else "-"
        cells = " | ".join(str(rss.get(m, "-")) for m in marks)
        lines.append(
            f"| {name} | {run['rss_opened_mb']} | {cells} | {ratio} | "
            f"{run['load_start']} -> {run['load_end']} |"
        )
    lines += ["", "Goal (issue 32): RSS after the last mark within 10 % of RSS after 100."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--baseline", help="an older source tree, run with PYTHONPATH=BASELINE")
    ap.add_argument("--workdir", default="/tmp/crystal-append-soak")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "append_soak")
    args = ap.parse_args()
    trees = {"current": None}
    if args.baseline:
        trees = {"baseline": args.baseline, "current": None}
    runs = {}
    for name, tree in trees.items():
        print(name, flush=True)
        work = Path(args.workdir) / name
        runs[name] = asyncio.run(one(sys.executable, tree, args.keys, work))
    doc = {
        "command": "python bench/append_soak.py " + " ".join(sys.argv[1:]),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "keys": args.keys,
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(render(doc), encoding="utf-8")
    print(render(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
