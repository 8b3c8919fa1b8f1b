"""Findings of one document as LSP diagnostics.

Every copy in the document that belongs to a clone class gets one diagnostic: code
``near-duplicate``, source ``crystal``, a message naming the other copy it is compared with (for
a member of the class its representative, for the representative its most similar member) with
the similarity and CrystalBLEU of the pair, ``relatedInformation`` listing every other copy, and
``data`` carrying the finding id, the score, the clone type and the signature of the scores.

The diagnostic underlines the copy's whole aligned range, or with ``crystalLsp.underline``
``firstLine`` only its first line (less noise for long copies; hover and code actions still
cover the whole range).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from crystal_lsp.clones.findings import Finding, Location, Pair, display_path
from crystal_lsp.clones.similarity import Similarity
from crystal_lsp.server.buffers import DocResult
from crystal_lsp.server.positions import Codec, TextIndex
from crystal_lsp.server.workspace import Folder

CODE = "near-duplicate"
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


def flags_of(result: DocResult, index: TextIndex, underline: str = RANGE) -> list[Flag]:
    """The document's flagged snippets, in document order (``underline``: see the module)."""
    flags = []
    for finding in result.findings:
        for i, location in enumerate(finding.locations):
            if location.path != result.path:
                continue
            start = index.offset(location.first_line, location.first_col)
            end = max(start, index.end_offset(location.last_line, location.last_col))
            rng = types.Range(start=index.position(start), end=index.position(end))
            shown = first_line(index, rng) if underline == FIRST_LINE else rng
            flags.append(Flag(finding, i, rng, start, end, shown))
    flags.sort(key=lambda f: (f.start, f.end, f.finding.id))
    return flags


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
    a.py:12``; when only the first line is underlined, the copy's own lines follow.
    """
    pair = flag.best_pair()
    other = flag.finding.locations[flag.other(pair)]
    what = display_path(other.describe())
    message = (
        f"Near-duplicate (similarity {pair.similarity:.2f}, CrystalBLEU "
        f"{max(pair.crystalbleu, 0.0):.2f}) of {what + ' in ' if what else ''}{other.label()}"
    )
    if flag.underline != flag.range:
        here = flag.here
        message += f" (this copy: lines {here.first_line}-{here.last_line})"
    return message


def related_of(flag: Flag, ranges: LocationRanges) -> list[types.DiagnosticRelatedInformation]:
    """Every other copy of the class, with its similarity to this one when they are a pair."""
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
