"""The lines of an aligned pair: which are code, which are identical, what differs on the others.

Every claim a finding prints about its lines is computed here, on the raw tokens of the two
sides, so that it can be checked by reading them:

* a **code line** holds a token other than punctuation, operators and comments, and is not a
  lone string (a docstring line): a line of ``}`` or ``});``, a blank or a comment line is no
  code line, and is never counted as identical;
* code lines are **identical** when their tokens are, in the same order on both sides
  (:class:`difflib.SequenceMatcher` over the code lines);
* each **differing** line is paired, where it can be, with a line of the other side of the same
  shape (names and type names as ``ID``, literals as ``LIT``) and classified by the tokens that
  differ: ``names`` only, ``type names`` only (primitive type keywords and capitalised names),
  ``literals`` only, ``names and literals``, ``called names`` (a differing name that is called
  or a member: another API), else ``structure`` (operators, keywords or the shape differ; a
  line with no counterpart is structure too);
* a **renaming** is claimed only when at most a third of the differing lines differ otherwise
  (in literals: a reworded message; in structure: an edited line), and the names of both
  sides, over the identical and the paired lines, map **one-to-one both ways** (no two names
  onto one, no name onto two; members and other names apart); its name pairs are kept;
* a **mirror** pair differs in names that are each other's mirror word (``next``/``prev``,
  ``min``/``max``, ``first``/``last`` ...): per-direction variants rather than a copy.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher

from crystal_lsp.text.entries import Heavy

NAMES, TYPES, LITERALS, NAMES_LITERALS, CALLED, STRUCTURE = (
    "names",
    "type names",
    "literals",
    "names and literals",
    "called names",
    "structure",
)
KINDS = (NAMES, TYPES, LITERALS, NAMES_LITERALS, CALLED, STRUCTURE)
"""What the differing lines of a pair differ in (module docstring)."""
RENAMING_KINDS = frozenset({NAMES, TYPES, CALLED})
EDITED_SHARE = 1 / 3
"""Of a renamed copy's differing lines, the share that may differ otherwise (as the decision's
30 % of unpaired lines; in literals: a
reworded message; in structure: an edited line)."""
TYPE_WORDS = frozenset(
    "int long short byte char float double boolean bool void unsigned signed size_t ssize_t "
    "int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t i8 i16 i32 i64 i128 "
    "u8 u16 u32 u64 u128 f32 f64 isize usize int8 int16 int32 int64 uint uint8 uint16 uint32 "
    "uint64 float32 float64 complex64 complex128 rune string number bigint".split()
)
"""Primitive type keywords and names: a line differing only in these is a per-type variant."""
MIRRORS = (
    ("next", "prev"),
    ("next", "previous"),
    ("first", "last"),
    ("min", "max"),
    ("minimum", "maximum"),
    ("smallest", "largest"),
    ("lower", "upper"),
    ("left", "right"),
    ("top", "bottom"),
    ("start", "end"),
    ("begin", "end"),
    ("before", "after"),
    ("prefix", "suffix"),
    ("head", "tail"),
    ("up", "down"),
    ("forward", "backward"),
    ("push", "pop"),
    ("add", "remove"),
    ("get", "set"),
    ("read", "write"),
    ("open", "close"),
    ("encode", "decode"),
    ("inc", "dec"),
    ("increment", "decrement"),
    ("width", "height"),
    ("row", "col"),
    ("row", "column"),
    ("rows", "cols"),
    ("rows", "columns"),
    ("x", "y"),
    ("horizontal", "vertical"),
    ("all", "any"),
    ("true", "false"),
    ("on", "off"),
)
_MIRROR = frozenset(MIRRORS) | frozenset((b, a) for a, b in MIRRORS)
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
NAME_CATS = "NAB"
CODE_CATS = frozenset("KNABSMX")

Line = tuple[int, int, str]
"""``(first token, end token, text)`` of one code line."""


@dataclass(frozen=True)
class Comparison:
    """The code lines of a pair compared (module docstring)."""

    lines_a: list[Line]
    lines_b: list[Line]
    identical: int
    diff_a: list[Line]
    """Differing code lines of side a (in order)."""
    diff_b: list[Line]
    kinds: Counter[str]
    """Differing lines by kind: a paired line counts once; lines without a counterpart count as
    structure, on the side with more of them (the kinds add up to the differing lines of the
    longer side at most)."""
    names: tuple[tuple[str, str], ...]
    """The renaming's name pairs (``a`` side, ``b`` side), when it is one-to-one both ways."""
    renamed: bool
    mirror: bool
    """Most differing name pairs are mirror words of each other."""
    changed: tuple[tuple[str, str], ...] = ()
    """The name pairs that differ on the paired lines (a renaming or not), sorted."""
    edited: int = 0
    """Paired lines left out of the renaming: their names would break the one-to-one map."""


