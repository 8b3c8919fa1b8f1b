"""Code that repeats by convention, not by copying: the ranges the clone finder discounts.

Two real projects share much that nobody would call a copy: every function has a signature,
test tables and decorators look alike, import and export lists name the same modules, data
tables and constants are literals in the same punctuation, and overload stubs repeat a
signature by design. :func:`noise_ranges` marks such tokens in one file, by kind:

* ``signature``: a function's name, parameters and return annotation, up to its body;
* ``decorator``: decorators and annotations (``@pytest.mark.parametrize(...)`` tables included);
* ``overload``: declarations without a body: ``typing.overload`` stubs, TypeScript overload
  signatures, prototypes and abstract or interface methods;
* ``import``: import statements (``import``/``from``, ``export ... from``, ``require``,
  ``#include``, ``using``, ``package``);
* ``export``: export lists (``module.exports = {...}``, ``export {...}``, ``__all__ = [...]``);
* ``data``: three or more consecutive lines made of literals (tables, constants, enum members,
  message catalogues), with the brackets around them;
* ``declaration``: foreign-function declarations (ctypes ``argtypes``/``restype``/``errcheck``).

The finder still aligns across these tokens (a copied function includes its signature) but does
not count them as copied code, and a region made only of them is filtered as that kind.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from crystal_lsp.text.keywords import CONTROL_KEYWORDS, INDENT_LANGUAGES
from crystal_lsp.text.layout import depth_after, line_changes

SIGNATURE, DECORATOR, OVERLOAD, IMPORT, EXPORT, DATA, DECLARATION = (
    "signature",
    "decorator",
    "overload",
    "import",
    "export",
    "data",
    "declaration",
)
KINDS = (OVERLOAD, DECORATOR, IMPORT, EXPORT, DECLARATION, DATA, SIGNATURE)
"""Every kind, in priority order: where ranges overlap, the earlier kind names the tokens."""
Range = tuple[int, int, str]

_IMPORT_WORDS = frozenset({"import", "from", "using", "package", "#include", "include", "use"})
_FFI_ATTRIBUTES = frozenset({"argtypes", "restype", "errcheck"})
_LITERAL_WORDS = frozenset(
    {"True", "False", "None", "true", "false", "null", "undefined", "nil", "NaN", "Infinity"}
)
_DATA_OPERATORS = frozenset({"=", ":", ",", ".", "-", "+", ";", "=>", "|"})
_NOT_DECLARATIONS = frozenset({"return", "throw", "new", "await", "yield", "delete", "else"})
_OPEN, _CLOSE = "([{", ")]}"
MIN_DATA_LINES = 3


def logical_lines(texts: Sequence[str], cats: str, lines: Sequence[int]) -> list[tuple[int, int]]:
    """Token ranges ``[start, end)`` of logical lines: a line break outside brackets ends one."""
    if not texts:
        return []
    changes = line_changes(lines)
    ends = changes[depth_after(texts, cats)[changes - 1] == 0].tolist()
    return list(zip([0, *ends], [*ends, len(texts)]))


def physical_lines(lines: Sequence[int]) -> list[tuple[int, int]]:
    """Token ranges ``[start, end)`` of the tokens that start on each source line."""
    if not len(lines):
        return []
    ends = line_changes(lines).tolist()
    return list(zip([0, *ends], [*ends, len(lines)]))


def noise_ranges(
    texts: Sequence[str], cats: str, lines: Sequence[int], indents: Sequence[int], language: str
) -> list[Range]:
    """The noise of one file: sorted, non-overlapping ``(start, end, kind)`` token ranges.

    ``lines`` is each token's 0-based line and ``indents`` each line's indentation (columns).
    """
    if not texts:
        return []
    logical = logical_lines(texts, cats, lines)
    found: list[Range] = []
    python_like = language in INDENT_LANGUAGES
    for n, (start, end) in enumerate(logical):
        kind = _line_kind(texts, cats, start, end, python_like)
        if kind == OVERLOAD and python_like:
            end = _indented_block_end(texts, logical, n, lines, indents)
        if kind is not None:
            found.append((start, end, kind))
    physical = physical_lines(lines)
    found += _data_runs(texts, cats, physical)
    found += _signatures(texts, cats, logical, python_like)
    if not python_like:
        # members of a class or interface body: the body is one logical line, its lines are not
        found += [
            (start, end, OVERLOAD)
            for start, end in _statements(texts, physical)
            if _is_bodiless_declaration(texts, cats, start, end)
        ]
    return _merge(found, len(texts))


def _statements(texts: Sequence[str], physical: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Runs of physical lines ending at a ``;`` (a statement spread over lines included)."""
    out: list[tuple[int, int]] = []
    start = None
    for lo, hi in physical:
        if start is None:
            start = lo
        if texts[hi - 1] == ";":
            out.append((start, hi))
            start = None
        elif texts[hi - 1] in ("{", "}"):
            start = None
    return out


