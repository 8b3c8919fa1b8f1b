"""Findings: clone classes with their locations, scores and stable fingerprints.

The JSON form is the documented, versioned output schema of ``crystal-lsp scan --format json``
(``docs``: README, *Output*): a finding has an ``id`` (stable across line moves: it hashes the
paths and normalized contents of its locations), a ``score`` (the highest similarity of two of
its locations), a ``type`` (``exact``, ``renamed`` or ``near``), its ``locations`` (path, 1-based
inclusive ``start``/``end`` line and column, kind, name, tokens) and the scored ``pairs``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 1
EXACT, RENAMED, NEAR = "exact", "renamed", "near"


@dataclass(frozen=True)
class Location:
    """One copy: a snippet of one file."""

    path: str
    first_line: int
    first_col: int
    last_line: int
    last_col: int
    kind: str
    name: str
    tokens: int
    sha: str
    norm_sha: str

    def to_json(self) -> dict[str, Any]:
        """JSON form of the schema."""
        return {
            "path": self.path,
            "start": {"line": self.first_line, "column": self.first_col},
            "end": {"line": self.last_line, "column": self.last_col},
            "kind": self.kind,
            "name": self.name,
            "tokens": self.tokens,
        }

    @property
    def fingerprint(self) -> str:
        """Path plus normalized content: survives moving the code within its file."""
        return hashlib.sha256(
            f"{self.path}\0{self.norm_sha}".encode("utf-8", "surrogatepass")
        ).hexdigest()[:16]

    def label(self) -> str:
        """``path:line``."""
        return f"{self.path}:{self.first_line}"


@dataclass(frozen=True)
class Pair:
    """Two locations of a finding and how similar they are."""

    a: int
    b: int
    similarity: float
    crystalbleu: float
    bleu: float | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        out: dict[str, Any] = {
            "a": self.a,
            "b": self.b,
            "similarity": round(self.similarity, 6),
            "crystalbleu": round(self.crystalbleu, 6),
        }
        if self.bleu is not None:
            out["bleu"] = round(self.bleu, 6)
        return out


@dataclass
class Finding:
    """A clone class: two or more copies of the same code."""

    language: str
    locations: list[Location]
    pairs: list[Pair]
    shared_ngrams: list[list[str]] = field(default_factory=list)

    @property
    def score(self) -> float:
        """The highest similarity among its pairs."""
        return max(p.similarity for p in self.pairs)

    @property
    def type(self) -> str:
        """``exact`` (same tokens), ``renamed`` (same normalized tokens) or ``near``."""
        if len({loc.sha for loc in self.locations}) == 1:
            return EXACT
        if len({loc.norm_sha for loc in self.locations}) == 1:
            return RENAMED
        return NEAR

    @property
    def id(self) -> str:
        """Stable fingerprint of the clone class (order-independent)."""
        parts = sorted(loc.fingerprint for loc in self.locations)
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]

    @property
    def tokens(self) -> int:
        """Total tokens of all copies (a size measure for ranking ties)."""
        return sum(loc.tokens for loc in self.locations)

    def to_json(self, with_ngrams: bool = False) -> dict[str, Any]:
        """JSON form of the schema."""
        out: dict[str, Any] = {
            "id": self.id,
            "score": round(self.score, 6),
            "type": self.type,
            "language": self.language,
            "locations": [loc.to_json() for loc in self.locations],
            "pairs": [p.to_json() for p in self.pairs],
        }
        if with_ngrams:
            out["shared_ngrams"] = self.shared_ngrams
        return out


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Highest score first, then larger clones, then by first location."""
    return sorted(
        findings,
        key=lambda f: (-f.score, -f.tokens, f.locations[0].path, f.locations[0].first_line),
    )
