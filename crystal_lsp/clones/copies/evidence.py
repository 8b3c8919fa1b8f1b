"""What a pair of copies is, read off its lines: verbatim, renamed, parallel, declarative.

A reviewer tells a copy worth acting on from similar structure nobody would act on by reading
the two pieces line by line. :func:`evidence` does the same on the raw tokens of an accepted
pair (:class:`~crystal_lsp.clones.align.pairs.RegionPair`):

* the **code lines** of each side -- lines with tokens, docstring lines (a line holding one
  string and nothing else) left out -- and how many of them are *identical* (same raw tokens)
  and in the same order on both sides (:class:`difflib.SequenceMatcher`);
* whether the lines that differ are a **consistent renaming** (every name of one side is one
  name of the other, the literals are the same: a renamed copy), or differ in **literals only**
  (the same code over other data);
* the share of **declarative** lines (signatures, decorators, overload stubs, imports,
  exports, data tables: :mod:`crystal_lsp.text.noise`; and docstrings);
* whether the lines that differ are mostly ``async``/``await`` (**sync/async twins**);
* whether both copies lie in **vendored** code (a ``vendor``, ``_vendor``, ``third_party``,
  ``node_modules`` ... folder): real similarity, but not the repository's to change;
* whether they are **parallel implementations**: methods of the same name in different
  classes (one per backend), given by the caller, who knows the units.

:mod:`crystal_lsp.clones.copies.levels` turns this into the level of a finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from crystal_lsp.clones.align.regions import Region
from crystal_lsp.clones.align.seeds import Bools
from crystal_lsp.clones.similarity import Code, renaming
from crystal_lsp.text.entries import Heavy

VENDOR_DIRS = frozenset(
    {
        "vendor",
        "_vendor",
        "vendored",
        "third_party",
        "third-party",
        "thirdparty",
        "3rdparty",
        "node_modules",
        "bower_components",
    }
)
TWIN_WORDS = frozenset({"async", "await"})
TWIN_LINES = 2
TWIN_SHARE = 0.3
SAME_SHAPE = 0.7
"""Of the differing lines of the shorter side, the share that must pair up by shape."""
RENAMED_MIN = 0.85
"""Consistency of a renaming (:func:`crystal_lsp.clones.similarity.renaming`) of a renamed copy."""

Line = tuple[int, int, str]
"""``(first token, end token, text)`` of one code line."""


@dataclass(frozen=True)
class Evidence:
    """What the lines of a pair of copies show (module docstring)."""

    lines_a: int
    lines_b: int
    identical: int
    """Code lines identical on both sides and in the same order."""
    renamed: bool
    """The lines that differ are a consistent renaming of names, literals kept."""
    literals_only: bool
    """The lines that differ differ in literals only (the same code over other data)."""
    declarative: float
    """Share of both sides' lines that are declarations or docstrings."""
    twins: bool
    """The lines that differ are mostly ``async``/``await`` (sync/async twins)."""
    vendored: bool
    """Both copies lie in vendored code."""
    parallel: str = ""
    """The name both copies' methods share in different classes (parallel implementations of
    one method: per-backend overrides), else empty."""

    @property
    def share(self) -> float:
        """Identical code lines over the code lines of both sides (0..1)."""
        total = self.lines_a + self.lines_b
        return 2 * self.identical / total if total else 0.0

    @property
    def differing(self) -> int:
        """Code lines of the longer side that are not identical on the other."""
        return max(self.lines_a, self.lines_b) - self.identical


def code_lines(heavy: Heavy, start: int, end: int) -> list[Line]:
    """The code lines of tokens ``[start, end)``: lines with tokens, docstring lines left out."""
    out: list[Line] = []
    texts, cats, lines = heavy.texts, heavy.cats, heavy.lines
    first = start
    for i in range(start + 1, end + 1):
        if i == end or lines[i] != lines[i - 1]:
            if not (i - first == 1 and cats[first] == "S"):
                out.append((first, i, " ".join(texts[first:i])))
            first = i
    return out


def declarative_lines(lines: list[Line], noise: Bools, heavy: Heavy, start: int, end: int) -> int:
    """Lines of ``[start, end)`` that are docstrings or lie wholly in noise ranges.

    ``lines``: the code lines of the span (:func:`code_lines`); ``noise``: per raw token of the
    file, inside a noise range.
    """
    code = {(a, b) for a, b, _ in lines}
    count = 0
    first = start
    row = heavy.lines
    for i in range(start + 1, end + 1):
        if i == end or row[i] != row[i - 1]:
            if (first, i) not in code or (len(noise) and bool(noise[first:i].all())):
                count += 1
            first = i
    return count


def _line_count(heavy: Heavy, start: int, end: int) -> int:
    return len(set(heavy.lines[start:end])) if end > start else 0


def vendored(path: str) -> bool:
    """Whether a path lies in a vendored folder (:data:`VENDOR_DIRS`)."""
    return any(part in VENDOR_DIRS for part in path.split("/")[:-1])