def _line_kind(
    texts: Sequence[str], cats: str, start: int, end: int, python_like: bool
) -> str | None:
    """The noise kind of a whole logical line, if it is one."""
    # Most lines are none of these: each test looks at the few tokens it needs first.
    first = texts[start]
    if first.startswith("@"):
        head = texts[start : min(end, start + 4)]
        return OVERLOAD if any(w.endswith("overload") for w in head) else DECORATOR
    second = texts[start + 1] if end - start > 1 else None
    if first in _IMPORT_WORDS and second != "(":
        return IMPORT
    if first == "export" and second in ("{", "*") and "from" in texts[max(start, end - 4) : end]:
        return IMPORT  # `export { a } from "./a"`, `export * from "./b"`
    if first in ("const", "var", "let"):
        words = texts[start:end]
        if "require" in words and "=" in words:
            return IMPORT
    if first in _EXPORT_HEADS and _is_export_list(texts[start:end]):
        return EXPORT
    if (
        not _FFI_ATTRIBUTES.isdisjoint(texts[start : min(end, start + 8)])
        and "=" in texts[start:end]
    ):
        return DECLARATION
    if (
        not python_like
        and texts[end - 1] == ";"
        and _is_bodiless_declaration(texts, cats, start, end)
    ):
        return OVERLOAD
    return None


_EXPORT_HEADS = frozenset({"module", "export", "__all__"})
"""The first words of the lines :func:`_is_export_list` can accept."""


def _is_export_list(words: Sequence[str]) -> bool:
    if words[:3] == ["module", ".", "exports"] and "=" in words[:4]:
        return True
    if (
        words[0] == "export"
        and len(words) > 1
        and words[1] in ("{", "default")
        and "(" not in words
    ):
        return True
    return words[0] == "__all__" and (words[1:2] == ["="] or words[1:3] in (["+="], ["+", "="]))


def _is_bodiless_declaration(texts: Sequence[str], cats: str, start: int, end: int) -> bool:
    """``function f(a: T): R;``, ``f(a: T): R;`` in a class, ``int f(int);``: no body, no call."""
    words = texts[start:end]
    if words[0] in _NOT_DECLARATIONS or words[0] in CONTROL_KEYWORDS or "(" not in words:
        return False
    paren = start + words.index("(")
    close = _matching(texts, paren, end)
    if close is None or ("=" in texts[start:paren] and "function" not in texts[start:paren]):
        return False
    after = texts[close + 1] if close + 1 < end else ""
    if "function" in texts[start:paren]:
        return after in (":", ";")
    if after == ":":  # a TypeScript return type: a call statement has none
        return True
    # a prototype: a type (or modifiers) before the name, nothing that makes it an expression
    head = range(start, paren - 1)
    return (
        after == ";"
        and paren - start >= 2
        and cats[paren - 1] in "NA"
        and all(texts[j] not in (".", "->", "::", "?.") for j in head)
        and all(cats[j] in "KNB" or texts[j] in ("*", "&", "<", ">", ",", "[", "]") for j in head)
    )


def _matching(texts: Sequence[str], open_at: int, end: int) -> int | None:
    depth = 0
    for j in range(open_at, end):
        if texts[j] in _OPEN:
            depth += 1
        elif texts[j] in _CLOSE:
            depth -= 1
            if depth == 0:
                return j
    return None


def _indented_block_end(
    texts: Sequence[str],
    logical: list[tuple[int, int]],
    n: int,
    lines: Sequence[int],
    indents: Sequence[int],
) -> int:
    """The end of the definition decorated at logical line ``n``: its body included (Python)."""
    k = n + 1
    while k < len(logical) and texts[logical[k][0]].startswith("@"):
        k += 1  # further decorators
    if k >= len(logical):
        return logical[n][1]
    base = _indent(logical[k], lines, indents)
    m = k + 1
    while m < len(logical) and _indent(logical[m], lines, indents) > base:
        m += 1
    return logical[m - 1][1]


def _indent(line: tuple[int, int], lines: Sequence[int], indents: Sequence[int]) -> int:
    return indents[lines[line[0]]] if lines[line[0]] < len(indents) else 0


