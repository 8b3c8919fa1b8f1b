"""What a pair of copies is, read off its lines: verbatim, renamed, parallel, declarative.

A reviewer tells a copy worth acting on from similar structure nobody would act on by reading
the two pieces line by line. :func:`evidence` does the same on the raw tokens of an accepted
pair (:class:`~crystal_lsp.clones.align.pairs.RegionPair`):

* the **code lines** of each side and how many are *identical*, what each differing line
  differs in, whether the names are a **one-to-one renaming** (with its name pairs) and whether
  they are **mirror** words (:mod:`crystal_lsp.clones.copies.lines`);
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
from crystal_lsp.clones.copies.lines import LITERALS, TYPES, Line, compare, shape
from crystal_lsp.clones.copies.lines import code_lines as lines_of
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
CONSISTENT = 0.85
"""Consistency of a renaming (:func:`crystal_lsp.clones.similarity.renaming`) the rules take
for a renamed copy (looser than the one-to-one renaming the evidence claims)."""


@dataclass(frozen=True)
class Evidence:
    """What the lines of a pair of copies show (module docstring)."""

    lines_a: int
    lines_b: int
    identical: int
    """Code lines identical on both sides and in the same order."""
    renamed: bool
    """The lines that differ differ in names only, mapped one-to-one both ways."""
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
    kinds: tuple[tuple[str, int], ...] = ()
    """Differing lines by kind (:data:`crystal_lsp.clones.copies.lines.KINDS`), most first."""
    names: tuple[tuple[str, str], ...] = ()
    """The one-to-one renaming's name pairs (when :attr:`renamed`)."""
    mirror: bool = False
    """Most names that differ are mirror words (``next``/``prev``): per-direction variants."""
    changed: tuple[tuple[str, str], ...] = ()
    """The name pairs that differ on the paired differing lines, sorted."""
    edited: int = 0
    """Differing lines left out of the one-to-one renaming (edited, not renamed)."""
    consistent: bool = False
    """The differing lines paired by shape are a consistent renaming (:data:`CONSISTENT` of
    the repeated names' uses): what the rules take for a renamed copy; never printed."""

    def count(self, kind: str) -> int:
        """Differing lines of one kind."""
        return dict(self.kinds).get(kind, 0)

    @property
    def type_only(self) -> bool:
        """Lines that differ differ in type names only: identical once types are abstracted."""
        return bool(self.kinds) and {k for k, _ in self.kinds} == {TYPES}

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
    """The code lines of tokens ``[start, end)`` (:func:`crystal_lsp.clones.copies.lines.code_lines`)."""
    return lines_of(heavy, start, end)


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
    cmp = compare(heavy_a, (a.start, a.end), heavy_b, (b.start, b.end))
    la, lb, diff_a, diff_b = cmp.lines_a, cmp.lines_b, cmp.diff_a, cmp.diff_b
    decl = declarative_lines(la, noise_a, heavy_a, a.start, a.end) + declarative_lines(
        lb, noise_b, heavy_b, b.start, b.end
    )
    total = _line_count(heavy_a, a.start, a.end) + _line_count(heavy_b, b.start, b.end)
    return Evidence(
        len(la),
        len(lb),
        cmp.identical,
        cmp.renamed,
        bool(cmp.kinds) and set(cmp.kinds) == {LITERALS},
        decl / total if total else 0.0,
        _twins(heavy_a, diff_a, heavy_b, diff_b),
        vendored(a.path) and vendored(b.path),
        parallel,
        tuple(cmp.kinds.most_common()),
        cmp.names,
        cmp.mirror,
        cmp.changed,
        cmp.edited,
        cmp.renamed or (bool(cmp.changed) and consistent(heavy_a, diff_a, heavy_b, diff_b)),
    )


def consistent(heavy_a: Heavy, diff_a: list[Line], heavy_b: Heavy, diff_b: list[Line]) -> bool:
    """Whether the differing lines, most of them paired by shape, are a consistent renaming."""
    if not diff_a or not diff_b:
        return False
    shapes_a = [shape(heavy_a, first, end) for first, end, _ in diff_a]
    shapes_b = [shape(heavy_b, first, end) for first, end, _ in diff_b]
    matcher = SequenceMatcher(None, shapes_a, shapes_b, autojunk=False)
    paired = sum(block.size for block in matcher.get_matching_blocks())
    if paired < SAME_SHAPE * min(len(diff_a), len(diff_b)):
        return False
    code_a, code_b = _code(heavy_a, diff_a), _code(heavy_b, diff_b)
    return renaming(code_a, code_b, min_repeated=2) >= CONSISTENT


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
