"""The editing phases of ``bench/server_bench.py``: realistic typing and blocks that land.

* **Realistic typing**: characters typed one at a time and never deleted -- statements written
  at the end of a function body, line breaks and indentation included -- each waiting for the
  ``publishDiagnostics`` of its version. Unlike type-and-delete, no text repeats one already
  checked, so no cache of the previous text helps.
* **Inserted blocks**: a block lands in one ``didChange`` (appended at the end of the file:
  alternately a renamed copy of a standard-library function and new code) while a typist keeps
  typing elsewhere in the file (near its top, ten characters a second, a line break now and
  then, which moves the block down); the client asks for code lenses whenever the server asks
  it to refresh them (as VS Code does) and the latency is the time from the inserting
  ``didChange`` to the ``textDocument/codeLens`` answer holding the block's lens, at the line
  the block has moved to. The block is then deleted (which takes its lens away) and the next
  one lands.
"""

from __future__ import annotations

import ast
import asyncio
import io
import random
import re
import time
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types

TYPIST_INTERVAL = 0.1
"""Seconds between the typist's keystrokes during the insertion phase (ten a second)."""
SOURCES = ("textwrap.py", "shlex.py", "difflib.py", "posixpath.py", "fnmatch.py", "heapq.py")


@dataclass
class Editor:
    """The client's copy of one open document, edited as an editor would."""

    bench: Any
    uri: str
    text: str
    version: int = 1
    refreshed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    def edit(self, line: int, col: int, end_line: int, end_col: int, new: str) -> int:
        """Replace a range with ``new`` (one didChange); the new version."""
        lines = self.lines
        start = sum(len(x) + 1 for x in lines[:line]) + col
        end = sum(len(x) + 1 for x in lines[:end_line]) + end_col
        self.text = self.text[:start] + new + self.text[end:]
        self.version += 1
        rng = types.Range(
            start=types.Position(line=line, character=col),
            end=types.Position(line=end_line, character=end_col),
        )
        self.bench.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=self.uri, version=self.version
                ),
                content_changes=[types.TextDocumentContentChangePartial(range=rng, text=new)],
            )
        )
        return self.version

    def insert(self, line: int, col: int, new: str) -> int:
        return self.edit(line, col, line, col, new)

    async def lenses(self) -> list[dict[str, Any]]:
        found = await self.bench.client.protocol.send_request_async(
            types.TEXT_DOCUMENT_CODE_LENS,
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=self.uri)),
        )
        return [x if isinstance(x, dict) else _plain(x) for x in found or []]


def _plain(lens: Any) -> dict[str, Any]:
    """A structured ``CodeLens`` as the JSON the other phases read."""
    command = lens.command
    return {
        "range": {"start": {"line": lens.range.start.line}},
        "command": {"title": command.title} if command is not None else None,
    }


def _body_line(editor: Editor, seed: int) -> int:
    """A line at the end of a function body (the last indented line before a blank line)."""
    rng = random.Random(seed)
    lines = editor.lines
    ends = [
        i
        for i in range(100, len(lines) - 1)
        if lines[i].startswith("        ") and lines[i].strip() and not lines[i + 1].strip()
    ]
    return rng.choice(ends)


STATEMENTS = (
    "total = compute_total(items, offset)",
    "if total > limit:",
    "    return None",
    "result.append(total)",
)


