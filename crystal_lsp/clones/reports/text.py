"""The text report of a scan: the summary first, then the ranked findings, skipped files last.

What a reviewer reads top down: how many copies worth a look there are (and how many findings of
similar structure ``--all`` would add), how they are ranked, what was left out on purpose; then
one block per finding -- its level and evidence, then each location -- and finally the files
that were not indexed. The counts are those of :func:`counts`, the same as the agent report's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crystal_lsp.clones.findings import COPY, RANKING, Finding, Pair, at_level, display_path

if TYPE_CHECKING:
    from crystal_lsp.clones.scan import ScanResult

Write = Callable[[str], object]
SKIPPED_SHOWN = 20
LEGEND = (
    "legend: p = probability that a finding's best pair is a copy worth acting on (a model "
    "calibrated on judged real code); identical whole units and best pairs with 0.8 of 10+ "
    "code lines identical and copies renamed one-to-one (5+ code lines) are copies, type "
    "variants are not, the rules and the model's cuts decide the rest "
    "(crystal_lsp/data/verdict.json); code lines = lines with code (not blank, comment, "
    "docstring or punctuation-only lines) of the best pair; "
    "similarity = CrystalBLEU of the normalized ranges (names and literals abstracted: 1.000 "
    "with names differing on every line); CrystalBLEU = of the raw tokens, without the "
    "language's trivially shared n-grams (identical lines of common idioms can score 0); "
    "copied = non-trivial tokens on lines that correspond; scores after a location are its "
    "pair's with the representative, 'pair i-j' those of the i-th and j-th locations listed "
    "(so is 'best pair i-j', whose evidence is printed)\n"
)
"""What every number and claim of a finding means (printed once, under the ranking)."""


@dataclass(frozen=True)
class Counts:
    """How many findings a report shows, and of which level."""

    copies: int
    similar: int
    shown: int
    locations: int
    """Locations of the findings shown."""


def counts(findings: Sequence[Finding], show_all: bool) -> Counts:
    """The counts every report states (text, agent lines, the hook, MCP answers)."""
    shown = at_level(list(findings), show_all)
    copies = sum(1 for f in findings if f.level == COPY)
    return Counts(copies, len(findings) - copies, len(shown), sum(len(f.locations) for f in shown))


def plural(count: int, one: str, many: str) -> str:
    """``1 copy``, ``3 copies``."""
    return f"{count} {one if count == 1 else many}"


def headline(c: Counts, files: int, show_all: bool) -> str:
    """``12 copies worth a look (28 locations) in 410 files; 7 findings of similar structure ...``."""
    head = f"{plural(c.copies, 'copy', 'copies')} worth a look"
    if show_all:
        head += f" and {plural(c.similar, 'finding', 'findings')} of similar structure"
    head += f" ({plural(c.locations, 'location', 'locations')}) in {plural(files, 'file', 'files')}"
    if c.similar and not show_all:
        head += (
            f"; {plural(c.similar, 'more finding', 'more findings')} of similar structure (--all)"
        )
    return head


def write_text(
    result: ScanResult,
    write: Write,
    *,
    show_all: bool,
    show_ngrams: bool = False,
    show_skipped: bool = False,
    baselined: int = 0,
) -> None:
    """The whole text report (module docstring)."""
    c = counts(result.findings, show_all)
    head = headline(c, result.files, show_all)
    if baselined:
        head += f", {baselined} baselined"
    write(f"crystal-lsp: {head}\n")
    write(f"ranked: {RANKING}\n")
    write(LEGEND)
    _notes(result, write)
    for number, finding in enumerate(at_level(result.findings, show_all), 1):
        write("\n")
        finding_block(number, finding, show_ngrams, write)
    _skipped(result, show_skipped, write)


def _notes(result: ScanResult, write: Write) -> None:
    """What was left out on purpose, the signature, generated and undecodable files."""
    if result.filtered:
        count = sum(result.filtered.values())
        why = ", ".join(f"{n} {r}" for r, n in sorted(result.filtered.items(), key=lambda x: -x[1]))
        write(f"{plural(count, 'candidate copy', 'candidate copies')} left out on purpose: {why}\n")
    langs = ", ".join(f"{lang} S {fp}" for lang, fp in sorted(result.ssets.items()))
    write(f"threshold {result.config.threshold:g}, signature {result.config.signature()}")
    write(f"  {langs}\n" if langs else "\n")
    if result.generated:
        count = len(result.generated)
        write(
            f"{plural(count, 'generated file', 'generated files')} compared only with hand-written code\n"
        )
    if result.undecodable:
        count = len(result.undecodable)
        shown = ", ".join(
            f"{display_path(p)} ({n})" for p, n in list(result.undecodable.items())[:5]
        )
        more = " ..." if count > 5 else ""
        write(
            f"{plural(count, 'file', 'files')} partly undecodable (bytes replaced by U+FFFD): {shown}{more}\n"
        )


def finding_block(number: int, finding: Finding, show_ngrams: bool, write: Write) -> None:
    """One finding: its kind and evidence, then its locations (the representative first)."""
    rep = finding.locations[finding.representative]
    kind = "family" if finding.family else f"{finding.type} copy"
    level = "" if finding.level == COPY else "similar structure, "
    where = f"{display_path(rep.path)}:{rep.first_line}-{rep.last_line}"
    p = "" if finding.probability is None else f", p {finding.probability:.2f}"
    write(
        f"[{number}] {level}{kind} of {where} ({display_path(rep.describe() or 'code')}), "
        f"{finding.language}, {plural(len(finding.locations), 'location', 'locations')}{p}\n"
    )
    rep_k = finding.representative
    order = [rep_k] + [k for k in range(len(finding.locations)) if k != rep_k]
    at = {k: i + 1 for i, k in enumerate(order)}  # how the locations are numbered: as listed
    if finding.evidence:
        best = finding.facts.get("pair")
        of = ""
        if best and len(finding.locations) > 2:
            of = f"best pair {at[best[0]]}-{at[best[1]]}: "
        write(f"    {of}{'; '.join(finding.evidence)}\n")
    write(f"  {where}  {display_path(rep.describe())}  (representative)\n")
    to_rep: dict[int, Pair] = {}
    between: dict[int, list[Pair]] = {}  # pairs of two other members, under the later listed
    for pair in finding.pairs:
        if rep_k in (pair.a, pair.b):
            to_rep.setdefault(pair.b if pair.a == rep_k else pair.a, pair)
        else:
            between.setdefault(max(pair.a, pair.b, key=at.__getitem__), []).append(pair)
    for k in order[1:]:
        loc = finding.locations[k]
        paired = k in to_rep or any(k in (p.a, p.b) for p in finding.pairs)
        scores = (
            f"  {_scores(to_rep[k])}" if k in to_rep else "" if paired else "  (no pair scored)"
        )
        write(
            f"  {display_path(loc.path)}:{loc.first_line}-{loc.last_line}  "
            f"{display_path(loc.describe())}{scores}\n"
        )
        for pair in between.get(k, []):
            write(f"    pair {at[pair.a]}-{at[pair.b]}: {_scores(pair)}\n")
    if show_ngrams and finding.shared_ngrams:
        grams = "  |  ".join(" ".join(g) for g in finding.shared_ngrams)
        write(f"    shared non-trivial n-grams: {grams}\n")


def _scores(pair: Pair) -> str:
    """A pair's scores as a report line ends."""
    return (
        f"similarity {pair.similarity:.3f}  CrystalBLEU {pair.crystalbleu:.3f}  "
        f"copied {pair.copied} tokens"
    )


def _skipped(result: ScanResult, show_all: bool, write: Write) -> None:
    """The files not indexed, last: counted by reason, the first listed (all with the flag)."""
    if not result.skipped:
        return
    reasons = Counter(reason.split(" (")[0] for _, reason in result.skipped)
    count = len(result.skipped)
    by_reason = ", ".join(f"{n} {r}" for r, n in reasons.most_common())
    write(f"\n{plural(count, 'file', 'files')} not indexed: {by_reason}\n")
    shown = (
        result.skipped
        if show_all
        else [s for s in result.skipped if not s[1].startswith("not code")][:SKIPPED_SHOWN]
    )
    for path, reason in shown:
        write(f"  skipped {display_path(path)}: {reason}\n")
    if not show_all and count > len(shown):
        write(f"  ... (--show-skipped lists all {count})\n")
