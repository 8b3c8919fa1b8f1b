"""A small, careful Java lexer and method finder for the planted-clone generator.

Not a Java parser: it lexes (comments, strings, text blocks, char literals and
numbers are single tokens, so braces inside them never count), tracks braces
with a stack of contexts (type body, method body, other block) and recognises
method declarations of top-level and member types by their header.  That is all
the planting needs: where a method starts and ends, its parameters and local
variables (for consistent renaming) and its simple statements (for Type-3 edits).
The planted files are checked with ``javac``'s parser afterwards (see
generate.py), so a mistake here shows up as a rejected candidate, not as an
invalid corpus.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

KEYWORDS = frozenset(
    """abstract assert boolean break byte case catch char class const continue default do
    double else enum extends final finally float for goto if implements import instanceof
    int interface long native new package private protected public return short static
    strictfp super switch synchronized this throw throws transient try void volatile while
    true false null""".split()
)
# Contextual keywords that must not be taken for a type or a variable name.
CONTEXTUAL = frozenset({"yield", "record", "sealed", "permits", "non-sealed"})
PRIMITIVES = frozenset({"boolean", "byte", "char", "short", "int", "long", "float", "double"})
# Keywords that cannot be the type before a declared name.
_NOT_A_TYPE = (KEYWORDS - PRIMITIVES) | {"yield"}

_OPERATORS = sorted(
    """>>>= >>= <<= ... -> :: == != <= >= && || ++ -- += -= *= /= %= &= |= ^= <<""".split(),
    key=len,
    reverse=True,
)
_IDENT_RE = re.compile(r"[A-Za-z_$\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*")
_NUMBER_RE = re.compile(
    r"0[xX][0-9a-fA-F_]*\.?[0-9a-fA-F_]*(?:[pP][+-]?\d+)?[lLfFdD]?"
    r"|0[bB][01_]+[lL]?"
    r"|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?[lLfFdD]?"
)


@dataclass(frozen=True)
class Tok:
    """One token: kind is ident, keyword, number, string, char, op."""

    kind: str
    text: str
    start: int  # offset in the source
    end: int
    line: int  # 1-based line of the first character


def lex(src: str) -> list[Tok]:
    """Tokens of ``src`` without whitespace and comments; ``>>`` stays two ``>``."""
    toks: list[Tok] = []
    i, n, line = 0, len(src), 1
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
            continue
        if c in " \t\r\f":
            i += 1
            continue
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += src.count("\n", i, j)
            i = j
            continue
        start, sline = i, line
        if src.startswith('"""', i):  # text block
            j = i + 3
            while j < n and not src.startswith('"""', j):
                j += 2 if src[j] == "\\" else 1
            j = min(n, j + 3)
            kind = "string"
        elif c == '"' or c == "'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j += 1
            kind = "string" if c == '"' else "char"
        elif c.isdigit() or (c == "." and i + 1 < n and src[i + 1].isdigit()):
            m = _NUMBER_RE.match(src, i)
            j = m.end() if m and m.end() > i else i + 1
            kind = "number"
        else:
            m = _IDENT_RE.match(src, i)
            if m:
                j = m.end()
                kind = "keyword" if m.group() in KEYWORDS else "ident"
            else:
                for op in _OPERATORS:
                    if src.startswith(op, i):
                        j = i + len(op)
                        break
                else:
                    j = i + 1
                kind = "op"
        line += src.count("\n", start, j)
        toks.append(Tok(kind, src[start:j], start, j, sline))
        i = j
    return toks


@dataclass
class Method:
    """A method declaration with a body."""

    name: str
    name_tok: int  # index of the name token
    first_tok: int  # first token of the header (annotation or modifier)
    open_tok: int  # index of the body's '{'
    close_tok: int  # index of the body's '}'
    params_open: int  # index of '(' of the parameter list
    params_close: int
    start_line: int
    end_line: int
    modifiers: set[str] = field(default_factory=set)


@dataclass
class TypeDecl:
    """A top-level or member type (class, interface, enum, record, annotation)."""

    kind: str
    name: str
    open_tok: int
    close_tok: int
    top_level: bool


@dataclass
class JavaFile:
    """The lexed file with its methods and type declarations."""

    src: str
    toks: list[Tok]
    methods: list[Method]
    types: list[TypeDecl]


def _match_paren(toks: list[Tok], i: int, open_: str = "(", close: str = ")") -> int:
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j].text
        if t == open_:
            depth += 1
        elif t == close:
            depth -= 1
            if depth == 0:
                return j
    return -1


