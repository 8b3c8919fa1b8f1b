"""The level of a finding: a copy worth a reviewer's time, or similar structure.

The level is read off the evidence of the finding's best pair (:mod:`.evidence`). A few
**invariants** hold first, whatever else the pair is:

* **identical code** (every token of every location the same, byte-identical files and units)
  is a copy;
* **type variants** -- lines that differ only in type names, where the language cannot share
  them (primitive types in Java, any type in C) -- are similar structure;
* a best pair with at least :data:`VERBATIM_SHARE` of its code lines identical over at least
  :data:`VERBATIM_LINES` code lines is a copy, whatever its docstrings or family;
* a **renamed copy** -- a best pair over at least :data:`RENAMED_LINES` code lines whose
  differing lines differ in names only, renamed one-to-one with no edited line, not mirror
  words, not type names, not a family, parallel implementations, twins or vendored code
  (:func:`renamed_whole`) -- is a copy: judged real code seldom holds one (the model, fitted
  on it, reads a low share of identical lines), while it is what a renamed paste looks like.

Otherwise the **rules** (:func:`rules`) decide: similar structure when the pair is a family of
parallel units, vendored code, sync/async twins, mostly declarations, parallel implementations
(unless holding an extractable block), a short repeat, the same code over other data or
parallel structure (under half of the code lines identical and no one-to-one renaming); else a
copy. The calibrated verdict (:mod:`.verdict`) then moves findings: a rules copy whose
probability is under the model's ``demote`` cut is similar structure, a rules similar
structure at or over its ``promote`` cut a copy. The shipped cuts move nothing
(``bench/fit_verdict.py --no-move``): the cut the leave-one-project-out trade-off chooses
hides small renamed and edited copies (bench/README.md).
"""

from __future__ import annotations

from crystal_lsp.clones.copies.evidence import Evidence
from crystal_lsp.clones.copies.lines import CALLED, KINDS, NAMES, NAMES_LITERALS, TYPE_WORDS
from crystal_lsp.clones.copies.verdict import Model, model
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
VERBATIM_SHARE = 0.8
VERBATIM_LINES = 10
"""A best pair with this share of its code lines identical, over this many, is a copy."""
RENAMED_LINES = 5
"""From this many code lines, a renamed copy (:func:`renamed_whole`) is a copy."""
RENAMED_KINDS = frozenset({NAMES, CALLED, NAMES_LITERALS})
"""What the differing lines of a renamed copy (:func:`renamed_whole`) may differ in."""
TYPE_ONLY_LANGUAGES = {"c": False, "java": True}
"""Languages that cannot share per-type variants, and whether only primitive types count."""
FAMILY = "family of parallel units"
VENDORED = "vendored code"
TWINS = "sync/async twins"
DECLARATIONS = "mostly declarations and docstrings"
OTHER_DATA = "the same code over other data (the literals differ)"
PARALLEL = "parallel structure (names and literals differ on most lines)"
RENAMED = "names changed one-to-one"
MIRROR = "mirror variants (the names differ in next/prev, min/max ...)"
TYPE_VARIANTS = "type variants (identical but for type names the language cannot share)"
IDENTICAL = "identical code"
UNLIKELY = "unlikely to be worth acting on"
LIKELY = "likely worth acting on"
NAMES_SHOWN = 3


def identity(ev: Evidence) -> str:
    """``18 of 20 code lines identical`` (the longer side's code lines)."""
    lines = max(ev.lines_a, ev.lines_b)
    if ev.identical == lines:
        return f"all {lines} code lines identical"
    return f"{ev.identical} of {lines} code lines identical"


DIFFERING = "differing lines: "
"""How the evidence phrase classifying the differing lines starts."""


def differing(ev: Evidence) -> str:
    """``differing lines: 3 names, 1 structure`` (empty when none differ)."""
    parts = [f"{ev.count(k)} {k}" for k in KINDS if ev.count(k)]
    return f"{DIFFERING}{', '.join(parts)}" if parts else ""


def renaming(ev: Evidence) -> str:
    """``names changed one-to-one: a->b, c->d`` (the first pairs)."""
    shown = ", ".join(f"{a}->{b}" for a, b in ev.names[:NAMES_SHOWN])
    more = f" (+{len(ev.names) - NAMES_SHOWN})" if len(ev.names) > NAMES_SHOWN else ""
    but = f" but on {ev.edited} edited line{'s' if ev.edited > 1 else ''}" if ev.edited else ""
    return f"{RENAMED}{but}: {shown}{more}"