def code_lines(heavy: Heavy, start: int, end: int) -> list[Line]:
    """The code lines of tokens ``[start, end)`` (module docstring)."""
    out: list[Line] = []
    texts, cats, lines = heavy.texts, heavy.cats, heavy.lines
    first = start
    for i in range(start + 1, end + 1):
        if i == end or lines[i] != lines[i - 1]:
            line_cats = cats[first:i]
            docstring = i - first == 1 and line_cats == "S"
            if not docstring and any(c in CODE_CATS for c in line_cats):
                out.append((first, i, " ".join(texts[first:i])))
            first = i
    return out


def is_type_name(text: str, cat: str) -> bool:
    """A primitive type keyword or name, or a capitalised name (a class, a type)."""
    if text in TYPE_WORDS:
        return True
    return cat in NAME_CATS and len(text) > 1 and text[0].isupper() and not text.isupper()


def shape(heavy: Heavy, first: int, end: int) -> str:
    """A line with names and type names as ``ID``, literals as ``LIT``."""
    return " ".join(
        "ID" if c in NAME_CATS or (c == "K" and t in TYPE_WORDS) else "LIT" if c in "SM" else t
        for t, c in zip(heavy.texts[first:end], heavy.cats[first:end])
    )


def compare(heavy_a: Heavy, a: tuple[int, int], heavy_b: Heavy, b: tuple[int, int]) -> Comparison:
    """The code lines of tokens ``a`` and ``b`` compared (module docstring)."""
    la, lb = code_lines(heavy_a, *a), code_lines(heavy_b, *b)
    matcher = SequenceMatcher(None, [t for *_, t in la], [t for *_, t in lb], autojunk=False)
    identical = 0
    kinds: Counter[str] = Counter()
    diff_a: list[Line] = []
    diff_b: list[Line] = []
    mapping: list[tuple[str, str, bool]] = []
    lines: list[list[tuple[str, str, bool]]] = []
    for op, i0, i1, j0, j1 in matcher.get_opcodes():
        if op == "equal":
            identical += i1 - i0
            for first, end, _ in la[i0:i1]:
                mapping += [(t, t, c == "A") for t, c in _names(heavy_a, first, end)]
            continue
        diff_a += la[i0:i1]
        diff_b += lb[j0:j1]
        paired = _pair_by_shape(heavy_a, la[i0:i1], heavy_b, lb[j0:j1])
        unpaired = max(i1 - i0, j1 - j0) - len(paired)
        if unpaired:
            kinds[STRUCTURE] += unpaired
        for x, y in paired:
            kinds[_kind(heavy_a, x, heavy_b, y)] += 1
            lines.append(
                [
                    (s, t, c == "A")
                    for (s, c), (t, _) in zip(
                        _names(heavy_a, x[0], x[1]), _names(heavy_b, y[0], y[1])
                    )
                ]
            )
    kept, edited = _renaming_lines(mapping, lines)
    names = _one_to_one(kept)
    mapping += [m for line in lines for m in line]
    other = kinds[LITERALS] + kinds[NAMES_LITERALS] + kinds[STRUCTURE] + edited
    renamed = (
        bool(names)
        and EDITED_SHARE * sum(kinds.values()) >= other
        and bool(set(kinds) & RENAMING_KINDS)
    )
    changed = [(s, t) for s, t, _ in mapping if s != t]
    return Comparison(
        la,
        lb,
        identical,
        diff_a,
        diff_b,
        kinds,
        names if renamed and names is not None else (),
        renamed,
        _mirrored(changed),
        tuple(sorted(set(changed))),
        edited if renamed else 0,
    )


def _names(heavy: Heavy, first: int, end: int) -> list[tuple[str, str]]:
    """The names of a line (with type keywords), text and category, in order."""
    return [
        (t, c)
        for t, c in zip(heavy.texts[first:end], heavy.cats[first:end])
        if c in NAME_CATS or (c == "K" and t in TYPE_WORDS)
    ]


