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
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cache
from importlib import resources
from typing import Any

from crystal_lsp.clones.copies.evidence import Evidence
from crystal_lsp.clones.copies.lines import (
    CALLED,
    LITERALS,
    MIRRORS,
    STRUCTURE,
    TYPE_WORDS,
    TYPES,
    words,
)

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
    "typed": "1 if the language declares nominal static types (C, C++, Rust, Go, Java, C#, ...)",
    "tests": "1 if both locations lie in test files or test folders",
    "called": "share of the differing lines that differ in called names or members",
    "name_mirror": "1 if the units' names differ in mirror words (next/prev, get/set, ...)",
    "name_type": "1 if the units' names differ only in type words or numbers (Int/Long, i8/i16)",
    "name_async": "1 if the units' names differ only in an async marker (send/asend)",
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
    language: str = ""
    paths: tuple[str, str] = ("", "")
    """The files of the two locations."""


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
        "typed": float(ctx.language in TYPED_LANGUAGES),
        "tests": float(all(is_test(path) for path in ctx.paths) and bool(ctx.paths[0])),
        "called": part(CALLED),
        **name_variants(*ctx.names),
    }


TYPED_LANGUAGES = frozenset(
    "c cpp cuda objective-c objective-c++ rust go java csharp kotlin scala swift d zig vala "
    "dart".split()
)
"""Languages whose functions declare nominal static types: per-type and per-trait variants
that a dynamic language would write once are common there."""
_TEST = re.compile(
    r"(^|/)(tests?|spec|specs|__tests__|testing|testdata)(/|$)|(^|/)test_[^/]*$"
    r"|(^|/|_)tests?\.\w+$|_test\.\w+$|Tests?\.\w+$|\.(test|spec)\.\w+$|_spec\.rb$"
)
_MIRROR = frozenset(MIRRORS) | frozenset((b, a) for a, b in MIRRORS)
ASYNC_WORDS = frozenset({"a", "async", "sync", "await"})


def is_test(path: str) -> bool:
    """Whether a path is a test file or lies in a test folder (``tests/``, ``*_test.go`` ...)."""
    return bool(_TEST.search(path))


def name_variants(a: str, b: str) -> dict[str, float]:
    """How two different unit names differ: ``name_mirror``, ``name_type``, ``name_async``.

    The names' words (:func:`~crystal_lsp.clones.copies.lines.words`) are aligned; each run of
    differing words is a mirror pair (``next``/``prev``), type words or numbers (``int``/``long``,
    ``8``/``16``), async markers (``send``/``asend`` read as ``a``) or something else. A name
    pair is a mirror (type, async) variant when every differing run is of that kind.
    """
    out = {"name_mirror": 0.0, "name_type": 0.0, "name_async": 0.0}
    if not a or not b or a == b:
        return out
    wa, wb = words(a), words(b)
    wa, wb = _split_async(wa, set(wb)), _split_async(wb, set(wa))
    kinds = set()
    for op, i0, i1, j0, j1 in SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes():
        if op != "equal":
            kinds.add(_run_kind(wa[i0:i1], wb[j0:j1]))
    if len(kinds) == 1:
        kind = kinds.pop()
        if kind in out:
            out[kind] = 1.0
    return out


def _split_async(ws: list[str], other: set[str]) -> list[str]:
    """``asend`` as ``a``, ``send`` where the other name has ``send`` (an async twin's name)."""
    out: list[str] = []
    for w in ws:
        out += ["a", w[1:]] if w[:1] == "a" and w not in other and w[1:] in other else [w]
    return out


def _run_kind(da: list[str], db: list[str]) -> str:
    singular = (da[0].removesuffix("s"), db[0].removesuffix("s")) if da and db else ("", "")
    if len(da) == 1 and len(db) == 1 and ((da[0], db[0]) in _MIRROR or singular in _MIRROR):
        return "name_mirror"
    if all(w in TYPE_WORDS or w.isdigit() for w in da + db):
        return "name_type"
    if set(da + db) <= ASYNC_WORDS:
        return "name_async"
    return "other"


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
