"""Findings of one document as LSP diagnostics: one per copy and file, the most telling first.

Every finding with a location in the document gets one diagnostic (at its first location there):
code ``near-duplicate``, source ``crystal``, a message naming the other copy it is compared with
(for a member of the class its representative, for the representative its most similar member)
with the similarity and CrystalBLEU of the pair and the evidence (``18 of 20 lines identical``),
``relatedInformation`` listing every other copy (a unit copied whole: its full range too), and
``data`` carrying the finding id, the score, the clone type, the level and the signature.

Findings come in rank order; findings of similar structure only with ``crystalLsp.showSimilar``,
and at most ``crystalLsp.maxDiagnostics`` of them, a note on the first line counting the rest.
A unit copied whole (a function, a class) is underlined on its header line; lines of a unit on
their aligned range, or with ``crystalLsp.underline`` ``firstLine`` only its first line (hover
and code actions still cover the whole range).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from crystal_lsp.clones.align.digests import FILE
from crystal_lsp.clones.copies.levels import DIFFERING
from crystal_lsp.clones.findings import (
    COPY,
    LINES,
    Finding,
    Location,
    Pair,
    at_level,
    display_path,
)
from crystal_lsp.clones.similarity import Similarity
from crystal_lsp.server.buffers import DocResult
from crystal_lsp.server.positions import Codec, TextIndex
from crystal_lsp.server.workspace import Folder
from crystal_lsp.text.snippets import CLASS, FUNCTION

CODE = "near-duplicate"
MORE = "near-duplicate-limit"
SOURCE = "crystal"
RANGE, FIRST_LINE = "range", "firstLine"
SEVERITY = {
    "hint": types.DiagnosticSeverity.Hint,
    "information": types.DiagnosticSeverity.Information,
    "warning": types.DiagnosticSeverity.Warning,
    "error": types.DiagnosticSeverity.Error,
}


@dataclass(frozen=True)
class Flag:
    """One flagged snippet of a document: a location of a finding."""

    finding: Finding
    location: int
    range: types.Range
    start: int
    end: int
    """Code-point offsets of the snippet in the document version it was found in."""
    underline: types.Range
    """The range its diagnostic underlines: ``range`` itself, or its first line."""

    @property
    def here(self) -> Location:
        """The flagged location."""
        return self.finding.locations[self.location]

    def best_pair(self) -> Pair:
        """The pair of this location with the highest similarity.

        Pairs join the representative with each member: for a member this is its pair with the
        representative, for the representative the pair of its most similar member.
        """
        pairs = [p for p in self.finding.pairs if self.location in (p.a, p.b)]
        return max(pairs, key=lambda p: (p.similarity, -min(p.a, p.b)))

    def other(self, pair: Pair) -> int:
        """The other location of a pair of this location."""
        return pair.b if pair.a == self.location else pair.a


def first_line(index: TextIndex, rng: types.Range) -> types.Range:
    """The part of ``rng`` on its first line (to the end of that line's text)."""
    if rng.end.line == rng.start.line:
        return rng
    text = index.line_text(rng.start.line)
    width = len(text) if text.isascii() else index.codec.client_num_units(text)
    return types.Range(
        start=rng.start,
        end=types.Position(line=rng.start.line, character=max(width, rng.start.character)),
    )


def flags_of(
    result: DocResult,
    index: TextIndex,
    underline: str = RANGE,
    show_similar: bool = False,
    limit: int | None = None,
) -> tuple[list[Flag], int]:
    """The document's flagged copies in document order, and how many more the limit left out.

    One flag per finding (its first location in the document), findings in rank order, those
    of similar structure only with ``show_similar``; ``underline``: see the module docstring.
    """
    flags = []
    findings = at_level(result.findings, show_similar)
    for finding in findings:
        mine = [i for i, loc in enumerate(finding.locations) if loc.path == result.path]
        if not mine:
            continue
        i = min(mine, key=lambda k: finding.locations[k].first_line)
        location = finding.locations[i]
        start = index.offset(location.first_line, location.first_col)
        end = max(start, index.end_offset(location.last_line, location.last_col))
        rng = types.Range(start=index.position(start), end=index.position(end))
        whole = location.kind not in (LINES,)
        shown = first_line(index, rng) if underline == FIRST_LINE or whole else rng
        if location.kind == FILE and underline != FIRST_LINE:
            shown = _first_unit_line(result, index, location) or shown
        flags.append(Flag(finding, i, rng, start, end, shown))
    more = max(0, len(flags) - limit) if limit is not None else 0
    kept = flags[: len(flags) - more]
    kept.sort(key=lambda f: (f.start, f.end, f.finding.id))
    return kept, more


def _first_unit_line(result: DocResult, index: TextIndex, location: Location) -> types.Range | None:
    """The header line of the first top-level function or class of a whole file's copy.

    A copied file is underlined there, not on ``import os``; None when the file has no unit.
    """
    units = [
        m
        for m in result.snippets
        if m.kind in (FUNCTION, CLASS) and m.depth == 0 and m.first_line >= location.first_line
    ]
    if not units:
        return None
    unit = min(units, key=lambda m: (m.first_line, m.first_col))
    start = index.offset(unit.first_line, unit.first_col)
    rng = types.Range(start=index.position(start), end=index.position(start))
    return first_line(index, rng)


def signature_of(folder: Folder, language: str) -> str:
    """The signature of the CrystalBLEU scores of a language in this folder (worker thread)."""
    sets = folder.index.sets(language)
    cache = folder.signatures
    key = (language, sets.fingerprint + folder.config.signature())
    if key not in cache:
        cache[key] = Similarity.of(sets.raw, sets.norm, folder.config, language).signature
    return cache[key]


class LocationRanges:
    """LSP ranges of other files' locations (texts read once per call)."""

    def __init__(self, folder: Folder, codec: Codec | None) -> None:
        self.folder = folder
        self.codec = codec
        self._indexes: dict[str, TextIndex | None] = {}

    def resolve(self, location: Location) -> types.Location | None:
        """The LSP location of a finding location (None if it has no URI)."""
        uri = self.folder.uri_of(location.path)
        if uri is None:
            return None
        if location.path not in self._indexes:
            text = self.folder.text_of(location.path)
            self._indexes[location.path] = TextIndex(text, self.codec) if text is not None else None
        index = self._indexes[location.path]
        if index is None:
            rng = types.Range(
                start=types.Position(
                    line=location.first_line - 1, character=location.first_col - 1
                ),
                end=types.Position(line=location.last_line - 1, character=location.last_col),
            )
        else:
            rng = index.range(
                location.first_line, location.first_col, location.last_line, location.last_col
            )
        return types.Location(uri=uri, range=rng)


def message_of(flag: Flag) -> str:
    """The diagnostic message of a flagged copy: the copy it is compared with, and how alike.

    ``Near-duplicate (similarity 0.93, CrystalBLEU 0.61) of lines 12-30 of function parse in
    a.py:12: 18 of 20 lines identical``; ``Similar structure (...)`` for a finding of that level;
    when only the first line is underlined, the copy's own lines follow.
    """
    pair = flag.best_pair()
    other = flag.finding.locations[flag.other(pair)]
    what = display_path(other.describe())
    head = "Near-duplicate" if flag.finding.level == COPY else "Similar structure"
    message = (
        f"{head} (similarity {pair.similarity:.2f}, CrystalBLEU "
        f"{max(pair.crystalbleu, 0.0):.2f}) of {display_path(what) + ' in ' if what else ''}"
        f"{other.label()}"
    )
    # the kinds of the differing lines are in the hover: a hover is 250 px high, and the
    # message sits above its diff
    evidence = [e for e in flag.finding.evidence if not e.startswith(DIFFERING)]
    if evidence:
        message += ": " + "; ".join(evidence)
    if flag.underline != flag.range:
        here = flag.here
        message += f" (this copy: lines {here.first_line}-{here.last_line})"
    return message


def more_note(more: int, limit: int) -> types.Diagnostic:
    """The note on the first line counting the copies ``maxDiagnostics`` left out."""
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(0, 0)),
        message=f"{more} more near-duplicate{'s' if more != 1 else ''} in this file are not "
        f"shown (crystalLsp.maxDiagnostics is {limit}); crystal-lsp scan lists them all",
        severity=types.DiagnosticSeverity.Information,
        code=MORE,
        source=SOURCE,
    )


