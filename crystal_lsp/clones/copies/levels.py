"""The level of a finding: a copy worth a reviewer's time, or similar structure.

A finding is a **copy** when its best pair reads as copied code: most of its code lines are
identical on both sides, or the lines that differ are a consistent renaming. It is **similar
structure** -- real similarity that nobody would act on -- when the evidence
(:mod:`crystal_lsp.clones.copies.evidence`) says one of:

* a **family** of parallel units (:mod:`crystal_lsp.clones.copies.families`);
* **vendored** code on both sides;
* **sync/async twins** (the lines that differ are ``async``/``await``);
* **parallel implementations**: methods of the same name in different classes, or files of
  the same name in different folders (one per backend, per platform), unless verbatim or
  holding a block worth extracting (at least :data:`EXTRACTABLE_LINES` identical code lines,
  most of the pair: the overrides were pasted, and a shared helper would remove the block);
* **declarations**: most lines are signatures, overload stubs, decorators, imports, exports,
  data tables or docstrings;
* **the same code over other data**: the lines that differ, differ in literals only, and on
  many lines;
* **parallel structure**: fewer than half of the code lines are identical, and the rest is not
  a renaming -- names and literals differ throughout;
* **a short repeat**: the best pair -- lines of units, not whole functions or classes -- shares
  fewer than ``min-tokens`` copied tokens (aligned, outside signatures, imports and data: what
  one refactoring would remove), a few lines nobody extracts (fewer than three quarters of it
  are not findings at all).

Every finding carries the phrases that decided its level, and how many lines are identical.
"""

from __future__ import annotations

from crystal_lsp.clones.copies.evidence import Evidence
from crystal_lsp.clones.findings import COPY, SIMILAR

SHARE_MIN = 0.5
"""Below this share of identical code lines (and no renaming), a pair is parallel structure."""
DATA_SHARE = 0.7
"""Below this share, a pair whose differing lines differ in literals only is other data."""
DECLARATIVE = 0.6
"""From this share of declarative lines (and docstrings), a pair is declarations."""
VERBATIM = 0.9
"""From this share of identical lines, parallel implementations are a copy (pull it up)."""
EXTRACTABLE_LINES = 15
"""From this many identical code lines (with :data:`EXTRACTABLE_SHARE` of the pair),
parallel implementations hold a pasted block that one helper would remove: a copy."""
EXTRACTABLE_SHARE = 0.6
FAMILY = "family of parallel units"
VENDORED = "vendored code"
TWINS = "sync/async twins"
DECLARATIONS = "mostly declarations and docstrings"
OTHER_DATA = "the same code over other data (the literals differ)"
PARALLEL = "parallel structure (names and literals differ on most lines)"
RENAMED = "names changed consistently"


def identity(ev: Evidence) -> str:
    """``18 of 20 lines identical`` (the longer side's code lines)."""
    lines = max(ev.lines_a, ev.lines_b)
    if ev.identical == lines:
        return f"all {lines} lines identical"
    return f"{ev.identical} of {lines} lines identical"


def level_of(
    ev: Evidence, family: str | None = None, short: str | None = None
) -> tuple[str, list[str]]:
    """The level of a finding whose best pair has evidence ``ev``, and the phrases saying why.

    ``family``: the description of the family the finding is, if it is one; ``short``: the
    description of how little one refactoring would remove, if it is below a copy's worth.
    """
    shown = identity(ev)
    if family is not None:
        return SIMILAR, [family, shown]
    for flag, phrase in (
        (ev.vendored, VENDORED),
        (ev.twins, TWINS),
        (ev.declarative >= DECLARATIVE, DECLARATIONS),
    ):
        if flag:
            return SIMILAR, [phrase, shown]
    if ev.parallel and not _extractable(ev):
        return SIMILAR, [f"parallel implementations of {ev.parallel}", shown]
    if short is not None:
        return SIMILAR, [short, shown]
    if ev.renamed:
        return COPY, [RENAMED, shown]
    if ev.literals_only and ev.share < DATA_SHARE:
        return SIMILAR, [OTHER_DATA, shown]
    if ev.share < SHARE_MIN:
        return SIMILAR, [PARALLEL, shown]
    return COPY, [shown]


def _extractable(ev: Evidence) -> bool:
    """Whether parallel implementations share enough identical code to be a copy."""
    block = ev.identical >= EXTRACTABLE_LINES and ev.share >= EXTRACTABLE_SHARE
    return ev.share >= VERBATIM or block
