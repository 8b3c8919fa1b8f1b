"""Splitting a token stream into the units people call clones.

Units are functions and methods, classes (and other containers: interfaces, structs, impls),
top-level blocks, and runs of top-level statements between them. Detection is language-agnostic
and works on any token stream, complete or broken:

* **brace languages**: every matched ``{ ... }`` pair (string braces excluded) with the *header*
  before it, back to the previous ``;``, ``{`` or ``}`` at the same nesting level outside
  parentheses. The header classifies the block: a container keyword (``class``, ``struct``,
  ``impl``, ...) makes a class, a function keyword (``function``, ``fn``, ``func``, ...) or a
  parameter list right before the brace makes a function, a control keyword (``if``, ``for``,
  ...) a control block, an opening ``=``/``return``/``(`` a data literal. An unclosed brace is
  closed at the end of the file. A block nested inside more than ``MAX_NESTING`` others is part
  of its enclosing units, not a unit of its own: every unit then holds at most that many others
  around any token, and a file of thousands of unclosed braces costs linear time, not quadratic.
* **indentation languages** (Python and the ``end``-terminated ones: Ruby, Lua, ...): a logical
  line (outside brackets) starting with a definition keyword opens a unit that extends over the
  following logical lines indented deeper, plus a closing ``end`` line at the same indentation.
  Decorators directly above belong to the unit.

Top-level statement runs are split at blank lines, at units and every ``MAX_RUN_LINES`` lines, and
classified as ``imports``, ``data`` (mostly literals and punctuation, such as ``__all__`` lists
and tables) or ``statements``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crystal_lsp.text.headers import (
    ANONYMOUS,
    BLOCK,
    CALLBACK,
    CLASS,
    DATA,
    FUNCTION,
    IMPORTS,
    NAMESPACE,
    STATEMENTS,
    classify_header,
)
from crystal_lsp.text.keywords import (
    CLASS_KEYWORDS,
    DEF_OPENERS,
    IMPORT_KEYWORDS,
    INDENT_LANGUAGES,
)
from crystal_lsp.text.layout import false_runs, indented_lines

__all__ = [
    "ANONYMOUS",
    "BLOCK",
    "CALLBACK",
    "CLASS",
    "CODE_KINDS",
    "CONTAINERS",
    "DATA",
    "FUNCTION",
    "IMPORTS",
    "MAX_NESTING",
    "MAX_RUN_LINES",
    "NAMESPACE",
    "STATEMENTS",
    "Snippet",
    "extract",
    "line_starts",
    "token_lines",
]

CONTAINERS = frozenset({FUNCTION, CLASS, NAMESPACE})
"""The kinds of named definitions: what a line of code is said to lie in."""
CODE_KINDS = frozenset({FUNCTION, CLASS, BLOCK, STATEMENTS, NAMESPACE})
_TOP = frozenset({FUNCTION, CLASS, BLOCK, DATA, NAMESPACE})
_ACCESS = frozenset({"public", "private", "protected", "signals", "slots"})
MAX_RUN_LINES = 60
MAX_NESTING = 32
_OPEN, _CLOSE = "([{", ")]}"


@dataclass(frozen=True)
class Snippet:
    """One unit: token range ``[start, end)``, kind, name, nesting depth and 0-based lines."""

    start: int
    end: int
    kind: str
    name: str
    depth: int
    first_line: int
    last_line: int

    @property
    def lines(self) -> int:
        """How many source lines the unit spans."""
        return self.last_line - self.first_line + 1

    @property
    def tokens(self) -> int:
        """How many tokens the unit has."""
        return self.end - self.start


def token_lines(starts: Sequence[int], source: str) -> list[int]:
    """The 0-based line of every token (tokens are in source order)."""
    out = []
    line = 0
    newline = source.find("\n")
    for start in starts:
        while newline != -1 and newline < start:
            line += 1
            newline = source.find("\n", newline + 1)
        out.append(line)
    return out


def line_starts(source: str) -> list[int]:
    """Offsets at which each line begins."""
    out = [0]
    find = source.find
    pos = find("\n")
    while pos != -1:
        out.append(pos + 1)
        pos = find("\n", pos + 1)
    return out


def extract(
    texts: Sequence[str],
    cats: str,
    lines: Sequence[int],
    source: str,
    language: str,
    *,
    min_tokens: int = 50,
    min_lines: int = 5,
    line_offsets: Sequence[int] | None = None,
) -> list[Snippet]:
    """The units of one file, largest first within each position, filtered by size.

    ``lines`` is the 0-based line of each token (:func:`token_lines`); ``cats`` the category of
    each token (:func:`crystal_lsp.text.views.categories`); ``line_offsets`` the
    :func:`line_starts` of ``source``, when the caller has them.
    """
    if not texts:
        return []
    has_braces = any(t == "{" and c in "PO" for t, c in zip(texts, cats))
    if language in INDENT_LANGUAGES or not has_braces:
        units = _indented_units(texts, cats, lines, source, line_offsets)
    else:
        units = _split_brace_units(texts, cats, lines)
    covered = _covered(len(texts), units)
    units.extend(_statement_runs(texts, cats, lines, covered))
    out = []
    for start, end, kind, name, depth in units:
        snippet = Snippet(start, end, kind, name, depth, lines[start], lines[end - 1])
        if snippet.tokens >= min_tokens and snippet.lines >= min_lines:
            out.append(snippet)
    out.sort(key=lambda s: (s.start, -s.end))
    return out


Unit = tuple[int, int, str, str, int]


def _covered(size: int, units: list[Unit]) -> list[bool]:
    """Which tokens top-level units cover (each token marked once, however units nest)."""
    covered = [False] * size
    reach = 0
    spans = sorted((s, e) for s, e, kind, _, depth in units if depth == 0 and kind in _TOP)
    for start, end in spans:
        first = max(start, reach)
        if end > first:
            covered[first:end] = [True] * (end - first)
        reach = max(reach, end)
    return covered


_BRACKETS = frozenset("()[]{};,")


def _split_brace_units(texts: Sequence[str], cats: str, lines: Sequence[int]) -> list[Unit]:
    """:func:`_brace_units`, with runs of brackets lexed as one token read bracket by bracket.

    PHP lexes ``})``, ``[])``, ``());`` and ``{}`` as one token each: the braces in them open and
    close units too (else a callback's ``})`` closes nothing, and the methods after it are lost
    or named after a variable).
    """
    runs = [
        i
        for i, (text, cat) in enumerate(zip(texts, cats))
        if len(text) > 1 and cat in "PO" and set(text) <= _BRACKETS
    ]
    if not runs:
        return _brace_units(texts, cats, lines)
    split_texts: list[str] = []
    split_cats: list[str] = []
    split_lines: list[int] = []
    token: list[int] = []  # the token each split one comes from
    for i, (text, cat) in enumerate(zip(texts, cats)):
        parts = list(text) if len(text) > 1 and cat in "PO" and set(text) <= _BRACKETS else [text]
        split_texts += parts
        split_cats += cat * len(parts)
        split_lines += [lines[i]] * len(parts)
        token += [i] * len(parts)
    units = _brace_units(split_texts, "".join(split_cats), split_lines)
    return [(token[s], token[e - 1] + 1, kind, name, depth) for s, e, kind, name, depth in units]


def _brace_units(texts: Sequence[str], cats: str, lines: Sequence[int]) -> list[Unit]:
    units: list[Unit] = []
    # Per brace level: index of the last statement boundary, and the paren depth inside it.
    boundary = [-1]
    parens = [0]
    stack: list[tuple[int, int, str, str]] = []  # (header start, open index, kind, name)
    containers = [0]  # functions and classes on the stack, up to each level
    # Languages that end statements at line breaks (Go, Kotlin, Swift, Scala, JavaScript
    # without semicolons) get a boundary at every line start outside brackets.
    semicolons = sum(1 for t, c in zip(texts, cats) if t == ";" and c in "PO")
    by_newline = bool(lines) and semicolons < 0.05 * (lines[-1] + 1)
    for i, (text, cat) in enumerate(zip(texts, cats)):
        if (
            by_newline
            and i
            and lines[i] != lines[i - 1]
            and parens[-1] == 0
            and (cats[i - 1] not in "PO" or texts[i - 1] in (")", "]", "}", "++", "--"))
            and text not in (")", "]", "}", "{", ".", "=>")
        ):
            boundary[-1] = i - 1
        if cat not in "PO":
            continue
        if text == "{":
            header_start = boundary[-1] + 1
            kind, name = classify_header(texts, cats, header_start, i)
            stack.append((header_start, i, kind, name))
            containers.append(containers[-1] + (kind in CONTAINERS))
            boundary.append(i)
            parens.append(0)
        elif text == "}":
            if not stack:
                boundary[-1] = i
                continue
            header_start, _, kind, name = stack.pop()
            containers.pop()
            boundary.pop()
            parens.pop()
            boundary[-1] = i
            if len(stack) < MAX_NESTING:
                units.append((header_start, i + 1, kind, name, containers[-1]))
        elif text in ("(", "["):
            parens[-1] += 1
        elif text in (")", "]"):
            parens[-1] = max(0, parens[-1] - 1)
        elif text[-1] == ";" and _closed_by(text, parens) == 0:  # PHP's one-token `];`
            boundary[-1] = i
        elif text == ":" and parens[-1] == 0 and i and texts[i - 1] in _ACCESS:
            boundary[-1] = i  # C++'s `public:` belongs to no member's signature
    while stack:  # unclosed braces: the unit runs to the end of the file
        header_start, _, kind, name = stack.pop()
        containers.pop()
        if len(stack) < MAX_NESTING:
            units.append((header_start, len(texts), kind, name, containers[-1]))
    return [
        u if u[3] or u[2] not in CONTAINERS else (*u[:3], ANONYMOUS, u[4])
        for u in units
        if u[2] in CONTAINERS or (u[4] == 0 and u[2] in (BLOCK, DATA))
    ]


def _closed_by(text: str, parens: list[int]) -> int:
    """The paren depth of the innermost brace level after a token ending in ``;`` (updated).

    PHP lexes ``];`` and ``);`` as one token: its brackets close before the statement ends.
    """
    for char in text[:-1]:
        parens[-1] = max(0, parens[-1] + (char in "([") - (char in ")]"))
    return parens[-1]


def _logical_lines(
    texts: Sequence[str],
    cats: str,
    lines: Sequence[int],
    source: str,
    line_offsets: Sequence[int] | None = None,
) -> list[tuple[int, int, int]]:
    """``(first token, indentation, line)`` of every logical line (not inside brackets)."""
    offsets = line_offsets if line_offsets is not None else line_starts(source)
    return indented_lines(texts, cats, lines, source, offsets)


def _indented_units(
    texts: Sequence[str],
    cats: str,
    lines: Sequence[int],
    source: str,
    line_offsets: Sequence[int] | None = None,
) -> list[Unit]:
    logical = _logical_lines(texts, cats, lines, source, line_offsets)
    firsts = [tok for tok, _, _ in logical]
    units: list[Unit] = []
    open_units: list[tuple[int, int]] = []  # (indent, kind-is-container) for depth counting
    for j, (tok, indent, _line) in enumerate(logical):
        word = texts[tok]
        if word not in DEF_OPENERS or cats[tok] not in "KN":
            continue
        # "local function" / "async def": the keyword that decides is the next one
        nxt = texts[tok + 1] if tok + 1 < len(texts) else ""
        if word in ("local", "async") and nxt not in ("function", "def"):
            continue
        kind = (
            CLASS
            if (word in CLASS_KEYWORDS or (nxt in CLASS_KEYWORDS and word != "async"))
            else FUNCTION
        )
        start = tok
        k = j - 1
        while k >= 0 and texts[logical[k][0]].startswith("@") and logical[k][1] == indent:
            start = logical[k][0]
            k -= 1
        m = j + 1
        while m < len(logical) and logical[m][1] > indent:
            m += 1
        end = firsts[m] if m < len(logical) else len(texts)
        if m < len(logical) and logical[m][1] == indent and texts[logical[m][0]] == "end":
            end = firsts[m + 1] if m + 1 < len(logical) else len(texts)
        name_index = tok + (2 if word in ("local", "async") else 1)
        if texts[name_index : name_index + 2] in (["self", "."], ("self", ".")):
            name_index += 2  # Ruby's `def self.build`
        name = texts[name_index] if name_index < len(texts) and cats[name_index] in "NAB" else ""
        if not name and texts[name_index : name_index + 2] in (["<<", "self"], ("<<", "self")):
            name = "self"  # Ruby's singleton class, `class << self`
        if not name and kind == CLASS:
            name = ANONYMOUS
        while open_units and open_units[-1][0] >= indent:
            open_units.pop()
        units.append((start, end, kind, name, len(open_units)))
        open_units.append((indent, 1))
    return units


def _statement_runs(
    texts: Sequence[str], cats: str, lines: Sequence[int], covered: list[bool]
) -> list[Unit]:
    """Runs of uncovered top-level tokens, split at blank lines, units and long runs."""
    runs: list[Unit] = []
    for first, stop in false_runs(covered):
        start = first
        for i in range(first + 1, stop):
            gap = lines[i] - lines[i - 1] > 1
            too_long = lines[i] - lines[start] >= MAX_RUN_LINES
            if (gap or too_long) and _statement_end(texts, cats, i - 1):
                runs.append(_classify_run(texts, cats, lines, start, i))
                start = i
        runs.append(_classify_run(texts, cats, lines, start, stop))
    return runs


def _statement_end(texts: Sequence[str], cats: str, i: int) -> bool:
    """Whether a run may be split after token ``i`` (not inside an open bracket)."""
    return texts[i] in (";", "}", ")", "]") or cats[i] not in "PO" or texts[i] == ":"


def _classify_run(
    texts: Sequence[str], cats: str, lines: Sequence[int], start: int, end: int
) -> Unit:
    count = end - start
    literal_like = sum(1 for c in cats[start:end] if c in "SMP")
    if count and literal_like / count >= 0.75:
        return (start, end, DATA, "", 0)
    if _only_import_statements(texts, cats, lines, start, end):
        return (start, end, IMPORTS, "", 0)
    return (start, end, STATEMENTS, "", 0)


def _only_import_statements(
    texts: Sequence[str], cats: str, lines: Sequence[int], start: int, end: int
) -> bool:
    """Every logical line of the run begins with an import-like keyword."""
    depth = 0
    for i in range(start, end):
        begins_line = i == start or (lines[i] != lines[i - 1] and depth == 0) or texts[i - 1] == ";"
        if begins_line and texts[i] not in IMPORT_KEYWORDS:
            return False
        if cats[i] in "PO" and len(texts[i]) == 1:
            if texts[i] in _OPEN:
                depth += 1
            elif texts[i] in _CLOSE:
                depth = max(0, depth - 1)
    return True