def _type_keyword(toks: list[Tok], lo: int, hi: int) -> tuple[str, str] | None:
    """(kind, name) when toks[lo:hi] is the header of a type declaration."""
    depth = 0
    for j in range(lo, hi):
        t = toks[j]
        if t.text in "([":
            depth += 1
        elif t.text in ")]":
            depth -= 1
        elif depth == 0 and t.text in ("class", "interface", "enum", "record"):
            if j > lo and toks[j - 1].text == ".":
                continue
            if j + 1 < hi and toks[j + 1].kind == "ident":
                if t.text == "record" and not (j + 2 < hi and toks[j + 2].text in ("(", "<")):
                    continue
                kind = "annotation" if j > lo and toks[j - 1].text == "@" else t.text
                return kind, toks[j + 1].text
    return None


def _method_header(toks: list[Tok], lo: int, hi: int) -> tuple[int, int, int] | None:
    """(name index, '(' index, ')' index) when toks[lo:hi] is a method header."""
    last_group: tuple[int, int] | None = None
    j = lo
    while j < hi:
        t = toks[j].text
        if t == "(":
            k = _match_paren(toks, j)
            if k < 0 or k >= hi:
                return None
            # an annotation's arguments are not the parameter list
            if not (j >= 2 and toks[j - 2].text == "@"):
                last_group = (j, k)
            j = k + 1
            continue
        if t in ("=", "new"):
            return None
        j += 1
    if last_group is None:
        return None
    po, pc = last_group
    name = po - 1
    if name < lo or toks[name].kind != "ident":
        return None
    before = toks[name - 1] if name - 1 >= lo else None
    if before is None:
        return None
    # a return type must precede the name: an identifier, a primitive, void, '>' or ']'
    if not (
        (before.kind == "ident" and before.text not in CONTEXTUAL)
        or before.text in PRIMITIVES
        or before.text in ("void", ">", "]")
    ):
        return None
    rest = [t.text for t in toks[pc + 1 : hi]]
    if rest and rest[0] != "throws":
        return None
    return name, po, pc


def parse(src: str) -> JavaFile:
    """Lex ``src`` and find its types and the methods of its top-level and member types."""
    toks = lex(src)
    methods: list[Method] = []
    types: list[TypeDecl] = []
    # stack entries: (kind, open index, TypeDecl or None); kinds: file, type, method, block
    stack: list[tuple[str, int, object]] = [("file", -1, None)]
    boundary = 0  # first token of the current member header
    for i, t in enumerate(toks):
        ctx = stack[-1][0]
        if t.text == "{":
            kind = "block"
            info: object = None
            if ctx in ("file", "type"):
                td = _type_keyword(toks, boundary, i)
                if td is not None:
                    kind = "type"
                    info = TypeDecl(td[0], td[1], i, -1, ctx == "file")
                elif ctx == "type":
                    mh = _method_header(toks, boundary, i)
                    if mh is not None:
                        kind = "method"
                        name, po, pc = mh
                        mods = {
                            x.text for x in toks[boundary:name] if x.kind in ("keyword", "ident")
                        }
                        info = Method(
                            toks[name].text,
                            name,
                            boundary,
                            i,
                            -1,
                            po,
                            pc,
                            toks[boundary].line,
                            -1,
                            mods,
                        )
            stack.append((kind, i, info))
            boundary = i + 1
        elif t.text == "}":
            if len(stack) > 1:
                _kind, _open, info = stack.pop()
                if isinstance(info, Method):
                    info.close_tok = i
                    info.end_line = t.line
                    methods.append(info)
                elif isinstance(info, TypeDecl):
                    info.close_tok = i
                    types.append(info)
            boundary = i + 1
        elif t.text == ";" and ctx in ("file", "type"):
            boundary = i + 1
    methods.sort(key=lambda m: m.first_tok)
    types.sort(key=lambda d: d.open_tok)
    return JavaFile(src, toks, methods, types)


# ---------------------------------------------------------------- locals


def _is_type_end(toks: list[Tok], j: int, lo: int) -> bool:
    """True when toks[j] can end a type that precedes a declared name."""
    t = toks[j]
    if t.kind == "ident":
        return t.text not in _NOT_A_TYPE
    if t.text in PRIMITIVES:
        return True
    if t.text == "]":
        return j - 1 >= lo and toks[j - 1].text == "["
    if t.text == ">":
        # walk back to the matching '<' over tokens that can appear in type arguments
        depth = 0
        k = j
        while k >= lo:
            x = toks[k].text
            if x == ">":
                depth += 1
            elif x == "<":
                depth -= 1
                if depth == 0:
                    return k - 1 >= lo and toks[k - 1].kind == "ident"
            elif not (
                toks[k].kind == "ident"
                or x in (",", ".", "?", "&", "[", "]", "extends", "super")
                or x in PRIMITIVES
            ):
                return False
            k -= 1
    return False


