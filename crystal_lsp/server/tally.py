"""What landed this session: one :class:`Record` per scored block, and how it is shown.

A record keeps the block's text and its references' texts as they were when it was scored, so
the session can be exported as JSONL items of the researchers' ``crystal-lsp score --jsonl``
(``{"id", "hypothesis", "references", ...}``, one per line). It also makes the block's code lens
title (``≈ renamed copy of src/a.py:12-30 (function f) · CrystalBLEU 0.82, similarity 1.00`` or
``new code · closest src/x.py:40-52, CrystalBLEU 0.21``) and, when asked, its diagnostic. Names
shown to the user go through :func:`crystal_lsp.clones.findings.display_path`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from crystal_lsp.clones.findings import display_path
from crystal_lsp.server.verdict import COPY

PENDING, SHOWN, EDITED, EXPIRED, CLOSED = "pending", "shown", "edited", "expired", "closed"
UNSCORED = "unscored"
CODE = "inserted-copy"


@dataclass
class Record:
    """One block that landed, and its verdict."""

    id: int
    time: str
    """When it landed (ISO 8601, UTC)."""
    uri: str
    path: str
    first: int
    last: int
    """Its LSP lines (0-based, inclusive) when it landed."""
    lines: int
    """Its non-blank lines."""
    language: str = ""
    verdict: str = UNSCORED
    kind: str | None = None
    similarity: float | None = None
    crystalbleu: float = 0.0
    bleu: float = 0.0
    closest: dict[str, Any] | None = None
    """The named reference: ``{"label", "uri", "range", "crystalbleu", "bleu"}``."""
    references: list[str] = field(default_factory=list)
    tokens: int = 0
    latency_ms: float | None = None
    """From the inserting change to the verdict."""
    state: str = PENDING
    """``pending`` (being scored), ``shown`` (its lens is up), then ``edited``, ``expired`` or
    ``closed``."""
    note: str = ""
    """Why it was not scored, when it was not."""
    code: str = ""
    texts: list[str] = field(default_factory=list)

    def scored(self, result: dict[str, Any]) -> None:
        """Take the verdict from a ``crystal/score`` result with its ``insertion`` part."""
        found = result["insertion"]
        self.language = result["language"]
        self.crystalbleu, self.bleu = result["crystalbleu"], result["bleu"]
        self.verdict, self.kind = found["verdict"], found["kind"]
        self.similarity = found["similarity"]
        self.code, self.texts, self.tokens = found["code"], found["texts"], found["tokens"]
        self.references = [r["label"] for r in result["references"]]
        best = found["best"]
        self.closest = dict(result["references"][best]) if best is not None else None

    def to_json(self) -> dict[str, Any]:
        """The tally entry of ``crystal/insertions``."""
        return {
            "id": self.id,
            "time": self.time,
            "uri": self.uri,
            "path": self.path,
            "range": {
                "start": {"line": self.first, "character": 0},
                "end": {"line": self.last + 1, "character": 0},
            },
            "lines": self.lines,
            "tokens": self.tokens,
            "language": self.language,
            "verdict": self.verdict,
            "kind": self.kind,
            "similarity": self.similarity,
            "crystalbleu": self.crystalbleu,
            "bleu": self.bleu,
            "closest": self.closest,
            "references": self.references,
            "latencyMs": self.latency_ms,
            "state": self.state,
            **({"note": self.note} if self.note else {}),
        }

    def jsonl(self) -> str:
        """The record as one item of ``crystal-lsp score --jsonl`` (extra keys are kept)."""
        item = {
            "id": f"{self.path}:{self.first + 1}#{self.id}",
            "hypothesis": self.code,
            "references": self.texts,
            "language": self.language,
            "time": self.time,
            "verdict": self.verdict,
            "kind": self.kind,
            "similarity": self.similarity,
            "crystalbleu": self.crystalbleu,
        }
        return json.dumps(item, ensure_ascii=False)

    def title(self) -> str:
        """The code lens title."""
        if self.verdict == UNSCORED:
            return f"crystal: not scored ({self.note})"
        closest = self.closest
        if closest is None:
            return "new code · nothing alike in the workspace"
        label = display_path(closest["label"])
        if self.verdict == COPY:
            return (
                f"≈ {self.kind} copy of {label} · CrystalBLEU {closest['crystalbleu']:.2f}, "
                f"similarity {self.similarity or 0.0:.2f}"
            )
        return f"new code · closest {label}, CrystalBLEU {closest['crystalbleu']:.2f}"

    def message(self) -> str:
        """The diagnostic message of a copy."""
        assert self.closest is not None
        return (
            f"Inserted code is a{'n' if self.kind == 'exact' else ''} {self.kind} copy of "
            f"{display_path(self.closest['label'])} (similarity {self.similarity or 0.0:.2f}, "
            f"CrystalBLEU {self.closest['crystalbleu']:.2f})"
        )

    def comparison(self, here: dict[str, Any]) -> dict[str, Any] | None:
        """The argument of ``crystal.compare``: the closest region (left) and the block (right).

        ``here``: the block's range now.
        """
        closest = self.closest
        if closest is None or "uri" not in closest or "range" not in closest:
            return None
        mine = f"{display_path(self.path)}:{here['start']['line'] + 1}-{here['end']['line'] + 1}"
        theirs = display_path(closest["label"])
        return {
            "title": f"{theirs} ↔ {mine} (inserted)",
            "left": {"uri": closest["uri"], "range": closest["range"], "label": theirs},
            "right": {"uri": self.uri, "range": here, "label": f"{mine} (inserted)"},
        }


def summary(records: list[Record], dropped: int) -> dict[str, Any]:
    """Counts of a tally: landed, copies, new, by kind (and records dropped from a full tally)."""
    kinds: dict[str, int] = {}
    for record in records:
        if record.kind:
            kinds[record.kind] = kinds.get(record.kind, 0) + 1
    return {
        "landed": len(records),
        "copies": sum(1 for r in records if r.verdict == COPY),
        "new": sum(1 for r in records if r.verdict == "new"),
        "unscored": sum(1 for r in records if r.verdict == UNSCORED),
        "kinds": kinds,
        "dropped": dropped,
    }
