"""The calibrated verdict: the probability that a finding is a copy worth acting on.

A small logistic model over the evidence of a finding's pair (:mod:`.evidence`) and where its
copies lie, fitted on judged findings of real projects (``bench/fit_verdict.py``, evaluated
leave-one-project-out) and shipped as data: ``crystal_lsp/data/verdict.json`` holds the
feature definitions, the coefficients, the default view's cut and the fit's provenance.

:func:`features` computes the features of one pair -- the same function the fitting script
reads the judged findings' features from (``--format json`` carries them), so the model is
applied to exactly what it was fitted on; :func:`probability` applies the model.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from crystal_lsp.clones.copies.evidence import Evidence
from crystal_lsp.clones.copies.lines import LITERALS, STRUCTURE, TYPES, words

VERDICT_FILE = "verdict.json"
FEATURES: dict[str, str] = {
    "share": "identical code lines over the code lines of both sides",
    "lines": "log2 of 1 + the code lines of the longer side",
    "renamed": "1 if the differing lines differ in names mapped one-to-one both ways",
    "types": "share of the differing lines that differ in type names only",
    "literals": "share of the differing lines that differ in literals only",
    "structure": "share of the differing lines that differ in operators or structure",
    "mirror": "1 if most differing names are mirror words (next/prev, min/max, ...)",
    "copied": "log2 of 1 + the copied non-trivial tokens of the pair",
    "crystalbleu": "raw CrystalBLEU of the pair (0 if negative)",
    "covered": "share of its unit the smaller-covering location covers (1: whole units)",
    "same_file": "1 if both locations are in one file",
    "family": "1 if the finding is a family of parallel units",
    "members": "log2 of the finding's number of locations",
    "declarative": "share of both sides' lines that are declarations or docstrings",
    "vendored": "1 if both copies lie in vendored folders",
    "parallel": "1 if methods of one name in different classes, or files of one name",
    "twins": "1 if the differing lines are mostly async/await (sync/async twins)",
    "short": "1 if lines of units sharing fewer than min-tokens copied tokens",
    "same_name": "1 if both locations' units have the same name",
    "sibling_names": "1 if their units' names differ but share a word (parse/parseAsync)",
}
"""The features, in the model's order, each defined (the legend prints these)."""


@dataclass(frozen=True)
class Context:
    """Where a pair's copies lie, for :func:`features`."""

    copied: int
    crystalbleu: float
    covered: float
    same_file: bool
    members: int
    family: bool
    short: bool
    names: tuple[str, str] = ("", "")
    """The names of the units the two locations are or lie in."""


def features(ev: Evidence, ctx: Context) -> dict[str, float]:
    """The model's features of one pair (:data:`FEATURES`)."""
    differing = sum(n for _, n in ev.kinds)

    def part(kind: str) -> float:
        return ev.count(kind) / differing if differing else 0.0

    return {
        "share": ev.share,
        "lines": math.log2(1 + max(ev.lines_a, ev.lines_b)),
        "renamed": float(ev.renamed),
        "types": part(TYPES),
        "literals": part(LITERALS),
        "structure": part(STRUCTURE),
        "mirror": float(ev.mirror),
        "copied": math.log2(1 + max(ctx.copied, 0)),
        "crystalbleu": max(ctx.crystalbleu, 0.0),
        "covered": ctx.covered,
        "same_file": float(ctx.same_file),
        "family": float(ctx.family),
        "members": math.log2(max(ctx.members, 2)),
        "declarative": ev.declarative,
        "vendored": float(ev.vendored),
        "parallel": float(bool(ev.parallel)),
        "twins": float(ev.twins),
        "short": float(ctx.short),
        "same_name": float(bool(ctx.names[0]) and ctx.names[0] == ctx.names[1]),
        "sibling_names": float(siblings(*ctx.names)),
    }


def siblings(a: str, b: str) -> bool:
    """Two different unit names sharing a word: variants of one thing (``getX``/``getY``)."""
    if not a or not b or a == b:
        return False
    return bool(set(words(a)) & set(words(b)))


@dataclass(frozen=True)
class Model:
    """A fitted logistic model (``verdict.json``)."""

    intercept: float
    coefficients: dict[str, float]
    demote: float
    """Under this probability, a copy by the rules is similar structure (0: never)."""
    promote: float
    """From this probability, similar structure by the rules is a copy (over 1: never)."""
    digest: str

    def probability(self, feats: dict[str, float]) -> float:
        """The probability that a pair with ``feats`` is a copy worth acting on."""
        z = self.intercept + sum(w * feats.get(k, 0.0) for k, w in self.coefficients.items())
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))


def parse(text: str) -> Model:
    """The model of a ``verdict.json`` text."""
    doc: dict[str, Any] = json.loads(text)
    unknown = set(doc["coefficients"]) - set(FEATURES)
    if unknown:
        raise ValueError(f"verdict.json: unknown features {sorted(unknown)}")
    return Model(
        float(doc["intercept"]),
        {k: float(v) for k, v in doc["coefficients"].items()},
        float(doc.get("demote", 0.0)),
        float(doc.get("promote", 2.0)),
        hashlib.sha256(text.encode()).hexdigest()[:16],
    )


@cache
def model() -> Model:
    """The shipped model (read once)."""
    data = resources.files("crystal_lsp.data").joinpath(VERDICT_FILE)
    return parse(data.read_text(encoding="utf-8"))


def probability(feats: dict[str, float]) -> float:
    """The shipped model's probability for ``feats``."""
    return model().probability(feats)
