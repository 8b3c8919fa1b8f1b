"""The kind and name of a brace block, from the tokens of its header (:mod:`.snippets`).

A header is what stands between the previous statement boundary and a ``{``. Its name comes
from the definition it declares, never from a call: a block inside an open call is a callback
named after the call it is passed to, or a data literal; class names skip export macros and
attributes; namespaces are namespaces.
"""

from __future__ import annotations

from collections.abc import Sequence

from crystal_lsp.text.keywords import CLASS_KEYWORDS, CONTROL_KEYWORDS, FUNCTION_KEYWORDS

FUNCTION, CLASS, BLOCK, STATEMENTS, IMPORTS, DATA, NAMESPACE = (
    "function",
    "class",
    "block",
    "statements",
    "imports",
    "data",
    "namespace",
)
CALLBACK = " callback"
"""How a function literal passed to a call is named: ``Run callback``, ``describe callback``."""
ANONYMOUS = "(anonymous)"
"""The name of a definition that has none (``namespace {``, ``go func() {``)."""
_CONTROL = CONTROL_KEYWORDS | {"elseif", "elsif"}
"""Control keywords of every language (PHP's ``elseif``)."""
_NOT_NAMES = frozenset(
    {"if", "elseif", "elif", "else", "for", "foreach", "while", "do", "switch", "catch"}
    | {"use", "let", "var", "const", "val", "pub", "return", "throw", "unless", "until", "using"}
)
"""Words before a ``(`` that name no function: keywords of statements and declarations."""


def _skip_annotations(texts: Sequence[str], cats: str, start: int, end: int) -> int:
    """The first header token after leading annotations/decorators (``@X``, ``@X(...)``)."""
    i = start
    while i < end and (texts[i].startswith("@") or cats[i] == "X"):
        i += 1
        if i < end and texts[i] == "(":
            depth = 0
            while i < end:
                depth += texts[i] == "("
                depth -= texts[i] == ")"
                i += 1
                if depth == 0:
                    break
    return i


def classify_header(texts: Sequence[str], cats: str, start: int, end: int) -> tuple[str, str]:
    """Kind and name of a brace block from its header tokens ``[start, end)``."""
    if start >= end:
        return BLOCK, ""
    start = _skip_annotations(texts, cats, start, end)
    if start + 1 < end and texts[start] == "pub" and texts[start + 1] == "(":
        start = _skip_group(texts, start + 1, end, "(", ")")  # Rust's `pub(crate) fn`
    if start >= end:
        return BLOCK, ""
    header = range(start, end)
    first = texts[start]
    last = texts[end - 1]
    if first == "import" or (
        first == "export" and start + 1 < end and texts[start + 1] in ("{", "*")
    ):
        return IMPORTS, ""  # `import { a, b } from "x"`, `export { a }`
    if _anonymous_class(texts, start, end):
        return CLASS, _anonymous_class_name(texts, start, end)  # `new Runnable() {`
    if first in _CONTROL and first not in ("static", "new", "return", "throw"):
        return "control", ""
    if last == "=>":
        for j in header:
            if texts[j] == "=" and cats[j] == "O" and j > start and cats[j - 1] in "NA":
                return FUNCTION, texts[j - 1]
        return FUNCTION, _callee_name(texts, cats, start, end) or _name_before_paren(
            texts, cats, start, end
        )
    opened = _innermost_open(texts, start, end)
    if opened >= 0:  # the block is an argument or an element: `f(x, func() {`, `f(T{`
        return _argument_block(texts, cats, start, opened, end)
    for j in header:
        text = texts[j]
        if text == "(":
            break
        if text in CLASS_KEYWORDS and cats[j] in "KN":
            kind = NAMESPACE if text == "namespace" else CLASS
            return kind, _class_name(texts, cats, j, end)
    for j in header:
        if texts[j] == "(" and j > start and texts[j - 1] not in FUNCTION_KEYWORDS:
            break  # a parameter named `fn` or `func` is no keyword
        if texts[j] in FUNCTION_KEYWORDS and cats[j] in "KN":
            name = _name_before_paren(texts, cats, j, end)
            if name in _NOT_NAMES:  # PHP's `function ($e) use ($output) {`
                name = ""
            return FUNCTION, name or _assigned_name(texts, cats, start, j) or ANONYMOUS
    if last in ("=", ":", ",", "(", "[", "return", "?", "||", "&&") or first == "return":
        return DATA, ""
    if "(" in texts[start:end] and _no_assignment_before_paren(texts, cats, start, end):
        name = _name_before_paren(texts, cats, start, end)
        if name in _NOT_NAMES:
            return BLOCK, ""  # `let (a, b) = match x {`, `} elseif (x) {`: no definition
        return FUNCTION, name or _callee_name(texts, cats, start, end) or ANONYMOUS
    return BLOCK, ""


