"""The token loops that issue 22's numpy passes replaced, kept as the oracles of
``test_fast_paths.py``: the package's faster code must give exactly what these gave.

Copied unchanged from the package as it was before the change (renamed where a name was private).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from crystal_lsp.text.entries import _GENERATED, GENERATED, MINIFIED, MINIFIED_LINE, OK
from crystal_lsp.text.fastlex.firstchars import _C, _CATEGORIES, ASCII, _has_non_ascii
from crystal_lsp.text.noise import (
    _FFI_ATTRIBUTES,
    _IMPORT_WORDS,
    DECLARATION,
    DECORATOR,
    EXPORT,
    IMPORT,
    KINDS,
    OVERLOAD,
    Range,
    _is_bodiless_declaration,
    _is_export_list,
)
from crystal_lsp.text.snippets import (
    _CLOSE,
    _OPEN,
    _TOP,
    MAX_RUN_LINES,
    Unit,
    _classify_run,
    _statement_end,
    line_starts,
)


def logical_lines(texts: Sequence[str], cats: str, lines: Sequence[int]) -> list[tuple[int, int]]:
    """Token ranges ``[start, end)`` of logical lines: a line break outside brackets ends one."""
    out: list[tuple[int, int]] = []
    depth, start = 0, 0
    for i in range(1, len(texts) + 1):
        previous = texts[i - 1]
        if cats[i - 1] in "PO" and len(previous) == 1:
            if previous in _OPEN:
                depth += 1
            elif previous in _CLOSE:
                depth = max(0, depth - 1)
        if i == len(texts) or (depth == 0 and lines[i] != lines[i - 1]):
            out.append((start, i))
            start = i
    return out


def physical_lines(lines: Sequence[int]) -> list[tuple[int, int]]:
    """Token ranges ``[start, end)`` of the tokens that start on each source line."""
    out: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(lines) + 1):
        if i == len(lines) or lines[i] != lines[i - 1]:
            out.append((start, i))
            start = i
    return out


def line_kind(
    texts: Sequence[str], cats: str, start: int, end: int, python_like: bool
) -> str | None:
    """The noise kind of a whole logical line, if it is one."""
    first = texts[start]
    words = texts[start:end]
    if first.startswith("@"):
        return OVERLOAD if any(w.endswith("overload") for w in words[:4]) else DECORATOR
    if first in _IMPORT_WORDS and (len(words) < 2 or words[1] != "("):
        return IMPORT
    if first == "export" and len(words) > 1 and words[1] in ("{", "*") and "from" in words[-4:]:
        return IMPORT  # `export { a } from "./a"`, `export * from "./b"`
    if first in ("const", "var", "let") and "require" in words and "=" in words:
        return IMPORT
    if _is_export_list(words):
        return EXPORT
    if any(w in _FFI_ATTRIBUTES for w in words[:8]) and "=" in words:
        return DECLARATION
    if not python_like and words[-1] == ";" and _is_bodiless_declaration(texts, cats, start, end):
        return OVERLOAD
    return None


def merge(found: list[Range], count: int) -> list[Range]:
    """Non-overlapping ranges; overlaps go to the kind earlier in :data:`KINDS`."""
    if not found:
        return []
    owner = [""] * count
    for kind in reversed(KINDS):
        for start, end, k in found:
            if k == kind:
                owner[start:end] = [kind] * (end - start)
    out: list[Range] = []
    i = 0
    while i < count:
        if not owner[i]:
            i += 1
            continue
        j = i
        while j < count and owner[j] == owner[i]:
            j += 1
        out.append((i, j, owner[i]))
        i = j
    return out


def indented_logical_lines(
    texts: Sequence[str], cats: str, lines: Sequence[int], source: str
) -> list[tuple[int, int, int]]:
    """``(first token, indentation, line)`` of every logical line (not inside brackets)."""
    starts = line_starts(source)
    out: list[tuple[int, int, int]] = []
    depth = 0
    previous_line = -1  # the line the previous token *ends* on (strings span lines)
    for i, (text, cat) in enumerate(zip(texts, cats)):
        line = lines[i]
        # Lexers split multi-line strings into several string tokens: their lines continue
        # the statement the string belongs to, whatever their indentation.
        continues_string = cat == "S" and i > 0 and cats[i - 1] == "S"
        if line > previous_line and depth == 0 and not continues_string:
            begin = starts[line]
            stop = starts[line + 1] if line + 1 < len(starts) else len(source)
            raw = source[begin:stop]
            indent = len(raw.expandtabs(8)) - len(raw.expandtabs(8).lstrip(" \t"))
            out.append((i, indent, line))
        previous_line = line + text.count("\n")
        if cat in "PO" and len(text) == 1:
            if text in _OPEN:
                depth += 1
            elif text in _CLOSE:
                depth = max(0, depth - 1)
    return out


def covered_tokens(size: int, units: list[Unit]) -> list[bool]:
    """Which tokens top-level units cover (each token marked once, however units nest)."""
    covered = [False] * size
    reach = 0
    spans = sorted((s, e) for s, e, kind, _, depth in units if depth == 0 and kind in _TOP)
    for start, end in spans:
        for i in range(max(start, reach), end):
            covered[i] = True
        reach = max(reach, end)
    return covered


def statement_runs(
    texts: Sequence[str], cats: str, lines: Sequence[int], covered: list[bool]
) -> list[Unit]:
    """Runs of uncovered top-level tokens, split at blank lines, units and long runs."""
    runs: list[Unit] = []
    start = -1
    for i in range(len(texts) + 1):
        boundary = i == len(texts) or covered[i]
        if not boundary and start >= 0:
            gap = lines[i] - lines[i - 1] > 1
            too_long = lines[i] - lines[start] >= MAX_RUN_LINES
            if (gap or too_long) and _statement_end(texts, cats, i - 1):
                runs.append(_classify_run(texts, cats, lines, start, i))
                start = i
                continue
        if boundary:
            if start >= 0:
                runs.append(_classify_run(texts, cats, lines, start, i))
                start = -1
        elif start < 0:
            start = i
    return runs


def detect_status(source: str) -> str:
    """``generated``, ``minified`` or ``ok`` from the text alone."""
    head = "\n".join(source.split("\n", 30)[:30])
    if _GENERATED.search(head):
        return GENERATED
    lines = source.count("\n") + 1
    if len(source) > 5000 and (
        len(source) / lines > 300 or max(map(len, source.split("\n"))) > MINIFIED_LINE * 5
    ):
        return MINIFIED
    return OK


def first_chars_charset(items: list[tuple[Any, Any]], flags: int) -> set[int]:
    """``crystal_lsp.text.fastlex.firstchars._charset`` before it tested items, not characters."""
    negate = any(op is _C.NEGATE for op, _ in items)
    if negate or (flags & re.IGNORECASE and _has_non_ascii(items)):
        return set(ASCII)
    out: set[int] = set()
    for code in ASCII:
        variants = {code}
        if flags & re.IGNORECASE:
            char = chr(code)
            variants |= {ord(char.lower()), ord(char.upper())}
        if any(_in_item(op, arg, v) for op, arg in items for v in variants):
            out.add(code)
    return out


def _in_item(op: Any, arg: Any, code: int) -> bool:
    if op is _C.LITERAL:
        return bool(arg == code)
    if op is _C.RANGE:
        return bool(arg[0] <= code <= arg[1])
    if op is _C.CATEGORY:
        test = _CATEGORIES.get(arg)
        return test is None or test.match(chr(code)) is not None
    return True