def type_variants(ev: Evidence, language: str) -> bool:
    """Lines differ in type names only, in a language that cannot share them."""
    if language not in TYPE_ONLY_LANGUAGES or not ev.type_only:
        return False
    if not TYPE_ONLY_LANGUAGES[language]:
        return True
    return bool(ev.changed) and all(a in TYPE_WORDS and b in TYPE_WORDS for a, b in ev.changed)


def verbatim(ev: Evidence) -> bool:
    """Most code lines of a long enough best pair identical (:data:`VERBATIM_SHARE`)."""
    lines = max(ev.lines_a, ev.lines_b)
    return lines >= VERBATIM_LINES and ev.identical >= VERBATIM_SHARE * lines


def renamed_whole(ev: Evidence) -> bool:
    """A renamed copy over :data:`RENAMED_LINES` or more code lines (module docstring).

    Every differing line differs in names (called names, names in literals too), renamed
    one-to-one both ways with no edited line; neither mirror words nor type names, no parallel
    implementations, twins or vendored code (a family is the caller's to exclude).
    """
    plain = not (ev.mirror or ev.type_only or ev.parallel or ev.twins or ev.vendored)
    names_only = {k for k, _ in ev.kinds} <= RENAMED_KINDS
    lines = max(ev.lines_a, ev.lines_b)
    return ev.renamed and not ev.edited and plain and names_only and lines >= RENAMED_LINES


def renamed_copy(ev: Evidence) -> bool:
    """A one-to-one renaming that is neither mirror words nor type names only."""
    return ev.renamed and not ev.mirror and not ev.type_only


def traits(ev: Evidence, family: str | None = None, short: str | None = None) -> list[str]:
    """The phrases that describe what a pair is besides a copy (each true of it)."""
    out = [family] if family else []
    out += [
        phrase
        for flag, phrase in (
            (ev.vendored, VENDORED),
            (ev.twins, TWINS),
            (ev.declarative >= DECLARATIVE, DECLARATIONS),
            (bool(ev.parallel), f"parallel implementations of {ev.parallel}"),
        )
        if flag
    ]
    if short:
        out.append(short)
    if ev.literals_only and ev.share < DATA_SHARE:
        out.append(OTHER_DATA)
    if ev.mirror:
        out.append(MIRROR)
    if ev.share < SHARE_MIN and not ev.renamed and not ev.consistent:
        out.append(PARALLEL)
    return out


def level_of(
    ev: Evidence,
    family: str | None = None,
    short: str | None = None,
    *,
    p: float | None = None,
    exact: bool = False,
    language: str = "",
    verdict: Model | None = None,
) -> tuple[str, list[str]]:
    """The level of a finding whose best pair has evidence ``ev``, and the phrases saying why.

    ``family``: the description of the family the finding is, if it is one; ``short``: the
    description of how little one refactoring would remove, if it is below a copy's worth;
    ``p``: the verdict's probability (None: the rules alone); ``exact``: every location is a
    whole unit or file and has the same tokens; ``verdict``: the model whose cuts apply
    (default: the shipped one).
    """
    facts = [identity(ev)]
    if ev.renamed:
        facts.insert(0, renaming(ev))
    if differing(ev):
        facts.append(differing(ev))
    if exact:
        return COPY, [IDENTICAL, *facts]
    why = traits(ev, family, short)
    if type_variants(ev, language):
        return SIMILAR, [TYPE_VARIANTS, *why, *facts]
    if verbatim(ev) or (family is None and renamed_whole(ev)):
        return COPY, [*why, *facts]
    level = rules(ev, family, short)
    m = verdict or model()
    if p is not None and level == COPY and p < m.demote:
        return SIMILAR, [*why, f"{UNLIKELY} (p {p:.2f} < {m.demote:g})", *facts]
    if p is not None and level == SIMILAR and p >= m.promote:
        return COPY, [*why, f"{LIKELY} (p {p:.2f} >= {m.promote:g})", *facts]
    return level, [*why, *facts]


def rules(ev: Evidence, family: str | None = None, short: str | None = None) -> str:
    """The hand-set rules' level of a pair (module docstring), without the invariants."""
    if family is not None or ev.vendored or ev.twins or ev.declarative >= DECLARATIVE:
        return SIMILAR
    if ev.parallel and not _extractable(ev):
        return SIMILAR
    if short is not None:
        return SIMILAR
    if ev.renamed or ev.consistent:
        return COPY
    if ev.literals_only and ev.share < DATA_SHARE:
        return SIMILAR
    return SIMILAR if ev.share < SHARE_MIN else COPY


def _extractable(ev: Evidence) -> bool:
    """Whether parallel implementations share enough identical code to be a copy."""
    block = ev.identical >= EXTRACTABLE_LINES and ev.share >= EXTRACTABLE_SHARE
    return ev.share >= VERBATIM or block