async def typing_latencies(editor: Editor, count: int, seed: int, debounce_ms: int) -> list[float]:
    """Realistic typing (module docstring): ``count`` keystrokes, each waited for."""
    line = _body_line(editor, seed)
    indent = " " * (len(editor.lines[line]) - len(editor.lines[line].lstrip(" ")))
    keys = "".join("\n" + indent + s for s in STATEMENTS * (count // 40 + 2))[:count]
    bench, out = editor.bench, []
    col = len(editor.lines[line])
    for n, key in enumerate(keys):
        sent = time.perf_counter()
        version = editor.insert(line, col, key)
        line, col = (line + 1, 0) if key == "\n" else (line, col + 1)
        await bench.wait(lambda v=version: (editor.uri, v) in bench.published, 120)
        if n >= 2:
            out.append((bench.published[(editor.uri, version)] - sent) * 1000 - debounce_ms)
    return out


# ---------------------------------------------------------------------- blocks that land
def _renamed(function: str, names: set[str], suffix: str) -> str:
    """A function with its own name, parameters and locals renamed (consistently).

    Only name tokens are renamed (never attributes, strings or comments), as a developer
    renaming the copy's identifiers would.
    """
    lines = function.split("\n")
    previous = ""
    edits = []
    for tok in tokenize.generate_tokens(io.StringIO(function).readline):
        if tok.type == tokenize.NAME and tok.string in names and previous != ".":
            edits.append(tok.start)
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            previous = tok.string
    for row, col in reversed(edits):
        line = lines[row - 1]
        end = col + len(re.match(r"\w+", line[col:]).group(0))  # type: ignore[union-attr]
        lines[row - 1] = f"{line[:end]}_{suffix}{line[end:]}"
    return "\n".join(lines)


def copies(stdlib: Path, count: int) -> list[str]:
    """Renamed copies of top-level functions of a few standard-library modules (12-40 lines)."""
    out: list[str] = []
    for module in SOURCES:
        source = (stdlib / module).read_text(encoding="utf-8")
        lines = source.split("\n")
        for node in ast.parse(source).body:
            if not isinstance(node, ast.FunctionDef) or node.end_lineno is None:
                continue
            if not 12 <= node.end_lineno - node.lineno + 1 <= 40 or node.decorator_list:
                continue
            names = {node.name} | {a.arg for a in node.args.args}
            names |= {
                n.id
                for n in ast.walk(node)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
            text = "\n".join(lines[node.lineno - 1 : node.end_lineno])
            renamed = _renamed(text, names, "v2")
            ast.parse(renamed)  # still Python: a renaming, nothing else
            out.append(renamed)
            if len(out) >= count:
                return out
    return out


def new_code(count: int, seed: int) -> list[str]:
    """Functions written for the benchmark, with made-up names (no stdlib has them)."""
    rng = random.Random(seed)
    out = []
    for k in range(count):
        word = "".join(rng.choice("bcdfghjklmnpqrstvwxz") + rng.choice("aeiou") for _ in range(3))
        out.append(
            f"def {word}_ledger_{k}(entries, cutoff={rng.randint(2, 99)}):\n"
            f'    """Fold the {word} entries above the cutoff into a ledger."""\n'
            f"    ledger = {{}}\n"
            f"    for stamp, amount, tag in entries:\n"
            f"        if amount * {rng.randint(2, 9)} < cutoff or tag.startswith({word!r}):\n"
            f"            continue\n"
            f"        bucket = ledger.setdefault(stamp // {rng.randint(60, 3600)}, [])\n"
            f"        bucket.append((tag.upper(), amount - cutoff))\n"
            f"    return sorted(ledger.items(), key=lambda kv: -len(kv[1]))\n"
        )
    return out


@dataclass
class Typist:
    """Types elsewhere in the file while a block lands: ten characters a second."""

    editor: Editor
    line: int
    newlines: int = 0
    typed: int = 0

    async def run(self, stop: asyncio.Event) -> None:
        col = len(self.editor.lines[self.line])
        indent = " " * (col - len(self.editor.lines[self.line].lstrip(" ")))
        while not stop.is_set():
            key = "\n" + indent if self.typed % 40 == 39 else "abcdefghij"[self.typed % 10]
            self.editor.insert(self.line, col, key)
            self.typed += 1
            if key.startswith("\n"):
                self.line, col, self.newlines = self.line + 1, len(indent), self.newlines + 1
            else:
                col += 1
            try:
                await asyncio.wait_for(stop.wait(), TYPIST_INTERVAL)
            except asyncio.TimeoutError:
                pass


async def insertion_latencies(
    editor: Editor, blocks: list[tuple[str, str]], seed: int
) -> list[dict[str, Any]]:
    """Blocks landing while the typist types (module docstring): one record per block."""
    out = []
    typist = Typist(editor, _body_line(editor, seed + 1))
    for kind, block in blocks:
        stop = asyncio.Event()
        task = asyncio.ensure_future(typist.run(stop))
        await asyncio.sleep(0.5)  # typing is under way when the block lands
        last = len(editor.lines) - 1
        first = last + 2  # appended after a blank line
        editor.refreshed.clear()
        shifted = typist.newlines
        sent = time.perf_counter()
        editor.insert(last, len(editor.lines[last]), "\n\n" + block.rstrip("\n"))
        lens = None
        while lens is None and time.perf_counter() - sent < 60:
            try:
                await asyncio.wait_for(editor.refreshed.wait(), 0.25)
            except asyncio.TimeoutError:
                pass
            editor.refreshed.clear()
            where = first + typist.newlines - shifted
            lens = next(
                (x for x in await editor.lenses() if x["range"]["start"]["line"] == where), None
            )
        latency = (time.perf_counter() - sent) * 1000
        stop.set()
        await task
        title = lens["command"]["title"] if lens else ""
        out.append({"kind": kind, "ms": latency, "title": title, "found": lens is not None})
        # take the block away again (one deletion: no block lands)
        end = len(editor.lines) - 1
        start = end - block.rstrip("\n").count("\n") - 2
        editor.edit(start, len(editor.lines[start]), end, len(editor.lines[end]), "")
        await asyncio.sleep(0.3)
    return out