def _pair_by_shape(
    heavy_a: Heavy, la: list[Line], heavy_b: Heavy, lb: list[Line]
) -> list[tuple[Line, Line]]:
    """Differing lines of both sides paired in order where their shapes are equal."""
    shapes_a = [shape(heavy_a, first, end) for first, end, _ in la]
    shapes_b = [shape(heavy_b, first, end) for first, end, _ in lb]
    matcher = SequenceMatcher(None, shapes_a, shapes_b, autojunk=False)
    return [
        (la[block.a + k], lb[block.b + k])
        for block in matcher.get_matching_blocks()
        for k in range(block.size)
    ]


def _kind(heavy_a: Heavy, x: Line, heavy_b: Heavy, y: Line) -> str:
    """What two lines of the same shape differ in (module docstring)."""
    names = literals = types = called = 0
    n = x[1] - x[0]
    for k in range(n):
        ta, tb = heavy_a.texts[x[0] + k], heavy_b.texts[y[0] + k]
        if ta == tb:
            continue
        ca, cb = heavy_a.cats[x[0] + k], heavy_b.cats[y[0] + k]
        if ca in "SM" and cb in "SM":
            literals += 1
            continue
        names += 1
        types += is_type_name(ta, ca) and is_type_name(tb, cb)
        after = heavy_a.texts[x[0] + k + 1] if k + 1 < n else ""
        called += ca == "A" or cb == "A" or after == "("
    if names == 0:
        return LITERALS if literals else STRUCTURE
    if literals:
        return NAMES_LITERALS
    if types == names:
        return TYPES
    return CALLED if called else NAMES


def _renaming_lines(
    same: list[tuple[str, str, bool]], lines: list[list[tuple[str, str, bool]]]
) -> tuple[list[tuple[str, str, bool]], int]:
    """The name pairs of the identical lines and of the paired lines that keep them one-to-one.

    A paired line whose names would map a name onto a second one (``strip`` to ``rstrip``
    where ``strip`` stays elsewhere) is an edited line, not part of the renaming: the pairs
    kept are one-to-one; how many lines were left out is returned with them.
    """
    forward: dict[tuple[str, bool], str] = {}
    backward: dict[tuple[str, bool], str] = {}
    kept: list[tuple[str, str, bool]] = []
    edited = 0
    for line in [same, *lines]:
        f, b = dict(forward), dict(backward)
        ok = all(f.setdefault((s, m), t) == t and b.setdefault((t, m), s) == s for s, t, m in line)
        if ok or line is same:
            forward, backward = f, b
            kept += line
        else:
            edited += 1
    return kept, edited


def _one_to_one(mapping: list[tuple[str, str, bool]]) -> tuple[tuple[str, str], ...] | None:
    """The differing name pairs if the names map one-to-one both ways, else None.

    Members (names after ``.``, ``->``, ``::``) and other names are two namespaces: a
    parameter ``region`` renamed ``zone`` beside an unchanged ``order.region`` is one-to-one.
    A member's pair is written with a leading ``.`` (``.size->.length``), so that the pairs
    listed are one-to-one as written.
    """
    forward: dict[tuple[str, bool], str] = {}
    backward: dict[tuple[str, bool], str] = {}
    for s, t, member in mapping:
        if forward.setdefault((s, member), t) != t or backward.setdefault((t, member), s) != s:
            return None
    dot = {True: ".", False: ""}
    return tuple(sorted({(dot[m] + s, dot[m] + t) for (s, m), t in forward.items() if s != t}))


def words(name: str) -> list[str]:
    """The lower-case words of an identifier (``nextSibling`` -> ``next``, ``sibling``)."""
    return [w.lower() for w in _WORDS.findall(name)]


def _mirrored(changed: list[tuple[str, str]]) -> bool:
    """Whether most differing name pairs differ by mirror words only."""
    pairs = set(changed)
    if not pairs:
        return False
    mirrored = 0
    for s, t in pairs:
        ws, wt = words(s), words(t)
        if len(ws) != len(wt):
            continue
        diff = [(p, q) for p, q in zip(ws, wt) if p != q]
        mirrored += bool(diff) and all(d in _MIRROR for d in diff)
    return 2 * mirrored >= len(pairs)