def _data_line(texts: Sequence[str], cats: str, start: int, end: int) -> bool | None:
    """True: a line of literals; None: only brackets and commas (neutral); False: code."""
    literals = names = 0
    for j in range(start, end):
        cat, text = cats[j], texts[j]
        if cat in "SM" or text in _LITERAL_WORDS:
            literals += 1
        elif cat in "NAB":
            names += 1
        elif cat == "K":
            return False
        elif cat in "PO" and text not in _DATA_OPERATORS and text not in _OPEN + _CLOSE:
            return False
    if not literals:
        # a key or a name opening a bracket (`months: {`, `TABLE = [`) does not end a table
        return None if names <= 1 and texts[end - 1] in _OPEN + _CLOSE + "," else False
    return literals * 5 >= (literals + names) * 2


def _data_runs(texts: Sequence[str], cats: str, physical: list[tuple[int, int]]) -> list[Range]:
    """Runs of at least ``MIN_DATA_LINES`` literal lines, with neutral bracket lines inside."""
    out: list[Range] = []
    run: list[tuple[int, int]] = []
    data_lines = 0

    def close() -> None:
        if data_lines >= MIN_DATA_LINES:
            out.append((run[0][0], run[-1][1], DATA))

    for start, end in physical:
        kind = _data_line(texts, cats, start, end)
        if kind is False:
            close()
            run, data_lines = [], 0
            continue
        run.append((start, end))
        data_lines += bool(kind)
    close()
    return out


def _signatures(
    texts: Sequence[str], cats: str, logical: list[tuple[int, int]], python_like: bool
) -> list[Range]:
    """Function headers: ``def f(...) -> T:`` lines, and ``name(...) ... {`` in brace languages."""
    out: list[Range] = []
    if python_like:
        for start, end in logical:
            first = texts[start]
            if first == "def" or (
                first == "async" and start + 1 < end and texts[start + 1] == "def"
            ):
                out.append((start, end, SIGNATURE))
        return out
    for i, text in enumerate(texts):
        if text == "{" and i and cats[i] in "PO":
            header = _brace_header(texts, cats, i)
            if header is not None:
                out.append((header, i + 1, SIGNATURE))
    return out


_MODIFIERS = frozenset({"function", "async", "static", "public", "private", "protected", "*"})


_TYPE_PUNCTUATION = frozenset(
    {".", "<", ">", ">>", ">>>", "[", "]", "|", "&", "?", "=>", ":", "*", "::"}
)


def _brace_header(texts: Sequence[str], cats: str, brace: int) -> int | None:
    """Where the function header ending at ``{`` (index ``brace``) starts, if it is one.

    Between the parameters' ``)`` and the ``{`` only a return type, ``throws X`` or ``=>`` may
    stand (``key: {`` and ``x = {`` open object literals, not bodies).
    """
    j, angle = brace - 1, 0
    if texts[j] in (":", ",", "=", "(", "["):
        return None
    while j > 0 and texts[j] != ")":
        text = texts[j]
        if text and set(text) <= {">"}:  # `>`, and `>>` of nested generics lexed as one
            angle += len(text)
        angle -= text == "<"
        if brace - j > 24 or not (
            cats[j] in "NABK" or text in _TYPE_PUNCTUATION or (text == "," and angle > 0)
        ):
            return None
        j -= 1
    opened = _opening(texts, j)
    if not opened or texts[opened - 1] in CONTROL_KEYWORDS:
        return None
    head = opened - 1
    while head > 0 and (
        texts[head - 1] in _MODIFIERS
        or (cats[head - 1] == "K" and texts[head - 1] not in CONTROL_KEYWORDS)
    ):
        head -= 1
    return head


def _opening(texts: Sequence[str], close: int) -> int | None:
    depth = 0
    for j in range(close, max(-1, close - 2000), -1):
        if texts[j] == ")":
            depth += 1
        elif texts[j] == "(":
            depth -= 1
            if depth == 0:
                return j
    return None


def _merge(found: list[Range], count: int) -> list[Range]:
    """Non-overlapping ranges; overlaps go to the kind earlier in :data:`KINDS`."""
    if not found:
        return []
    owner = [""] * count
    for kind in reversed(KINDS):
        for start, end, k in found:
            if k == kind:
                owner[start:end] = [kind] * (end - start)
    # the owner can change only where a range starts or ends: look there, not at every token
    cuts = sorted(
        {0, count, *(a for a, _, _ in found if a < count), *(b for _, b, _ in found if b < count)}
    )
    out: list[Range] = []
    for lo, hi in itertools.pairwise(cuts):
        kind = owner[lo]
        if not kind:
            continue
        if out and out[-1][1] == lo and out[-1][2] == kind:
            out[-1] = (out[-1][0], hi, kind)
        else:
            out.append((lo, hi, kind))
    return out