def evidence(
    a: Region,
    heavy_a: Heavy,
    noise_a: Bools,
    b: Region,
    heavy_b: Heavy,
    noise_b: Bools,
    parallel: str = "",
) -> Evidence:
    """The evidence of a pair of regions (module docstring); ``noise_*``: raw noise masks."""
    la = code_lines(heavy_a, a.start, a.end)
    lb = code_lines(heavy_b, b.start, b.end)
    matcher = SequenceMatcher(None, [t for *_, t in la], [t for *_, t in lb], autojunk=False)
    identical = sum(block.size for block in matcher.get_matching_blocks())
    ops = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    diff_a = [la[k] for _, i0, i1, _, _ in ops for k in range(i0, i1)]
    diff_b = [lb[k] for _, _, _, j0, j1 in ops for k in range(j0, j1)]
    renamed, literals_only = _renamed(heavy_a, diff_a, heavy_b, diff_b)
    decl = declarative_lines(la, noise_a, heavy_a, a.start, a.end) + declarative_lines(
        lb, noise_b, heavy_b, b.start, b.end
    )
    total = _line_count(heavy_a, a.start, a.end) + _line_count(heavy_b, b.start, b.end)
    return Evidence(
        len(la),
        len(lb),
        identical,
        renamed,
        literals_only,
        decl / total if total else 0.0,
        _twins(heavy_a, diff_a, heavy_b, diff_b),
        vendored(a.path) and vendored(b.path),
        parallel,
    )


def _code(heavy: Heavy, lines: list[Line]) -> Code:
    """The tokens of some lines as one piece of code (for the renaming check)."""
    texts: list[str] = []
    cats: list[str] = []
    rows: list[int] = []
    for first, end, _ in lines:
        texts += heavy.texts[first:end]
        cats.append(heavy.cats[first:end])
        rows += heavy.lines[first:end]
    return Code(texts, "".join(cats), rows)


def _renamed(
    heavy_a: Heavy, diff_a: list[Line], heavy_b: Heavy, diff_b: list[Line]
) -> tuple[bool, bool]:
    """Whether the differing lines are a consistent renaming; whether only literals differ.

    The differing lines are paired by shape (names as ``ID``, literals as ``LIT``); most of them
    (:data:`SAME_SHAPE`) must pair up -- an edited line may remain. Over the pairs, a renaming
    is the names of one side mapped consistently to the other's, literals kept
    (:func:`crystal_lsp.clones.similarity.renaming`); literals only is no name changed.
    """
    if not diff_a or not diff_b:
        return False, False
    code_a, code_b = _code(heavy_a, diff_a), _code(heavy_b, diff_b)
    shapes_a = [_shape(heavy_a, first, end) for first, end, _ in diff_a]
    shapes_b = [_shape(heavy_b, first, end) for first, end, _ in diff_b]
    matcher = SequenceMatcher(None, shapes_a, shapes_b, autojunk=False)
    paired = [
        (block.a + k, block.b + k)
        for block in matcher.get_matching_blocks()
        for k in range(block.size)
    ]
    if len(paired) < SAME_SHAPE * min(len(diff_a), len(diff_b)):
        return False, False
    names_differ = False
    for i, j in paired:
        (a0, a1, _), (b0, _, _) = diff_a[i], diff_b[j]
        for t in range(a1 - a0):
            if heavy_a.cats[a0 + t] in "NAB" and heavy_a.texts[a0 + t] != heavy_b.texts[b0 + t]:
                names_differ = True
    if not names_differ:
        return False, True
    return renaming(code_a, code_b, min_repeated=2) >= RENAMED_MIN, False


def _shape(heavy: Heavy, first: int, end: int) -> str:
    """A line with names as ``ID`` and literals as ``LIT``: what a renaming leaves unchanged."""
    return " ".join(
        "ID" if c in "NAB" else "LIT" if c in "SM" else t
        for t, c in zip(heavy.texts[first:end], heavy.cats[first:end])
    )


def _twins(heavy_a: Heavy, diff_a: list[Line], heavy_b: Heavy, diff_b: list[Line]) -> bool:
    """Whether the differing lines are sync/async twins: ``async``/``await`` on one side only.

    At least :data:`TWIN_LINES` differing lines of one side hold ``async`` or ``await`` and make
    :data:`TWIN_SHARE` of its differing lines, while the other side's hold at most a third as
    many (an async method and the sync one it mirrors).
    """
    marked_a = sum(1 for first, end, _ in diff_a if TWIN_WORDS & set(heavy_a.texts[first:end]))
    marked_b = sum(1 for first, end, _ in diff_b if TWIN_WORDS & set(heavy_b.texts[first:end]))
    for mine, theirs, lines in ((marked_a, marked_b, diff_a), (marked_b, marked_a, diff_b)):
        if mine >= TWIN_LINES and mine >= TWIN_SHARE * len(lines) and 3 * theirs <= mine:
            return True
    return False
