"""Findings of one document as LSP diagnostics.

Every snippet of the document that belongs to a clone class gets one diagnostic on its range:
code ``near-duplicate``, source ``crystal``, a message naming the closest other copy with the
similarity and CrystalBLEU of the pair, ``relatedInformation`` listing every other copy, and
``data`` carrying the finding id, the score, the clone type and the signature of the scores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from crystal_lsp.clones.findings import Finding, Location, Pair
from crystal_lsp.clones.similarity import Similarity
from crystal_lsp.server.buffers import DocResult
from crystal_lsp.server.positions import Codec, TextIndex
from crystal_lsp.server.workspace import Folder

CODE = "near-duplicate"
SOURCE = "crystal"
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

    @property
    def here(self) -> Location:
        """The flagged location."""
        return self.finding.locations[self.location]

    def best_pair(self) -> Pair:
        """The pair of this location with the highest similarity."""
        pairs = [p for p in self.finding.pairs if self.location in (p.a, p.b)]
        return max(pairs, key=lambda p: (p.similarity, -min(p.a, p.b)))

    def other(self, pair: Pair) -> int:
        """The other location of a pair of this location."""
        return pair.b if pair.a == self.location else pair.a


def describe(location: Location) -> str:
    """``function foo``, ``class Bar`` or the bare kind."""
    return f"{location.kind} {location.name}".strip()


def flags_of(result: DocResult, index: TextIndex) -> list[Flag]:
    """The document's flagged snippets, in document order."""
    flags = []
    for finding in result.findings:
        for i, location in enumerate(finding.locations):
            if location.path != result.path:
                continue
            start = index.offset(location.first_line, location.first_col)
            end = max(start, index.end_offset(location.last_line, location.last_col))
            rng = types.Range(start=index.position(start), end=index.position(end))
            flags.append(Flag(finding, i, rng, start, end))
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
        pair = flag.best_pair()
        other = finding.locations[flag.other(pair)]
        what = describe(other)
        message = (
            f"Near-duplicate (similarity {pair.similarity:.2f}, CrystalBLEU "
            f"{max(pair.crystalbleu, 0.0):.2f}) of {other.path}:{other.first_line}"
            + (f" ({what})" if what else "")
        )
        similarity = {
            flag.other(p): p.similarity for p in finding.pairs if flag.location in (p.a, p.b)
        }
        related = []
        for j, location in enumerate(finding.locations):
            if j == flag.location:
                continue
            resolved = ranges.resolve(location)
            if resolved is None:
                continue
            note = describe(location) or "copy"
            if j in similarity:
                note += f" (similarity {similarity[j]:.2f})"
            else:
                note += " (same clone class)"
            related.append(types.DiagnosticRelatedInformation(location=resolved, message=note))
        data: dict[str, Any] = {
            "signature": signature,
            "findingId": finding.id,
            "score": round(pair.similarity, 6),
            "type": finding.type,
            "settings": settings,
        }
        out.append(
            types.Diagnostic(
                range=flag.range,
                message=message,
                severity=SEVERITY.get(severity, types.DiagnosticSeverity.Information),
                code=CODE,
                source=SOURCE,
                related_information=related or None,
                data=data,
            )
        )
    return out