def _innermost_open(texts: Sequence[str], start: int, end: int) -> int:
    """The index of the innermost ``(`` or ``[`` of the header left open at its end, or -1."""
    opened: list[int] = []
    for j in range(start, end):
        if texts[j] in ("(", "["):
            opened.append(j)
        elif texts[j] in (")", "]") and opened:
            opened.pop()
    return opened[-1] if opened else -1


def _argument_block(
    texts: Sequence[str], cats: str, start: int, opened: int, end: int
) -> tuple[str, str]:
    """A block inside an open call or list: a function literal passed on, or a data literal.

    A function literal is named after the variable it is assigned to (``handler =
    useCallback(...)``), else after the call it is an argument of (``Run callback`` for Go's
    ``t.Run("case", func(t *testing.T) {``); the name of the called function is never the
    block's own name (Go's ``t.Logf("%v", T{...})`` holds no function ``Logf``).
    """
    depth, arg = 0, opened + 1
    for j in range(opened + 1, end):
        depth += texts[j] in ("(", "[")
        depth -= texts[j] in (")", "]")
        if depth == 0 and texts[j] == ",":
            arg = j + 1
    if arg >= end:
        return DATA, ""
    literal = (
        texts[end - 1] in (")", "->", "|")
        or (end - arg >= 2 and texts[end - 2] == "-" and texts[end - 1] == ">")  # Java's `->`
        or any(texts[j] in FUNCTION_KEYWORDS and cats[j] in "KN" for j in range(arg, end))
        or "->" in texts[arg:end]
    )
    if not literal:
        return DATA, ""
    assigned = _assigned_name(texts, cats, start, opened)
    if assigned:
        return FUNCTION, assigned
    if texts[opened] == "(" and opened > start and cats[opened - 1] in "NAB":
        return FUNCTION, f"{texts[opened - 1]}{CALLBACK}"
    return FUNCTION, ""


def _assigned_name(texts: Sequence[str], cats: str, start: int, end: int) -> str:
    """``handler`` for ``const handler = ...``: the name before the header's first ``=``."""
    for j in range(start + 1, end):
        if texts[j] in ("(", "["):
            return ""
        if texts[j] == "=" and cats[j] == "O":
            return texts[j - 1] if cats[j - 1] in "NA" else ""
    return ""


_CLASS_STOPS = frozenset({"extends", "implements", "where", "with", "for", "final", "sealed"})


def _class_name(texts: Sequence[str], cats: str, keyword: int, end: int) -> str:
    """The name a class, struct, impl or namespace header declares after ``keyword``.

    Export macros and attributes before the name are skipped (``class EXPORT_API Foo``,
    ``struct __declspec(dllexport) Foo``, ``class [[nodiscard]] Foo``: the name is the last
    word before the base list, type parameters or body), qualified names are kept whole
    (``namespace a::b``, ``namespace Acme.Tools``), and a Rust ``impl Trait for Type`` is the
    type's.
    """
    if texts[keyword] == "impl":
        for j in range(keyword + 1, end):
            if texts[j] == "for" and cats[j] in "KN":
                return _class_name(texts, cats, j, end)
    names: list[str] = []
    j = keyword + 1
    if texts[keyword] == "impl" and j < end and texts[j] == "<":
        j = _skip_group(texts, j, end, "<", ">")
    while j < end:
        text = texts[j]
        if text in ("(", "[") and (not names or _macro_like(names[-1])):
            j = _skip_group(texts, j, end, text, ")" if text == "(" else "]")
            continue
        if text in (".", "::") and names and j + 1 < end and cats[j + 1] in "NAB":
            names[-1] += text + texts[j + 1]
            j += 2
            continue
        if text in _CLASS_STOPS or (cats[j] not in "NAB" and text not in CLASS_KEYWORDS):
            if cats[j] not in "K" or text in _CLASS_STOPS:
                break
        elif cats[j] in "NAB" and text not in CLASS_KEYWORDS:
            names.append(text)
        j += 1
    return names[-1] if names else ""