def declared_names(jf: JavaFile, m: Method) -> list[str]:
    """Parameters and local variables declared in ``m`` (lambda, catch and for vars too)."""
    toks = jf.toks
    names: list[str] = []

    def add(name: str) -> None:
        if name not in names:
            names.append(name)

    # parameters: the last identifier of each comma-separated part
    depth = 0
    last_ident: str | None = None
    for j in range(m.params_open + 1, m.params_close + 1):
        x = toks[j].text
        if x in ("(", "<", "["):
            depth += 1
        elif x in (")", ">", "]") and j != m.params_close:
            depth -= 1
        if (x == "," and depth == 0) or j == m.params_close:
            if last_ident:
                add(last_ident)
            last_ident = None
        elif toks[j].kind == "ident" and depth == 0 and toks[j - 1].text != "@":
            last_ident = x
    lo = m.open_tok + 1
    for j in range(lo, m.close_tok):
        t = toks[j]
        if t.kind != "ident" or t.text in CONTEXTUAL:
            continue
        prev = toks[j - 1]
        nxt = toks[j + 1]
        if prev.text in (".", "::", "@"):
            continue
        if nxt.text == "->":
            add(t.text)  # single lambda parameter
            continue
        if nxt.text in ("=", ";", ",", ":", ")") and _is_type_end(toks, j - 1, lo):
            if nxt.text == ":" and prev.text == "case":
                continue
            add(t.text)
            continue
        if nxt.text in (",", ")"):
            # parenthesised lambda parameters: (a, b) -> ...
            k = j
            while k > lo and toks[k].text != "(":
                if toks[k].kind != "ident" and toks[k].text != ",":
                    break
                k -= 1
            if toks[k].text == "(":
                close = _match_paren(toks, k)
                if close > 0 and close + 1 < len(toks) and toks[close + 1].text == "->":
                    add(t.text)
    return names


def rename_occurrences(
    jf: JavaFile, m: Method, mapping: dict[str, str], locals_: set[str]
) -> list[tuple[int, str]]:
    """(token index, new text) for every occurrence of a renamed name in ``m``.

    ``mapping`` maps the method's name and its locals (``locals_``) to new names.
    A name after '.' (a field or a method of something) is left alone unless it
    is ``this.name(`` for the method's own name; a call ``x(`` is renamed only
    for the method's own name (a recursive call); any other occurrence only when
    it is a local.
    """
    out: list[tuple[int, str]] = []
    toks = jf.toks
    for j in range(m.name_tok, m.close_tok):
        t = toks[j]
        if t.kind != "ident" or t.text not in mapping:
            continue
        call = toks[j + 1].text == "("
        if toks[j - 1].text in (".", "::", "@"):
            if t.text == m.name and call and toks[j - 1].text == "." and toks[j - 2].text == "this":
                out.append((j, mapping[t.text]))
            continue
        if call:
            if t.text == m.name:
                out.append((j, mapping[t.text]))
            continue
        if t.text in locals_:
            out.append((j, mapping[t.text]))
    return out


@dataclass
class Stmt:
    """A simple statement that fills whole lines."""

    first_tok: int
    last_tok: int  # the ';'
    start_line: int
    end_line: int
    block_open: int  # token index of the enclosing block's '{'
    depth: int  # brace depth below the method body (0 = top level of the body)


def simple_statements(jf: JavaFile, m: Method) -> list[Stmt]:
    """Simple ``...;`` statements of ``m``'s body that start and end their lines."""
    toks = jf.toks
    src = jf.src
    out: list[Stmt] = []
    blocks: list[int] = [m.open_tok]
    paren = 0
    start = m.open_tok + 1
    has_brace = False
    for j in range(m.open_tok + 1, m.close_tok):
        x = toks[j].text
        if x in ("(", "["):
            paren += 1
        elif x in (")", "]"):
            paren -= 1
        elif x == "{":
            if paren == 0:
                blocks.append(j)
                start = j + 1
            else:
                has_brace = True
        elif x == "}":
            if paren == 0:
                blocks.pop()
                start = j + 1
            else:
                has_brace = True
        elif x == ";" and paren == 0:
            if start < j and not has_brace:
                first = toks[start]
                if first.text not in (
                    "case",
                    "default",
                    "else",
                    "for",
                    "while",
                    "if",
                    "do",
                    "try",
                    "switch",
                    "synchronized",
                    "return",
                    "throw",
                    "break",
                    "continue",
                    "yield",
                ) and not any(tk.text in (":", "->") for tk in toks[start:j] if tk.kind == "op"):
                    line_start = src.rfind("\n", 0, first.start) + 1
                    line_end = src.find("\n", toks[j].end)
                    line_end = len(src) if line_end < 0 else line_end
                    before = src[line_start : first.start]
                    after = src[toks[j].end : line_end].strip()
                    if before.strip() == "" and (after == "" or after.startswith("//")):
                        out.append(
                            Stmt(
                                start,
                                j,
                                first.line,
                                toks[j].line,
                                blocks[-1],
                                len(blocks) - 1,
                            )
                        )
            start = j + 1
            has_brace = False
        elif x == ":" and paren == 0 and toks[start].text in ("case", "default"):
            start = j + 1
    return out