def related_of(flag: Flag, ranges: LocationRanges) -> list[types.DiagnosticRelatedInformation]:
    """Every other copy of the class, with its similarity to this one when they are a pair.

    When only a line of the copy is underlined (a unit copied whole, its header line), the
    copy's own full range comes last (clients go to the first entry: the other copy).
    """
    finding = flag.finding
    similarity = {flag.other(p): p.similarity for p in finding.pairs if flag.location in (p.a, p.b)}
    related = []
    for j, location in enumerate(finding.locations):
        if j == flag.location:
            continue
        resolved = ranges.resolve(location)
        if resolved is None:
            continue
        notes = ["representative"] if j == finding.representative else []
        if j in similarity:
            notes.append(f"similarity {similarity[j]:.2f}")
        else:
            notes.append("same clone class")
        note = f"{display_path(location.describe()) or 'copy'} ({', '.join(notes)})"
        related.append(types.DiagnosticRelatedInformation(location=resolved, message=note))
    if flag.underline != flag.range:
        here = ranges.resolve(flag.here)
        if here is not None:
            lines = f"lines {flag.here.first_line}-{flag.here.last_line}"
            message = f"this copy: {display_path(flag.here.describe()) or lines} ({lines})"
            related.append(types.DiagnosticRelatedInformation(location=here, message=message))
    return related


def diagnostics_of(
    folder: Folder,
    result: DocResult,
    flags: list[Flag],
    severity: str,
    codec: Codec | None,
) -> list[types.Diagnostic]:
    """The diagnostics of a checked document (worker thread)."""
    if not flags:
        return []
    signature = signature_of(folder, result.language)
    settings = folder.config.signature()
    ranges = LocationRanges(folder, codec)
    out = []
    for flag in flags:
        finding = flag.finding
        data: dict[str, Any] = {
            "signature": signature,
            "findingId": finding.id,
            "score": round(flag.best_pair().similarity, 6),
            "type": finding.type,
            "level": finding.level,
            "settings": settings,
        }
        related = related_of(flag, ranges)
        out.append(
            types.Diagnostic(
                range=flag.underline,
                message=message_of(flag),
                severity=SEVERITY.get(severity, types.DiagnosticSeverity.Information),
                code=CODE,
                source=SOURCE,
                related_information=related or None,
                data=data,
            )
        )
    return out