def _macro_like(name: str) -> bool:
    """An export macro or compiler attribute: ``EXPORT_API``, ``__declspec``, ``alignas``."""
    return name.startswith("__") or name.isupper() or name in ("alignas", "DECLSPEC")


def _skip_group(texts: Sequence[str], j: int, end: int, open_: str, close: str) -> int:
    """The index after the group opened at ``j`` (its matching ``close``)."""
    depth = 0
    while j < end:
        depth += texts[j] == open_
        depth -= texts[j] == close
        j += 1
        if depth <= 0:
            break
    return j


def _anonymous_class_name(texts: Sequence[str], start: int, end: int) -> str:
    """``anonymous Runnable`` for a header ending in ``new Runnable() {``."""
    for j in range(end - 1, start - 1, -1):
        if texts[j] == "new":
            k = j + 1
            name = ""
            while k < end and texts[k] not in ("(", "<"):
                if texts[k][:1].isalnum() or texts[k][:1] == "_":
                    name = texts[k]
                k += 1
            return f"anonymous {name}" if name else ""
    return ""


def _anonymous_class(texts: Sequence[str], start: int, end: int) -> bool:
    """Whether the header ends in ``new Name(...)`` (or ``new a.b.Name<T>(...)``)."""
    if texts[end - 1] != ")":
        return False
    depth, j = 0, end - 1
    while j >= start:
        depth += texts[j] == ")"
        depth -= texts[j] == "("
        if depth == 0:
            break
        j -= 1
    j -= 1
    while j >= start and (
        texts[j] in (".", "<", ">", ",", "?") or texts[j][:1].isalnum() or texts[j][:1] == "_"
    ):
        if texts[j] == "new":
            return True
        j -= 1
    return False


def _no_assignment_before_paren(texts: Sequence[str], cats: str, start: int, end: int) -> bool:
    for j in range(start, end):
        if texts[j] == "(":
            return True
        if texts[j] == "=" and cats[j] == "O":
            return False
    return True


def _callee_name(texts: Sequence[str], cats: str, start: int, end: int) -> str:
    """``then callback`` for a function passed to ``x.then(...)``: the call left open in a header.

    Anonymous functions are named after the call they are an argument of (``describe``, ``it``,
    ``map``), which is how people refer to them.
    """
    opened: list[int] = []
    for j in range(start, end):
        if texts[j] == "(":
            opened.append(j)
        elif texts[j] == ")" and opened:
            opened.pop()
    for j in reversed(opened):
        if j > start and cats[j - 1] in "NAB":
            return f"{texts[j - 1]}{CALLBACK}"
    return ""


def _skip_generic(texts: Sequence[str], start: int, k: int) -> int:
    """From a ``>`` at ``k``, the index before its matching ``<`` (type parameters)."""
    depth = 0
    while k >= start:
        depth += (texts[k] == ">") - (texts[k] == "<")
        k -= 1
        if depth == 0:
            break
    return k


def _name_before_paren(texts: Sequence[str], cats: str, start: int, end: int) -> str:
    j = start
    while j < end:
        if texts[j] in ("(", "()"):  # PHP lexes an empty parameter list as one token
            k = j - 1
            while k >= start and cats[k] not in "NABK":
                if texts[k] == ">":
                    k = _skip_generic(texts, start, k)
                    continue
                if texts[k] == "]":
                    k -= 1
                    continue
                break
            if k >= start and texts[k] in FUNCTION_KEYWORDS:
                # Go's `func (r T) Name(`: skip the receiver list, the name comes after it
                depth = 0
                while j < end:
                    depth += texts[j] == "("
                    depth -= texts[j] == ")"
                    j += 1
                    if depth == 0:
                        break
                continue
            return texts[k] if k >= start and cats[k] in "NABK" else ""
        j += 1
    return ""
