"""Planted renamed copies in replayed commits: does the hook still flag a copy a commit adds?

For 10 commits of a project's replay, a function of the parent (12-60 lines, found by its
``def``/``func``/``function`` line and its indentation or braces) is copied into a new file of
the commit beside it, with its four most frequent identifiers renamed, and staged with the
commit's own changes. A tool catches the plant when a warning names the new file as the copy
and the function's own lines as the original; a warning naming the new file the other way
round counts as caught but reversed.
"""

from __future__ import annotations

import random
import re
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

EXT = {"python": ".py", "go": ".go", "javascript": ".js"}
START = {
    "python": re.compile(r"^(\s*)def \w+\("),
    "go": re.compile(r"^()func "),
    "javascript": re.compile(r"^(\s*)(?:async )?function \w+\s*\("),
}
KEYWORDS = set(
    "self return else elif while with from import class None True False pass break continue "
    "func package range defer struct interface string error true false const function this "
    "null undefined typeof async await yield lambda assert raise except finally".split()
)
IDENT = re.compile(r"\b[a-z][A-Za-z0-9_]{3,}\b")


def _block(lines: list[str], i: int, lang: str, indent: str) -> list[str]:
    """The function starting at line ``i``: by indentation (Python) or by braces."""
    if lang == "python":
        out = [lines[i]]
        for line in lines[i + 1 :]:
            if (
                line.strip()
                and not line.startswith(indent + " ")
                and not line.startswith(indent + "\t")
            ):
                break
            out.append(line)
        while out and not out[-1].strip():
            out.pop()
        return out
    depth, out = 0, []
    for line in lines[i:]:
        out.append(line)
        depth += line.count("{") - line.count("}")
        if depth <= 0 and "{" in "".join(out):
            return out
    return []


def pick(
    repo: Path, lang: str, files: list[str], rng: random.Random
) -> tuple[str, int, list[str]] | None:
    """A function of 12-60 lines from one of ``files``: path, first line, its lines."""
    rng.shuffle(files)
    for path in files[:200]:
        try:
            lines = (repo / path).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        starts = [(i, m.group(1)) for i, line in enumerate(lines) if (m := START[lang].match(line))]
        rng.shuffle(starts)
        for i, indent in starts:
            block = _block(lines, i, lang, indent)
            if 12 <= len(block) <= 60:
                return path, i + 1, block
    return None


def renamed(block: list[str]) -> str:
    """The block with its four most frequent identifiers renamed."""
    text = "\n".join(block) + "\n"
    counts = Counter(w for w in IDENT.findall(text) if w not in KEYWORDS)
    for word, _ in counts.most_common(4):
        text = re.sub(rf"\b{re.escape(word)}\b", word + "Moved", text)
    return text


def plant(repo: Path, lang: str, files: list[str], rng: random.Random) -> dict[str, Any] | None:
    """Write the planted copy beside its original; where both are."""
    picked = pick(repo, lang, files, rng)
    if picked is None:
        return None
    path, first, block = picked
    body = textwrap.dedent(renamed(block))
    if lang == "go":
        package = next(
            (ln for ln in (repo / path).read_text().splitlines() if ln.startswith("package ")),
            "package main",
        )
        body = f"{package}\n\n{body}"
    target = str(Path(path).parent / f"planted_copy{EXT[lang]}")
    (repo / target).write_text(body, encoding="utf-8")
    return {"original": [path, first, first + len(block) - 1], "copy": target}


def caught(planted: dict[str, Any], warnings: list[dict[str, Any]]) -> str:
    """``caught``, ``reversed`` or ``missed``."""
    path, first, last = planted["original"]
    for w in warnings:
        o, c = w["original"], w["copy"]
        if c[0] == planted["copy"] and o[0] == path and o[1] <= last and first <= o[2]:
            return "caught"
    if any(planted["copy"] in (w["original"][0], w["copy"][0]) for w in warnings):
        return "reversed"
    return "missed"
